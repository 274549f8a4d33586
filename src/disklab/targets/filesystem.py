"""A file system made on the device under test for one configuration of a run (`run --fs`), mounted on a private
mount point, and unmounted afterwards whatever happens: the studies compare file systems and their options (XFS's
stripe unit and width, noatime) on one drive, and a configuration made by hand between runs is never recorded.

The mount point carries disklab's PID (system/leftovers.py): a run killed by SIGKILL leaves its file system
mounted, and the next `run --fs` or `disklab doctor` unmounts it.
"""

import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from disklab.errors import UserError
from disklab.system.commands import run_checked
from disklab.system.leftovers import Leftover, dead_entries, owned_prefix, remove_leftovers
from disklab.system.mounts import mount_of

# The file systems disklab makes, each with the flag that lets mkfs write over an earlier signature (the device's
# consent was given once, with --destroy-data, before the first) and the Debian package of its mkfs.
MKFS = {
    "ext2": ("-F", "e2fsprogs"), "ext3": ("-F", "e2fsprogs"), "ext4": ("-F", "e2fsprogs"),
    "xfs": ("-f", "xfsprogs"), "btrfs": ("-f", "btrfs-progs"),
}
MOUNT_PREFIX = "disklab-fs-"
COMMAND_TIMEOUT_S = 600  # mkfs of a large disk discards it first; a hung device must still end in a clear line


@dataclass(frozen=True)
class FsSpec:
    """`TYPE[:MKFS-OPTIONS][@MOUNT-OPTIONS]`, e.g. 'xfs:-d su=64k,sw=4@noatime'."""

    fs_type: str
    mkfs_options: tuple[str, ...] = ()
    mount_options: str = ""

    @property
    def label(self) -> str:
        """What the run is called by in lists and comparisons: 'xfs -d su=64k,sw=4 noatime'."""
        return " ".join([self.fs_type, *self.mkfs_options, *([self.mount_options] if self.mount_options else [])])

    def mkfs_command(self, device: str) -> list[str]:
        return [f"mkfs.{self.fs_type}", MKFS[self.fs_type][0], *self.mkfs_options, device]

    def mount_command(self, device: str, mount_point: Path) -> list[str]:
        return ["mount", "-t", self.fs_type, *(["-o", self.mount_options] if self.mount_options else []), device,
                str(mount_point)]


def parse_fs_spec(text: str) -> FsSpec:
    """A ValueError says what is wrong with one --fs."""
    if not text.isprintable():
        raise ValueError(f"{text!r} holds a control character; give TYPE[:MKFS-OPTIONS][@MOUNT-OPTIONS]")
    rest, _, mount_options = text.partition("@")
    fs_type, _, mkfs_text = rest.partition(":")
    fs_type = fs_type.strip()
    if fs_type not in MKFS:
        raise ValueError(f"{fs_type or text!r} is not a file system disklab makes ({', '.join(MKFS)}); "
                         "give TYPE[:MKFS-OPTIONS][@MOUNT-OPTIONS], e.g. 'xfs:-d su=64k,sw=4@noatime'")
    try:
        mkfs_options = tuple(shlex.split(mkfs_text))
    except ValueError as exc:
        raise ValueError(f"{text!r}: the mkfs options do not split into words ({exc})") from None
    if any(option.startswith("/") for option in mkfs_options):
        raise ValueError(f"{text!r}: mkfs options name no device; disklab gives mkfs the --target")
    if any(c.isspace() for c in mount_options):
        raise ValueError(f"{text!r}: mount options are one comma-separated list, e.g. @noatime,discard")
    return FsSpec(fs_type, mkfs_options, mount_options.strip())


def parse_fs_specs(texts) -> list[FsSpec]:
    """Each --fs of a run (or of a suite's [configurations]), none twice; a ValueError says what is wrong."""
    specs = [parse_fs_spec(text) for text in texts]
    labels = [spec.label for spec in specs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ValueError(f"{twice[0]!r} is given twice; each file system is one configuration")
    return specs


def check_tools(specs: list[FsSpec]) -> None:
    """Every mkfs the run needs is installed, before anything is made."""
    for spec in specs:
        if shutil.which(spec.mkfs_command("")[0]) is None:
            raise UserError(f"mkfs.{spec.fs_type} is not installed: install Debian's {MKFS[spec.fs_type][1]} "
                            f"(apt-get install {MKFS[spec.fs_type][1]}), or leave out --fs {spec.fs_type}")
    if shutil.which("mount") is None or shutil.which("umount") is None:
        raise UserError("mount and umount are not installed (Debian: apt-get install mount)")


@contextmanager
def mount_point(say: Callable[[str], None]) -> Iterator[Path]:
    """The private folder every file system of one run is mounted on in turn (one path, so that the runs of a
    series name one target); what killed runs left mounted is unmounted first."""
    for removed in remove_leftovers(mount_leftovers()):
        say(f"removed {removed.what}: {removed.path}")
    folder = Path(tempfile.mkdtemp(prefix=owned_prefix(MOUNT_PREFIX)))
    try:
        yield folder
    finally:
        _remove_folder(folder)


@contextmanager
def made_and_mounted(device: str, spec: FsSpec, folder: Path) -> Iterator[dict]:
    """The file system made on `device` and mounted on `folder`; yields what the run records of it. Unmounted at
    the end, on Ctrl-C and on errors too."""
    run_checked(spec.mkfs_command(device), f"mkfs.{spec.fs_type} {device}", COMMAND_TIMEOUT_S)
    run_checked(spec.mount_command(device, folder), f"mounting {device}", COMMAND_TIMEOUT_S)
    try:
        mounted = mount_of(str(folder))
        yield {
            "fs": spec.fs_type, "label": spec.label, "device": device, "mkfs_options": list(spec.mkfs_options),
            "mount_options": spec.mount_options, "mkfs_command": shlex.join(spec.mkfs_command(device)),
            "mount_command": shlex.join(spec.mount_command(device, folder)),
            "kernel_mount_options": mounted.options if mounted else None,
        }
    finally:
        unmount(folder)


def unmount(mount_point: Path) -> None:
    """A file system fio just closed may still be busy for a moment (writeback): retried briefly."""
    for attempt in range(20):
        done = subprocess.run(["umount", str(mount_point)], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode == 0 or not os.path.ismount(mount_point):
            return
        time.sleep(0.1 * (attempt + 1))
    raise UserError(f"cannot unmount {mount_point}: {' '.join(done.stderr.split())}; unmount it by hand "
                    f"(umount {mount_point})")


def mount_leftovers() -> list[Leftover]:
    """File systems a killed `run --fs` left mounted on its private mount point (and empty mount points)."""
    return [Leftover(path, "a killed run's file system, still mounted" if os.path.ismount(path)
                     else "a killed run's mount point", _remove_mount)
            for path in dead_entries(tempfile.gettempdir(), MOUNT_PREFIX) if path.is_dir()]


def _remove_mount(mount_point: Path) -> bool:
    try:
        if os.path.ismount(mount_point):
            unmount(mount_point)
        mount_point.rmdir()
    except (OSError, UserError):
        return False
    return True


def _remove_folder(mount_point: Path) -> None:
    try:
        mount_point.rmdir()
    except OSError:
        pass  # still mounted (unmount failed and said so) or gone: the next run or doctor finds it by its PID
