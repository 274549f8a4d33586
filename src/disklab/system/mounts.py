"""Mounts as /proc/self/mountinfo lists them: which mount holds a path, which file systems live in memory and which
are served over a network; and the mounts /etc/fstab promises, to tell a mount point whose file system is missing.

Looked up defensively: an unreadable mountinfo or fstab gives no mounts and a
path that cannot be stat'ed gives None ("unknown"), never an exception.
"""

from __future__ import annotations

import os
import re
import posixpath
from dataclasses import dataclass
from pathlib import Path

# File systems that keep their files in memory, never on a disk of their own (tmpfs may swap some of it out).
MEMORY_FS_TYPES = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs", "rootfs"})
# File systems served over a network: their disks are another machine's. (9p is one only over a network transport:
# over virtio, xen or a file descriptor its server is this machine's hypervisor or a local process.)
NETWORK_FS_TYPES = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "fuse.glusterfs", "afs",
                              "lustre", "beegfs", "gpfs", "fuse.sshfs"})
FSTAB = "/etc/fstab"


@dataclass(frozen=True)
class Mount:
    mount_point: str
    fs_type: str
    source: str
    options: str  # per-mount and super-block options, joined
    device_number: tuple[int, int]

    @property
    def option_values(self) -> dict[str, str]:
        """Each option's value by its name; a flag (ro, nolock) has ''."""
        pairs = (option.partition("=") for option in self.options.split(","))
        return {name: value for name, _, value in pairs if name}


def mount_of(path: str, proc: str = "/proc") -> Mount | None:
    """The mount holding `path`: the deepest mount point above it, preferring one with the path's device number."""
    real = os.path.realpath(path)
    try:
        dev = os.stat(real).st_dev
    except OSError:
        return None
    return deepest_mount(real, (os.major(dev), os.minor(dev)), proc)


def deepest_mount(real: str, number: tuple[int, int] | None, proc: str = "/proc") -> Mount | None:
    """The deepest mount point above the resolved path `real`, preferring one with device `number`."""
    best = None
    for mount in _mounts(proc):
        point = mount.mount_point
        if real != point and not real.startswith(point.rstrip("/") + "/"):
            continue
        rank = (mount.device_number == number, len(point))
        if best is None or rank >= best[0]:
            best = (rank, mount)
    return None if best is None else best[1]


def unescape_octal(text: str) -> str:
    """Undo the kernel's \\ooo escaping of spaces, tabs, newlines and backslashes in /proc files."""
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match.group(1), 8)), text)


def _mounts(proc: str) -> list[Mount]:
    try:
        text = (Path(proc) / "self" / "mountinfo").read_text(errors="replace")
    except OSError:
        return []
    mounts = []
    for line in text.split("\n"):
        fields = line.split(" ")
        if len(fields) < 10 or "-" not in fields[6:]:
            continue
        separator = fields.index("-", 6)
        major, _, minor = fields[2].partition(":")
        options = fields[5]
        super_options = fields[separator + 3] if len(fields) > separator + 3 else ""
        merged = ",".join(dict.fromkeys(options.split(",") + [o for o in super_options.split(",") if o]))
        mounts.append(Mount(
            mount_point=unescape_octal(fields[4]), fs_type=fields[separator + 1],
            source=unescape_octal(fields[separator + 2]), options=merged, device_number=(int(major), int(minor)),
        ))
    return mounts


@dataclass(frozen=True)
class FstabEntry:
    """A file system /etc/fstab mounts (swap and other entries without a mount point are left out)."""

    source: str  # as written: /dev/sdb1, UUID=..., LABEL=..., server:/export
    mount_point: str  # normalised, not resolved: resolving would stat every mount point, a hung NFS server's too
    fs_type: str
    options: tuple[str, ...]


def parse_fstab(text: str) -> list[FstabEntry]:
    """fstab(5): fields apart by spaces or tabs (only those: libmount's rule), \\ooo escapes, '#' comment lines;
    anything malformed is skipped."""
    entries = []
    for line in text.split("\n"):
        fields = [field for field in re.split("[ \t]+", line) if field]
        if len(fields) < 2 or fields[0].startswith("#"):
            continue
        mount_point = unescape_octal(fields[1])
        fs_type = unescape_octal(fields[2]) if len(fields) > 2 else "auto"
        if not mount_point.startswith("/") or fs_type == "swap" or "\0" in mount_point:
            continue
        options = tuple(unescape_octal(fields[3]).split(",")) if len(fields) > 3 else ("defaults",)
        entries.append(FstabEntry(unescape_octal(fields[0]), _normal(mount_point), fs_type, options))
    return entries


def read_fstab(path: str = FSTAB) -> list[FstabEntry]:
    try:
        return parse_fstab(Path(path).read_bytes().decode("utf-8", errors="replace"))
    except OSError:
        return []


def unmounted_fstab_entry(path: str, fstab: str = FSTAB, proc: str = "/proc") -> tuple[FstabEntry, Mount] | None:
    """The fstab entry whose file system ought to hold `path` but is not mounted, and the mount that holds it
    instead: the deepest fstab mount point at or above the path lies deeper than the mount actually holding it."""
    real = os.path.realpath(path)
    above = [e for e in read_fstab(fstab) if real == e.mount_point or real.startswith(e.mount_point.rstrip("/") + "/")]
    holder = mount_of(real, proc)
    if not above or holder is None:
        return None
    entry = max(above, key=lambda e: len(e.mount_point))
    return (entry, holder) if len(entry.mount_point) > len(holder.mount_point) else None


def _normal(mount_point: str) -> str:
    """/data/, //data and /data/./x/.. all name /data."""
    normal = posixpath.normpath(mount_point)
    return "/" + normal.lstrip("/")
