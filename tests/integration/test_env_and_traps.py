"""A run records its environment and SMART status; a buffered test on a cached small file is flagged, and so is
every test on a target held in RAM (tmpfs, zram, a loop device over a file on tmpfs), but not one on the real disk."""

import html
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from disklab.env.registry import DEVICE_KEYS, KEYS
from tests.integration.conftest import NEEDS_FIO, Disklab, error_lines, require, run

pytestmark = [pytest.mark.integration, NEEDS_FIO]

CACHED = """
name = "cached"
[defaults]
runtime = "1s"
ramp = "0s"
pause = "0s"
size = "64MiB"
direct = false
[[group]]
name = "RND4K buffered"
label = "RND4K buffered read"
pattern = "random"
bs = "4k"
"""


def test_a_buffered_test_on_a_cached_small_file_is_flagged_as_a_cache_artefact(tmp_path, disklab):
    suite, target = tmp_path / "cached.toml", tmp_path / "target"
    suite.write_text(CACHED)
    target.mkdir()
    result = disklab("run", str(suite), "--target", str(target))
    assert result.returncode == 0, result.stderr
    (run,) = disklab.runs()
    (test,) = disklab.tests(run["id"])
    flags = disklab.query("SELECT flag, message FROM test_flags WHERE test_id = ? AND flag != 'busy-machine'",
                          (test["id"],))  # other work beside the test (another suite running) is flagged too
    assert [f["flag"] for f in flags] == ["page-cache"]
    assert "page cache can serve this; M3 asks for at least 2x RAM" in flags[0]["message"]
    shown = disklab("show", "last").stdout
    assert "RND4K buffered read: page-cache: buffered I/O on 64MiB" in shown.replace("\n", " ")
    assert "M3 asks for at least 2x RAM" in shown.replace("\n", "")


def test_a_runs_environment_shows_the_keys_for_a_file_on_the_root_disk(tmp_path, disklab):
    target = tmp_path / "target"
    target.mkdir()
    result = disklab("run", "quick", "--target", str(target), "--runtime", "1", "--ramp", "0", "--size", "16M",
                     "--read-only")
    assert result.returncode == 0, result.stderr
    env = recorded_env(disklab)
    for key in set(KEYS) - {"resumed_with"}:
        assert key in env or KEYS[key].optional, key
    assert env["kernel"] and env["fio_version"].startswith("fio-3") and env["cpu_count"] >= 1 and env["ram_bytes"] > 0
    assert env["fs_type"] and env["fs_mount_point"] and env["fs_mount_options"]
    assert env["smart"]  # read, or "not available: <reason>" (this machine's virtio disk has no SMART)
    disks = env["devices"].split(", ") if env["devices"] else []
    for disk in disks:
        for field, key in DEVICE_KEYS.items():
            assert f"device.{disk}.{field}" in env or key.optional
        assert env[f"device.{disk}.logical_block_size"] in (512, 4096)
    shown = disklab("show", "last", "--env").stdout
    for label in ("kernel", "distribution", "CPU model", "RAM", "fio version", "file system", "mount options", "SMART"):
        assert label in shown
    for disk in disks:
        assert f"{disk}: I/O scheduler" in shown and f"{disk}: write cache" in shown and "bytes" in shown


def test_json_export_carries_the_environment_and_each_tests_flags(disklab, tmp_path):
    suite = tmp_path / "buffered.toml"
    suite.write_text('name = "b"\n[defaults]\nruntime = "1s"\nsize = "64M"\ndirect = false\n'
                     '[[group]]\nname = "cached"\nbs = "4k"\n')
    assert disklab("run", str(suite), "--target", str(tmp_path)).returncode == 0
    document = json.loads(disklab("show", "last", "--format", "json").stdout)
    assert document["environment"]["kernel"] and "page-cache" in document["tests"][0]["flags"]


