"""What else the machine did beside a test: other processes' CPU and other I/O on the target's disks, from the kernel's
own counters, and the busy-machine flag that withholds compare's verdict."""

import os
from pathlib import Path

from disklab.analysis.contention import BUSY_MACHINE, busy_machine, fio_bytes_in_window
from disklab.analysis.withheld import withheld_reason
from disklab.system import contention as measuring
from disklab.system.contention import Contention, Snapshot, contention, device_bytes, snapshot
from disklab.system.cpu import kernel_threads_cpu_s
from tests.unit.test_compare import job


def real_devices() -> list[str]:
    """The disks and partitions this machine's kernel counts."""
    return [line.split()[2] for line in Path("/proc/diskstats").read_text().splitlines()]


def test_device_bytes_add_the_kernels_sector_counts_and_an_unknown_device_is_none():
    name = real_devices()[0]
    fields = next(line.split() for line in Path("/proc/diskstats").read_text().splitlines() if line.split()[2] == name)
    assert device_bytes((name,)) >= (int(fields[5]) + int(fields[9])) * 512
    assert device_bytes(("no-such-disk",)) is None and device_bytes(()) is None


def test_a_snapshot_reads_this_machine(monkeypatch):
    first = snapshot(tuple(real_devices()[:1]))
    sum(i * i for i in range(300_000))  # our own CPU time: never other processes'
    second = snapshot(tuple(real_devices()[:1]))
    assert second.at_s > first.at_s and second.own_cpu_s > first.own_cpu_s and second.busy_ticks >= first.busy_ticks
    monkeypatch.setattr(measuring, "PROC_DISKSTATS", Path("/nonexistent/diskstats"))
    assert snapshot(("vda",)).device_bytes is None


def test_other_cpu_and_io_are_what_the_machine_did_beyond_ours(monkeypatch):
    monkeypatch.setattr(measuring.os, "sysconf", lambda name: 100)  # clock ticks per second
    before = Snapshot(at_s=10.0, busy_ticks=1_000, own_cpu_s=2.0, device_bytes=0)
    after = Snapshot(at_s=14.0, busy_ticks=1_600, own_cpu_s=4.0, device_bytes=500_000_000)
    seen = contention(before, after, fio_io_bytes=300_000_000)
    assert seen == Contention(4.0, (6.0 - 2.0) / 4, 200_000_000 / 4)
    assert contention(before, before, 0) is None
    assert contention(before, Snapshot(10.5, 1_600, 2.0, 0), 0) is None, "half a second: 50 ticks say nothing"
    assert contention(before, Snapshot(14.0, 1_600, 4.0, None), 0).other_io_bytes_per_s is None


def test_the_kernels_own_threads_are_not_other_work(monkeypatch):
    """A loop device's reads and writes run in kernel workers on fio's behalf: the device's work, not other work."""
    monkeypatch.setattr(measuring.os, "sysconf", lambda name: 100)
    before = Snapshot(at_s=10.0, busy_ticks=1_000, own_cpu_s=2.0, device_bytes=None, kernel_threads_s=50.0)
    after = Snapshot(at_s=14.0, busy_ticks=1_600, own_cpu_s=4.0, device_bytes=None, kernel_threads_s=53.0)
    assert contention(before, after, 0).other_cpus == (6.0 - 2.0 - 3.0) / 4
    assert 0 <= kernel_threads_cpu_s() < float("inf")  # this machine's, read from /proc


# /proc/PID/stat lines of this VM (2026-11-29): two kernel threads, a process (not one), one whose name has ") ".
KERNEL_THREAD_STATS = {
    "14": "14 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0 0 0 0 16356 0 0 20 0 1 0 24 0 0 18446744073709551615 0 0 0 0 0 0 "
          "0 2147483647 0 1 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
    "15": "15 (rcu_preempt) I 2 0 0 0 -1 2129984 0 0 0 0 62 3883 0 0 20 0 1 0 24 0 0 18446744073709551615 0 0 0 0 0 0 0 "
          "2147483647 0 1 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
    "1": "1 (process_api) S 0 0 0 0 -1 4194560 363227 634788218 0 44840 2395 20825 4411102 1269152 20 0 14 0 24 "
         "44650496 2987 18446744073709551615 1 1 0 0 0 0 0 4096 1256 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
    "4242": "4242 (a) 2 (b) S 1 0 0 0 -1 4194560 0 0 0 0 700 800 0 0 20 0 1 0 24 0 0 18446744073709551615 0 0 0 0 0 0 0 "
            "0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
}


def test_the_kernel_threads_cpu_time_sums_those_flagged_kernel_threads(tmp_path, monkeypatch):
    """utime + stime of the processes whose flags say PF_KTHREAD; one gone since the listing is passed over."""
    for pid, line in KERNEL_THREAD_STATS.items():
        (tmp_path / pid).mkdir()
        (tmp_path / pid / "stat").write_text(line)
    (tmp_path / "999").mkdir()  # exited between the listing and the read: no stat any more
    (tmp_path / "self").mkdir()
    monkeypatch.setattr("disklab.system.cpu.PROC", tmp_path)
    assert kernel_threads_cpu_s() == (0 + 16356 + 62 + 3883) / os.sysconf("SC_CLK_TCK")


def test_the_busy_machine_flag_names_what_ran_beside_and_withholds_the_verdict():
    fast = job(10_000)  # 40.96 MB/s of its own
    assert busy_machine(Contention(5.0, 0.05, 1e6), fast, ("vda",)) == []
    assert busy_machine(None, fast, ("vda",)) == []
    ((flag, message),) = busy_machine(Contention(5.0, 0.8, 1e6), fast, ("vda",))
    assert flag == BUSY_MACHINE and "0.80 CPUs of other processes' time and 1.0 MB/s of other I/O on vda" in message
    ((_, by_io),) = busy_machine(Contention(5.0, 0.0, 20e6), fast, ("vda",))
    assert "20.0 MB/s of other I/O" in by_io and "10.2 MB/s" in by_io, "a quarter of the test's own 40.96 MB/s"
    assert withheld_reason([BUSY_MACHINE]).startswith("other work ran beside this test (busy-machine)")
    assert withheld_reason(["page-cache"]) is None


def test_fios_bytes_count_its_ramp_too():
    test = type("T", (), {"ramp": 1.0})()
    one_second = job(1000)  # runtime 1000 ms
    assert fio_bytes_in_window(test, one_second) == 2 * sum(d.io_bytes for d in one_second.directions)
