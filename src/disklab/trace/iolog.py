"""Traces as fio's own iolog, read and written as streams, with what fio's format cannot hold in a file beside it.

A trace is fio's iolog version 3 (`fio version 3 iolog`; one line per action, `TIME FILE ACTION [OFFSET LENGTH]`,
TIME in microseconds from the start, as fio 3.31+ writes and reads it), so that fio replays it and other tools
read it. Version 2 logs (relative `wait` actions in microseconds, no timestamps) are read too. What the iolog
cannot hold (the device and its size, how and when it was captured, the queue depth the device saw) is kept in
`TRACE.json` beside it (TraceMeta). Records are streamed: a trace of many GB never sits in memory.
"""

import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

from disklab.errors import UserError
from disklab.system.outputs import whole_file, write_error, write_whole
from disklab.system.textfile import open_regular_file, read_text_file
from disklab.units import MAX_SIZE_BYTES, brief

ACTIONS = ("read", "write", "trim", "sync", "datasync")
HEADER_V2, HEADER_V3 = "fio version 2 iolog", "fio version 3 iolog"
META_SUFFIX = ".json"
# Bump when TraceMeta changes shape. 1: first version.
META_FORMAT_VERSION = 1
MAX_DIGITS = 20  # beyond any offset or time (2**64 has 20 digits); Python refuses to convert 4,300 digits or more
MAX_TIME_US = 10**MAX_DIGITS - 1
# A line names a file (at most PATH_MAX, 4,096 bytes) and three numbers: twice that is no trace's line.
MAX_LINE_CHARS = 8192
MAX_COUNT = 2**63 - 1  # what a signed 64-bit integer holds, as every reader of the JSON does
MAX_QUEUE_DEPTH = 2**20  # blk-mq gives a hardware queue at most 10,240 tags; this is a hundred such queues full
PID_MAX_LIMIT = 2**22  # Linux's largest process id


@dataclass(frozen=True)
class TraceRecord:
    """One I/O (or sync) as the trace holds it."""

    time_us: int  # from the start of the trace
    file: str
    action: str  # one of ACTIONS
    offset: int = 0
    length: int = 0


