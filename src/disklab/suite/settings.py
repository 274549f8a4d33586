"""The settings of steady and saturate suites: SNIA's steady-state criteria and the limits of the saturation search."""

import math
import re
from dataclasses import dataclass

# Load levels in percent of the peak at which latency is measured.
DEFAULT_LEVELS = tuple(range(10, 101, 10))
_LATENCY_UNITS_NS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_LATENCY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)\s*$")


@dataclass(frozen=True)
class SteadyCriteria:
    window: int = 5  # rounds judged together
    max_rounds: int = 25
    excursion_percent: float = 20.0  # max - min of the window, in percent of its average
    slope_percent: float = 10.0  # change across the window the least-squares line predicts, in % of the average


def parse_latency_ns(text: str) -> float:
    """'1ms', '500us', '0.2ms' -> nanoseconds; a unit is required, latencies are too easily misread without one."""
    match = _LATENCY.match(str(text))
    if not match or float(match.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a latency such as 1ms, 500us or 200000ns")
    return float(match.group(1)) * _LATENCY_UNITS_NS[match.group(2)]


@dataclass(frozen=True)
class SaturationSettings:
    gain_percent: float = 5.0  # raising QD or jobs must add at least this much IOPS (beyond the spread), or it stops
    explode_factor: float = 4.0  # p99 growing more than this for a doubling of the I/O in flight stops the search
    repeats: int = 3  # passes of a setting that might be the peak: its spread judges gains, its mean is the peak
    max_iodepth: int = 256
    max_jobs: int = 16
    levels: tuple[int, ...] = DEFAULT_LEVELS
    p99_bound_ns: float | None = None  # report the highest IOPS whose p99 stays at or under this


@dataclass(frozen=True)
class Configurations:
    """A suite's [configurations]: the settings it runs once per value of, as `run --fs`, `--write-cache` and
    `--overprovision` give them (an option given to `run` replaces the suite's)."""

    condition: tuple[str, ...] = ()  # 'fresh', 'full:3'
    fs: tuple[str, ...] = ()
    write_cache: tuple[str, ...] = ()  # 'off', 'on'
    overprovision: tuple[int, ...] = ()  # percent of the device left unused

    @property
    def count(self) -> int:
        """The runs they make: one per combination."""
        lists = (self.condition, self.fs, self.write_cache, self.overprovision)
        return math.prod(max(len(values), 1) for values in lists)

    def as_options(self) -> dict:
        """The run options they stand for, in the options' own syntax, by the option's name."""
        return {"condition": ",".join(self.condition) or None, "fs": self.fs,
                "write_cache": ",".join(self.write_cache) or None,
                "overprovision": ",".join(map(str, self.overprovision)) or None}
