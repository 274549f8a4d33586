"""Writes to a device that something live holds are refused, the holder named, even with --destroy-data --force:
a member of a running RAID5 on NVMe, an LVM physical volume with an active logical volume, a disk under a dm-linear
mapping, a mounted file system, a disk with a mounted partition, a swap device. Each holder is left as it was
(mdadm --examine, pvs, dmsetup table, the mount and its file, /proc/swaps); the unmounted partition beside a mounted
one is written; a file system that nothing mounts is data but nothing live, which --force alone overrides. (Not a
stopped array's member: udev's incremental assembly may take it back into an inactive array, which holds it.)

The refusals run at once (each is a Python start, several seconds under emulation): they write nothing."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.conftest import Disklab, error_lines, run
from tests.kernel.checks.conftest import disk, private_disklab
from tests.kernel.guest import NVME, SATA_HDD, SATA_SSD, SCSI

WRITE = ("run", "--rw", "write", "--bs", "4k", "--runtime", "1s", "--size", "16M", "--destroy-data")
IN_USE = "disklab never writes to a device in use, not even with --force"


@dataclass
class Holders:
    disklab: Disklab
    members: list[str]  # the RAID5's, /dev/md0
    pv: str
    under_dm: str
    mounted: str
    mount_point: Path
    partitioned: str
    partition_mount: Path
    swap: str
    unmounted: str  # a loop device with an ext4 nothing mounts
    before: dict[str, str]  # what each holder looked like before the runs
    outcomes: dict[str, subprocess.CompletedProcess[str]]  # case -> how its run ended


def states(h: Holders) -> dict[str, str]:
    """Each holder as its own tool sees it."""
    return {
        "md": run("mdadm", "--examine", "--brief", h.members[0]),
        "pv": run("pvs", "--noheadings", "-o", "pv_name,vg_name,pv_uuid,lv_count", h.pv),
        "lv": run("lvs", "--noheadings", "-o", "lv_path,lv_active", "dl-vg"),
        "dm": run("dmsetup", "table", "dl-linear"),
        "mounted": run("findmnt", "-n", "-o", "SOURCE", str(h.mount_point)),
        "file": (h.mount_point / "kept").read_text(),
        "partition": run("findmnt", "-n", "-o", "SOURCE", str(h.partition_mount)),
        "swap": Path("/proc/swaps").read_text(),
    }


@pytest.fixture(scope="module")
def holders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Holders]:
    folder = tmp_path_factory.mktemp("safety")
    with ExitStack() as undo:
        members = [disk(serial) for serial in NVME[:3]]
        run("wipefs", "-qa", *members)
        run("mdadm", "--create", "/dev/md0", "--run", "--assume-clean", "--level=5", "--raid-devices=3",
            "--metadata=1.2", *members)
        undo.callback(run, "wipefs", "-qa", *members)
        undo.callback(run, "mdadm", "--stop", "/dev/md0")
        pv = disk(SATA_SSD)
        run("wipefs", "-qa", pv)
        run("pvcreate", "-qy", pv)
        undo.callback(run, "pvremove", "-qy", pv)
        run("vgcreate", "-q", "dl-vg", pv)
        undo.callback(run, "vgremove", "-qy", "dl-vg")
        run("lvcreate", "-qy", "-L", "64M", "-n", "data-lv", "dl-vg")
        under_dm = disk(SCSI)
        run("dmsetup", "create", "dl-linear", "--table", f"0 {run('blockdev', '--getsz', under_dm).strip()} linear "
            f"{under_dm} 0")
        undo.callback(run, "dmsetup", "remove", "dl-linear")
        mounted, mount_point = disk(NVME[3]), folder / "fs"
        run("mkfs.ext4", "-qF", mounted)
        undo.callback(run, "wipefs", "-qa", mounted)
        mount_point.mkdir()
        run("mount", mounted, str(mount_point))
        undo.callback(run, "umount", str(mount_point))
        (mount_point / "kept").write_text("written before the runs\n")
        partitioned, partition_mount = disk(SATA_HDD), folder / "part"
        run("wipefs", "-qa", partitioned)
        subprocess.run(["sfdisk", "-q", partitioned], input="label: gpt\n,64M\n,64M\n", text=True, check=True)
        undo.callback(run, "wipefs", "-qa", partitioned)
        run("udevadm", "settle")
        run("mkfs.ext4", "-qF", f"{partitioned}1")
        partition_mount.mkdir()
        run("mount", f"{partitioned}1", str(partition_mount))
        undo.callback(run, "umount", str(partition_mount))
        swap, unmounted = (loop(folder / f"loop{n}.img", undo) for n in range(2))
        run("mkswap", "-q", swap)
        run("swapon", swap)
        undo.callback(run, "swapoff", swap)
        run("mkfs.ext4", "-qF", unmounted)
        dl = undo.enter_context(contextmanager(private_disklab)(folder))
        found = Holders(dl, members, pv, under_dm, mounted, mount_point, partitioned, partition_mount, swap,
                        unmounted, {}, {})
        found.before = states(found)
        forced = {"md member": members[0], "physical volume": pv, "under dm": under_dm, "mounted": mounted,
                  "mounted partition": partitioned, "swap": swap, "unmounted file system": unmounted}
        started = {case: dl.start(*WRITE, "--force", "--target", target) for case, target in forced.items()}
        started["sibling partition"] = dl.start(*WRITE, "--target", f"{partitioned}2")
        for case, process in started.items():
            out, err = process.communicate(timeout=600)
            found.outcomes[case] = subprocess.CompletedProcess(process.args, process.returncode, out, err)
        yield found


def loop(image: Path, undo: ExitStack) -> str:
    """A loop device over a new 64 MiB file; detached afterwards."""
    with image.open("wb") as handle:
        handle.truncate(64 * 1024**2)
    device = run("losetup", "--find", "--show", str(image)).strip()
    undo.callback(run, "losetup", "-d", device)
    return device


def refusal(h: Holders, case: str) -> str:
    """The one line a refused run says: exit 3, nothing stored, no traceback."""
    done = h.outcomes[case]
    assert done.returncode == 3, (case, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("disklab: error: "), line
    return line.removeprefix("disklab: error: ")


def check_a_member_of_a_running_raid5_is_refused_naming_the_array(holders: Holders):
    member = holders.members[0]
    assert refusal(holders, "md member") == (
        f"{member} is held by /dev/md0 (raid5, running); release it first (mdadm --stop /dev/md0); {IN_USE}")


def check_a_physical_volume_is_refused_naming_the_volume_group_and_logical_volume(holders: Holders):
    assert refusal(holders, "physical volume") == (
        f"{holders.pv} is held by /dev/dl-vg/data-lv (LVM volume group dl-vg); release it first (vgchange -an dl-vg); "
        f"{IN_USE}")


def check_a_disk_under_dm_is_refused_naming_the_mapping(holders: Holders):
    assert refusal(holders, "under dm") == (
        f"{holders.under_dm} is held by /dev/mapper/dl-linear (device-mapper); release it first (dmsetup remove "
        f"dl-linear); {IN_USE}")


def check_a_mounted_file_system_is_refused_naming_the_mount_point(holders: Holders):
    assert refusal(holders, "mounted") == (
        f"{holders.mounted} is mounted ({holders.mounted} on {holders.mount_point}); release it first (umount "
        f"{holders.mount_point}); {IN_USE}")


def check_a_disk_with_a_mounted_partition_is_refused_and_its_other_partition_is_written(holders: Holders):
    disk_path, point = holders.partitioned, holders.partition_mount
    assert refusal(holders, "mounted partition") == (
        f"{disk_path} is mounted ({disk_path}1 on {point}); release it first (umount {point}); {IN_USE}")
    sibling = holders.outcomes["sibling partition"]
    assert sibling.returncode == 0, sibling.stderr
    assert "stored as run" in sibling.stderr


def check_a_swap_device_is_refused_naming_swapoff(holders: Holders):
    swap = holders.swap
    assert refusal(holders, "swap") == f"{swap} is used as swap ({swap}); release it first (swapoff {swap}); {IN_USE}"


def check_every_holder_is_left_as_it_was(holders: Holders):
    assert states(holders) == holders.before


def check_force_overrides_a_file_system_that_nothing_mounts(holders: Holders):
    forced = holders.outcomes["unmounted file system"]
    assert forced.returncode == 0, forced.stderr
    assert "stored as run" in forced.stderr
