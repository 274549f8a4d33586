"""Resolve what the user named into the file or device fio will use, and look after disklab's test files."""

import os
import platform
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from disklab.system.host import host_identity, process_alive
from disklab.errors import SafetyError, UserError
from disklab.targets.blockdev import BlockDevice, check_device_writable, probe_block_device
from disklab.system.mounts import FSTAB, MEMORY_FS_TYPES, mount_of, unmounted_fstab_entry
from disklab.units import human_size

# Room left free beside a test file, so the run does not fill the file system to the brim.
FREE_SPACE_MARGIN_BYTES = 64 * 1024**2
# What disklab makes in a target directory, named by host and process so that a killed run's leftovers are known:
# the test file, a file-set folder, a private PostgreSQL cluster or its tablespace (database/placement.py).
_DISKLAB_ENTRY = re.compile(r"^disklab-(?P<host>.+)-(?P<pid>\d+)\.(?P<kind>testfile|files|pgcluster|pgtablespace)$")
# When the file system's device cannot be found (tmpfs, network file systems), assume the common sector size.
DEFAULT_LOGICAL_BLOCK_SIZE = 512
# Where disks are mounted by hand or by the desktop: an empty folder there on the root file system awaits one.
MOUNT_FOLDERS = ("/mnt", "/media")


@dataclass(frozen=True)
class Target:
    kind: str  # directory, file or device
    path: str  # what the user named, made absolute
    test_path: str  # the file or device fio reads and writes
    disklab_owns_file: bool  # disklab creates the test file and removes it afterwards
    capacity_bytes: int | None  # device or existing file size; None for a file yet to be made
    device: BlockDevice | None
    warnings: tuple[str, ...] = ()  # lines said before the run and kept with it: why the disk may not be the one meant

    @property
    def file_set_dir(self) -> str:
        """Where file-set tests keep their files: beside the test file, removed with it."""
        return str(Path(self.test_path).with_suffix(".files"))

    @property
    def logical_block_size(self) -> int:
        if self.device is not None:
            return self.device.logical_block_size
        return logical_block_size_under(Path(self.test_path).parent)


def resolve_target(path: str, new_file: bool = False, fstab: str = FSTAB) -> Target:
    """What `path` names, refused when it does not exist (unless `new_file` asks for a test file there) or lies on a
    mount point of `fstab` whose file system is not mounted, where the run would measure another disk."""
    try:
        return _resolve_target(path, new_file, fstab)
    except OSError as exc:  # a name too long, a loop of links, a folder we may not enter: the user's path
        raise UserError(f"target {path[:60]}{'...' if len(path) > 60 else ''}: {exc.strerror or exc}") from None


def absolute_path(path: str) -> Path:
    """The user's path with ~ expanded, made absolute; a ~user with no home is one UserError line."""
    try:
        return Path(path).expanduser().absolute()
    except RuntimeError:  # Path.expanduser: no such user, or no home to expand ~ to
        raise UserError(f"{path[:60]}: cannot expand {path.split('/')[0][:30]!r}: no such user's home") from None


def _resolve_target(path: str, new_file: bool, fstab: str) -> Target:
    resolved = absolute_path(path)
    if not resolved.exists():
        return _new_file(path, resolved, new_file, fstab)
    if new_file:
        raise UserError(f"target {path} already exists: leave out --new-file (it makes a test file where there is "
                        "none)")
    mode = resolved.stat().st_mode
    if stat.S_ISBLK(mode):
        device = probe_block_device(str(resolved))
        return Target("device", str(resolved), str(resolved), False, device.size_bytes, device)
    _refuse_unmounted(path, resolved, resolved, fstab)
    if stat.S_ISDIR(mode):
        test_file = disklab_entry(resolved, "testfile")
        return Target("directory", str(resolved), str(test_file), True, None, None, _awaiting_a_disk(resolved))
    if stat.S_ISREG(mode):
        return Target("file", str(resolved), str(resolved), False, resolved.stat().st_size, None)
    raise UserError(f"target {path} is neither a directory, a regular file nor a block device")


