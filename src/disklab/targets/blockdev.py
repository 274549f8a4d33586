"""Block-device probing and the safety rules that decide whether fio may write to a device.

"In use" is decided by device numbers (mountinfo's major:minor, st_rdev of swap
devices, sysfs holders), never by comparing path strings: /dev/sda1 must not
match /dev/sda10, and /dev/disk/by-id/... names the same disk as /dev/sda.
This module never reads or writes device data itself; fio does all I/O.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from disklab.errors import SafetyError, UserError
from disklab.targets.holders import StackedDevice, stacked_device
from disklab.system.mounts import unescape_octal
from disklab.targets.signatures import run_blkid, signatures_from_blkid, with_article

SECTOR_BYTES = 512  # sysfs `size` is always in 512-byte sectors, whatever the block size

READ_ONLY_HINT = "--read-only to run only the tests that read"


@dataclass(frozen=True)
class BlockDevice:
    """A block device as sysfs describes it; `path` is kept as the user gave it, for messages."""

    path: str
    name: str
    major: int
    minor: int
    size_bytes: int
    logical_block_size: int
    physical_block_size: int
    rotational: bool | None
    read_only: bool


@dataclass(frozen=True)
class Holder:
    """A device stacked on the target, on one of its partitions or on another holder (`via`, by kernel name)."""

    device: StackedDevice
    via: str | None

    def __str__(self) -> str:
        return str(self.device) if self.via is None else f"{self.device} via {self.via}"


@dataclass(frozen=True)
class DeviceUse:
    """Everything that makes writing to a device unsafe; empty lists mean none found."""

    mounted: tuple[tuple[str, str], ...]  # (source, mount point)
    swap: tuple[str, ...]
    holders: tuple[Holder, ...]  # nearest first
    signatures: tuple[str, ...]
    partitions: tuple[str, ...]
    busy: bool

    def in_use_reasons(self) -> list[str]:
        """Reasons no flag can override: something live would be corrupted. A holder or a mount is why the kernel
        refuses an exclusive open, so busy is said only when nothing else explains it."""
        reasons = []
        if self.mounted:
            reasons.append(f"mounted ({', '.join(f'{source} on {point}' for source, point in self.mounted)})")
        if self.swap:
            reasons.append(f"used as swap ({', '.join(self.swap)})")
        if self.holders:
            reasons.append(f"held by {_join_words([str(holder) for holder in self.holders])}")
        if self.busy and not reasons:
            reasons.append("busy (the kernel refused an exclusive open)")
        return reasons

    def release_steps(self, path: str) -> list[str]:
        """The commands that free the device, in the order they must run: unmount, swapoff, then the holders from
        the outermost in (an LV on an md array goes before the array)."""
        steps = [f"umount {point}" for _, point in self.mounted] + [f"swapoff {swap}" for swap in self.swap]
        steps += [holder.device.release for holder in reversed(self.holders)]
        if not steps and self.busy:  # busy with no visible cause: another namespace or a program holding it open
            steps.append(f"close what holds it open; 'fuser -vm {path}' may show it")
        return list(dict.fromkeys(steps))

    def existing_data_reasons(self) -> list[str]:
        """Reasons --force overrides: data that nothing is using right now."""
        reasons = []
        if self.signatures:
            reasons.append("carries " + _join_words([with_article(s) for s in self.signatures]))
        if self.partitions:
            reasons.append(f"has partitions {', '.join(self.partitions)}")
        return reasons

    def reasons(self) -> list[str]:
        """Human-readable reasons, in order of severity."""
        return self.in_use_reasons() + self.existing_data_reasons()


@dataclass(frozen=True)
class _SysfsNode:
    """A block device reached while walking down from the target (itself, a partition or a holder)."""

    name: str
    device_number: tuple[int, int]
    directory: Path
    is_holder: bool
    reached_via: str | None


def probe_block_device(path: str, *, sysfs_root: str = "/sys") -> BlockDevice:
    """Describe the block device at `path` (symlinks followed) from sysfs."""
    real_path = os.path.realpath(path)
    if not os.path.exists(real_path):
        raise UserError(f"{path} does not exist; give the path of a block device such as /dev/sdb")
    number = device_number(real_path)
    if number is None:
        raise UserError(f"{path} is not a block device; give a device such as /dev/sdb")
    directory = _sysfs_dir(number, sysfs_root)
    if directory is None:
        raise UserError(f"{path} is block device {number[0]}:{number[1]} but {sysfs_root}/dev/block has no entry for it")
    queue = _queue_dir(directory)
    rotational = _read_int(queue / "rotational")
    return BlockDevice(
        path=path,
        name=directory.name,
        major=number[0],
        minor=number[1],
        size_bytes=int(_read_text(directory / "size")) * SECTOR_BYTES,
        logical_block_size=int(_read_text(queue / "logical_block_size")),
        physical_block_size=int(_read_text(queue / "physical_block_size")),
        rotational=None if rotational is None else rotational == 1,
        read_only=_is_read_only(directory),
    )


def inspect_device_use(device: BlockDevice, *, sysfs_root: str = "/sys", proc_root: str = "/proc") -> DeviceUse:
    """Find every current use of `device`, its partitions and (transitively) its holders."""
    directory = _sysfs_dir((device.major, device.minor), sysfs_root)
    if directory is None:
        raise UserError(f"{device.path} ({device.major}:{device.minor}) is no longer present in {sysfs_root}/dev/block")
    busy = exclusive_open_refused(device.path)  # first: it turns permission problems into a clear UserError
    nodes = _walk_down(directory)
    numbers = frozenset(node.device_number for node in nodes)
    return DeviceUse(
        mounted=_mounts_of(numbers, Path(proc_root) / "self" / "mountinfo"),
        swap=_swaps_of(numbers, Path(proc_root) / "swaps"),
        holders=tuple(Holder(stacked_device(node.directory), node.reached_via) for node in nodes if node.is_holder),
        signatures=signatures_from_blkid(device.path, run_blkid(device.path)),
        partitions=tuple(node.name for node in nodes if _is_partition_of(node, directory)),
        busy=busy,
    )


def check_device_writable(
    device: BlockDevice,
    destroy_data: bool,
    force: bool,
    *,
    sysfs_root: str = "/sys",
    proc_root: str = "/proc",
) -> None:
    """Raise SafetyError, as one line with the remedy, unless fio may overwrite `device`."""
    path = device.path
    if device.read_only:
        raise SafetyError(
            f"{path} is read-only (sysfs ro=1); choose another device or make it writable with 'blockdev --setrw {path}'"
        )
    use = inspect_device_use(device, sysfs_root=sysfs_root, proc_root=proc_root)
    in_use = use.in_use_reasons()
    if in_use:
        raise SafetyError(
            f"{path} is {_join_words(in_use)}; release it first ({', '.join(use.release_steps(path))}); "
            "disklab never writes to a device in use, not even with --force"
        )
    existing_data = use.existing_data_reasons()
    if not destroy_data:
        if existing_data:
            raise SafetyError(
                f"the benchmark writes to {path} and would destroy its data ({path} {_join_words(existing_data)}); "
                f"add --destroy-data --force to allow it, or {READ_ONLY_HINT}"
            )
        raise SafetyError(
            f"the benchmark writes to {path} and would destroy its data; add --destroy-data to allow it, or {READ_ONLY_HINT}"
        )
    if existing_data and not force:
        raise SafetyError(f"{path} {_join_words(existing_data)}; add --destroy-data --force to overwrite it")


def device_number(path: str) -> tuple[int, int] | None:
    """(major, minor) of the block device node at `path`, or None if it is anything else or missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    return os.major(st.st_rdev), os.minor(st.st_rdev)


