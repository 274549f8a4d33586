"""Debian's blktrace, piped into blkparse (which merges the per-CPU streams in time order), and the lines it prints.

blktrace reads the kernel's relay files under debugfs; where they are refused it prints the reason but does not
exit, so the first second of its error output decides whether it works.
"""

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import IO

from disklab.fio.executor import die_with_parent
from disklab.trace.blockevents import (
    COMPLETE, ISSUE, REQUEUE, BlockEvent, Progress, Spooled, drain, new_spool, pump, seconds_to_ns,
)

# Our own line format, one per event: device, action, flags, seconds.nanoseconds, sector, sectors, bytes, pid.
BLKPARSE_FORMAT = "%D %a %d %T.%9t %S %n %N %p\\n"
_KINDS = {"D": ISSUE, "C": COMPLETE, "R": REQUEUE}
_LINE = re.compile(r"^\s*(?P<major>\d+),(?P<minor>\d+)\s+(?P<action>[A-Z]+)\s+(?P<rwbs>\S+)\s+(?P<time>\d+\.\d+)\s+"
                   r"(?P<sector>\d+)\s+(?P<sectors>\d+)\s+(?P<bytes>\d+)\s+(?P<pid>\d+)\s*$")
_DROPPED = re.compile(r"dropped (\d+)|You have (\d+) \(\s*\d+\) dropped events")
STARTUP_S = 1.0


class BlktraceUnavailable(Exception):
    """blktrace cannot trace here; the message says why, for the fallback's note."""


def parse_blkparse_lines(lines: IO[str]) -> Iterator[BlockEvent]:
    """Events of blkparse output in BLKPARSE_FORMAT; other lines (blkparse's own messages) are skipped."""
    for line in lines:
        match = _LINE.match(line)
        if match is None or match["action"] not in _KINDS:
            continue
        yield BlockEvent(
            _KINDS[match["action"]], seconds_to_ns(match["time"]), (int(match["major"]), int(match["minor"])),
            int(match["sector"]), int(match["sectors"]), int(match["bytes"]), match["rwbs"], int(match["pid"]),
        )


def blkparse_spool_events(spool: Path) -> Iterator[BlockEvent]:
    """The events of a spool file of blkparse's lines."""
    with spool.open(encoding="utf-8", errors="replace") as lines:
        yield from parse_blkparse_lines(lines)


def capture_blktrace(device: str, duration_s: float, on_progress: Progress | None) -> Spooled:
    """`blktrace -d DEVICE -o - | blkparse -i -` for `duration_s` or until Ctrl-C, into a spool file."""
    for tool in ("blktrace", "blkparse"):
        if shutil.which(tool) is None:
            raise BlktraceUnavailable(f"{tool} is not installed (Debian: apt install blktrace)")
    spool = new_spool()
    started = time.monotonic()  # it traces while its first second is watched
    # Own process groups: Ctrl-C in the terminal must reach disklab only, which then stops blktrace in order. If
    # disklab is killed, blktrace gets SIGINT (it tears the kernel's trace down) and blkparse ends.
    tracer = subprocess.Popen(["blktrace", "-d", device, "-a", "issue", "-a", "complete", "-a", "requeue", "-o", "-"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              process_group=0, preexec_fn=partial(die_with_parent, signal.SIGINT))
    parser = subprocess.Popen(["blkparse", "-q", "-i", "-", "-f", BLKPARSE_FORMAT.replace("\\n", "\n")],
                              stdin=tracer.stdout, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              process_group=0, preexec_fn=die_with_parent)
    tracer.stdout.close()
    os.set_blocking(tracer.stderr.fileno(), False)
    os.set_blocking(parser.stdout.fileno(), False)
    errors = b""
    try:
        errors = _startup_errors(tracer)
        refusal = _refusal(errors.decode(errors="replace"))
        if refusal or tracer.poll() is not None:
            raise BlktraceUnavailable(refusal or exited_at_once(tracer.poll(), errors.decode(errors="replace")))
        with spool.open("wb") as out:
            fd = parser.stdout.fileno()
            interrupted = pump(fd, out, started + duration_s, b" D ", on_progress,
                               stop=lambda: tracer.poll() is not None)
            tracer.send_signal(signal.SIGINT)  # blktrace flushes what it holds and tears the kernel's trace down
            traced_s = time.monotonic() - started
            drain(fd, out, until_eof_s=10.0)
        tracer.wait(timeout=10)
        errors += tracer.stderr.read() or b""
        return Spooled(spool, _dropped(errors.decode(errors="replace")), interrupted, traced_s)
    except BaseException:
        spool.unlink(missing_ok=True)
        raise
    finally:
        for process in (tracer, parser):
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        tracer.stderr.close()
        parser.stdout.close()


def _startup_errors(tracer: subprocess.Popen) -> bytes:
    """What blktrace says in its first second (it reports refused relay files there, then waits forever)."""
    errors, deadline = b"", time.monotonic() + STARTUP_S
    while time.monotonic() < deadline and tracer.poll() is None:
        chunk = tracer.stderr.read()
        errors += chunk or b""
        if _refusal(errors.decode(errors="replace")):
            break
        time.sleep(0.05)
    return errors


def _refusal(text: str) -> str | None:
    """'Thread 0 failed open /sys/kernel/debug/block/loop0/trace0: 1/Operation not permitted' -> why."""
    for line in text.splitlines():
        if "failed open" in line and "/trace" in line:
            return f"relay files refused ({line.rpartition('/')[2].strip()})"
        if "BLKTRACESETUP" in line or "FAILED" in line or "Invalid debug path" in line:
            return line.strip()
    return None


def exited_at_once(returncode: int | None, text: str) -> str:
    """Why blktrace stopped at its start: what it said, else its exit status (it may say nothing at all)."""
    said = " ".join(text.split())
    if returncode is not None and returncode < 0:
        status = f"killed by signal {-returncode}"
    else:
        status = f"exit status {returncode}" if returncode is not None else "no exit status"
    if said:
        return f"blktrace exited at once ({status}): {said}"
    return (f"blktrace exited at once ({status}) and said nothing: check that debugfs is mounted "
            "(mount -t debugfs none /sys/kernel/debug) and that the kernel traces block I/O (CONFIG_BLK_DEV_IO_TRACE)")


def _dropped(text: str) -> int:
    return max((int(a or b) for a, b in _DROPPED.findall(text)), default=0)