def _new_file(path: str, resolved: Path, new_file: bool, fstab: str) -> Target:
    """A missing path is a typo or a disk not mounted far more often than a wish for a file: only --new-file makes
    one, and only in a folder that exists."""
    if path.endswith("/"):
        raise UserError(f"target directory {path} does not exist; create it first")
    if _in_device_folder(resolved.parent):
        raise UserError(f"target {path}: no such device (disklab makes no test file among device nodes)")
    if not resolved.parent.is_dir():
        raise UserError(f"target {path} does not exist, nor does its folder {resolved.parent}: check the path")
    if not new_file:
        raise UserError(f"target {path} does not exist: create the directory, or give --new-file to make a test "
                        "file at that path")
    _refuse_unmounted(path, resolved, resolved.parent, fstab)
    return Target("file", str(resolved), str(resolved), True, None, None, _awaiting_a_disk(resolved.parent))


def _refuse_unmounted(path: str, resolved: Path, where: Path, fstab: str) -> None:
    """A mount point whose file system is not mounted is an empty folder on the disk beneath: never the one meant.
    `where` is the target, or the folder of a test file yet to be made."""
    found = unmounted_fstab_entry(str(where), fstab)
    if found is None:
        return
    entry, holder = found
    instead = (f"the root disk ({holder.source})" if holder.mount_point == "/"
               else f"{holder.source} ({holder.fs_type} mounted at {holder.mount_point})")
    noauto = ", noauto" if "noauto" in entry.options else ""
    if os.path.realpath(resolved) == entry.mount_point:
        what = f"target {path} is a mount point in {fstab} ({entry.source}{noauto}) but nothing is mounted there"
    else:
        what = (f"target {path} is under {entry.mount_point}, a mount point in {fstab} ({entry.source}{noauto}) "
                "where nothing is mounted")
    raise UserError(f"{what}: it would test {instead}; mount it first ('mount {entry.mount_point}'), or name "
                    "another directory")


def _awaiting_a_disk(folder: Path) -> tuple[str, ...]:
    """An empty folder under /mnt or /media on the root file system is most likely where a disk should be mounted."""
    real = os.path.realpath(folder)
    if not any(real.startswith(f"{top}/") for top in MOUNT_FOLDERS):
        return ()
    mount = mount_of(real)
    if mount is None or mount.mount_point != "/":
        return ()
    with os.scandir(real) as entries:
        if any(not _DISKLAB_ENTRY.match(entry.name) for entry in entries):
            return ()
    return (f"warning: {folder} is an empty directory on the root file system: if a disk belongs there, it is not "
            f"mounted, and this run measures the root disk ({mount.source}); mount the disk first to test it",)


def _in_device_folder(folder: Path) -> bool:
    """/dev and any other devtmpfs: a missing name there is a device that is not present, never a file to make."""
    mount = mount_of(str(folder)) if folder.is_dir() else None
    return mount is not None and mount.fs_type == "devtmpfs"


def logical_block_size_under(folder: Path) -> int:
    """The logical block size of the device holding `folder`, from sysfs (a partition shares its disk's)."""
    dev = os.stat(folder).st_dev
    node = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    for queue in (node / "queue", node / ".." / "queue"):
        try:
            return int((queue / "logical_block_size").read_text())
        except (OSError, ValueError):
            continue
    return DEFAULT_LOGICAL_BLOCK_SIZE


def check_target(target: Target, space_bytes: int, writes: bool, destroy_data: bool, force: bool,
                 direct: bool = False) -> None:
    """Refuse before anything runs: no space, no write permission, data that writing would destroy, or (with
    `direct`, some test uses direct I/O) a file system that refuses O_DIRECT, where fio would only fail."""
    if target.kind == "device":
        if writes:
            check_device_writable(target.device, destroy_data=destroy_data, force=force)
        elif not os.access(target.test_path, os.R_OK):
            raise UserError(f"cannot read {target.test_path}: permission denied (run as root or join the 'disk' group)")
        return
    folder = Path(target.test_path).parent
    if target.disklab_owns_file:
        if not os.access(folder, os.W_OK | os.X_OK):
            raise UserError(f"cannot create a test file in {folder}: permission denied")
        _check_free_space(folder, space_bytes)
    elif writes and not destroy_data:
        raise SafetyError(
            f"{target.test_path} is an existing file and the suite writes to it; add --destroy-data to allow "
            "overwriting it, or name a directory so disklab makes its own test file"
        )
    refusing = _refuses_direct_io(folder) if direct else None
    if refusing:
        in_ram = (f"; {refusing} keeps its files in RAM, so nothing measured there is a disk's"
                  if refusing in MEMORY_FS_TYPES else "")
        raise UserError(f"{folder} is on {refusing}, which refuses direct I/O (O_DIRECT){in_ram}: set direct = false "
                        "in the suite to run buffered")


