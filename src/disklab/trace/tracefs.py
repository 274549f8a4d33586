"""The kernel's block tracepoints through a private tracefs instance, and the text lines its trace_pipe prints.

A private instance (instances/disklab-PID) has its own buffer, clock, events and filters: the global tracer, and
whatever else traces this machine, is left alone. The instance is removed when the capture ends, also on Ctrl-C.
"""

import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from disklab.errors import UserError
from disklab.system.leftovers import dead_entries
from disklab.trace.blockevents import (
    COMPLETE, FORK, ISSUE, LOST, REQUEUE, BlockEvent, Progress, Spooled, drain, new_spool, pump,
    seconds_to_ns,
)

TRACEFS = Path("/sys/kernel/tracing")
OLD_TRACEFS = Path("/sys/kernel/debug/tracing")  # where kernels before 4.1 (and some setups) put it
# instances/disklab-PID: the PID tells a killed capture's instance (still tracing) from a live one's.
INSTANCE_PREFIX = "disklab-"
BLOCK_EVENTS = ("block_rq_issue", "block_rq_complete", "block_rq_requeue")
_KINDS = {"block_rq_issue": ISSUE, "block_rq_complete": COMPLETE, "block_rq_requeue": REQUEUE}
# `fio-14781   [001] ..... 23496.605739: block_rq_issue: 7,0 R 4096 () 7904 + 8 be,0,4 [fio]`: the task name may
# hold spaces and dashes; the flags column (irq-info) may be absent; the timestamp is seconds.microseconds.
_LINE = re.compile(r"^\s*(?P<comm>.*)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:\S{4,5}\s+)?"
                   r"(?P<time>\d+\.\d+):\s+(?P<event>\w+):\s+(?P<body>.*)$")
# Issue: `7,0 R 4096 () 7904 + 8 ...`; complete and requeue have no byte count: `7,0 R () 7904 + 8 ...`.
_REQUEST = re.compile(r"^(?P<major>\d+),(?P<minor>\d+) (?P<rwbs>\S+) (?:(?P<bytes>\d+) )?\(.*?\) "
                      r"(?P<sector>\d+) \+ (?P<sectors>\d+)")
_FORK = re.compile(r"\bpid=(?P<pid>\d+) .*\bchild_pid=(?P<child>\d+)")
_LOST = re.compile(r"^CPU:\s*\d+ \[LOST (?P<count>\d+) EVENTS\]")


def parse_tracefs_lines(lines: IO[str]) -> Iterator[BlockEvent]:
    """Events of trace_pipe text; lines of other events and anything unreadable are skipped."""
    for line in lines:
        match = _LINE.match(line)
        if match is None:
            lost = _LOST.match(line.strip())
            if lost:
                yield BlockEvent(LOST, count=int(lost["count"]))
            continue
        event, body = match["event"], match["body"]
        time_ns, pid = seconds_to_ns(match["time"]), int(match["pid"])
        if event == "sched_process_fork":
            fork = _FORK.search(body)
            if fork:
                yield BlockEvent(FORK, time_ns, pid=int(fork["pid"]), child_pid=int(fork["child"]))
            continue
        request = _REQUEST.match(body) if event in _KINDS else None
        if request is None:
            continue
        yield BlockEvent(
            _KINDS[event], time_ns, (int(request["major"]), int(request["minor"])), int(request["sector"]),
            int(request["sectors"]), int(request["bytes"] or 0), request["rwbs"], pid,
        )


def tracefs_root(notify: Callable[[str], None]) -> Path:
    """Where tracefs is mounted, mounting it (and saying so) if it is not."""
    for root in (TRACEFS, OLD_TRACEFS):
        if (root / "instances").is_dir():
            return root
    result = subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True, text=True)
    if result.returncode != 0 or not (TRACEFS / "instances").is_dir():
        reason = " ".join(result.stderr.split()) or "no instances folder after mounting"
        raise UserError(f"the kernel's tracing file system (tracefs) is not mounted and cannot be mounted on "
                        f"{TRACEFS}: {reason}; capture needs a kernel with CONFIG_FTRACE and block tracepoints")
    notify(f"tracefs was not mounted: mounted it on {TRACEFS} (mount -t tracefs nodev {TRACEFS})")
    return TRACEFS


