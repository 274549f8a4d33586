"""What an md array or a device-mapper device stacked on a disk is, read from sysfs alone (md/level, md/array_state,
dm/name, dm/uuid): the safety rules name a disk's holders by it, with the command that releases each, and the
environment record names the layers under a target by it. No tool is run, so a machine without mdadm or lvm2 names
them the same."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# device-mapper's uuid prefix -> the kind of device, and how its own tool releases it (NAME: dm's name).
_DM_KINDS = (("LVM-", "LVM"), ("CRYPT-", "dm-crypt"), ("mpath-", "multipath"))
_DM_RELEASE = {"dm-crypt": "cryptsetup close {name}", "multipath": "multipath -f {name}",
               "device-mapper": "dmsetup remove {name}"}
# An md array that is assembled but not started holds its members all the same.
_MD_STOPPED = ("inactive", "clear")
# LVM's dm name: the volume group, '-', the logical volume, each with its own hyphens doubled.
_LVM_NAME = re.compile(r"^((?:[^-]|--)+)-(.+)$")


@dataclass(frozen=True)
class StackedDevice:
    kind: str  # md, LVM, dm-crypt, multipath, device-mapper, bcache, or "kernel holder"
    name: str  # the kernel's md name (md0), dm's name (vg-data), else the kernel's
    level: str  # an md array's RAID level (raid5), else ""
    path: str  # how users call it: /dev/md0, /dev/VG/LV, /dev/mapper/NAME
    state: str  # what it is now, in words: "raid5, running", "LVM volume group vg"
    release: str  # the command that lets go of the devices under it

    def __str__(self) -> str:
        return f"{self.path} ({self.state})"


def stacked_device(directory: Path) -> StackedDevice:
    """The device whose sysfs folder is `directory` (/sys/devices/virtual/block/md0, .../dm-3)."""
    kernel_name = directory.name
    if (directory / "md").is_dir():
        level = _read(directory / "md" / "level")
        running = "inactive" if _read(directory / "md" / "array_state") in _MD_STOPPED else "running"
        path = f"/dev/{kernel_name}"
        return StackedDevice("md", kernel_name, level, path, f"{level or 'md array'}, {running}",
                             f"mdadm --stop {path}")
    if (directory / "dm").is_dir():
        return _dm_device(directory)
    if kernel_name.startswith("bcache"):
        return StackedDevice("bcache", kernel_name, "", f"/dev/{kernel_name}", "bcache",
                             f"echo 1 > /sys/block/{kernel_name}/bcache/stop")
    return StackedDevice("kernel holder", kernel_name, "", f"/dev/{kernel_name}", "kernel holder",
                         f"whatever made /dev/{kernel_name} must remove it")


def _dm_device(directory: Path) -> StackedDevice:
    uuid = _read(directory / "dm" / "uuid")
    name = _read(directory / "dm" / "name") or directory.name
    kind = next((kind for prefix, kind in _DM_KINDS if uuid.startswith(prefix)), "device-mapper")
    lvm = _LVM_NAME.match(name) if kind == "LVM" else None
    if lvm:
        group, volume = (part.replace("--", "-") for part in lvm.groups())
        return StackedDevice(kind, name, "", f"/dev/{group}/{volume}", f"LVM volume group {group}",
                             f"vgchange -an {group}")
    return StackedDevice(kind, name, "", f"/dev/mapper/{name}", kind,
                         _DM_RELEASE.get(kind, _DM_RELEASE["device-mapper"]).format(name=name))


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""
