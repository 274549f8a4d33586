"""Traces as fio's own iolog, read and written as streams, with what fio's format cannot hold in a file beside it.

A trace is fio's iolog version 3 (`fio version 3 iolog`; one line per action, `TIME FILE ACTION [OFFSET LENGTH]`,
TIME in microseconds from the start, as fio 3.31+ writes and reads it), so that fio replays it and other tools
read it. Version 2 logs (relative `wait` actions in microseconds, no timestamps) are read too. What the iolog
cannot hold (the device and its size, how and when it was captured, the queue depth the device saw) is kept in
`TRACE.json` beside it (TraceMeta). Records are streamed: a trace of many GB never sits in memory.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import IO

from disklab.errors import UserError

ACTIONS = ("read", "write", "trim", "sync", "datasync")
HEADER_V2, HEADER_V3 = "fio version 2 iolog", "fio version 3 iolog"
META_SUFFIX = ".json"
# Bump when TraceMeta changes shape. 1: first version.
META_FORMAT_VERSION = 1


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
    meta_path(trace).write_text(json.dumps(document, indent=2) + "\n")


def read_meta(trace: Path) -> TraceMeta:
    """The file beside the trace, or what an iolog alone says (its method only)."""
    path = meta_path(trace)
    if not path.exists():
        return TraceMeta(method="fio-iolog")
    try:
        document = json.loads(path.read_text())
        if document.get("format_version", 0) > META_FORMAT_VERSION:
            raise UserError(f"{path} was written by a newer disklab (format {document['format_version']}); "
                            "upgrade disklab to read it")
        known = {f.name for f in fields(TraceMeta)}
        values = {k: v for k, v in document.items() if k in known}
        values["queue_depths"] = {int(k): int(v) for k, v in values.get("queue_depths", {}).items()}
        values["notes"] = tuple(values.get("notes", ()))
        return TraceMeta(**values)
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None


def read_trace(path: Path) -> Iterator[TraceRecord]:
    """The I/O records of an iolog (v2 or v3), in file order; file management lines (add/open/close) skipped.
    A malformed line is one UserError naming the file and line."""
    try:
        handle = path.open(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UserError(f"cannot read trace {path}: {exc.strerror}") from None
    with handle:
        header = handle.readline().strip()
        if header not in (HEADER_V2, HEADER_V3):
            raise UserError(f"{path} is not a fio iolog (its first line must be {HEADER_V3!r} or {HEADER_V2!r}); "
                            "blktrace files are converted with 'disklab trace import'")
        yield from (_parse_v3 if header == HEADER_V3 else _parse_v2)(handle, path)


def _parse_v3(handle: IO[str], path: Path) -> Iterator[TraceRecord]:
    for number, line in enumerate(handle, start=2):
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


def _parse_v2(handle: IO[str], path: Path) -> Iterator[TraceRecord]:
    """Version 2 has no timestamps: `wait` actions (microseconds since the previous wait) add up to them."""
    now = 0
    for number, line in enumerate(handle, start=2):
        parts = line.split()
        if not parts or len(parts) == 2:
            continue  # add, open, close
        if len(parts) != 4 or parts[1] not in (*ACTIONS, "wait"):
            _malformed(path, number, line)
        offset, length = (_number(text, path, number) for text in parts[2:])
        if parts[1] == "wait":
            now += offset
            continue
        yield TraceRecord(now, parts[0], parts[1], offset, length)


MAX_DIGITS = 20  # beyond any offset or time (2**64 has 20 digits); Python refuses to convert 4,300 digits or more


def _number(text: str, path: Path, number: int) -> int:
    if not text.isascii() or not text.isdigit() or len(text) > MAX_DIGITS:
        _malformed(path, number, text)
    return int(text)


def _malformed(path: Path, number: int, text: str) -> None:
    raise UserError(f"{path}, line {number}: not an iolog action: {text.strip()[:80]!r}")


def write_trace(path: Path, records: Iterable[TraceRecord], files: Iterable[str]) -> int:
    """An iolog v3 of the records (times must not go backwards), each file added and opened at time 0 and closed
    after the last record; returns the records written."""
    files = list(files)
    if any(not name or any(c.isspace() for c in name) for name in files):
        raise UserError(f"an iolog cannot name a file with white space: {files}")
    count, last = 0, 0
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER_V3 + "\n")
        out.writelines(f"0 {name} {action}\n" for name in files for action in ("add", "open"))
        for record in records:
            out.write(f"{record.time_us} {record.file} {record.action} {record.offset} {record.length}\n")
            count, last = count + 1, record.time_us
        out.writelines(f"{last} {name} close\n" for name in files)
    return count