def capture_tracefs(disk_dev: tuple[int, int], duration_s: float, buffer_kb: int, follow_forks: bool,
                    notify: Callable[[str], None], on_progress: Progress | None,
                    tracing_started: Callable[[], None] = lambda: None) -> Spooled:
    """Trace the block requests of the disk `disk_dev` (major, minor) for `duration_s` or until Ctrl-C, into a
    spool file (the caller removes it); with `follow_forks`, fork events too (to tell which process is whose).
    `tracing_started` is called as soon as the kernel records events."""
    root = tracefs_root(notify)
    missing = [event for event in BLOCK_EVENTS[:2] if not (root / "events" / "block" / event).is_dir()]
    if missing:
        raise UserError(f"this kernel has no block tracepoints {', '.join(missing)} in {root}/events/block")
    instance = root / "instances" / f"{INSTANCE_PREFIX}{os.getpid()}"
    try:
        instance.mkdir()
    except OSError as exc:
        raise UserError(f"cannot create the tracing instance {instance}: {exc.strerror}") from None
    spool = new_spool()
    try:
        _configure(instance, disk_dev, buffer_kb, follow_forks)
        with spool.open("wb") as out:
            fd = os.open(instance / "trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
            try:
                _write(instance / "tracing_on", "1")
                started = time.monotonic()
                tracing_started()
                interrupted = pump(fd, out, started + duration_s, b"block_rq_issue", on_progress)
                _write(instance / "tracing_on", "0")
                traced_s = time.monotonic() - started
                drain(fd, out)
            finally:
                os.close(fd)
        return Spooled(spool, _lost_events(instance), interrupted, traced_s)
    except BaseException:
        spool.unlink(missing_ok=True)
        raise
    finally:
        _remove(instance)


def dead_instances() -> list[Path]:
    """The tracing instances of captures killed by SIGKILL, which trace on until removed (never mounts tracefs)."""
    for root in (TRACEFS, OLD_TRACEFS):
        if (root / "instances").is_dir():
            return [path for path in dead_entries(root / "instances", INSTANCE_PREFIX) if path.is_dir()]
    return []


def remove_instance(instance: Path) -> bool:
    """Tracing stopped and the instance (its buffers, events and filters) gone; False if the kernel refused."""
    try:
        (instance / "tracing_on").write_text("0\n")
        _remove(instance)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return True


def _configure(instance: Path, disk_dev: tuple[int, int], buffer_kb: int, follow_forks: bool) -> None:
    _write(instance / "tracing_on", "0")
    clocks = (instance / "trace_clock").read_text()
    # One clock for every CPU: the default `local` clock may drift between CPUs and misorder the merged stream.
    _write(instance / "trace_clock", "mono" if "mono" in clocks.replace("mono_raw", "").split() else "global")
    _write(instance / "buffer_size_kb", str(buffer_kb))
    major, minor = disk_dev
    for event in BLOCK_EVENTS:
        folder = instance / "events" / "block" / event
        if folder.is_dir():
            _write(folder / "filter", f"dev == {(major << 20) | minor}")  # the kernel's dev_t: major << 20 | minor
            _write(folder / "enable", "1")
    if follow_forks:
        _write(instance / "events" / "sched" / "sched_process_fork" / "enable", "1")


def _lost_events(instance: Path) -> int:
    """Summed over the CPUs: each has its own buffer, and its own stats."""
    return sum(lost_in_stats(stats.read_text()) for stats in (instance / "per_cpu").glob("cpu*/stats"))


def lost_in_stats(text: str) -> int:
    """Events overwritten before they were read (overrun) or refused (dropped events), from a per-CPU stats file."""
    lost = 0
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("overrun", "dropped events") and value.strip().isdigit():
            lost += int(value)
    return lost


def _remove(instance: Path) -> None:
    """rmdir refuses (EBUSY) while a reader still has a file open: retry briefly."""
    for _ in range(20):
        try:
            instance.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)
    instance.rmdir()


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value + "\n")
    except OSError as exc:
        raise UserError(f"cannot write {value!r} to {path}: {exc.strerror}") from None
