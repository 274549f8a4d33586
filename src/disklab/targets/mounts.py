"""Mounts as /proc/self/mountinfo lists them: which mount holds a path, and which file systems live in memory.

Looked up defensively: an unreadable mountinfo gives no mounts and a path that
cannot be stat'ed gives None ("unknown"), never an exception.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

# File systems that keep their files in memory, never on a disk of their own (tmpfs may swap some of it out).
MEMORY_FS_TYPES = frozenset({"tmpfs", "ramfs", "devtmpfs", "hugetlbfs", "rootfs"})


@dataclass(frozen=True)
class Mount:
    mount_point: str
    fs_type: str
    source: str
    options: str  # per-mount and super-block options, joined
    device_number: tuple[int, int]


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
