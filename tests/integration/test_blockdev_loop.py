"""Block-device safety rules against real loop devices backed by files in tmp_path."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from disklab.errors import SafetyError
from disklab.targets import blockdev
from tests.integration.conftest import IMAGE_BYTES, NEEDS_LOOP_DEVICES, require, run, wait_for

pytestmark = [pytest.mark.integration, *NEEDS_LOOP_DEVICES]


def test_blank_loop_device_needs_only_destroy_data(attach_loop: Callable[..., str]) -> None:
    device = blockdev.probe_block_device(attach_loop())
    with pytest.raises(SafetyError, match=f"writes to {device.path} .*add --destroy-data to allow it"):
        blockdev.check_device_writable(device, destroy_data=False, force=False)
    blockdev.check_device_writable(device, destroy_data=True, force=False)


def test_ext4_loop_device_needs_force(attach_loop: Callable[..., str]) -> None:
    require("mkfs.ext4")
    path = attach_loop()
    run("mkfs.ext4", "-q", path)
    device = blockdev.probe_block_device(path)
    with pytest.raises(SafetyError, match="carries an ext4 file system; add --destroy-data --force"):
        blockdev.check_device_writable(device, destroy_data=True, force=False)
    blockdev.check_device_writable(device, destroy_data=True, force=True)


def test_mounted_loop_device_is_refused_even_with_force(
    attach_loop: Callable[..., str], mount: Callable[[str], Path]
) -> None:
    require("mkfs.ext4")
    path = attach_loop()
    run("mkfs.ext4", "-q", path)
    mount_point = mount(path)
    device = blockdev.probe_block_device(path)
    with pytest.raises(SafetyError) as refusal:
        blockdev.check_device_writable(device, destroy_data=True, force=True)
    message = str(refusal.value)
    assert f"is mounted ({path} on {mount_point})" in message
    assert f"release it first (umount {mount_point})" in message and "not even with --force" in message
    assert "busy" not in message, "the mount explains why the kernel refuses an exclusive open"


def test_mounted_partition_makes_whole_loop_device_refused(
    attach_loop: Callable[..., str], mount: Callable[[str], Path], tmp_path: Path
) -> None:
    require("sfdisk")
    require("mkfs.ext4")
    require("partx")
    image = tmp_path / "partitioned.img"
    with image.open("wb") as handle:
        handle.truncate(IMAGE_BYTES)
    subprocess.run(["sfdisk", "-q", str(image)], input="label: gpt\n,\n", text=True, check=True, capture_output=True)
    path = attach_loop(image.name, losetup_options=("--partscan",))
    partition = f"{path}p1"
    if not wait_for(lambda: os.path.exists(partition), seconds=1.0):
        # Kernels built without partition-table parsers ignore --partscan; partx parses in user space.
        run("partx", "-a", path)
    if not wait_for(lambda: os.path.exists(partition)):
        pytest.skip(f"the kernel created no partition node for {path}")

    device = blockdev.probe_block_device(path)
    use = blockdev.inspect_device_use(device)
    assert use.partitions == (f"{device.name}p1",)
    assert "gpt partition table" in use.signatures
    with pytest.raises(SafetyError, match=f"has partitions {device.name}p1; add --destroy-data --force"):
        blockdev.check_device_writable(device, destroy_data=True, force=False)

    run("mkfs.ext4", "-q", partition)
    mount_point = mount(partition)
    with pytest.raises(SafetyError, match=f"is mounted \\({partition} on {mount_point}\\)"):
        blockdev.check_device_writable(device, destroy_data=True, force=True)
    with pytest.raises(SafetyError, match="is mounted"):
        blockdev.check_device_writable(blockdev.probe_block_device(partition), destroy_data=True, force=True)


@pytest.mark.parametrize("sector_size", [512, 4096])
def test_probe_matches_blockdev(attach_loop: Callable[..., str], sector_size: int) -> None:
    require("blockdev")
    path = attach_loop(losetup_options=("--sector-size", str(sector_size)))
    device = blockdev.probe_block_device(path)
    rdev = os.stat(path).st_rdev
    assert (device.name, device.major, device.minor) == (Path(path).name, os.major(rdev), os.minor(rdev))
    assert device.size_bytes == int(run("blockdev", "--getsize64", path)) == IMAGE_BYTES
    assert device.logical_block_size == int(run("blockdev", "--getss", path)) == sector_size
    assert device.physical_block_size == int(run("blockdev", "--getpbsz", path))
    assert device.read_only is False


def test_read_only_loop_device_is_refused(attach_loop: Callable[..., str]) -> None:
    device = blockdev.probe_block_device(attach_loop(losetup_options=("--read-only",)))
    assert device.read_only
    with pytest.raises(SafetyError, match="is read-only"):
        blockdev.check_device_writable(device, destroy_data=True, force=True)


def test_symlink_resolves_to_the_loop_device(attach_loop: Callable[..., str], tmp_path: Path) -> None:
    path = attach_loop()
    alias = tmp_path / "by-id-alias"
    alias.symlink_to(path)
    device = blockdev.probe_block_device(str(alias))
    assert (device.path, device.name) == (str(alias), Path(path).name)


def test_exclusively_opened_loop_device_is_busy(attach_loop: Callable[..., str]) -> None:
    path = attach_loop()
    holder = os.open(path, os.O_RDONLY | os.O_EXCL)
    try:
        device = blockdev.probe_block_device(path)
        assert blockdev.inspect_device_use(device).busy
        with pytest.raises(SafetyError, match="is busy"):
            blockdev.check_device_writable(device, destroy_data=True, force=True)
    finally:
        os.close(holder)
    blockdev.check_device_writable(device, destroy_data=True, force=False)


def test_loop_device_used_as_swap_is_refused(attach_loop: Callable[..., str], request: pytest.FixtureRequest) -> None:
    require("mkswap")
    require("swapon")
    path = attach_loop()
    run("mkswap", path)
    enabled = subprocess.run(["swapon", path], capture_output=True, text=True)
    if enabled.returncode != 0:
        pytest.skip(f"swapon is not allowed here: {enabled.stderr.strip()}")
    request.addfinalizer(lambda: run("swapoff", path))
    device = blockdev.probe_block_device(path)
    assert blockdev.inspect_device_use(device).swap == (path,)
    with pytest.raises(SafetyError, match=f"is used as swap \\({path}\\)"):
        blockdev.check_device_writable(device, destroy_data=True, force=True)


def test_a_loop_devices_io_runs_in_kernel_threads_which_contention_leaves_out(attach_loop: Callable[..., str]) -> None:
    """Why system/contention.py subtracts the kernel's threads: fio's writes to a loop device are done by kernel
    workers (up to a CPU on this VM), which would otherwise flag every test of a loop device as beside other work."""
    require("fio")
    from disklab.system.cpu import kernel_threads_cpu_s

    device = attach_loop()
    before = kernel_threads_cpu_s()
    run("fio", "--name=w", f"--filename={device}", "--rw=randwrite", "--bs=4k", "--iodepth=32", "--direct=1",
        "--ioengine=libaio", "--size=32M", "--loops=8", "--output-format=json")
    assert kernel_threads_cpu_s() - before > 0.05, "256 MiB of 4 KiB writes took the loop workers no CPU time"
