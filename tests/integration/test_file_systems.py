"""`disklab run --fs`, `--write-cache`, `--overprovision`: configurations of a loop device one after another, one
stored run each in one series, the device left unmounted after a run, Ctrl-C and SIGKILL, an over-provisioned level
writing only its share; and the refusals."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.conftest import COMMAND_TIMEOUT_S, NEEDS_FIO, NEEDS_LOOP_DEVICES, Disklab, wait_for

pytestmark = [
    pytest.mark.integration, *NEEDS_LOOP_DEVICES, NEEDS_FIO,
    pytest.mark.skipif(shutil.which("mkfs.xfs") is None or shutil.which("mkfs.ext4") is None,
                       reason="mkfs.xfs (xfsprogs) and mkfs.ext4 (e2fsprogs) are needed"),
]
# mkfs.xfs makes nothing under 300 MB; a sparse image costs only what is written.
IMAGE_BYTES = 512 * 1024 * 1024
SHORT = ("--runtime", "1s", "--ramp", "0", "--size", "64MiB")


def mounted(device: str) -> list[str]:
    """The mount points of `device` now."""
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines() if line.split()[0] == device]


def has_run(disklab: Disklab) -> bool:
    """Whether a run is stored yet (the store may still be being made: no table is not yet a run)."""
    try:
        return bool(disklab.runs())
    except sqlite3.Error:
        return False


def own_mount_points(pid: int) -> list[Path]:
    return sorted(Path(tempfile.gettempdir()).glob(f"disklab-fs-{pid}-*"))


def test_two_file_systems_are_two_runs_of_one_series(disklab: Disklab, attach_loop: Callable[..., str]) -> None:
    device = attach_loop(size_bytes=IMAGE_BYTES)
    result = disklab("run", "quick", "--target", device, "--destroy-data", "--fs", "ext4",
                     "--fs", "xfs:-b size=4096@noatime", *SHORT)
    assert result.returncode == 0, result.stderr
    assert "configuration 2 of 2: xfs -b size=4096 noatime" in result.stderr
    assert not mounted(device)

    runs = disklab.runs()
    assert [(row["name"], row["status"]) for row in runs] == [("ext4", "complete"),
                                                             ("xfs -b size=4096 noatime", "complete")]
    first, second = (json.loads(disklab("show", str(row["id"]), "-f", "json").stdout) for row in runs)
    ext4, xfs = (run["run"]["options"]["configuration"]["file_system"] for run in (first, second))
    assert second["run"]["options"]["configuration"]["label"] == "xfs -b size=4096 noatime"
    assert (ext4["fs"], ext4["mkfs_options"], ext4["mount_options"]) == ("ext4", [], "")
    assert (xfs["fs"], xfs["mkfs_options"], xfs["mount_options"]) == ("xfs", ["-b", "size=4096"], "noatime")
    assert "noatime" in xfs["kernel_mount_options"].split(",") and xfs["device"] == device
    assert xfs["mkfs_command"] == f"mkfs.xfs -f -b size=4096 {device}"
    assert second["run"]["options"]["series"] == runs[0]["id"] and "series" not in first["run"]["options"]
    # The tests ran on the file system made for them, as the environment recorded it.
    assert first["environment"]["fs_type"] == "ext4" and second["environment"]["fs_type"] == "xfs"
    assert second["environment"]["fs_source"] == device

    compared = disklab("compare", "series:last")  # the series of the last run: both, in order
    assert compared.returncode == 0, compared.stderr
    assert "ext4 (run 1) vs xfs -b size=4096 noatime (run 2)" in compared.stdout
    listed = disklab("runs").stdout
    assert "ext4 [series:1]" in listed and "xfs -b size=4096 noatime [series:1]" in listed


def test_ctrl_c_leaves_the_device_unmounted(disklab: Disklab, attach_loop: Callable[..., str]) -> None:
    device = attach_loop(size_bytes=IMAGE_BYTES)
    run = disklab.start("run", "quick", "--target", device, "--destroy-data", "--fs", "ext4", "--runtime", "30s",
                        "--ramp", "0", "--size", "64MiB")
    assert wait_for(lambda: has_run(disklab), seconds=COMMAND_TIMEOUT_S)  # mounted, and a test running
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=COMMAND_TIMEOUT_S)
    assert run.returncode == 130, stderr
    assert not mounted(device) and not own_mount_points(run.pid)
    listed = disklab("runs", "--format", "json")  # as any command lists it (an interrupt at its start included)
    assert [run["status"] for run in json.loads(listed.stdout)["runs"]] == ["interrupted"], listed.stdout
    resumed = disklab("resume", "1")  # its file system was unmounted, and the next --fs would remake it
    assert resumed.returncode == 2 and "ran in a configuration set up for it (ext4)" in resumed.stderr, resumed.stderr


def test_after_kill_9_doctor_unmounts_what_the_run_left(disklab: Disklab, attach_loop: Callable[..., str]) -> None:
    device = attach_loop(size_bytes=IMAGE_BYTES)
    run = disklab.start("run", "quick", "--target", device, "--destroy-data", "--fs", "ext4", "--runtime", "30s",
                        "--ramp", "0", "--size", "64MiB")
    assert wait_for(lambda: has_run(disklab), seconds=COMMAND_TIMEOUT_S)
    run.kill()
    run.communicate(timeout=COMMAND_TIMEOUT_S)  # fio dies with it (its parent-death signal); unmounting waits for it
    (left,) = own_mount_points(run.pid)
    assert mounted(device) == [str(left)]
    result = disklab("doctor")
    assert f"removed a killed run's file system, still mounted: {left}" in result.stdout.splitlines()
    assert not mounted(device) and not left.exists()


@pytest.mark.parametrize("arguments, code, says", [
    (("--fs", "ext4"), 3, "add --destroy-data"),
    (("--destroy-data", "--fs", "zfs"), 2, "not a file system disklab makes"),
    (("--destroy-data", "--fs", "ext4", "--fs", "ext4"), 2, "is given twice"),
    (("--destroy-data", "--fs", "xfs:/dev/sda"), 2, "mkfs options name no device"),
])
def test_refusals_are_one_line(disklab: Disklab, attach_loop: Callable[..., str], arguments, code, says) -> None:
    device = attach_loop(size_bytes=IMAGE_BYTES)
    result = disklab("run", "quick", "--target", device, *arguments, *SHORT)
    assert result.returncode == code and says in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not disklab.runs()


def test_a_directory_or_a_mounted_device_is_refused(disklab: Disklab, attach_loop: Callable[..., str],
                                                    mount: Callable[[str], Path], tmp_path: Path) -> None:
    result = disklab("run", "quick", "--target", str(tmp_path), "--destroy-data", "--fs", "ext4", *SHORT)
    assert result.returncode == 2 and "--fs set up the device under test" in result.stderr, result.stderr
    device = attach_loop(size_bytes=IMAGE_BYTES)
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
    mount(device)
    result = disklab("run", "quick", "--target", device, "--destroy-data", "--force", "--fs", "xfs", *SHORT)
    assert result.returncode == 3 and "mounted" in result.stderr, result.stderr
    assert not disklab.runs()


def test_a_dry_run_says_what_it_would_make_and_makes_nothing(disklab: Disklab,
                                                             attach_loop: Callable[..., str]) -> None:
    device = attach_loop(size_bytes=IMAGE_BYTES)
    result = disklab("run", "quick", "--target", device, "--fs", "xfs:-d su=64k,sw=4@noatime", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert f"mkfs.xfs -f -d su=64k,sw=4 {device}; mount -t xfs -o noatime {device}" in result.stdout
    assert subprocess.run(["blkid", "-p", device], capture_output=True).returncode == 2  # no signature made
    assert not disklab.store_path.exists()


def test_measuring_a_member_first_is_planned_before_the_arrays_and_needs_members(
        disklab: Disklab, attach_loop: Callable[..., str]) -> None:
    members = [attach_loop(f"member{n}.img", size_bytes=IMAGE_BYTES) for n in range(2)]
    result = disklab("run", "quick", "--members", ",".join(members), "--array", "md:raid0", "--measure-member",
                     "--dry-run")
    assert result.returncode == 0, result.stderr
    first, plan = result.stdout.index(f"first: the suite on {members[0]} alone"), result.stdout.index("suite quick")
    assert first < plan < result.stdout.index("configuration 1 of 1 (md raid0 · clean): mdadm --create"), result.stdout
    for given in (("--target", members[0]), ("--target", members[0], "--dry-run")):
        refused = disklab("run", "quick", *given, "--measure-member", *SHORT)
        assert refused.returncode == 2 and refused.stderr.strip() == (
            "disklab: error: --measure-member measures the first of --members alone before the arrays built of "
            "them: give --members and --array"), refused.stderr
    assert not disklab.store_path.exists()


def test_the_write_cache_of_a_loop_device_is_refused_naming_why(disklab: Disklab,
                                                                attach_loop: Callable[..., str]) -> None:
    device = attach_loop(size_bytes=IMAGE_BYTES)
    for extra in ((), ("--fs", "ext4")):
        result = disklab("run", "quick", "--target", device, "--destroy-data", "--write-cache", "on,off", *extra,
                         *SHORT)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip() == (f"disklab: error: --write-cache: {device} is a loop device: it has no drive "
                                         "cache of its own (its backing file's page cache is the kernel's); run "
                                         "without --write-cache")
    assert not disklab.store_path.exists() and not mounted(device)


def test_an_overprovisioned_level_writes_only_its_share_of_the_device(disklab: Disklab,
                                                                      attach_loop: Callable[..., str],
                                                                      tmp_path: Path) -> None:
    device = attach_loop("op.img", size_bytes=256 * 1024 * 1024)
    result = disklab("run", "quick", "--target", device, "--destroy-data", "--overprovision", "0,50",
                     "--runtime", "1s", "--ramp", "0")
    assert result.returncode == 0, result.stderr
    runs = disklab.runs()
    assert [row["name"] for row in runs] == ["OP 0 %", "OP 50 %"]
    options = json.loads(disklab("show", str(runs[1]["id"]), "-f", "json").stdout)["run"]["options"]
    assert options["configuration"]["overprovision"] == {
        "percent": 50, "discard": f"blkdiscard --force {device}", "used_bytes": 128 * 1024 * 1024,
        "device_bytes": 256 * 1024 * 1024}
    # The loop device punches a discarded range out of its sparse image: after the 50 % level's full discard, the
    # image holds data only where that level wrote, which must all lie in its first half.
    with (tmp_path / "op.img").open("rb") as image:
        assert os.lseek(image.fileno(), 0, os.SEEK_DATA) == 0
        with pytest.raises(OSError) as beyond:  # ENXIO: no data from the middle on
            os.lseek(image.fileno(), 128 * 1024 * 1024, os.SEEK_DATA)
        assert beyond.value.errno == errno.ENXIO


def test_overprovision_with_a_file_system_is_refused(disklab: Disklab, attach_loop: Callable[..., str]) -> None:
    result = disklab("run", "quick", "--target", attach_loop(size_bytes=IMAGE_BYTES), "--destroy-data", "--fs", "ext4",
                     "--overprovision", "20", *SHORT)
    assert result.returncode == 2 and "give one of them" in result.stderr, result.stderr


def test_the_overprovision_suite_runs_its_levels_and_shows_steady_state_by_spare_area(
        disklab: Disklab, attach_loop: Callable[..., str], tmp_path: Path) -> None:
    device = attach_loop("op.img", size_bytes=128 * 1024 * 1024)
    planned = disklab("run", "overprovision", "--target", device, "--dry-run")  # the suite's own levels
    assert planned.returncode == 0, planned.stderr
    assert [line.split(":")[0] for line in planned.stdout.splitlines() if line.startswith("configuration ")] == [
        "configuration 1 of 4 (OP 0 %)", "configuration 2 of 4 (OP 20 %)", "configuration 3 of 4 (OP 40 %)",
        "configuration 4 of 4 (OP 60 %)"]
    assert "51MiB" in planned.stdout, "the 60 % level's plan writes its first 40 % only"

    result = disklab("run", "overprovision", "--target", device, "--destroy-data", "--overprovision", "0,50",
                     "--runtime", "1s", "--ramp", "0")
    assert result.returncode == 0, result.stderr
    runs = disklab.runs()
    assert [row["name"] for row in runs] == ["OP 0 %", "OP 50 %"]
    compared = disklab("compare", "series:last")
    assert compared.returncode == 0, compared.stderr
    assert compared.stdout.startswith("Steady state by spare area (over-provisioning, NVMe in a NAS, M4)")
    reached = []
    for row, percent in zip(runs, (0, 50)):
        document = json.loads(disklab("show", str(row["id"]), "-f", "json").stdout)
        steady = document["outcomes"]["steady_state"]
        reached.append(steady["reached"])
        rounds = [t for t in document["tests"] if not t["label"].startswith("precondition")]
        line = next(line for line in compared.stdout.splitlines() if f"│ OP {percent} %" in line)
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        assert cells[:4] == [f"OP {percent} %", f"run {row['id']}", "128MiB" if percent == 0 else "64MiB",
                             str(len(rounds))]
        if steady["reached"]:  # the figure: fio's IOPS of the steady window's rounds, averaged
            first = steady["round"] - len(steady["window"]) + 1
            window = [t["metrics"]["write"]["iops"] for t in rounds[first - 1:steady["round"]]]
            assert cells[4] == "yes" and cells[5].startswith(f"{sum(window) / len(window):,.0f} ±")
        else:  # a busy machine may keep a level from steady state: no figure, no verdict
            assert cells[4:6] == ["no", "-"] and (percent == 0 or cells[7] == "no verdict")

    report = tmp_path / "op.html"
    assert disklab("report", "series:last", "-o", str(report)).returncode == 0
    html = report.read_text()
    assert 'id="spare-area"' in html and 'id="spare-area-rounds"' in html
    assert ('id="spare-area-steady"' in html) == all(reached), "the steady figures over OP need two of them"


def test_a_suites_configurations_need_a_device_and_consent(disklab: Disklab, attach_loop: Callable[..., str],
                                                            tmp_path: Path) -> None:
    result = disklab("run", "overprovision", "--target", str(tmp_path), *SHORT)
    assert result.returncode == 2 and result.stderr.strip() == (
        "disklab: error: the over-provisioning levels of built-in suite 'overprovision' ([configurations]) set up "
        f"the device under test; {tmp_path} is a directory (give the device as --target, e.g. /dev/sdb)")
    device = attach_loop(size_bytes=IMAGE_BYTES)
    result = disklab("run", "overprovision", "--target", device, *SHORT)
    assert result.returncode == 3 and "discarding" in result.stderr and "add --destroy-data" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not disklab.store_path.exists()


def test_fresh_and_full_are_two_runs_each_recording_how_the_device_was_conditioned(
        disklab: Disklab, attach_loop: Callable[..., str], tmp_path: Path) -> None:
    device = attach_loop("cond.img", size_bytes=64 * 1024 * 1024)
    planned = disklab("run", "quick", "--target", device, "--condition", "fresh", "--dry-run")
    assert (f"configuration 1 of 1 (fresh): blkdiscard --force {device} (16 blocks marked before, read back after); "
            "then the suite") in planned.stdout, planned.stdout + planned.stderr
    result = disklab("run", "quick", "--target", device, "--destroy-data", "--condition", "fresh,full:3",
                     "--repeat", "1", "--runtime", "1s", "--ramp", "0", "--size", "16MiB")
    assert result.returncode == 0, result.stderr
    assert "condition full: pass 3 of 3: writing all of" in result.stderr
    runs = disklab.runs()
    assert [row["name"] for row in runs] == ["fresh", "full (written 3x)"]
    fresh, full = (json.loads(disklab("show", str(row["id"]), "-f", "json").stdout)["run"]["options"]["configuration"]
                   ["condition"] for row in runs)
    assert {key: fresh[key] for key in ("label", "state", "method", "command", "read_back")} == {
        "label": "fresh", "state": "fresh", "method": "discard", "command": f"blkdiscard --force {device}",
        # the loop driver punches the discarded range out of its image: disklab's marked blocks read back as zeros
        "read_back": {"blocks": 16, "block_bytes": 4096, "zeros": 16, "marker": 0, "other": 0}}
    assert fresh["verified"].endswith("all read as zeros") and fresh["not_verified"]
    # fio's own count of what each pass wrote: the whole device, three times
    assert [(p["pass"], p["bytes"]) for p in full["written"]] == [(n, 64 * 1024 * 1024) for n in (1, 2, 3)]
    assert f"filename={device}" in full["jobfile"] and "rw=write" in full["jobfile"] and "bs=128k" in full["jobfile"]
    with (tmp_path / "cond.img").open("rb") as image:  # written full: the sparse image has no hole left
        assert os.lseek(image.fileno(), 0, os.SEEK_HOLE) == 64 * 1024 * 1024


@pytest.mark.parametrize("arguments, code, says", [
    (("--condition", "full"), 3, "--condition: conditioning"),
    (("--destroy-data", "--condition", "fresh:secure-erase"), 2, "is not an NVMe namespace"),
    (("--destroy-data", "--condition", "stale"), 2, "give fresh, fresh:secure-erase, full or full:N"),
    (("--destroy-data", "--condition", "fresh", "--overprovision", "20"), 2, "not with --condition"),
])
def test_condition_refusals_are_one_line(disklab: Disklab, attach_loop: Callable[..., str], arguments, code,
                                         says) -> None:
    device = attach_loop(size_bytes=IMAGE_BYTES)
    result = disklab("run", "quick", "--target", device, *arguments, *SHORT)
    assert result.returncode == code and says in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not disklab.store_path.exists()
