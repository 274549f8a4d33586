"""`disklab capture`: the block requests a device sees, traced by the kernel, written as a trace (an fio iolog v3
and its TRACE.json).

Two ways to trace: Debian's blktrace (its relay files under debugfs), and the block tracepoints through a private
tracefs instance where blktrace is refused, copied in their binary form (tracefs.py, rawevents.py). Either way the
kernel's events are spooled to a temporary file or folder while tracing and turned into records afterwards, as a
stream: issued requests become records, completions give the queue depth at each issue.
"""

import datetime
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from disklab.errors import UserError
from disklab.system.host import host_identity, process_alive
from disklab.system.leftovers import remove_entry, remove_leftovers
from disklab.system.outputs import checked_output
from disklab.system.signals import interrupt_on_termination
from disklab.targets.blockdev import SECTOR_BYTES, probe_block_device
from disklab.trace.blockevents import COMPLETE, FORK, ISSUE, LOST, REQUEUE, BlockEvent, Progress
from disklab.trace.blktrace import BlktraceUnavailable, blkparse_spool_events, capture_blktrace
from disklab.trace.leftovers import capture_leftovers
from disklab.trace.iolog import TraceMeta, TraceRecord, meta_path, write_meta, write_trace
from disklab.trace.rawevents import read_spool
from disklab.trace.tracefs import capture_tracefs

METHODS = ("auto", "blktrace", "tracefs")
DEFAULT_DURATION_S = 10.0
DEFAULT_BUFFER_KB = 16384  # per CPU; the kernel's default (1.4 MiB) overflows within a second at 100k IOPS
NOT_ROOT = "capture needs root: the kernel's block tracing is root-only; run with sudo"
PID_LIMITS = ("I/O the kernel issues on the process's behalf (page-cache writeback, the file system's journal, cache "
              "flushes, requests dispatched by kernel workers) runs in other tasks and is not seen")


@dataclass(frozen=True)
class CaptureRequest:
    device: str
    output: Path
    duration_s: float = DEFAULT_DURATION_S
    method: str = "auto"
    pid: int | None = None
    buffer_kb: int = DEFAULT_BUFFER_KB


@dataclass(frozen=True)
class TracedDevice:
    """The device as the kernel's events name it: a partition's requests carry its disk's number and sectors."""

    path: str
    disk: tuple[int, int]
    start_sector: int  # 0 for a whole disk
    sectors: int

    @property
    def is_partition(self) -> bool:
        return self.start_sector > 0


@dataclass(frozen=True)
class CaptureResult:
    trace: Path
    meta: TraceMeta
    actions: dict[str, int]  # records of each action
    interrupted: bool

    @property
    def records(self) -> int:
        return sum(self.actions.values())


