"""The kernel's block request events as both capture methods deliver them, the copy of a live event stream (blkparse's
output) into a spool file, and the spools' names."""

import errno
import os
import select
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from disklab.system.leftovers import owned_prefix

SPOOL_PREFIX = "disklab-capture-"

ISSUE, COMPLETE, REQUEUE, FORK, LOST = "issue", "complete", "requeue", "fork", "lost"

# (events so far, seconds since the start): a lower layer reports progress through a callable.
Progress = Callable[[int, float], None]


@dataclass(frozen=True)
class BlockEvent:
    """One request event (or a fork, or the kernel's note that it lost events)."""

    kind: str  # ISSUE, COMPLETE, REQUEUE, FORK, LOST
    time_ns: int = 0  # on the tracer's clock; only differences mean anything
    dev: tuple[int, int] = (0, 0)  # (major, minor) as the event names it: the whole disk for a partition's I/O
    sector: int = 0  # 512-byte units, from the start of `dev`
    sectors: int = 0
    bytes: int = 0  # 0 when the method does not say (then sectors x 512)
    rwbs: str = ""  # the kernel's request flags: R, W, D, F... (blk_fill_rwbs)
    pid: int = 0  # the task the event ran in (FORK: the parent)
    child_pid: int = 0  # FORK only
    count: int = 0  # LOST only: how many events


@dataclass(frozen=True)
class Spooled:
    """What a capture method left: the raw events (the caller removes the file or folder) and what the tracer said."""

    spool: Path  # blkparse's text (a file), or tracefs's raw pages and their formats (a folder)
    lost_events: int  # as the tracer counted them (its buffers' overruns, blktrace's dropped events)
    interrupted: bool  # Ctrl-C ended it
    duration_s: float  # from tracing on to tracing off


def seconds_to_ns(text: str) -> int:
    """'23496.605739' (tracefs's text: microseconds) or '0.000065423' (blkparse: nanoseconds) as whole nanoseconds,
    exactly: the fraction's digit count says its unit."""
    whole, _, fraction = text.partition(".")
    return int(whole) * 1_000_000_000 + int((fraction + "000000000")[:9])


def new_spool() -> Path:
    """A temporary file for blkparse's event text, named by our PID (system/leftovers.py); the caller removes it."""
    fd, name = tempfile.mkstemp(prefix=owned_prefix(SPOOL_PREFIX), suffix=".txt")
    os.close(fd)
    return Path(name)


def pump(fd: int, spool: BinaryIO, deadline: float, marker: bytes, on_progress: Progress | None,
         stop: Callable[[], bool] = lambda: False) -> bool:
    """Copy what a non-blocking `fd` delivers into `spool` until the deadline (monotonic), end of file, `stop()` or
    Ctrl-C, reporting the lines holding `marker` (the issues) as progress; returns whether Ctrl-C ended it. The
    caller stops the tracer and drains the rest."""
    started, count, reported = time.monotonic(), 0, 0.0
    try:
        while time.monotonic() < deadline and not stop():
            readable, _, _ = select.select([fd], [], [], max(0.0, min(0.25, deadline - time.monotonic())))
            if readable:
                chunk = read_nonblocking(fd)
                if chunk is None:
                    break
                spool.write(chunk)
                count += chunk.count(marker)
            if on_progress and time.monotonic() - reported >= 0.5:
                reported = time.monotonic()
                on_progress(count, reported - started)
    except KeyboardInterrupt:
        return True
    return False


def drain(fd: int, spool: BinaryIO, until_eof_s: float) -> None:
    """What is left in a non-blocking `fd` once tracing stopped: until it is empty, or until its writer closes it, at
    most `until_eof_s` (a pipe from a program that is finishing)."""
    deadline = time.monotonic() + until_eof_s
    while True:
        if until_eof_s:
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = read_nonblocking(fd)
        if chunk is None or (not chunk and (not until_eof_s or time.monotonic() >= deadline)):
            return
        spool.write(chunk)


def read_nonblocking(fd: int, size: int = 1 << 16) -> bytes | None:
    """b'' when nothing is there yet, None at end of file."""
    try:
        chunk = os.read(fd, size)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
            return b""
        raise
    return chunk or None
