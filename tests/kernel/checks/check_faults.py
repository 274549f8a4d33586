"""A device that fails mid-run loses nothing: dm-flakey going down, a dm-error table switched in under a mounted file
system (--fs) and a scsi_debug disk with an unreadable sector each end the run with one line naming the failing test
and fio's error, exit 4, the run stored as failed with the finished test kept, and nothing of disklab's left (no
mount, no folder, no fio, no mapping, the write cache as it was). A device that is healthy again finishes the run by
`resume`; a slow one (dm-delay) is measured as slow.

Each failing run is a two-test suite, a write then a read of the same 16 MiB, that fails in its second test, whose
pause and length leave room for the fault to be switched in once the first is stored, on a loaded host too: not
tests/run_kinds.py's FAILING_SUITE, whose first test reads (the scsi_debug disk's unreadable sectors lie within its
reach), nor one whose second test reads further (fio lays its file out again then, and under --fs fails on the
read-only file system's unlink before any read)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.conftest import Disklab, error_lines, run, wait_for
from tests.kernel.checks.conftest import disk, faulted
from tests.kernel.guest import NVME

SUITE = """
name = "fails-second"

[defaults]
size = "16MiB"
runtime = "1s"
ramp = "0s"
direct = true

[[group]]
name = "first"
pattern = "random"
direction = "write"
bs = "4k"

