"""The safety rules on what real holders leave in sysfs, /proc and blkid's answers, captured in the kernel tier's
guest by tests/fixtures/blockdev/capture_holders.py (its docstring says what it makes): each refusal names the holder
and the command that releases it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from disklab.errors import SafetyError
from disklab.targets import blockdev

FIXTURES = Path(__file__).parents[1] / "fixtures" / "blockdev"
IN_USE = "disklab never writes to a device in use, not even with --force"


class Captured:
    """One capture: its sysfs and proc trees, and per target blkid's answer and whether an exclusive open failed.
    Its device nodes are files named as the kernel named them, in a folder of the test's standing in for /dev."""

    def __init__(self, folder: Path, dev: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder, self.dev = folder, dev
        self.targets = json.loads((folder / "targets.json").read_text())
        numbers = {os.path.realpath(link).rpartition("/")[2]: tuple(map(int, link.name.split(":")))
                   for link in (folder / "sys" / "dev" / "block").iterdir()}
        for name in numbers:
            (dev / name).touch()
        by_path = {f"{dev}/{name}": number for name, number in numbers.items()}
        # The mounts and swaps name /dev/...: the kernel's names, looked up as the test's nodes.
        by_path |= {f"/dev/{name}": number for name, number in numbers.items()}
        busy = {self.path(key) for key, target in self.targets.items() if target["busy"]}
        monkeypatch.setattr(blockdev, "device_number", by_path.get)
        monkeypatch.setattr(blockdev, "exclusive_open_refused", lambda path: path in busy)
        monkeypatch.setattr(blockdev, "run_blkid", self._blkid)

    def path(self, key: str) -> str:
        return f"{self.dev}/{self.targets[key]['name']}"

    def check(self, key: str, force: bool = True) -> None:
        roots = {"sysfs_root": str(self.folder / "sys"), "proc_root": str(self.folder / "proc")}
        device = blockdev.probe_block_device(self.path(key), sysfs_root=roots["sysfs_root"])
        blockdev.check_device_writable(device, destroy_data=True, force=force, **roots)

    def refusal(self, key: str, force: bool = True) -> str:
        with pytest.raises(SafetyError) as refused:
            self.check(key, force)
        return str(refused.value)

    def _blkid(self, path: str) -> subprocess.CompletedProcess[str]:
        name = Path(path).name
        status = next(t["blkid_status"] for t in self.targets.values() if t["name"] == name)
        return subprocess.CompletedProcess([], status, (self.folder / "blkid" / f"{name}.txt").read_text(), "")


@pytest.fixture
def guest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Captured:
    return Captured(FIXTURES / "holders", tmp_path, monkeypatch)


def test_a_member_of_a_running_raid5_names_the_array_its_level_and_state(guest: Captured) -> None:
    member = guest.path("md_member")
    assert guest.refusal("md_member") == (f"{member} is held by /dev/md0 (raid5, running); release it first (mdadm "
                                          f"--stop /dev/md0); {IN_USE}")


def test_a_member_of_an_inactive_array_is_held_all_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inactive = Captured(FIXTURES / "md-inactive", tmp_path, monkeypatch)
    assert inactive.refusal("md_member").startswith(
        f"{inactive.path('md_member')} is held by /dev/md0 (md array, inactive); release it first (mdadm --stop")


def test_a_physical_volume_names_the_logical_volume_and_its_group_with_their_hyphens(guest: Captured) -> None:
    # LVM's dm name, dl--vg-data--lv, doubles the hyphens of the names it joins.
    assert guest.refusal("lvm_pv") == (f"{guest.path('lvm_pv')} is held by /dev/dl-vg/data-lv (LVM volume group "
                                       f"dl-vg); release it first (vgchange -an dl-vg); {IN_USE}")


def test_a_disk_under_a_device_mapper_mapping_names_the_mapping(guest: Captured) -> None:
    assert guest.refusal("under_dm") == (f"{guest.path('under_dm')} is held by /dev/mapper/dl-linear "
                                         f"(device-mapper); release it first (dmsetup remove dl-linear); {IN_USE}")


def test_a_mounted_file_system_names_its_mount_point(guest: Captured) -> None:
    path, name = guest.path("mounted"), guest.targets["mounted"]["name"]
    assert guest.refusal("mounted") == (f"{path} is mounted (/dev/{name} on /mnt/fs); release it first (umount /mnt/fs); "
                                        f"{IN_USE}")


def test_a_disk_with_a_mounted_partition_is_refused_and_its_unmounted_partition_is_not(guest: Captured) -> None:
    disk, name = guest.path("partitioned"), guest.targets["partitioned"]["name"]
    assert guest.refusal("partitioned") == (f"{disk} is mounted (/dev/{name}1 on /mnt/part); release it first (umount "
                                            f"/mnt/part); {IN_USE}")
    guest.check("unmounted_partition", force=False)  # its sibling's mount is not its own


def test_a_swap_device_is_refused_naming_swapoff(guest: Captured) -> None:
    path, swap = guest.path("swap"), f"/dev/{guest.targets['swap']['name']}"
    assert guest.refusal("swap") == f"{path} is used as swap ({swap}); release it first (swapoff {swap}); {IN_USE}"
