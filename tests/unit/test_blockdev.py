"""Block-device safety rules on fake sysfs and proc trees: no real device is opened or probed."""

from __future__ import annotations

import errno
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disklab.errors import SafetyError, UserError
from disklab.targets import blockdev
from disklab.targets.holders import StackedDevice

MOUNTINFO_ROOT = "1 0 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw"


class FakeSystem:
    """A fake /sys, /proc and /dev laid out like the kernel's, plus stand-ins for blkid and O_EXCL."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sysfs = root / "sys"
        self.proc = root / "proc"
        self.dev = root / "dev"
        self.dev.mkdir()
        (self.proc / "self").mkdir(parents=True)
        (self.sysfs / "dev" / "block").mkdir(parents=True)
        self.mountinfo_lines = [MOUNTINFO_ROOT]
        self.swap_paths: list[str] = []
        self.numbers_by_path: dict[str, tuple[int, int]] = {}
        self.blkid_by_path: dict[str, subprocess.CompletedProcess[str]] = {}
        self.busy_paths: set[str] = set()
        self._write_proc()
        monkeypatch.setattr(blockdev, "device_number", lambda path: self.numbers_by_path.get(path))
        monkeypatch.setattr(blockdev, "exclusive_open_refused", lambda path: path in self.busy_paths)
        monkeypatch.setattr(blockdev, "run_blkid", self._blkid)

    def add_disk(
        self,
        name: str,
        number: tuple[int, int],
        *,
        sectors: int = 2048,
        logical_block_size: int = 512,
        physical_block_size: int = 4096,
        rotational: int | None = 0,
        read_only: bool = False,
    ) -> str:
        directory = self.sysfs / "devices" / "virtual" / "block" / name
        self._add_node(directory, number, sectors, read_only)
        queue = directory / "queue"
        queue.mkdir()
        (queue / "logical_block_size").write_text(f"{logical_block_size}\n")
        (queue / "physical_block_size").write_text(f"{physical_block_size}\n")
        if rotational is not None:
            (queue / "rotational").write_text(f"{rotational}\n")
        return self._add_dev_node(name, number)

    def add_partition(self, disk: str, name: str, number: tuple[int, int], *, read_only: bool = False) -> str:
        directory = self._dir(disk) / name
        self._add_node(directory, number, 1024, read_only)
        (directory / "partition").write_text("1\n")
        return self._add_dev_node(name, number)

    def add_holder(self, held: str, name: str, number: tuple[int, int], *, dm_uuid: str | None = None,
                   dm_name: str = "") -> str:
        directory = self.sysfs / "devices" / "virtual" / "block" / name
        if not directory.exists():
            self._add_node(directory, number, 1024, False)
            if dm_uuid is not None:
                (directory / "dm").mkdir()
                (directory / "dm" / "uuid").write_text(dm_uuid + "\n")
                (directory / "dm" / "name").write_text(dm_name + "\n")
            if name.startswith("md"):
                (directory / "md").mkdir()
        (self._dir(held) / "holders" / name).symlink_to(directory)
        return self._add_dev_node(name, number)

    def mount(self, number: tuple[int, int], source: str, mount_point: str, fs_type: str = "ext4") -> None:
        escaped = mount_point.replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011").replace("\n", "\\012")
        line_id = len(self.mountinfo_lines) + 1
        self.mountinfo_lines.append(
            f"{line_id} 1 {number[0]}:{number[1]} / {escaped} rw,relatime shared:{line_id} - {fs_type} {source} rw"
        )
        self._write_proc()

    def swapon(self, path: str) -> None:
        self.swap_paths.append(path)
        self._write_proc()

    def set_blkid(self, path: str, returncode: int, stdout: str = "", stderr: str = "") -> None:
        self.blkid_by_path[path] = subprocess.CompletedProcess([], returncode, stdout, stderr)

    def probe(self, path: str) -> blockdev.BlockDevice:
        return blockdev.probe_block_device(path, sysfs_root=str(self.sysfs))

    def inspect(self, path: str) -> blockdev.DeviceUse:
        return blockdev.inspect_device_use(self.probe(path), sysfs_root=str(self.sysfs), proc_root=str(self.proc))

    def check(self, path: str, *, destroy_data: bool = True, force: bool = False) -> None:
        blockdev.check_device_writable(
            self.probe(path), destroy_data, force, sysfs_root=str(self.sysfs), proc_root=str(self.proc)
        )

    def _blkid(self, path: str) -> subprocess.CompletedProcess[str]:
        return self.blkid_by_path.get(path, subprocess.CompletedProcess([], 2, "", ""))

    def _dir(self, name: str) -> Path:
        return next(path for path in (self.sysfs / "devices").rglob(name) if (path / "dev").is_file())

    def _add_node(self, directory: Path, number: tuple[int, int], sectors: int, read_only: bool) -> None:
        (directory / "holders").mkdir(parents=True)
        (directory / "dev").write_text(f"{number[0]}:{number[1]}\n")
        (directory / "size").write_text(f"{sectors}\n")
        (directory / "ro").write_text("1\n" if read_only else "0\n")
        (self.sysfs / "dev" / "block" / f"{number[0]}:{number[1]}").symlink_to(directory)

    def _add_dev_node(self, name: str, number: tuple[int, int]) -> str:
        path = self.dev / name
        path.touch()
        self.numbers_by_path[str(path)] = number
        return str(path)

    def _write_proc(self) -> None:
        (self.proc / "self" / "mountinfo").write_text("\n".join(self.mountinfo_lines) + "\n")
        swaps = ["Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority"]
        swaps += [f"{path.replace(' ', chr(92) + '040')}\tpartition\t1024\t0\t-2" for path in self.swap_paths]
        (self.proc / "swaps").write_text("\n".join(swaps) + "\n")


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSystem:
    return FakeSystem(tmp_path, monkeypatch)


# probe_block_device


def test_probe_reads_geometry_from_sysfs(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16), sectors=4096, logical_block_size=4096, physical_block_size=4096, rotational=1)
    assert fake.probe(path) == blockdev.BlockDevice(
        path=path,
        name="sdb",
        major=8,
        minor=16,
        size_bytes=4096 * 512,  # sysfs counts 512-byte sectors even on 4Kn disks
        logical_block_size=4096,
        physical_block_size=4096,
        rotational=True,
        read_only=False,
    )


def test_probe_follows_symlinks_but_keeps_the_given_path(fake: FakeSystem, tmp_path: Path) -> None:
    node = fake.add_disk("nvme0n1", (259, 0))
    by_id = tmp_path / "by-id" / "nvme-Samsung_SSD_980_S123"
    by_id.parent.mkdir()
    by_id.symlink_to(node)
    device = fake.probe(str(by_id))
    assert (device.path, device.name, device.major, device.minor) == (str(by_id), "nvme0n1", 259, 0)


def test_probe_of_partition_uses_the_disk_queue(fake: FakeSystem) -> None:
    fake.add_disk("nvme0n1", (259, 0), logical_block_size=4096, physical_block_size=4096, rotational=0)
    path = fake.add_partition("nvme0n1", "nvme0n1p2", (259, 2))
    device = fake.probe(path)
    assert (device.name, device.size_bytes, device.logical_block_size, device.rotational) == (
        "nvme0n1p2", 1024 * 512, 4096, False,
    )


def test_probe_partition_of_read_only_disk_is_read_only(fake: FakeSystem) -> None:
    fake.add_disk("sdc", (8, 32), read_only=True)
    assert fake.probe(fake.add_partition("sdc", "sdc1", (8, 33))).read_only


def test_probe_without_rotational_attribute_reports_unknown(fake: FakeSystem) -> None:
    assert fake.probe(fake.add_disk("vdb", (254, 16), rotational=None)).rotational is None


def test_probe_of_missing_path_is_a_user_error(fake: FakeSystem, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        fake.probe(str(tmp_path / "nope"))


def test_probe_of_regular_file_is_a_user_error(fake: FakeSystem, tmp_path: Path) -> None:
    regular = tmp_path / "disk.img"
    regular.write_bytes(b"")
    with pytest.raises(UserError, match="not a block device"):
        fake.probe(str(regular))


def test_probe_of_device_unknown_to_sysfs_is_a_user_error(fake: FakeSystem) -> None:
    path = fake._add_dev_node("ghost", (8, 99))
    with pytest.raises(UserError, match="8:99"):
        fake.probe(path)


def test_device_number_is_none_for_anything_but_a_block_device(tmp_path: Path) -> None:
    regular = tmp_path / "file"
    regular.write_text("x")
    assert blockdev.device_number(str(regular)) is None
    assert blockdev.device_number(str(tmp_path / "missing")) is None
    assert blockdev.device_number("/dev/null") is None  # a character device


def test_exclusive_open_of_regular_file_is_not_busy(tmp_path: Path) -> None:
    regular = tmp_path / "file"
    regular.write_text("x")
    assert blockdev.exclusive_open_refused(str(regular)) is False


def test_exclusive_open_of_missing_path_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot open") as refused:
        blockdev.exclusive_open_refused(str(tmp_path / "missing"))
    assert "a user that may write" not in str(refused.value)  # no permission was refused
    assert str(refused.value).endswith("check that the path names a device that exists")


def test_root_refused_is_told_what_else_blocks_it_not_to_become_another_user() -> None:
    """Root was told to "run disklab as a user that may write to it" on an EPERM."""
    for refused in (errno.EPERM, errno.EACCES):
        as_root = blockdev.open_advice(refused, euid=0)
        assert "user that may" not in as_root and "SELinux" in as_root and "immutable" in as_root
        assert "user that may write" in blockdev.open_advice(refused, euid=1000)


# inspect_device_use


def test_unused_blank_device_has_no_reasons(fake: FakeSystem) -> None:
    use = fake.inspect(fake.add_disk("loop3", (7, 3)))
    assert use == blockdev.DeviceUse((), (), (), (), (), False)
    assert use.reasons() == []


def test_mounted_device_is_found_by_device_number(fake: FakeSystem) -> None:
    path = fake.add_disk("loop3", (7, 3))
    fake.mount((7, 3), "/dev/loop3", "/mnt/x")
    assert fake.inspect(path).mounted == (("/dev/loop3", "/mnt/x"),)


def test_similar_names_and_paths_do_not_count_as_mounted(fake: FakeSystem) -> None:
    path = fake.add_disk("loop1", (7, 1))
    fake.add_disk("loop10", (7, 10))
    fake.mount((7, 10), "/dev/loop10", "/mnt/loop1")
    fake.mount((0, 50), "tmpfs", "/dev/loop1", fs_type="tmpfs")
    assert fake.inspect(path).mounted == ()


def test_mount_point_escapes_are_decoded(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.mount((8, 16), "/dev/sdb", "/mnt/my data\\dir")
    assert fake.inspect(path).mounted == (("/dev/sdb", "/mnt/my data\\dir"),)


def test_mount_with_anonymous_device_number_is_matched_by_source_device(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.numbers_by_path["/dev/sdb"] = (8, 16)
    fake.mount((0, 45), "/dev/sdb", "/srv/btrfs", fs_type="btrfs")  # btrfs reports 0:N in mountinfo
    fake.mount((0, 46), path, "/srv/not-under-dev")  # sources outside /dev are never stat'ed
    assert fake.inspect(path).mounted == (("/dev/sdb", "/srv/btrfs"),)


def test_mounted_partition_makes_the_disk_mounted(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.add_partition("sdb", "sdb1", (8, 17))
    fake.add_partition("sdb", "sdb2", (8, 18))
    fake.mount((8, 18), "/dev/sdb2", "/home")
    use = fake.inspect(path)
    assert use.mounted == (("/dev/sdb2", "/home"),)
    assert use.partitions == ("sdb1", "sdb2")


def test_mount_through_a_holder_of_a_partition_is_found(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.add_partition("sdb", "sdb1", (8, 17))
    fake.add_holder("sdb1", "md0", (9, 0))
    fake.add_partition("md0", "md0p1", (259, 7))
    fake.mount((259, 7), "/dev/md0p1", "/data")
    use = fake.inspect(path)
    assert use.mounted == (("/dev/md0p1", "/data"),)
    assert [str(holder) for holder in use.holders] == ["/dev/md0 (md array, running) via sdb1"]
    assert use.partitions == ("sdb1",)  # md0p1 belongs to md0, not to sdb


def test_partition_ignores_its_disk_and_siblings(fake: FakeSystem) -> None:
    fake.add_disk("sdb", (8, 16))
    own = fake.add_partition("sdb", "sdb1", (8, 17))
    fake.add_partition("sdb", "sdb2", (8, 18))
    fake.mount((8, 16), "/dev/sdb", "/mnt/whole")
    fake.mount((8, 18), "/dev/sdb2", "/mnt/sibling")
    assert fake.inspect(own) == blockdev.DeviceUse((), (), (), (), (), False)


def test_partition_with_its_own_mount_and_holder_is_in_use(fake: FakeSystem) -> None:
    fake.add_disk("sdb", (8, 16))
    own = fake.add_partition("sdb", "sdb1", (8, 17))
    fake.add_holder("sdb1", "dm-0", (253, 0), dm_uuid="CRYPT-LUKS2-abc-cryptroot", dm_name="cryptroot")
    fake.mount((253, 0), "/dev/mapper/cryptroot", "/")
    use = fake.inspect(own)
    assert [str(holder) for holder in use.holders] == ["/dev/mapper/cryptroot (dm-crypt)"]
    assert use.mounted == (("/dev/mapper/cryptroot", "/"),)


def test_holders_are_named_by_kind_and_followed_transitively(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.add_holder("sdb", "dm-0", (253, 0), dm_uuid="LVM-abcdef", dm_name="vg-pool")
    fake.add_holder("dm-0", "dm-1", (253, 1), dm_uuid="mpath-3600", dm_name="mpatha")
    fake.add_holder("dm-0", "dm-2", (253, 2), dm_uuid="", dm_name="plain")
    fake.add_holder("sdb", "bcache0", (252, 0))
    fake.add_holder("sdb", "drbd0", (147, 0))
    use = fake.inspect(path)
    assert [str(holder) for holder in use.holders] == [
        "/dev/bcache0 (bcache)",
        "/dev/vg/pool (LVM volume group vg)",
        "/dev/drbd0 (kernel holder)",
        "/dev/mapper/mpatha (multipath) via dm-0",
        "/dev/mapper/plain (device-mapper) via dm-0",
    ]
    assert use.release_steps(path) == [  # the outermost first: what sits on the volume group before the group
        "dmsetup remove plain", "multipath -f mpatha", "whatever made /dev/drbd0 must remove it",
        "vgchange -an vg", "echo 1 > /sys/block/bcache0/bcache/stop",
    ]


def test_holder_shared_by_two_partitions_is_listed_once(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.add_partition("sdb", "sdb1", (8, 17))
    fake.add_partition("sdb", "sdb2", (8, 18))
    fake.add_holder("sdb1", "dm-0", (253, 0), dm_uuid="LVM-x", dm_name="vg-lv")
    fake.add_holder("sdb2", "dm-0", (253, 0), dm_uuid="LVM-x", dm_name="vg-lv")
    assert [str(holder) for holder in fake.inspect(path).holders] == ["/dev/vg/lv (LVM volume group vg) via sdb1"]


def test_swap_is_found_by_device_number_of_each_swap_path(fake: FakeSystem, tmp_path: Path) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.add_partition("sdb", "sdb1", (8, 17))
    fake.add_disk("sdc", (8, 32))
    alias = tmp_path / "swap alias"  # a second name for sdb1, with a space the kernel escapes
    fake.numbers_by_path[str(alias)] = (8, 17)
    fake.swapon(str(alias))
    fake.swapon("/dev/sdc")
    fake.swapon("/swapfile")  # a regular file: no device number
    assert fake.inspect(path).swap == (str(alias),)


def test_missing_proc_swaps_means_no_swap(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    (fake.proc / "swaps").unlink()
    assert fake.inspect(path).swap == ()


def test_busy_comes_from_the_exclusive_open(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.busy_paths.add(path)
    assert fake.inspect(path).busy


@pytest.mark.parametrize(
    ("stdout", "signatures"),
    [
        ("DEVNAME=/dev/sdb\nUUID=1-2\nVERSION=1.0\nTYPE=ext4\nUSAGE=filesystem\n", ("ext4 file system",)),
        ("DEVNAME=/dev/sdb\nPTUUID=ab\nPTTYPE=gpt\n", ("gpt partition table",)),
        ("TYPE=zfs_member\nUSAGE=filesystem\n", ("zfs_member",)),
        ("TYPE=linux_raid_member\nUSAGE=raid\n", ("linux_raid_member",)),
        ("TYPE=LVM2_member\nUSAGE=raid\n", ("LVM2_member",)),
        ("TYPE=crypto_LUKS\nUSAGE=crypto\n", ("crypto_LUKS encrypted volume",)),
        ("TYPE=swap\nUSAGE=other\n", ("swap signature",)),
        ("PTTYPE=dos\nTYPE=iso9660\nUSAGE=filesystem\nLABEL=a=b\n", ("dos partition table", "iso9660 file system")),
    ],
)
def test_blkid_output_becomes_signatures(fake: FakeSystem, stdout: str, signatures: tuple[str, ...]) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.set_blkid(path, 0, stdout)
    assert fake.inspect(path).signatures == signatures


def test_ambiguous_blkid_result_is_a_signature(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.set_blkid(path, 8)
    assert "ambiguous" in fake.inspect(path).signatures[0]


def test_blkid_that_could_not_open_the_device_is_not_taken_as_blank(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.set_blkid(path, 2, stderr=f"blkid: error: {path}: Operation not permitted\n")
    with pytest.raises(SafetyError, match="Operation not permitted"):
        fake.inspect(path)


def test_blkid_failure_is_a_safety_error(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.set_blkid(path, 4)
    with pytest.raises(SafetyError, match="exit status 4"):
        fake.inspect(path)


def test_missing_blkid_is_a_safety_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SafetyError, match="blkid is not installed"):
        blockdev.run_blkid("/dev/sdb")


def test_reasons_are_ordered_by_severity() -> None:
    lvm = StackedDevice("LVM", "vg-lv", "", "/dev/vg/lv", "LVM volume group vg", "vgchange -an vg")
    md = StackedDevice("md", "md0", "raid1", "/dev/md0", "raid1, running", "mdadm --stop /dev/md0")
    use = blockdev.DeviceUse(
        mounted=(("/dev/sdb1", "/a"), ("/dev/sdb2", "/b")),
        swap=("/dev/sdb3",),
        holders=(blockdev.Holder(lvm, None), blockdev.Holder(md, None)),
        signatures=("gpt partition table", "ext4 file system"),
        partitions=("sdb1", "sdb2", "sdb3"),
        busy=True,
    )
    assert use.reasons() == [
        "mounted (/dev/sdb1 on /a, /dev/sdb2 on /b)",
        "used as swap (/dev/sdb3)",
        "held by /dev/vg/lv (LVM volume group vg) and /dev/md0 (raid1, running)",
        "carries a gpt partition table and an ext4 file system",
        "has partitions sdb1, sdb2, sdb3",
    ]  # busy is what they cause: said only when nothing else explains it
    assert use.release_steps("/dev/sdb") == ["umount /a", "umount /b", "swapoff /dev/sdb3", "mdadm --stop /dev/md0",
                                             "vgchange -an vg"]


# check_device_writable


def test_blank_device_needs_destroy_data(fake: FakeSystem) -> None:
    path = fake.add_disk("loop3", (7, 3))
    with pytest.raises(SafetyError) as refusal:
        fake.check(path, destroy_data=False)
    assert str(refusal.value) == (
        f"the benchmark writes to {path} and would destroy its data; add --destroy-data to allow it, "
        "or --read-only to run only the tests that read"
    )
    fake.check(path, destroy_data=True)


def test_without_destroy_data_existing_data_asks_for_force_too(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.set_blkid(path, 0, "TYPE=xfs\nUSAGE=filesystem\n")
    with pytest.raises(SafetyError, match=r"carries an xfs file system\); add --destroy-data --force"):
        fake.check(path, destroy_data=False)


def test_read_only_device_is_refused_even_with_force(fake: FakeSystem) -> None:
    path = fake.add_disk("sr0", (11, 0), read_only=True)
    with pytest.raises(SafetyError, match=f"{path} is read-only.*blockdev --setrw"):
        fake.check(path, force=True)


def test_signature_is_refused_without_force(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.set_blkid(path, 0, "TYPE=ext4\nUSAGE=filesystem\n")
    with pytest.raises(SafetyError) as refusal:
        fake.check(path)
    assert str(refusal.value) == f"{path} carries an ext4 file system; add --destroy-data --force to overwrite it"
    fake.check(path, force=True)


def test_partitions_are_refused_without_force(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.add_partition("sdb", "sdb1", (8, 17))
    fake.set_blkid(path, 0, "PTTYPE=gpt\n")
    with pytest.raises(SafetyError, match="carries a gpt partition table and has partitions sdb1; add --destroy-data --force"):
        fake.check(path)
    fake.check(path, force=True)


@pytest.mark.parametrize(
    ("arrange", "expected"),
    [
        (lambda fake, path: fake.mount((8, 17), "/dev/sdb1", "/mnt/x"),
         r"is mounted \(/dev/sdb1 on /mnt/x\); release it first \(umount /mnt/x\)"),
        (lambda fake, path: fake.swapon(path), r"is used as swap .*\(swapoff /.*/dev/sdb\)"),
        (lambda fake, path: fake.add_holder("sdb", "md0", (9, 0)),
         r"is held by /dev/md0 \(md array, running\); release it first \(mdadm --stop /dev/md0\)"),
        (lambda fake, path: fake.busy_paths.add(path), r"is busy \(the kernel refused an exclusive open\); .*fuser -vm"),
    ],
    ids=["mounted", "swap", "holder", "busy"],
)
def test_device_in_use_is_refused_even_with_force(fake: FakeSystem, arrange, expected: str) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.add_partition("sdb", "sdb1", (8, 17))
    arrange(fake, path)
    with pytest.raises(SafetyError, match=expected) as refusal:
        fake.check(path, destroy_data=True, force=True)
    message = str(refusal.value)
    assert message.startswith(path) and "not even with --force" in message and "\n" not in message


def test_in_use_is_reported_before_missing_destroy_data(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.mount((8, 16), path, "/srv")
    with pytest.raises(SafetyError, match="is mounted"):
        fake.check(path, destroy_data=False)


def test_several_uses_are_joined_in_one_line(fake: FakeSystem) -> None:
    path = fake.add_disk("sdb", (8, 16))
    fake.mount((8, 16), path, "/srv")
    fake.swapon(path)
    fake.busy_paths.add(path)  # as the mount makes it
    with pytest.raises(SafetyError) as refusal:
        fake.check(path, force=True)
    assert str(refusal.value) == (
        f"{path} is mounted ({path} on /srv) and used as swap ({path}); release it first (umount /srv, swapoff "
        f"{path}); disklab never writes to a device in use, not even with --force"
    )


mount_points = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=30
).map(lambda text: "/" + text)


@settings(deadline=None)  # each example builds a fresh tree on disk; timing varies with the file system
@given(
    mounts=st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300), mount_points), max_size=8),
    target=st.tuples(st.integers(1, 300), st.integers(0, 300)),
)
def test_mounted_iff_some_mount_has_the_device_number(
    tmp_path_factory: pytest.TempPathFactory, mounts: list[tuple[int, int, str]], target: tuple[int, int]
) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        fake = FakeSystem(tmp_path_factory.mktemp("fake"), monkeypatch)
        path = fake.add_disk("sdz", target)
        for major, minor, mount_point in mounts:
            fake.mount((major, minor), "/dev/sdz", mount_point)  # same source text: only numbers may decide
        expected = tuple(("/dev/sdz", mp) for major, minor, mp in mounts if (major, minor) == target)
        assert fake.inspect(path).mounted == expected