@dataclass(frozen=True)
class TraceMeta:
    """What was traced, how and when; None: not known (an iolog made elsewhere says nothing of it)."""

    method: str  # "tracefs", "blktrace", "fio-iolog" (a log fio wrote), "imported"
    device: str | None = None
    device_bytes: int | None = None
    duration_s: float | None = None
    captured_at: str | None = None
    host: str | None = None
    kernel: str | None = None
    pid: int | None = None  # only this process's I/O was kept
    lost_events: int = 0  # events the kernel dropped while tracing (the trace is incomplete when > 0)
    # Requests in flight at the device when each I/O was issued (needs completions: captures have them,
    # iologs do not): {depth: count}.
    queue_depths: dict[int, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    format_version: int = META_FORMAT_VERSION


def meta_path(trace: Path) -> Path:
    return trace.with_name(trace.name + META_SUFFIX)


def write_meta(trace: Path, meta: TraceMeta) -> None:
    document = asdict(meta)
    document["queue_depths"] = {str(k): v for k, v in sorted(meta.queue_depths.items())}
    write_whole(meta_path(trace), json.dumps(document, indent=2) + "\n", "trace metadata")


def read_meta(trace: Path) -> TraceMeta:
    """The file beside the trace, or what an iolog alone says (its method only). Every field is checked as it is
    read: a wrong type or a value out of range is one UserError naming the file and the field."""
    path = meta_path(trace)
    if not path.exists():
        return TraceMeta(method="fio-iolog")
    text = read_text_file(path, "trace metadata")
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise UserError(f"cannot read {path}: not JSON: {exc}") from None
    except RecursionError:  # json reads nested arrays and objects by recursion
        raise UserError(f"cannot read {path}: arrays or objects nested too deeply") from None
    if not isinstance(document, dict):
        raise UserError(f"cannot read {path}: a JSON {type(document).__name__}, not an object of the trace's metadata")
    version = document.get("format_version")
    if _is_whole(version) and version > META_FORMAT_VERSION:
        raise UserError(f"{path} was written by a newer disklab (format {version}); upgrade disklab to read it")
    if "method" not in document:
        raise UserError(f"cannot read {path}: method is missing (how the trace was made, e.g. \"tracefs\")")
    values = {}
    try:
        for name, check in _META_CHECKS.items():  # keys of other names are left for a later disklab
            if name in document:
                values[name] = check(name, document[name])
    except ValueError as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
    return TraceMeta(**values)


# Each check takes the field's name and its value from the JSON; returns the value or raises a ValueError saying
# what the field must be.

def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a string, not {brief(value)}")
    try:
        value.encode("utf-8")  # a lone surrogate (JSON's \\ud800) could be neither printed nor written
    except UnicodeEncodeError:
        raise ValueError(f"{name} must be Unicode text, not {brief(value)}") from None
    return value


def _whole(least: int, most: int):
    def check(name: str, value: object) -> int:
        if not _is_whole(value) or not least <= value <= most:
            raise ValueError(f"{name} must be a whole number from {least} to {most}, not {brief(value)}")
        return value
    return check


def _optional(check):
    return lambda name, value: None if value is None else check(name, value)


def _seconds(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TIME_US / 1e6:
        raise ValueError(f"{name} must be a number of seconds from 0 to {MAX_TIME_US / 1e6:g} (an iolog's latest "
                         f"time), not {brief(value)}")
    return float(value)


def _depths(name: str, value: object) -> dict[int, int]:
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be an object of {{depth: I/Os}}, not {brief(value)}")
    depths = {}
    for depth, count in value.items():  # JSON's keys are strings
        if not (depth.isascii() and depth.isdigit() and len(depth) <= 8 and 1 <= int(depth) <= MAX_QUEUE_DEPTH):
            raise ValueError(f"{name} must have depths from 1 to {MAX_QUEUE_DEPTH}, not {brief(depth)}")
        depths[int(depth)] = _whole(0, MAX_COUNT)(f"{name}[{depth}]", count)
    return depths


def _notes(name: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{name} must be a list of strings, not {brief(value)}")
    return tuple(_text(f"{name}[{index}]", note) for index, note in enumerate(value))


_META_CHECKS = {
    "method": _text, "device": _optional(_text), "device_bytes": _optional(_whole(0, MAX_SIZE_BYTES)),
    "duration_s": _optional(_seconds), "captured_at": _optional(_text), "host": _optional(_text),
    "kernel": _optional(_text), "pid": _optional(_whole(1, PID_MAX_LIMIT)), "lost_events": _whole(0, MAX_COUNT),
    "queue_depths": _depths, "notes": _notes, "format_version": _whole(0, META_FORMAT_VERSION),
}


def read_trace(path: Path) -> Iterator[TraceRecord]:
    """The I/O records of an iolog (v2 or v3), in file order; file management lines (add/open/close) skipped.
    A malformed line, a special file or a failed read is one UserError naming the file (and line)."""
    with io.TextIOWrapper(open_regular_file(path, "trace"), encoding="utf-8", errors="replace") as handle:
        try:
            header = handle.readline(MAX_LINE_CHARS).strip()
            if header not in (HEADER_V2, HEADER_V3):
                raise UserError(f"{path} is not a fio iolog (its first line must be {HEADER_V3!r} or "
                                f"{HEADER_V2!r}); blktrace files are converted with 'disklab trace import'")
            yield from (_parse_v3 if header == HEADER_V3 else _parse_v2)(_lines(handle, path), path)
        except OSError as exc:  # /proc/self/mem opens as a regular file and fails to be read
            raise UserError(f"cannot read trace {path}: {exc.strerror or exc}") from None


def _lines(handle: IO[str], path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line), each read at most MAX_LINE_CHARS at a time: a file without line ends (a disk image)
    is refused at its first long line, never read into memory whole."""
    number = 1
    while line := handle.readline(MAX_LINE_CHARS):
        number += 1
        if len(line) == MAX_LINE_CHARS and not line.endswith("\n"):
            _malformed(path, number, line)
        yield number, line


def _parse_v3(lines: Iterator[tuple[int, str]], path: Path) -> Iterator[TraceRecord]:
    for number, line in lines:
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 3:
            _number(parts[0], path, number)
            continue  # add, open, close
        if len(parts) != 5 or parts[2] not in ACTIONS:
            _malformed(path, number, line)
        time_us, offset, length = (_number(text, path, number) for text in (parts[0], parts[3], parts[4]))
        yield TraceRecord(time_us, parts[1], parts[2], offset, length)


def _parse_v2(lines: Iterator[tuple[int, str]], path: Path) -> Iterator[TraceRecord]:
    """Version 2 has no timestamps: `wait` actions (microseconds since the previous wait) add up to them."""
    now = 0
    for number, line in lines:
        parts = line.split()
        if not parts or len(parts) == 2:
            continue  # add, open, close
        if len(parts) != 4 or parts[1] not in (*ACTIONS, "wait"):
            _malformed(path, number, line)
        offset, length = (_number(text, path, number) for text in parts[2:])
        if parts[1] == "wait":
            now += offset
            if now > MAX_TIME_US:  # a version 3 line could not hold the time
                raise UserError(f"{path}, line {number}: the waits add up to more than {MAX_DIGITS} digits of µs")
            continue
        yield TraceRecord(now, parts[0], parts[1], offset, length)


def _number(text: str, path: Path, number: int) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > MAX_DIGITS:
        _malformed(path, number, text)
    return int(text)


def _malformed(path: Path, number: int, text: str) -> None:
    raise UserError(f"{path}, line {number}: not an iolog action: {text.strip()[:80]!r}")


def write_trace(path: Path, records: Iterable[TraceRecord], files: Iterable[str]) -> int:
    """An iolog v3 of the records (times must not go backwards), each file added and opened at time 0 and closed
    after the last record; written whole (system/outputs.py): `path` is replaced only once every record is in.
    Returns the records written."""
    files = list(files)
    if any(not name or any(c.isspace() for c in name) for name in files):
        raise UserError(f"an iolog cannot name a file with white space: {files}")
    count, last = 0, 0
    with whole_file(path, "trace") as out:
        try:
            out.write(HEADER_V3 + "\n")
            out.writelines(f"0 {name} {action}\n" for name in files for action in ("add", "open"))
            for record in records:
                out.write(f"{record.time_us} {record.file} {record.action} {record.offset} {record.length}\n")
                count, last = count + 1, record.time_us
            out.writelines(f"{last} {name} close\n" for name in files)
        except OSError as exc:
            raise write_error(path, exc) from None
    return count