def traced_device(path: str, sysfs_root: str = "/sys") -> TracedDevice:
    device = probe_block_device(path, sysfs_root=sysfs_root)
    folder = (Path(sysfs_root) / "dev" / "block" / f"{device.major}:{device.minor}").resolve()
    if not (folder / "partition").is_file():
        return TracedDevice(path, (device.major, device.minor), 0, device.size_bytes // SECTOR_BYTES)
    major, _, minor = (folder.parent / "dev").read_text().strip().partition(":")
    return TracedDevice(path, (int(major), int(minor)), int((folder / "start").read_text()),
                        device.size_bytes // SECTOR_BYTES)


@dataclass
class RecordBuilder:
    """Kernel events -> trace records, streamed: issues of the device become records (partition offsets made
    relative, flushes syncs, discards trims), completions give the depth in flight at each issue. With `pids`, only
    issues of those processes (followed through forks) are kept; every request still counts as in flight."""

    device: TracedDevice
    check_dev: bool = True  # blktrace traces one device: its events need no check (a partition's may name either)
    pids: set[int] | None = None
    queue_depths: Counter = field(default_factory=Counter)
    left_out: Counter = field(default_factory=Counter)  # why requests were not kept: {reason: count}
    preflushes: int = 0
    lost_events: int = 0  # as the event stream itself reports it

    def records(self, events: Iterable[BlockEvent]) -> Iterator[TraceRecord]:
        in_flight, requeued, depth = Counter(), Counter(), 0
        first_ns, last_us = None, 0
        for event in events:
            if event.kind == LOST:
                self.lost_events += event.count
            elif event.kind == FORK:
                if self.pids is not None and event.pid in self.pids:
                    self.pids.add(event.child_pid)
            elif self.check_dev and event.dev != self.device.disk:
                self.left_out["other device"] += 1
            elif event.kind in (COMPLETE, REQUEUE):
                key = (event.dev, event.sector)
                if in_flight[key] > 0:  # not one issued before tracing began
                    in_flight[key] -= 1
                    depth -= 1
                    requeued[key] += event.kind == REQUEUE
            elif event.kind == ISSUE:
                key = (event.dev, event.sector)
                in_flight[key] += 1
                depth += 1
                if requeued[key]:  # the same request again, after the driver gave it back: recorded once
                    requeued[key] -= 1
                    continue
                if self.pids is not None and event.pid not in self.pids:
                    self.left_out["other processes"] += 1
                    continue
                for action, offset, length in self._actions(event):
                    first_ns = event.time_ns if first_ns is None else first_ns
                    last_us = max(last_us, (event.time_ns - first_ns) // 1000)  # never backwards
                    if action != "sync":
                        self.queue_depths[depth] += 1
                    yield TraceRecord(last_us, self.device.path, action, offset, length)

    def _actions(self, event: BlockEvent) -> list[tuple[str, int, int]]:
        """(action, offset, length) of one issued request: rwbs is [F (cache flush first)] OP [F (FUA)] [S M A...]
        with OP R read, W write, D discard, F flush, N anything else."""
        rwbs = event.rwbs
        preflush = len(rwbs) > 1 and rwbs[0] == "F" and rwbs[1] in "FRWDN"
        op = rwbs[1] if preflush else rwbs[:1]
        if op == "F":
            return [("sync", 0, 0)]
        action = {"R": "read", "W": "write", "D": "trim"}.get(op)
        length = event.bytes or event.sectors * SECTOR_BYTES
        if action is None or length == 0:
            self.left_out[f"other requests ({rwbs})"] += 1
            return []
        start, end = self.device.start_sector, self.device.start_sector + self.device.sectors
        if not start <= event.sector < end or event.sector + length // SECTOR_BYTES > end:
            self.left_out["elsewhere on the disk"] += 1
            return []
        self.preflushes += preflush
        data = (action, (event.sector - start) * SECTOR_BYTES, length)
        return [("sync", 0, 0), data] if preflush else [data]

    def notes(self) -> list[str]:
        notes = []
        if self.device.is_partition:
            notes.append(f"a partition: requests between sectors {self.device.start_sector} and "
                         f"{self.device.start_sector + self.device.sectors} of disk "
                         f"{self.device.disk[0]}:{self.device.disk[1]}, offsets made relative to the partition; "
                         "cache flushes are the whole disk's and are kept")
        if self.preflushes:
            notes.append(f"{self.preflushes} requests asked for a cache flush before their data: each is a sync "
                         "followed by the I/O")
        notes.extend(f"{count} requests left out: {reason}" for reason, count in sorted(self.left_out.items()))
        return notes


def capture(request: CaptureRequest, notify: Callable[[str], None],
            on_progress: Progress | None = None) -> CaptureResult:
    """Trace `request.device`, write the trace and its metadata; `notify` gets what the user should know at once
    (the method chosen and why, tracefs mounted, --pid's limits)."""
    if request.pid is not None and request.method == "blktrace":
        raise UserError("--pid needs --method tracefs (or auto): blktrace cannot tell processes apart")
    if os.geteuid() != 0:
        raise UserError(NOT_ROOT)
    device = traced_device(request.device)
    _check_writable(request.output)
    for removed in remove_leftovers(capture_leftovers()):
        notify(f"removed {removed.what}: {removed.path}")
    if request.pid is not None and (request.pid <= 0 or not process_alive(request.pid)):
        raise UserError(f"--pid {request.pid}: no such process")
    notes: list[str] = []

    def say(line: str) -> None:
        notes.append(line)
        notify(line)

    spool_folder = tempfile.gettempdir()
    if _on_disk(spool_folder, device):
        say(f"the temporary folder {spool_folder} is on the traced disk: the events spooled there while tracing are "
            "in the trace too; set TMPDIR to a folder on another disk")
    if request.pid is not None:
        say(f"--pid {request.pid}: only I/O issued by process {request.pid} and its children; {PID_LIMITS}")
    # The process's tree is read once tracing is on: forks before it are in /proc, forks after it in the trace.
    pids = None if request.pid is None else set()

    def tracing_started() -> None:
        if pids is not None:
            pids.update(process_tree(request.pid))

    captured_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    with interrupt_on_termination():  # a kill ends the capture as Ctrl-C does: trace written, instance removed
        method, done, events_of, check_dev = _trace(request, device, say, on_progress, tracing_started)
    duration_s = round(done.duration_s, 3)
    builder = RecordBuilder(device, check_dev, pids)
    actions = Counter()
    try:  # written whole: no half trace under its name
        write_trace(request.output, _counted(builder.records(events_of(done.spool)), actions), [device.path])
    finally:
        remove_entry(done.spool)
    lost = max(done.lost_events, builder.lost_events)  # the same events, counted by the buffer and in the stream
    if done.interrupted:
        notes.append(f"ended early (Ctrl-C or a termination signal) after {duration_s:.1f} s: the trace holds what was captured until then")
    if lost:
        notes.append(f"INCOMPLETE: the kernel dropped {lost} events while tracing (its buffer filled faster than it "
                     "was read): requests are missing and the queue depths are not to be trusted")
    uname = os.uname()
    meta = TraceMeta(
        method=method, device=device.path, device_bytes=device.sectors * SECTOR_BYTES, duration_s=duration_s,
        captured_at=captured_at, host=host_identity().hostname, kernel=f"{uname.sysname} {uname.release}",
        pid=request.pid, lost_events=lost, queue_depths=dict(sorted(builder.queue_depths.items())),
        notes=tuple(notes + builder.notes()),
    )
    write_meta(request.output, meta)
    return CaptureResult(request.output, meta, dict(actions), done.interrupted)


def _trace(request: CaptureRequest, device: TracedDevice, say: Callable[[str], None], on_progress: Progress | None,
           tracing_started: Callable[[], None]):
    """Trace with blktrace where asked and it works, else tracefs; (method, what it spooled, the spool's reader,
    whether events must be checked for the device)."""
    if request.method in ("auto", "blktrace") and request.pid is None:
        try:
            done = capture_blktrace(device.path, request.duration_s, on_progress)
            say("method: blktrace")
            return "blktrace", done, blkparse_spool_events, False
        except BlktraceUnavailable as exc:
            if request.method == "blktrace":
                raise UserError(f"blktrace cannot trace {device.path}: {exc}; use --method tracefs") from None
            say(f"blktrace: {exc}; using the kernel's block tracepoints (tracefs)")
    elif request.method == "auto":
        say("method: tracefs (blktrace cannot tell processes apart)")
    else:
        say("method: tracefs")
    done = capture_tracefs(device.disk, request.duration_s, request.buffer_kb, request.pid is not None, say,
                           on_progress, tracing_started)
    return "tracefs", done, read_spool, True


def process_tree(pid: int, proc: Path = Path("/proc")) -> set[int]:
    """The task ids of `pid`, its threads and its descendants' (the kernel's events name threads, not processes)."""
    children: dict[int, list[int]] = {}
    for stat in proc.glob("[0-9]*/stat"):
        try:
            # `PID (COMM) STATE PPID ...`: COMM may hold spaces and parentheses, so split after the last ')'.
            text = stat.read_text()
            children.setdefault(int(text.rpartition(")")[2].split()[1]), []).append(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    tree, todo = set(), [pid]
    while todo:
        current = todo.pop()
        tree.add(current)
        tree.update(int(task.name) for task in (proc / str(current) / "task").glob("[0-9]*"))
        todo.extend(child for child in children.get(current, ()) if child not in tree)
    return tree


def _counted(records: Iterable[TraceRecord], actions: Counter) -> Iterator[TraceRecord]:
    for record in records:
        actions[record.action] += 1
        yield record


def _on_disk(folder: str, device: TracedDevice) -> bool:
    """Whether the file system holding `folder` lives on the traced disk (the disk itself or one of its partitions)."""
    number = os.stat(folder).st_dev
    node = Path(f"/sys/dev/block/{os.major(number)}:{os.minor(number)}").resolve()
    disk = Path(f"/sys/dev/block/{device.disk[0]}:{device.disk[1]}").resolve()
    return node == disk or node.parent == disk


def _check_writable(output: Path) -> None:
    """Refused before tracing, not after a long capture: the folder must exist and take a new file."""
    folder = output.parent if str(output.parent) else Path(".")
    checked_output(output, "trace")
    checked_output(meta_path(output), "trace metadata")
    probe = folder / f".{output.name}.disklab-{os.getpid()}"
    try:
        probe.touch()
        probe.unlink()
        if output.exists() and not os.access(output, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as exc:
        raise UserError(f"cannot write the trace to {output}: {exc.strerror or exc}") from None
