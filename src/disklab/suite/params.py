"""The test parameters a suite may set: one registry for defaults, validation and help."""

import re
from dataclasses import dataclass
from typing import Any, Callable

from disklab.suite.fio_options import fio_option_text
from disklab.units import brief, parse_duration, parse_size

PATTERNS = ("sequential", "random")
DIRECTIONS = ("read", "write", "mixed")
SYNC_MODES = ("none", "fsync", "fdatasync", "dsync")
BIT_DEPTHS = (8, 10, 12, 16)


def _choice(*allowed: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if value not in allowed:
            raise ValueError(f"{brief(value)} is not one of {', '.join(allowed)}")
        return value

    return convert


def int_range(low: int, high: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{brief(value)} is not a whole number")
        if not low <= value <= high:
            raise ValueError(f"{value} is outside {low}..{high}")
        return value

    return convert


def _positive_size(value: Any) -> int:
    size = parse_size(value)
    if size <= 0:
        raise ValueError(f"{brief(value)} must be larger than zero")
    return size


def _size_or_all(value: Any) -> int | None:
    """'all' is the whole target: a device or an existing file."""
    return None if value == "all" else _positive_size(value)


def _optional(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """0 or "none" switches an optional setting off."""

    def optional(value: Any) -> Any:
        if value in (0, "none", "off"):
            return None
        return convert(value)

    return optional


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{brief(value)} is not true or false")
    return value


def _direction(value: Any) -> str:
    """Trims are refused here: fio trims only block devices (and a few engines and file systems), a directory or file
    target would fail mid-run, and disklab stores trim figures from imported fio output only."""
    if value in ("trim", "trimwrite"):
        raise ValueError(f"{value} is for imported fio results only (disklab import); a suite's direction is one of "
                         f"{', '.join(DIRECTIONS)}")
    return _choice(*DIRECTIONS)(value)


def _engine(value: Any) -> str:
    if not isinstance(value, str) or not value.replace("_", "").isalnum():
        raise ValueError(f"{brief(value)} is not an fio engine name (or 'auto')")
    return value


def _bssplit(value: Any) -> str:
    """fio's syntax, e.g. 4k/20:64k/50:256k/20:2m/10; the shares must add up to 100."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{brief(value)} is not a block-size split such as 4k/20:64k/50:256k/20:2m/10")
    total = 0
    for part in value.split(":"):
        size, slash, share = part.partition("/")
        if not slash or not (share.isascii() and share.isdigit()) or len(share) > 3:
            raise ValueError(f"{brief(part)} in {brief(value)} is not SIZE/PERCENT")
        _positive_size(size)
        total += int(share)
    if total != 100:
        raise ValueError(f"the shares of {brief(value)} add up to {total}, not 100")
    return value


_REGION = re.compile(r"^(whole|(first|last):\s*(\S+))$")


def _region(value: Any) -> str:
    """'whole', 'first:10%', 'first:5GB' or 'last:5GB' of the device or test file."""
    match = _REGION.match(value.strip()) if isinstance(value, str) else None
    if not match:
        raise ValueError(f"{brief(value)} is not a region (whole, first:10%, first:5GB, last:5GB)")
    amount = match.group(3)
    if amount:
        if amount.endswith("%"):
            percent = amount[:-1]
            if not (percent.isascii() and percent.isdigit()) or len(percent) > 3 or not 0 < int(percent) <= 100:
                raise ValueError(f"{brief(value)}: the share must be 1% to 100%")
        else:
            _positive_size(amount)
    return str(value).strip().replace(" ", "")


MAX_FRAME_SIDE = 100_000  # pixels; beyond any camera, and frame files stay far below the size limit


def _frame_size(value: Any) -> str:
    match = re.match(r"^(\d{1,6})x(\d{1,6})$", value, re.ASCII) if isinstance(value, str) else None
    if not match or not all(0 < int(side) <= MAX_FRAME_SIDE for side in match.groups()):
        raise ValueError(f"{brief(value)} is not a frame size such as 5120x2700 (sides of 1 to {MAX_FRAME_SIDE} "
                         "pixels)")
    return value


def _bit_depth(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in BIT_DEPTHS:
        raise ValueError(f"{brief(value)} is not one of {', '.join(map(str, BIT_DEPTHS))}")
    return value


def _log_interval(value: Any) -> float:
    """fio's logging windows are whole milliseconds; a window of 0 would log every single I/O."""
    seconds = parse_duration(value)
    if seconds < 0.001:
        raise ValueError(f"{brief(value)} is shorter than 1ms, fio's shortest logging window")
    return seconds


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
        Param("direction", _direction, "read", "read, write, or mixed (with rwmixread)"),
        Param("rwmixread", int_range(0, 100), 50, "read share in percent of a mixed test"),
        Param("bs", _positive_size, 4096, "block size, e.g. 4k, 1M"),
        Param("bssplit", _optional(_bssplit), None, "block-size split in fio's syntax, e.g. 4k/20:64k/50:256k/20:2m/10"),
        Param("iodepth", int_range(1, 65536), 1, "queue depth per job"),
        Param("jobs", int_range(1, 4096), 1, "parallel jobs (fio numjobs)"),
        Param("region", _region, "whole", "part of the target: whole, first:10%, first:5GB, last:5GB"),
        Param("size", _size_or_all, 1024**3, "data-set size: test file size or device extent ('all': the whole device)"),
        Param("nrfiles", int_range(1, 10**7), 1, "number of files of a file-set test (directory targets)"),
        Param("filesize", _optional(_positive_size), None, "size of each file of a file-set test"),
        Param("runtime", parse_duration, 5.0, "measured time per test (the cap, when time_based is false), e.g. 5s"),
        Param("time_based", boolean, True, "run for the whole runtime (true) or once over the data set (false)"),
        Param("ramp", parse_duration, 0.0, "warm-up time before measuring, e.g. 1s"),
        Param("pause", parse_duration, 0.0, "idle time before the test, so the device can settle, e.g. 30s"),
        Param("rate", _optional(_positive_size), None, "bandwidth limit per job in bytes/s, e.g. 100M"),
        Param("rate_iops", _optional(int_range(1, 10**9)), None, "IOPS limit per job"),
        Param("sync", _choice(*SYNC_MODES), "none", "flush after every write: fsync, fdatasync, or dsync (O_DSYNC)"),
        Param("log_interval", _optional(_log_interval), None, "log IOPS, bandwidth and latency every interval, e.g. 1s"),
        Param("frame_size", _optional(_frame_size), None, "video frame in pixels, e.g. 5120x2700: one file per frame"),
        Param("bit_depth", _bit_depth, 10, "bits per colour channel of a video frame (RGB)"),
        Param("fps", int_range(1, 1000), 24, "video frame rate: frames per second each frame test must hold"),
        Param("direct", boolean, True, "bypass the page cache (O_DIRECT)"),
        Param("engine", _engine, "auto", "fio ioengine; auto picks io_uring, else libaio"),
        Param("fio", _optional(fio_option_text), None, "more of fio's options, handed to fio as written, one per line "
              "as in a job file, e.g. 'norandommap' or 'random_distribution=zipf:1.2'"),
    )
}
