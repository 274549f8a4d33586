"""fio's windowed logs (log_avg_msec) -> one series per kind and direction, jobs combined. Pure: text in, values out.

A line is `time_ms, value, direction, block_size, offset[, priority]`; with log_avg_msec the value is the
window's mean (IOPS, KiB/s, or latency in ns) and block size and offset are 0. Each job (numjobs) writes
its own files, `disklab_iops.N.log`, and the jobs' timestamps differ, so samples are matched by window index:
- IOPS and bandwidth are sampled by fio's helper thread near each window's end, up to 1 ms early (999, 2001):
  round(t / interval).
- A latency window is closed by the first I/O completing after its end, late by up to the gap between
  completions (1003, 2046, later still in a stall): floor(t / interval).
Windows in which a job completed no I/O in a direction have no line for it.
"""

import re
from collections import defaultdict
from dataclasses import dataclass

from disklab.errors import FioError

# Series kinds in display order, and the log each is read from. clat and slat logs are written but not kept.
KINDS = ("iops", "bw_bytes_per_s", "lat_mean_ns")
_LOG_KINDS = {"iops": "iops", "bw": "bw_bytes_per_s", "lat": "lat_mean_ns"}
# The name job files give fio's logs (write_iops_log=...); fio adds _iops.N.log and the like.
LOG_PREFIX = "disklab"
_LOG_NAME = re.compile(rf"^{LOG_PREFIX}_(?P<log>iops|bw|lat)\.(?P<job>\d+)\.log$")
_DIRECTIONS = {0: "read", 1: "write", 2: "trim"}  # fio's data direction numbers
_BYTES_PER_KIB = 1024


@dataclass(frozen=True)
class SeriesPoint:
    t_ms: int  # end of the window, from the start of measurement (after the ramp)
    value: float


@dataclass(frozen=True)
class Series:
    kind: str  # one of KINDS; the unit is in the name
    direction: str  # read, write or trim
    points: tuple[SeriesPoint, ...]  # in time order, one per window


# (kind, direction) -> job -> window index -> value
_Samples = dict[tuple[str, str], dict[int, dict[int, float]]]


def parse_logs(logs: dict[str, str], interval_ms: int) -> tuple[Series, ...]:
    """IOPS and bandwidth are summed over jobs; latency is averaged over jobs weighted by their IOPS in that window.

    A window gets a latency point only when every job that logged latency in it also logged IOPS: fio's
    helper thread may end before sampling the last window's IOPS while the latency logs still get it, and
    without weights the jobs' means cannot be combined honestly. `logs` maps file names to their text;
    other files (clat, slat) are ignored.
    """
    samples: _Samples = defaultdict(lambda: defaultdict(dict))
    for name, text in logs.items():
        match = _LOG_NAME.match(name)
        if match:
            _read_log(samples, name, text, _LOG_KINDS[match["log"]], int(match["job"]), interval_ms)
    combined = {}
    for (kind, direction), by_job in samples.items():
        if kind == "lat_mean_ns":
            points = _weighted_latency(by_job, samples.get(("iops", direction), {}))
        else:
            points = _summed(by_job)
        if points:
            combined[kind, direction] = Series(
                kind, direction, tuple(SeriesPoint(window * interval_ms, value) for window, value in points)
            )
    return tuple(combined[key] for key in sorted(combined, key=series_order))


def _read_log(samples: _Samples, name: str, text: str, kind: str, job: int, interval_ms: int) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            t_ms, value, direction = (int(field) for field in line.split(",")[:3])
            direction_name = _DIRECTIONS[direction]
        except (ValueError, KeyError) as exc:
            raise FioError(f"fio's log {name}, line {number}, cannot be read: {line!r}") from exc
        window = t_ms // interval_ms if kind == "lat_mean_ns" else round(t_ms / interval_ms)
        by_window = samples[kind, direction_name][job]
        # At exit fio flushes the latency of the few I/Os completed after the last closed window, stamped
        # within that window again; their count is unknown, so the closed window's mean is kept.
        if window not in by_window:
            by_window[window] = float(value * _BYTES_PER_KIB if kind == "bw_bytes_per_s" else value)


def _summed(by_job: dict[int, dict[int, float]]) -> list[tuple[int, float]]:
    totals: dict[int, float] = defaultdict(float)
    for by_window in by_job.values():
        for window, value in by_window.items():
            totals[window] += value
    return sorted(totals.items())


def _weighted_latency(by_job: dict[int, dict[int, float]], iops: dict[int, dict[int, float]]) -> list[tuple[int, float]]:
    windows = sorted({window for by_window in by_job.values() for window in by_window})
    points = []
    for window in windows:
        jobs = [job for job, by_window in by_job.items() if window in by_window]
        weights = [iops.get(job, {}).get(window) for job in jobs]
        if None in weights or sum(weights) == 0:
            continue
        mean = sum(by_job[job][window] * weight for job, weight in zip(jobs, weights)) / sum(weights)
        points.append((window, mean))
    return points


def series_order(key: tuple[str, str]) -> tuple[int, int]:
    """(kind, direction) -> its place: kinds as KINDS lists them, then read, write, trim (and pgbench's transaction)."""
    kind, direction = key
    return KINDS.index(kind), (*_DIRECTIONS.values(), "transaction").index(direction)