[[group]]
name = "second"
pattern = "sequential"
direction = "read"
bs = "64k"
pause = "2s"
runtime = "10s"
"""
DELAY_MS = 20
# What a guest under emulation may take to start disklab and run a test; it bounds a hang, it measures nothing.
RUN_S = 300
SCSI_DEBUG = Path("/sys/bus/pseudo/drivers/scsi_debug")


@pytest.fixture
def suite(tmp_path: Path) -> str:
    (tmp_path / "fails-second.toml").write_text(SUITE)
    return str(tmp_path / "fails-second.toml")


@pytest.fixture
def mapping():
    """A dm device over a wiped NVMe namespace (linear, or `table` with {disk} for it), by name; removed afterwards."""
    made = []

    def make(name: str, serial: str, table: str = "linear {disk} 0") -> str:
        under = disk(serial)
        run("wipefs", "-qa", under)
        run("dmsetup", "create", name, "--table", f"0 {sectors(under)} {table.format(disk=under)}")
        made.append(name)
        return f"/dev/mapper/{name}"

    yield make
    for name in reversed(made):
        run("dmsetup", "remove", name)


def sectors(device: str) -> int:
    return int(run("blockdev", "--getsz", device))


def reload(name: str, table: str) -> None:
    run("dmsetup", "reload", name, "--table", table)
    run("dmsetup", "resume", name)


def ended(disklab: Disklab, args: tuple[str, ...],
          after_the_first_test: Callable[[], None] = lambda: None) -> subprocess.CompletedProcess[str]:
    """The run, with `after_the_first_test` done once its first test is stored; it made no dm mapping and left
    none."""
    mappings = dm_names()
    process = disklab.start(*args)
    assert wait_for(lambda: disklab.count_tests() >= 1 or process.poll() is not None, seconds=RUN_S, interval=0.1)
    after_the_first_test()
    out, err = process.communicate(timeout=RUN_S)
    assert dm_names() == mappings
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def dm_names() -> list[str]:
    return sorted(line.split("\t")[0] for line in run("dmsetup", "ls").splitlines() if "\t" in line)


def failed_in_the_second_test(disklab: Disklab, done: subprocess.CompletedProcess[str], error: str) -> dict:
    """Exit 4, no traceback, stderr ending in one error line that names the test and fio's `error`; the run stored
    as failed with that line and the first test; disklab's own folders, mounts and fio gone. The run's row."""
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = error_lines(done.stderr)
    assert done.stderr.splitlines()[-1] == line
    assert line.startswith("disklab: error: test 'second': fio failed (exit 1): fio: io_u error on file ")
    assert f": {error}: read offset=" in line, line
    (stored,) = disklab.runs()
    assert (stored["status"], stored["error"]) == ("failed", line.removeprefix("disklab: error: "))
    assert [t["label"] for t in disklab.tests(stored["id"])] == ["first"]
    guest_share = Path(os.environ["GUEST_OUT"]).parent.name  # the guest's own out share
    assert [entry for entry in os.listdir("/tmp") if entry.startswith("disklab-") and entry != guest_share] == []
    assert "/disklab-fs-" not in Path("/proc/self/mountinfo").read_text()
    assert subprocess.run(["pgrep", "-x", "fio"], capture_output=True).returncode == 1, "fio is still running"
    return stored


def check_a_flakey_device_going_down_fails_the_run_and_back_up_it_is_resumed(disklab: Disklab, mapping, suite: str):
    device, under = mapping("dl-flakey", NVME[0]), disk(NVME[0])
    faulted(device)
    size = sectors(device)
    # Up for 2 s from the reload, then down (every I/O fails) for an hour: in the second test, 10 s after a 2 s pause.
    done = ended(disklab, ("run", suite, "--target", device, "--destroy-data"),
                 lambda: reload("dl-flakey", f"0 {size} flakey {under} 0 2 3600"))
    stored = failed_in_the_second_test(disklab, done, "Input/output error")

    reload("dl-flakey", f"0 {size} linear {under} 0")
    resumed = disklab("resume", str(stored["id"]))
    assert resumed.returncode == 0, resumed.stderr
    (stored,) = disklab.runs()
    assert stored["status"] == "complete"
    assert [(t["label"], t["plan_index"], t["attempt"]) for t in disklab.tests(stored["id"])] == [
        ("first", 0, 1), ("second", 1, 1)]


def check_dm_error_under_a_mounted_file_system_fails_the_run_and_unmounts_it(disklab: Disklab, mapping, suite: str):
    device = mapping("dl-error", NVME[1])
    faulted(device)
    size = sectors(device)
    done = ended(disklab, ("run", suite, "--target", device, "--destroy-data", "--fs", "ext4@errors=remount-ro"),
                 lambda: reload("dl-error", f"0 {size} error"))
    # Whether ext4 has aborted its journal by the run's end (then the test file cannot be removed, which disklab says
    # in a line before its error) is the kernel's timing; either way the file system is unmounted.
    failed_in_the_second_test(disklab, done, "Input/output error")


def check_an_unreadable_sector_of_scsi_debug_fails_the_run_and_its_write_cache_is_restored(disklab: Disklab,
                                                                                          suite: str):
    # opts=2: reads of sectors 0x1234 on (medium_error_start; 10: medium_error_count) get a MEDIUM ERROR; writes work.
    run("modprobe", "scsi_debug", "dev_size_mb=64", "opts=2")
    try:
        run("udevadm", "settle")
        (device,) = [f"/dev/{block.name}" for block in SCSI_DEBUG.glob("adapter*/host*/target*/*/block/*")]
        faulted(device)
        before = cache_state(device)
        assert before == ("WCE 1", "write back"), before  # so that --write-cache off changes it
        done = ended(disklab, ("run", suite, "--target", device, "--destroy-data", "--write-cache", "off"))
        failed_in_the_second_test(disklab, done, "No data available")  # the block layer's word for MEDIUM ERROR
        assert cache_state(device) == before
    finally:  # udev may still hold the disk a moment after the cache's restore rescanned it
        run("udevadm", "settle")
        assert wait_for(lambda: subprocess.run(["modprobe", "-r", "scsi_debug"], capture_output=True).returncode == 0,
                        seconds=30, interval=0.5)


def cache_state(device: str) -> tuple[str, str]:
    """The disk's write cache as sdparm reads it from the disk, and as the kernel uses it."""
    wce = next(line for line in run("sdparm", "--get=WCE=1", device).splitlines() if line.startswith("WCE"))
    return " ".join(wce.split()), Path(f"/sys/block/{Path(device).name}/queue/write_cache").read_text().strip()


def check_a_slow_device_is_measured_as_slow(disklab: Disklab, mapping):
    device = mapping("dl-delay", NVME[2], f"delay {{disk}} 0 {DELAY_MS}")
    done = disklab("run", "--rw", "randread", "--bs", "4k", "--runtime", "1s", "--size", "16M", "--target", device,
                   "-f", "json")
    assert done.returncode == 0, done.stderr
    (test,) = json.loads(done.stdout)["tests"]
    read = test["metrics"]["read"]
    # Every completion waited at least the delay dm-delay adds to each I/O.
    assert read["total_ios"] > 0 and read["clat_mean_ns"] >= DELAY_MS * 1e6
    assert min(read["clat_percentiles_ns"].values()) >= DELAY_MS * 1e6, read["clat_percentiles_ns"]
