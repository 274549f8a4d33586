"""The whole machine's CPU use over an interval, from /proc/stat: pgbench and the server share the machine, and a
database benchmark that saturates the CPU measures the CPU, not the disk (M3 asks how loaded the CPU is); other
processes' CPU time beside a test is contention (system/contention.py)."""

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
PROC_STAT = PROC / "stat"
PF_KTHREAD = 0x00200000  # a kernel thread, in the flags of /proc/PID/stat


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative clock ticks of all CPUs."""

    user: int  # user + nice
    system: int  # system + irq + softirq
    iowait: int
    total: int
    interrupts: int = 0  # irq + softirq (in system too): the completions of every I/O, whoever issued it


@dataclass(frozen=True)
class CpuUse:
    usr_percent: float
    sys_percent: float
    iowait_percent: float


def read_cpu_times(stat_text: str | None = None) -> CpuTimes:
    """The first line: "cpu  user nice system idle iowait irq softirq steal guest guest_nice"."""
    text = PROC_STAT.read_text() if stat_text is None else stat_text
    ticks = [int(v) for v in text.splitlines()[0].split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = (ticks + [0] * 8)[:8]
    # guest time is already counted in user time
    return CpuTimes(user + nice, system + irq + softirq, iowait, user + nice + system + idle + iowait + irq + softirq + steal,
                    irq + softirq)


def cpu_use(before: CpuTimes, after: CpuTimes) -> CpuUse:
    elapsed = after.total - before.total
    if elapsed <= 0:
        return CpuUse(0.0, 0.0, 0.0)
    return CpuUse(
        100 * (after.user - before.user) / elapsed, 100 * (after.system - before.system) / elapsed,
        100 * (after.iowait - before.iowait) / elapsed,
    )


def kernel_threads_cpu_s() -> float:
    """CPU seconds the kernel's own threads have used so far (the threads alive now). A loop device's reads and
    writes run in kernel workers on behalf of whoever issued them: up to a whole CPU beside fio on this VM.

    Read twice around every test, of every process on the machine: raw reads of bytes, a third of the time of a
    text file's (0.64 against 1.7 ms for 85 processes here; a server's thousands of processes cost that many times)."""
    ticks = 0
    for name in os.listdir(PROC):
        if not name.isdigit():
            continue
        try:
            stat = _read_bytes(f"{PROC}/{name}/stat")
        except OSError:  # gone since the listing
            continue
        # after "(comm)": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
        fields = stat[stat.rindex(b")") + 2:].split()
        if int(fields[6]) & PF_KTHREAD:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _read_bytes(path: str) -> bytes:
    """A /proc file's first 4 KiB in one read (a stat line is a few hundred bytes)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)