def exclusive_open_refused(path: str) -> bool:
    """Ask the kernel whether anything holds the device exclusively (a mount, md, dm, another tool).

    Catches users invisible to this process: other mount namespaces, btrfs
    member devices, programs that opened the device with O_EXCL.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.EBUSY:
            return True
        raise UserError(f"cannot open {path} to check whether it is in use: {error.strerror}; "
                        f"{open_advice(error.errno, os.geteuid())}") from error
    os.close(fd)
    return False


def open_advice(error_number: int, euid: int) -> str:
    """What to do when opening a device fails: a user is told to become one that may; root, whom file permissions
    never stop, is told what else does."""
    if error_number not in (errno.EPERM, errno.EACCES):
        return "check that the path names a device that exists"
    if euid != 0:
        return "run disklab as a user that may write to it (root, or a member of the 'disk' group)"
    return ("root was refused, so no file permission is the cause: a security module (SELinux, AppArmor), a "
            "container's device rules (cgroup), kernel lockdown, or an immutable attribute (lsattr) blocks it")


def _walk_down(directory: Path) -> list[_SysfsNode]:
    """The device, its partitions and its holders, transitively: everything whose use touches its blocks."""
    root = _SysfsNode(directory.name, _read_device_number(directory), directory, False, None)
    nodes = [root]
    seen = {directory}
    pending = deque([root])
    while pending:
        node = pending.popleft()
        children = [(child, False) for child in _partition_dirs(node.directory)]
        children += [(holder, True) for holder in _holder_dirs(node.directory)]
        for child_dir, is_holder in children:
            if child_dir in seen:
                continue
            seen.add(child_dir)
            via = None if node is root else node.name
            child = _SysfsNode(child_dir.name, _read_device_number(child_dir), child_dir, is_holder, via)
            nodes.append(child)
            pending.append(child)
    return nodes


def _is_partition_of(node: _SysfsNode, directory: Path) -> bool:
    return not node.is_holder and node.directory.parent == directory


def _partition_dirs(directory: Path) -> list[Path]:
    return sorted(child for child in directory.iterdir() if (child / "partition").is_file())


def _holder_dirs(directory: Path) -> list[Path]:
    holders = directory / "holders"
    if not holders.is_dir():
        return []
    return sorted(link.resolve() for link in holders.iterdir())


def _mounts_of(numbers: frozenset[tuple[int, int]], mountinfo: Path) -> tuple[tuple[str, str], ...]:
    mounts = []
    for line in _proc_lines(mountinfo):
        fields = line.split(" ")
        separator = fields.index("-", 6)
        source = unescape_octal(fields[separator + 2])
        major, _, minor = fields[2].partition(":")
        number = (int(major), int(minor))
        # btrfs (and others) report an anonymous 0:N device in mountinfo; the source still names the disk.
        if number not in numbers and source.startswith("/dev/"):
            number = device_number(source)
        if number in numbers:
            mounts.append((source, unescape_octal(fields[4])))
    return tuple(mounts)


def _swaps_of(numbers: frozenset[tuple[int, int]], swaps: Path) -> tuple[str, ...]:
    if not swaps.exists():  # kernels built without swap support
        return ()
    found = []
    for line in _proc_lines(swaps)[1:]:
        swap_path = unescape_octal(re.split("[ \t]", line, maxsplit=1)[0])
        if device_number(swap_path) in numbers:
            found.append(swap_path)
    return tuple(found)


def _sysfs_dir(number: tuple[int, int], sysfs_root: str) -> Path | None:
    link = Path(sysfs_root) / "dev" / "block" / f"{number[0]}:{number[1]}"
    return link.resolve() if link.exists() else None


def disk_directory(device: BlockDevice, sysfs_root: str = "/sys") -> Path:
    """The sysfs folder of the whole disk `device` is, or is a partition of: a partition has no queue, discard or
    write cache of its own."""
    directory = _sysfs_dir((device.major, device.minor), sysfs_root)
    if directory is None:
        raise UserError(f"{device.path} ({device.major}:{device.minor}) is no longer present in {sysfs_root}/dev/block")
    return _whole_disk(directory)


def _whole_disk(directory: Path) -> Path:
    return directory.parent if (directory / "partition").is_file() else directory


def _queue_dir(directory: Path) -> Path:
    return _whole_disk(directory) / "queue"


def _is_read_only(directory: Path) -> bool:
    # Older kernels report ro=0 for a partition of a read-only disk.
    if _read_int(directory / "ro") == 1:
        return True
    return (directory / "partition").is_file() and _read_int(directory.parent / "ro") == 1


def _read_device_number(directory: Path) -> tuple[int, int]:
    major, _, minor = _read_text(directory / "dev").partition(":")
    return int(major), int(minor)


def _read_text(path: Path) -> str:
    return path.read_text().strip()


def _read_optional(path: Path) -> str | None:
    return _read_text(path) if path.is_file() else None


def _read_int(path: Path) -> int | None:
    text = _read_optional(path)
    return None if text is None else int(text)


def _proc_lines(path: Path) -> list[str]:
    """Lines of a /proc table, split at newlines only.

    The kernel escapes just space, tab, newline and backslash in paths, so a
    mount point may hold a carriage return; read_text() and splitlines() would
    break the line there. Undecodable bytes are replaced: paths here are only
    shown, never matched.
    """
    text = path.read_bytes().decode("utf-8", errors="replace")
    return [line for line in text.split("\n") if line]


def _join_words(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
