"""The kernel's block tracepoints through a private tracefs instance, copied in their binary form while tracing.

A private instance (instances/disklab-PID) has its own buffer, clock, events and filters: the global tracer, and
whatever else traces this machine, is left alone. The instance is removed when the capture ends, also on Ctrl-C.
Each CPU's `trace_pipe_raw` pages are copied as they are into a spool folder with the instance's format files, and
decoded after the capture (rawevents.py): the text `trace_pipe`, which the kernel formats event by event while it is
read, cost fio up to 60 % of its IOPS at 100k+ IOPS here; copying the raw pages took 1 to 2 % of one CPU
(docs/trace.md).
"""

import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from disklab.errors import UserError
from disklab.system.leftovers import dead_entries, owned_prefix, remove_entry
from disklab.trace.blockevents import SPOOL_PREFIX, Progress, Spooled, read_nonblocking
from disklab.trace.rawevents import read_layout

TRACEFS = Path("/sys/kernel/tracing")
OLD_TRACEFS = Path("/sys/kernel/debug/tracing")  # where kernels before 4.1 (and some setups) put it
# instances/disklab-PID: the PID tells a killed capture's instance (still tracing) from a live one's.
INSTANCE_PREFIX = "disklab-"
BLOCK_EVENTS = ("block_rq_issue", "block_rq_complete", "block_rq_requeue")
READ_EVERY_S = 0.1  # a 16 MiB buffer per CPU holds seconds of events at 100k+ IOPS: reading 10 times a second is ample
PIPE_BYTES = 1 << 20  # 256 pages moved per call
TURNS = 8  # calls per CPU in a row
LOST_STATS = ("overrun", "dropped events")  # a per-CPU stats file's lines of events overwritten or refused


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
    spool folder of raw pages (rawevents.read_spool decodes it; the caller removes it); with `follow_forks`, fork
    events too (to tell which process is whose). `tracing_started` is called as soon as the kernel records events."""
    root = tracefs_root(notify)
    missing = [event for event in BLOCK_EVENTS[:2] if not (root / "events" / "block" / event).is_dir()]
    if missing:
        raise UserError(f"this kernel has no block tracepoints {', '.join(missing)} in {root}/events/block")
    instance = root / "instances" / f"{INSTANCE_PREFIX}{os.getpid()}"
    try:
        instance.mkdir()
    except OSError as exc:
        raise UserError(f"cannot create the tracing instance {instance}: {exc.strerror}") from None
    spool = Path(tempfile.mkdtemp(prefix=owned_prefix(SPOOL_PREFIX)))
    try:
        events = _configure(instance, disk_dev, buffer_kb, follow_forks)
        _copy_formats(instance, events, spool)
        page_bytes = read_layout(spool).page_bytes
        cpus = sorted(int(path.name[3:]) for path in (instance / "per_cpu").glob("cpu[0-9]*"))
        with ExitStack() as stack:
            copiers = [stack.enter_context(_PageCopier(instance / "per_cpu" / f"cpu{cpu}" / "trace_pipe_raw",
                                                       spool / f"cpu{cpu}.raw", page_bytes)) for cpu in cpus]
            _write(instance / "tracing_on", "1")
            started = time.monotonic()
            tracing_started()
            interrupted = _copy_pages(copiers, started + duration_s, instance, on_progress)
            _write(instance / "tracing_on", "0")
            traced_s = time.monotonic() - started
            for copier in copiers:
                copier.whole_pages()
                copier.the_rest()
        return Spooled(spool, _lost_events(instance), interrupted, traced_s)
    except BaseException:
        remove_entry(spool)
        raise
    finally:
        _remove(instance)


def _copy_pages(copiers: list["_PageCopier"], deadline: float, instance: Path, on_progress: Progress | None) -> bool:
    """Each CPU's full pages into its file every READ_EVERY_S until the deadline or Ctrl-C (returns whether Ctrl-C
    ended it): a timer, not poll, so that the kernel has no reader to wake; progress is the kernel's count of events
    recorded."""
    started, reported = time.monotonic(), 0.0
    try:
        while time.monotonic() < deadline:
            time.sleep(max(0.0, min(READ_EVERY_S, deadline - time.monotonic())))
            for copier in copiers:
                copier.whole_pages()
            if on_progress and time.monotonic() - reported >= 0.5:
                reported = time.monotonic()
                on_progress(_events_recorded(instance), reported - started)
    except KeyboardInterrupt:
        return True
    return False


class _PageCopier:
    """One CPU's trace_pipe_raw into a file. While tracing, the kernel's full pages move by splice (through a pipe,
    never copied into disklab: what trace-cmd does), many per call; the page the kernel is still filling is read
    once tracing is off."""

    def __init__(self, source: Path, target: Path, page_bytes: int):
        self.page_bytes, self.splicing = page_bytes, True
        self.source = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
        self.pipe = os.pipe()
        self.target = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            fcntl.fcntl(self.pipe[1], fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:
            pass  # a smaller pipe (64 KiB) only means more calls
        self.pipe_bytes = fcntl.fcntl(self.pipe[1], fcntl.F_GETPIPE_SZ) // page_bytes * page_bytes

    def __enter__(self) -> "_PageCopier":
        return self

    def __exit__(self, *_) -> None:
        for fd in (self.source, *self.pipe, self.target):
            os.close(fd)

    def whole_pages(self) -> None:
        """What full pages there are, at most a pipe's worth TURNS times (so that one busy CPU never keeps
        the others waiting)."""
        for _ in range(TURNS):
            if not self.splicing:
                return self.the_rest()
            try:
                moved = os.splice(self.source, self.pipe[1], self.pipe_bytes, flags=os.SPLICE_F_NONBLOCK)
            except BlockingIOError:
                return
            except OSError:  # splice refused (an old kernel, a spool on a file system without it): read instead
                self.splicing = False
                continue
            left = moved
            while left:
                left -= os.splice(self.pipe[0], self.target, left)
            if not moved:
                return

    def the_rest(self) -> None:
        """Pages not full yet: each read hands out one, or what the kernel has of it."""
        while page := read_nonblocking(self.source, self.page_bytes):
            os.write(self.target, page.ljust(self.page_bytes, b"\0"))


def _copy_formats(instance: Path, events: list[str], spool: Path) -> None:
    """What the decoder needs to read the instance's pages: the page and entry headers and each event's fields."""
    shutil.copyfile(instance / "events" / "header_page", spool / "header_page")
    shutil.copyfile(instance / "events" / "header_event", spool / "header_event")
    for event in events:
        shutil.copyfile(instance / "events" / event / "format", spool / f"{event.partition('/')[2]}.format")


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


def _configure(instance: Path, disk_dev: tuple[int, int], buffer_kb: int, follow_forks: bool) -> list[str]:
    """The events enabled, as `GROUP/NAME`."""
    _write(instance / "tracing_on", "0")
    clocks = (instance / "trace_clock").read_text()
    # One clock for every CPU: the default `local` clock may drift between CPUs and misorder the merged stream.
    _write(instance / "trace_clock", "mono" if "mono" in clocks.replace("mono_raw", "").split() else "global")
    _write(instance / "buffer_size_kb", str(buffer_kb))
    major, minor = disk_dev
    enabled = []
    for event in BLOCK_EVENTS:
        folder = instance / "events" / "block" / event
        if folder.is_dir():
            _write(folder / "filter", f"dev == {(major << 20) | minor}")  # the kernel's dev_t: major << 20 | minor
            _write(folder / "enable", "1")
            enabled.append(f"block/{event}")
    if follow_forks:
        _write(instance / "events" / "sched" / "sched_process_fork" / "enable", "1")
        enabled.append("sched/sched_process_fork")
    return enabled


def _events_recorded(instance: Path) -> int:
    """Read and still in the buffers."""
    return _summed(instance, ("entries", "read events"))


def _lost_events(instance: Path) -> int:
    return _summed(instance, LOST_STATS)


def _summed(instance: Path, names: tuple[str, ...]) -> int:
    """Over the CPUs: each has its own buffer, and its own stats."""
    return sum(stats_count(stats.read_text(), names) for stats in (instance / "per_cpu").glob("cpu*/stats"))


def lost_in_stats(text: str) -> int:
    """Events overwritten before they were read (overrun) or refused (dropped events), from a per-CPU stats file."""
    return stats_count(text, LOST_STATS)


def stats_count(text: str, names: tuple[str, ...]) -> int:
    """The sum of the `names:` lines of a per-CPU stats file."""
    total = 0
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in names and value.strip().isdigit():
            total += int(value)
    return total


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
