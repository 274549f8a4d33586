"""Where a target lives, in one line: the block device and its model, the file system and its mount, or what the
file system is when no block device is under it. Worded from the facts env/collect.py gathers, so that the run's
header and the stored run (`target_on`) say the same."""

from __future__ import annotations

from disklab.env.registry import device_key
from disklab.system.mounts import MEMORY_FS_TYPES, NETWORK_FS_TYPES


def where_on(env: dict, device_path: str | None = None, contents: str | None = None) -> str:
    """'/dev/vda1 (on vda: model X, virtio), ext4 mounted at /' for a file system's target; for a device target
    (`device_path`, with blkid's `contents`), 'the device itself (model X, SATA), carrying an ext4 file system'."""
    if device_path is not None:
        return f"the device itself ({_disks(env, device_path)}), {contents}"
    fs_type, mount_point, source = env.get("fs_type"), env.get("fs_mount_point"), env.get("fs_source")
    if fs_type is None:
        return "an unknown file system (no mount found for it)"
    mounted = f"{fs_type} mounted at {mount_point}"
    if fs_type in MEMORY_FS_TYPES:
        return f"{mounted}: memory, no block device"
    if fs_type in NETWORK_FS_TYPES:
        return f"{mounted} from {source}: a network file system, no block device here"
    if not env.get("devices"):
        return f"{source}, {mounted} (no block device found under it)"
    return f"{source} ({_disks(env, source)}), {mounted}"


def _disks(env: dict, node: str) -> str:
    """The disks under `node` with model and interface; their layout (md, LVM, btrfs ...) when there is one."""
    disks = [d for d in (env.get("devices") or "").split(", ") if d]
    if not disks:
        return "no disk found under it in sysfs"
    described = [_disk(env, disk) for disk in disks]
    if disks == [node.rpartition("/")[2]]:
        text = described[0]
    else:
        text = ("on " if len(disks) == 1 else "over ") + "; ".join(f"{d}: {w}" for d, w in zip(disks, described))
    layout = env.get("layout")
    return text if layout in (None, "none") else f"{layout}; {text}"


def _disk(env: dict, disk: str) -> str:
    model = env.get(device_key(disk, "model"))
    facts = [f"model {model}" if model else "model unknown"]
    facts += [env[key] for key in (device_key(disk, "interface"), device_key(disk, "ram_backing"))
              if env.get(key) not in (None, "none")]
    return ", ".join(facts)
