"""The test parameters a suite may set: one registry for defaults, validation and help."""

from dataclasses import dataclass
from typing import Any, Callable

from disklab.units import parse_duration, parse_size

PATTERNS = ("sequential", "random")
DIRECTIONS = ("read", "write", "mixed")


def _choice(*allowed: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"{value!r} is not one of {', '.join(allowed)}")
        return value

    return convert


def _int_range(low: int, high: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{value!r} is not a whole number")
        if not low <= value <= high:
            raise ValueError(f"{value} is outside {low}..{high}")
        return value

    return convert


def _positive_size(value: Any) -> int:
    size = parse_size(value)
    if size <= 0:
        raise ValueError(f"{value!r} must be larger than zero")
    return size


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not true or false")
    return value


def _engine(value: Any) -> str:
    if not isinstance(value, str) or not value.replace("_", "").isalnum():
        raise ValueError(f"{value!r} is not an fio engine name (or 'auto')")
    return value


@dataclass(frozen=True)
class Param:
    name: str
    convert: Callable[[Any], Any]
    default: Any
    help: str


PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("pattern", _choice(*PATTERNS), "random", "access pattern: sequential or random"),
        Param("direction", _choice(*DIRECTIONS), "read", "read, write, or mixed (with rwmixread)"),
        Param("rwmixread", _int_range(0, 100), 50, "read share in percent of a mixed test"),
        Param("bs", _positive_size, 4096, "block size, e.g. 4k, 1M"),
        Param("iodepth", _int_range(1, 65536), 1, "queue depth per job"),
        Param("jobs", _int_range(1, 4096), 1, "parallel jobs (fio numjobs)"),
        Param("runtime", parse_duration, 5.0, "measured time per test, e.g. 5s, 1m"),
        Param("ramp", parse_duration, 0.0, "warm-up time before measuring, e.g. 1s"),
        Param("size", _positive_size, 1024**3, "data-set size: test file size or device region"),
        Param("direct", _bool, True, "bypass the page cache (O_DIRECT)"),
        Param("engine", _engine, "auto", "fio ioengine; auto picks io_uring, else libaio"),
    )
}