# One direct 4 KiB random read: a second of fio, no writes, so a device target needs no --destroy-data.
ONE_READ = """
name = "one-read"
[defaults]
runtime = "1s"
ramp = "0s"
pause = "0s"
size = "16MiB"
[[group]]
name = "RND4K"
label = "RND4K read"
pattern = "random"
bs = "4k"
iodepth = 32
"""
KERNEL = tuple(int(part) for part in re.findall(r"\d+", platform.release())[:2])
MEMORY_FLAG = "memory-target"
MEMORY_REASON = "these figures are memory's, not a disk's (direct I/O does not change that)"


@pytest.fixture
def one_read(tmp_path: Path) -> Path:
    suite = tmp_path / "one-read.toml"
    suite.write_text(ONE_READ)
    return suite


def mounted(fs_type: str, tmp_path: Path, request: pytest.FixtureRequest, *options: str) -> Path:
    """A fresh file system of `fs_type` under tmp_path, unmounted after the test."""
    if os.geteuid() != 0:
        pytest.skip(f"mounting a {fs_type} needs root")
    point = tmp_path / fs_type
    point.mkdir()
    run("mount", "-t", fs_type, *options, fs_type, str(point))
    request.addfinalizer(lambda: run("umount", str(point)))
    return point


@pytest.fixture
def tmpfs(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh 128 MiB tmpfs (room for a 16 MiB test file and disklab's 64 MiB free-space margin)."""
    return mounted("tmpfs", tmp_path, request, "-o", "size=128m")


@pytest.fixture
def zram(request: pytest.FixtureRequest) -> str:
    """A 64 MiB zram device of its own (hot_add), reset and removed afterwards."""
    control = Path("/sys/class/zram-control")
    if os.geteuid() != 0:
        pytest.skip("making a zram device needs root")
    if not control.is_dir():
        subprocess.run(["modprobe", "zram", "num_devices=0"], capture_output=True)
    if not control.is_dir():
        pytest.skip("this kernel has no zram (CONFIG_ZRAM) or zram-control")
    number = (control / "hot_add").read_text().strip()
    request.addfinalizer(lambda: (control / "hot_remove").write_text(number))
    request.addfinalizer(lambda: Path(f"/sys/block/zram{number}/reset").write_text("1"))
    Path(f"/sys/block/zram{number}/disksize").write_text(str(64 * 1024**2))
    return f"/dev/zram{number}"


def recorded_env(disklab: Disklab) -> dict:
    (stored,) = disklab.runs()
    return {r["key"]: json.loads(r["value_json"])
            for r in disklab.query("SELECT * FROM run_env WHERE run_id = ?", (stored["id"],))}


def memory_flags(disklab: Disklab) -> list[str]:
    (stored,) = disklab.runs()
    return [row["message"] for test in disklab.tests(stored["id"])
            for row in disklab.query("SELECT message FROM test_flags WHERE test_id = ? AND flag = ?",
                                     (test["id"], MEMORY_FLAG))]


def assert_flagged_everywhere(disklab: Disklab, result: subprocess.CompletedProcess[str], reason: str) -> None:
    """The flag and its reason: at the end of `disklab run`, in the store, `show`, `show --format json`, the report."""
    assert result.returncode == 0, result.stderr
    line = f"⚑ RND4K read: {MEMORY_FLAG}: {reason}"
    assert line in result.stdout.replace("\n", "")
    assert memory_flags(disklab) == [reason]
    assert line in disklab("show", "last").stdout.replace("\n", "")
    (test,) = json.loads(disklab("show", "last", "--format", "json").stdout)["tests"]
    assert test["flags"][MEMORY_FLAG] == reason
    report = disklab("report", "last", "--output", "-")
    assert report.returncode == 0, report.stderr
    assert f"{MEMORY_FLAG}: {reason}" in html.unescape(report.stdout)


def test_a_directory_on_tmpfs_runs_direct_and_is_flagged_as_memory(disklab, tmpfs, one_read):
    result = disklab("run", str(one_read), "--target", str(tmpfs))
    if KERNEL < (6, 6):  # tmpfs takes O_DIRECT since Linux 6.6; either way the data never leaves RAM
        assert result.returncode == 2 and error_lines(result.stderr) == [
            f"disklab: error: {tmpfs} is on tmpfs, which refuses direct I/O (O_DIRECT); tmpfs keeps its files in RAM, "
            "so nothing measured there is a disk's: set direct = false in the suite to run buffered"]
        return
    reason = f"the file system is tmpfs, which keeps its files in RAM: {MEMORY_REASON}"
    assert_flagged_everywhere(disklab, result, reason)
    (test,) = json.loads(disklab("show", "last", "--format", "json").stdout)["tests"]
    assert test["params"]["direct"] is True


def test_a_zram_device_is_flagged_as_memory(disklab, zram, one_read):
    result = disklab("run", str(one_read), "--target", zram)
    name = Path(zram).name
    assert_flagged_everywhere(disklab, result, f"{name} is zram (compressed RAM): {MEMORY_REASON}")
    env = recorded_env(disklab)
    assert env["devices"] == name and env[f"device.{name}.ram_backing"] == "zram (compressed RAM)"
    assert f"{name}: held in RAM" in disklab("show", "last", "--env").stdout


def test_a_loop_device_over_a_file_on_tmpfs_is_flagged_as_memory(disklab, tmpfs, one_read, request):
    require("losetup")
    image = tmpfs / "disk.img"
    with image.open("wb") as handle:
        handle.truncate(32 * 1024**2)
    device = run("losetup", "--find", "--show", str(image)).strip()
    request.addfinalizer(lambda: run("losetup", "-d", device))
    result = disklab("run", str(one_read), "--target", device)
    reason = (f"{Path(device).name} is a loop device over {image}, a file on tmpfs ({tmpfs}): {MEMORY_REASON}")
    assert_flagged_everywhere(disklab, result, reason)


def test_a_directory_on_the_real_disk_is_not_flagged_as_memory(disklab, one_read, request):
    target = Path(tempfile.mkdtemp(prefix="disklab-test-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(target, ignore_errors=True))
    result = disklab("run", str(one_read), "--target", str(target))
    assert result.returncode == 0, result.stderr
    assert memory_flags(disklab) == [] and MEMORY_FLAG not in result.stdout
    env = recorded_env(disklab)
    assert env["fs_type"] not in ("tmpfs", "ramfs")
    for disk in (env["devices"] or "").split(", "):
        if disk:
            assert env[f"device.{disk}.ram_backing"] == "none"


def test_a_data_set_within_the_declared_drive_cache_is_flagged_and_the_cache_recorded(disklab, one_read, request):
    target = Path(tempfile.mkdtemp(prefix="disklab-test-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(target, ignore_errors=True))
    result = disklab("run", str(one_read), "--target", str(target), "--cache", "1GiB")
    assert result.returncode == 0, result.stderr
    assert "device-cache: the data set (16MiB) fits in the 1GiB drive or controller cache declared with --cache" \
        in result.stdout
    assert recorded_env(disklab)["declared_cache_bytes"] == 1024**3
    assert "drive / controller cache (declared)" in disklab("show", "last", "--env").stdout
    refused = disklab("run", "pgbench", "--target", str(target), "--cache", "1GiB")
    assert refused.returncode == 2 and "--cache" in refused.stderr  # pgbench suites do not take it


@pytest.fixture
def ramfs(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    return mounted("ramfs", tmp_path, request)


def test_ramfs_refuses_direct_io_in_one_line_that_says_ram_and_a_buffered_run_is_flagged(disklab, ramfs, one_read):
    refused = disklab("run", str(one_read), "--target", str(ramfs))
    assert refused.returncode == 2, refused.stderr
    assert error_lines(refused.stderr) == [
        f"disklab: error: {ramfs} is on ramfs, which refuses direct I/O (O_DIRECT); ramfs keeps its files in RAM, "
        "so nothing measured there is a disk's: set direct = false in the suite to run buffered"]
    assert disklab.runs() == [] and list(ramfs.iterdir()) == []  # the probe's file is gone too
    one_read.write_text(ONE_READ.replace('size = "16MiB"', 'size = "16MiB"\ndirect = false'))
    result = disklab("run", str(one_read), "--target", str(ramfs))  # ramfs has no size: no free-space refusal
    assert_flagged_everywhere(disklab, result, "the file system is ramfs, which keeps its files in RAM: these figures "
                                               "are memory's, not a disk's")