def _check_free_space(folder: Path, needed_bytes: int) -> None:
    fs = os.statvfs(folder)
    if fs.f_blocks == 0:
        return  # a file system of no set size (ramfs grows until RAM runs out): there is no free space to count
    free = fs.f_bavail * fs.f_frsize
    if free < needed_bytes + FREE_SPACE_MARGIN_BYTES:
        raise UserError(
            f"not enough space in {folder}: the test file needs {human_size(needed_bytes)} "
            f"(+{human_size(FREE_SPACE_MARGIN_BYTES)} margin), {human_size(free)} is free; use --size for a smaller test file"
        )


def _refuses_direct_io(folder: Path) -> str | None:
    """The file system's type when it refuses O_DIRECT, where fio would only fail: ramfs always, tmpfs before Linux
    6.6 (which taught it direct I/O). Known from the mount and the kernel, so nothing is opened to find out."""
    mount = mount_of(str(folder))
    fs_type = mount.fs_type if mount else None
    if fs_type == "ramfs" or (fs_type == "tmpfs" and _kernel_version() < (6, 6)):
        return fs_type
    return None


def _kernel_version() -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", platform.release())[:2])


def remove_test_file(target: Target) -> None:
    if target.disklab_owns_file:
        Path(target.test_path).unlink(missing_ok=True)
        shutil.rmtree(target.file_set_dir, ignore_errors=True)


def leave_test_files(target: Target, keep_file: bool, run_id: int) -> list[str]:
    """disklab's test files kept (`keep_file`) or removed after a run, in lines to say; on a disk that failed under
    the run (its file system gone read-only, or failing) they stay where they are, said in a line, rather than hide
    the run's own error."""
    try:
        if keep_file and target.disklab_owns_file:
            return [f"test file kept: {kept}" for kept in keep_test_file(target, run_id)]
        remove_test_file(target)
    except OSError as exc:
        return [f"test file {target.test_path} left in place ({exc.strerror}): the next run in that folder removes it"]
    return []


def keep_test_file(target: Target, run_id: int) -> list[str]:
    """Kept files get names that stale-file clean-up never matches."""
    kept = []
    for path in (Path(target.test_path), Path(target.file_set_dir)):
        if path.exists():
            renamed = path.with_name(f"disklab-run{run_id}{path.suffix}")
            os.replace(path, renamed)
            kept.append(str(renamed))
    return kept


def disklab_entry(folder: Path, kind: str) -> Path:
    """The name this process gives what it makes in `folder` (a kind of _DISKLAB_ENTRY)."""
    return folder / f"disklab-{host_identity().hostname}-{os.getpid()}.{kind}"


def stale_entries(folder: str, kinds: tuple[str, ...]) -> list[Path]:
    """What killed disklab processes of this host left in `folder`."""
    return [entry for entry in sorted(Path(folder).iterdir()) if is_stale_entry(entry, kinds)]


def is_stale_entry(path: Path, kinds: tuple[str, ...]) -> bool:
    """Whether `path` is named as a disklab process of this host names what it makes, and that process is gone."""
    match = _DISKLAB_ENTRY.match(path.name)
    return bool(match and match["kind"] in kinds and match["host"] == host_identity().hostname
                and not process_alive(int(match["pid"])))


def remove_stale_test_files(folder: str) -> list[str]:
    """Test files left by killed disklab processes of this host."""
    removed = []
    for entry in stale_entries(folder, ("testfile", "files")):
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(str(entry))
    return removed

