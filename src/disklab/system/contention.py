"""What else the machine did while fio measured: other processes' CPU time, and I/O on the target's disks that fio
did not do.

Two runs of one configuration on a shared 2-core VM differ by 2x when other work comes and goes beside them
(RND4K Q1T1: 29,594 vs 16,552 IOPS, each run's passes tight around its own figure): no spread measured inside a run
sees what changed between runs, but this does. Other processes' CPU is the machine's busy time (/proc/stat: user,
nice, system) less this process's and its reaped children's (fio and its job processes: getrusage) and less the
kernel's own threads' (a loop device's I/O runs in kernel workers on fio's behalf: 0.9 CPUs beside fio's 0.7 in
4 KiB random writes on this VM); interrupt time is left out, since every completion of fio's own I/O lands there.
Other I/O is the bytes the devices moved (/proc/diskstats, 512-byte sectors) less the bytes fio reports.
"""

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

from disklab.system.cpu import kernel_threads_cpu_s, read_cpu_times

PROC_DISKSTATS = Path("/proc/diskstats")
SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's own sector size
# The kernel counts CPU time in clock ticks (10 ms): over a shorter window an average says nothing.
MIN_WINDOW_S = 1.0


@dataclass(frozen=True)
class Snapshot:
    at_s: float  # time.monotonic()
    busy_ticks: int  # the whole machine's user + nice + system time, without interrupts
    own_cpu_s: float  # this process and the children it has reaped (fio)
    device_bytes: int | None  # read + written on the devices so far; None: no device to watch
    kernel_threads_s: float = 0.0  # the kernel's threads' CPU time so far (cpu.kernel_threads_cpu_s)


@dataclass(frozen=True)
class Contention:
    seconds: float
    other_cpus: float  # CPUs' worth of time other processes used, on average (0.5: half a CPU)
    other_io_bytes_per_s: float | None  # I/O on the devices that fio did not do; None: not known


def snapshot(devices: tuple[str, ...]) -> Snapshot:
    cpu = read_cpu_times()
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Snapshot(
        at_s=time.monotonic(), busy_ticks=cpu.user + cpu.system - cpu.interrupts,
        own_cpu_s=own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime,
        device_bytes=device_bytes(devices), kernel_threads_s=kernel_threads_cpu_s(),
    )


def contention(before: Snapshot, after: Snapshot, fio_io_bytes: int) -> Contention | None:
    """None when the window is too short to average over (a test of under a second, or no fio at all)."""
    seconds = after.at_s - before.at_s
    if seconds < MIN_WINDOW_S:
        return None
    busy_s = (after.busy_ticks - before.busy_ticks) / os.sysconf("SC_CLK_TCK")
    own_s = after.own_cpu_s - before.own_cpu_s
    other_cpu_s = max(0.0, busy_s - own_s - (after.kernel_threads_s - before.kernel_threads_s))
    other_io = None
    if before.device_bytes is not None and after.device_bytes is not None:
        other_io = max(0, after.device_bytes - before.device_bytes - fio_io_bytes) / seconds
    return Contention(seconds, other_cpu_s / seconds, other_io)


def device_bytes(devices: tuple[str, ...]) -> int | None:
    """Bytes read and written so far on the named devices (kernel names: vda, nvme0n1); None when one is unknown."""
    if not devices:
        return None
    try:
        text = PROC_DISKSTATS.read_text()
    except OSError:
        return None
    sectors = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 10:  # major minor name reads merged sectors_read ms writes merged sectors_written ...
            sectors[fields[2]] = int(fields[5]) + int(fields[9])
    if any(name not in sectors for name in devices):
        return None
    return sum(sectors[name] for name in devices) * SECTOR_BYTES
