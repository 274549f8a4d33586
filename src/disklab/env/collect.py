"""Collect a run's environment: one collect_* function per area, each returning keys of the registry.

Every fact is looked up defensively: a missing file, tool or permission gives
None ("unknown"), never an exception. Nothing here writes device data; of a
device target only its signatures are read (blkid -p), to say what it holds.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
from pathlib import Path

from disklab.env.hardware import collect_board, collect_controller, collect_queues
from disklab.env.network import collect_network
from disklab.env.readers import read_file, run_quietly, to_int
from disklab.env.registry import ARRAY, device_key
from disklab.env.where import where_on
from disklab.system.host import host_identity
from disklab.targets.holders import stacked_device
from disklab.system.mounts import MEMORY_FS_TYPES, Mount, deepest_mount, mount_of
from disklab.targets.signatures import device_contents
from disklab.units import format_size

# Usable bytes per second per PCIe lane after line coding, by link speed in GT/s (sysfs current_link_speed).
_PCIE_LANE_BYTES_PER_S = {2.5: 250e6, 5.0: 500e6, 8.0: 984.6e6, 16.0: 1969e6, 32.0: 3938e6, 64.0: 7877e6}
# Block drivers, by the name they register in /proc/devices, whose devices keep their data in RAM or keep none.
_MEMORY_DRIVERS = {"zram": "zram (compressed RAM)", "ramdisk": "a brd RAM disk",
                   "nullb": "null_blk (RAM or no storage at all)"}
# nd_e820 serves the e820 "persistent memory" ranges that memmap=nn!ss carves out of RAM (and legacy NVDIMMs).
_PMEM_FROM_RAM = "pmem on an e820 range (memmap= takes it from RAM, unless this machine has a legacy NVDIMM)"
# Loop devices over files on loop devices over ...: followed this deep, then unknown.
_LOOP_DEPTH = 8


def collect_environment(target_path: str, target_is_device: bool, fio_version: str | None, engines: list[str],
                        *, sysfs: str = "/sys", proc: str = "/proc") -> dict:
    """Everything a run records about its machine and its target; fio's version as fio gave it (None: fio not used,
    as by pgbench, and then no fio keys: not 'unknown', which says a fact was looked for and not found)."""
    fio = {"fio_version": fio_version, "fio_engines": ", ".join(sorted(engines)) or None} if fio_version else {}
    env = {**collect_host(proc), **collect_board(sysfs), **fio}
    return {**env, **collect_target(target_path, target_is_device, sysfs=sysfs, proc=proc)}


def collect_target(target_path: str, target_is_device: bool, *, sysfs: str = "/sys", proc: str = "/proc") -> dict:
    """The file system, disks and layout under a target, and the line naming them (`target_on`) that the run's
    header says before anything runs."""
    if target_is_device:
        mount, number = None, _device_number_of_node(target_path)
    else:
        mount, number = _mount_and_number(target_path, proc)
    env = {**collect_filesystem(mount), **collect_network(mount, sysfs)}
    disks, layout = underlying_disks(number, mount, sysfs)
    env["devices"] = ", ".join(disks) if disks else None
    env["layout"] = "; ".join(layout) if layout else "none"
    array = md_array_model(number, sysfs)
    if array:
        env[device_key(ARRAY, "model")] = array
    for disk in disks:
        env.update(collect_device(disk, sysfs, proc))
    env["target_on"] = (where_on(env, target_path, device_contents(target_path)) if target_is_device
                        else where_on(env))
    return env


def collect_host(proc: str = "/proc") -> dict:
    cpu_model = None
    for line in read_file(Path(proc) / "cpuinfo", "").splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("model name", "Model", "cpu model"):
            cpu_model = value.strip()
            break
    ram = None
    match = re.search(r"^MemTotal:\s+(\d+) kB", read_file(Path(proc) / "meminfo", ""), re.MULTILINE)
    if match:
        ram = int(match.group(1)) * 1024
    return {
        "hostname": host_identity().hostname,
        "kernel": platform.release() or None,
        "distribution": _os_release(),
        "cpu_model": cpu_model,
        "cpu_count": os.cpu_count(),
        "ram_bytes": ram,
    }


def collect_filesystem(mount: Mount | None) -> dict:
    if mount is None:
        return {"fs_type": None, "fs_mount_point": None, "fs_source": None, "fs_mount_options": None,
                "fs_compression": None}
    return {
        "fs_type": mount.fs_type,
        "fs_mount_point": mount.mount_point,
        "fs_source": mount.source,
        "fs_mount_options": mount.options,
        "fs_compression": compression_of(mount),
    }


def compression_of(mount: Mount) -> str | None:
    """'none', what compresses or deduplicates ("btrfs compress=zstd:3", "zfs compression=lz4"), or None if unknown."""
    if mount.fs_type == "btrfs":
        found = [o for o in mount.options.split(",") if o.startswith(("compress", "compress-force"))]
        return "btrfs " + ",".join(found) if found else "none"
    if mount.fs_type == "zfs":
        if shutil.which("zfs") is None:
            return None
        text = run_quietly(["zfs", "get", "-H", "-o", "property,value", "compression,dedup", mount.source])
        if not text:
            return None
        active = [f"{p}={v}" for p, v in (line.split("\t", 1) for line in text.splitlines() if "\t" in line)
                  if v.strip() not in ("off", "-")]
        return "zfs " + ",".join(v.strip() for v in active) if active else "none"
    if mount.fs_type in ("f2fs",) and "compress_algorithm" in mount.options:
        return f"{mount.fs_type} compress_algorithm"
    return "none"


def collect_device(name: str, sysfs: str = "/sys", proc: str = "/proc") -> dict:
    """sysfs facts of one whole disk (`name` as in /sys/block)."""
    block = Path(sysfs) / "block" / name
    queue = block / "queue"
    device = block / "device"
    scheduler = read_file(queue / "scheduler")
    if scheduler:
        chosen = re.search(r"\[([^\]]+)\]", scheduler)
        scheduler = chosen.group(1) if chosen else scheduler
    size = to_int(read_file(block / "size"))
    rotational = to_int(read_file(queue / "rotational"))
    interface, ceiling = _interface(name, block)
    facts = {
        "model": read_file(device / "model"),
        "serial": read_file(device / "serial") or read_file(block / "serial") or _unit_serial(device / "vpd_pg80"),
        "firmware": read_file(device / "firmware_rev") or read_file(device / "rev"),
        "size_bytes": None if size is None else size * 512,
        "rotational": None if rotational is None else rotational == 1,
        "logical_block_size": to_int(read_file(queue / "logical_block_size")),
        "physical_block_size": to_int(read_file(queue / "physical_block_size")),
        "scheduler": scheduler,
        "nr_requests": to_int(read_file(queue / "nr_requests")),
        "write_cache": read_file(queue / "write_cache"),
        "interface": interface,
        "interface_ceiling_bytes_per_s": ceiling,
        "ram_backing": ram_backing(name, sysfs, proc),
        **collect_queues(name, sysfs),
        **collect_controller(name, sysfs),
    }
    if facts["serial"] and not facts["serial"].isprintable():
        facts["serial"] = None
    return {device_key(name, field): value for field, value in facts.items()}


def underlying_disks(number: tuple[int, int] | None, mount: Mount | None, sysfs: str = "/sys") -> tuple[list[str], list[str]]:
    """Whole disks under a device number (partitions resolved to their disk, md/dm followed to their slaves), and
    a description of the layers met on the way (md level, LVM, dm, ZFS pool, btrfs devices)."""
    layout: list[str] = []
    starts: list[Path] = []
    if mount is not None and mount.fs_type == "zfs":
        layout.append(f"zfs dataset {mount.source}")
        pool = mount.source.split("/", 1)[0]
        starts += _zpool_devices(pool, sysfs)
    elif mount is not None and mount.fs_type == "btrfs":
        fsid = _btrfs_fsid(mount, sysfs)
        members = sorted((Path(sysfs) / "fs" / "btrfs" / fsid / "devices").iterdir()) if fsid else []
        if members:
            layout.append(f"btrfs on {len(members)} device(s): {', '.join(m.name for m in members)}")
            starts += [m.resolve() for m in members]
    if not starts and number is not None:
        node = Path(sysfs) / "dev" / "block" / f"{number[0]}:{number[1]}"
        if node.exists():
            starts.append(node.resolve())
    disks: list[str] = []
    pending = list(starts)
    seen: set[Path] = set()
    while pending:
        node = pending.pop(0)
        if node in seen:
            continue
        seen.add(node)
        if (node / "partition").is_file():
            node = node.parent
        slaves = sorted((node / "slaves").iterdir()) if (node / "slaves").is_dir() else []
        if slaves:
            layout.append(_layer(node, [s.name for s in slaves]))
            pending += [s.resolve() for s in slaves]
        elif node.name not in disks:
            disks.append(node.name)
    return disks, layout


def ram_backing(name: str, sysfs: str = "/sys", proc: str = "/proc", depth: int = 0) -> str | None:
    """'none', what keeps a whole disk's data in RAM, or None when that cannot be told (e.g. a loop device whose
    file is out of reach). The driver comes from the kernel's own list of block majors, not from the name."""
    block = Path(sysfs) / "block" / name
    major = to_int((read_file(block / "dev") or "").partition(":")[0])
    drivers = _block_drivers(proc)
    if major is None or not drivers:
        return None
    driver = drivers.get(major)
    if driver in _MEMORY_DRIVERS:
        return _MEMORY_DRIVERS[driver]
    if driver == "loop":
        return _loop_backing(block, sysfs, proc, depth)
    if _pmem_provider(block) == "e820":
        return _PMEM_FROM_RAM
    return "none"


def disks_under(folder: str, *, sysfs: str = "/sys", proc: str = "/proc") -> tuple[Mount | None, list[str]]:
    """The mount holding `folder` and the whole disks beneath it: whether two folders share a disk."""
    mount, number = _mount_and_number(folder, proc)
    return mount, underlying_disks(number, mount, sysfs)[0]


def _mount_and_number(target_path: str, proc: str) -> tuple[Mount | None, tuple[int, int] | None]:
    folder = target_path if os.path.isdir(target_path) else os.path.dirname(target_path) or "."
    mount = mount_of(folder, proc)
    return (None, None) if mount is None else (mount, _number_of(mount))


def _number_of(mount: Mount) -> tuple[int, int]:
    # btrfs and others report an anonymous 0:N device; the source names the real one.
    if mount.device_number[0] == 0 and mount.source.startswith("/dev/"):
        return _device_number_of_node(mount.source) or mount.device_number
    return mount.device_number


def _block_drivers(proc: str) -> dict[int, str]:
    """Block majors and the drivers that registered them, from /proc/devices."""
    _, _, block = (read_file(Path(proc) / "devices", "") or "").partition("Block devices:")
    drivers = {}
    for line in block.splitlines():
        major, _, driver = line.strip().partition(" ")
        if major.isdigit():
            drivers[int(major)] = driver.strip()
    return drivers


def _loop_backing(block: Path, sysfs: str, proc: str, depth: int) -> str | None:
    """A loop device is held in RAM when its file is: on tmpfs or ramfs, or on a disk that is itself in RAM."""
    backing = read_file(block / "loop" / "backing_file")
    if backing is None or depth >= _LOOP_DEPTH:
        return None
    # A file deleted since it was attached, or one in another mount namespace, still lies under its path's mount.
    path = backing.removesuffix(" (deleted)")
    mount = mount_of(path, proc) or deepest_mount(os.path.realpath(path), None, proc)
    if mount is None:
        return None
    if mount.fs_type in MEMORY_FS_TYPES:
        return f"a loop device over {backing}, a file on {mount.fs_type} ({mount.mount_point})"
    disks, _ = underlying_disks(_number_of(mount), mount, sysfs)
    below = {disk: ram_backing(disk, sysfs, proc, depth + 1) for disk in disks}
    held = [f"{disk}, {what}" for disk, what in below.items() if what not in (None, "none")]
    if held:
        return f"a loop device over {backing}, a file on {'; '.join(held)}"
    return "none" if below and None not in below.values() else None


def _pmem_provider(block: Path) -> str | None:
    """The provider of the NVDIMM bus a pmem disk sits on ("e820", "ACPI.NFIT" ...), if it sits on one."""
    for parent in block.resolve().parents:
        if parent.name.startswith("ndbus"):
            return read_file(parent / "provider")
    return None


def _device_number_of_node(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.major(st.st_rdev), os.minor(st.st_rdev)) if st.st_rdev else None


# md's numbers for the parity layouts (RAID 4/5/6), as mdadm names them.
_PARITY_LAYOUTS = {0: "left-asymmetric", 1: "right-asymmetric", 2: "left-symmetric", 3: "right-symmetric",
                   4: "parity-first", 5: "parity-last", 8: "ddf-zero-restart", 9: "ddf-N-restart",
                   10: "ddf-N-continue"}


def md_array_model(number: tuple[int, int] | None, sysfs: str = "/sys") -> str | None:
    """The md array a device target is, named as a drive's model is and without the kernel's names, which change
    from boot to boot: 'md raid5, 4 members, chunk 64KiB, left-symmetric'. It tells one array of a set of disks
    from another array of the same disks in their device history. None for anything but an md array."""
    if number is None:
        return None
    md = (Path(sysfs) / "dev" / "block" / f"{number[0]}:{number[1]}").resolve() / "md"
    level = read_file(md / "level")
    if not level:
        return None
    parts = [f"md {level}", f"{read_file(md / 'raid_disks') or '?'} members"]
    chunk = to_int(read_file(md / "chunk_size"))
    if chunk and level not in ("raid1", "linear"):
        parts.append(f"chunk {format_size(chunk)}")
    layout = to_int(read_file(md / "layout"))
    if layout is not None and level in ("raid4", "raid5", "raid6"):
        parts.append(_PARITY_LAYOUTS.get(layout % 16, f"layout {layout}") + ("-6" if layout >= 16 else ""))
    elif layout is not None and level == "raid10":
        near, far, offset = layout & 0xFF, (layout >> 8) & 0xFF, bool(layout & 0x10000)
        parts.append(f"offset={far}" if offset else f"far={far}" if far > 1 else f"near={near}")
    return ", ".join(parts)


def _layer(node: Path, slaves: list[str]) -> str:
    device = stacked_device(node)
    return " ".join(filter(None, (device.kind, device.name, device.level, "over", ", ".join(slaves))))


def _btrfs_fsid(mount: Mount, sysfs: str) -> str | None:
    if not mount.source.startswith("/dev/"):
        return None
    name = os.path.basename(os.path.realpath(mount.source))
    root = Path(sysfs) / "fs" / "btrfs"
    if not root.is_dir():
        return None
    for fs in root.iterdir():
        if (fs / "devices" / name).exists():
            return fs.name
    return None


def _zpool_devices(pool: str, sysfs: str) -> list[Path]:
    if shutil.which("zpool") is None:
        return []
    text = run_quietly(["zpool", "list", "-v", "-H", "-P", pool]) or ""
    found = []
    for line in text.splitlines():
        path = line.strip().split("\t")[0].strip()
        number = _device_number_of_node(path) if path.startswith("/dev/") else None
        node = Path(sysfs) / "dev" / "block" / f"{number[0]}:{number[1]}" if number else None
        if node is not None and node.exists():
            found.append(node.resolve())
    return found


def _unit_serial(page: Path) -> str | None:
    """The serial in a SCSI device's Unit Serial Number VPD page (0x80) as sysfs keeps it, in binary: a 4-byte header
    whose last two bytes give the length, then the serial in ASCII, space-padded (a SATA disk's, through libata)."""
    try:
        data = page.read_bytes()
    except OSError:
        return None
    if len(data) < 4 or data[1] != 0x80:
        return None
    return data[4:4 + int.from_bytes(data[2:4], "big")].decode("ascii", errors="replace").strip() or None


def _interface(name: str, block: Path) -> tuple[str | None, float | None]:
    """The link the disk hangs on and the most it can carry, where sysfs tells (NVMe over PCIe); else unknown."""
    if name.startswith("nvme"):
        controller = block / "device" / "device"
        speed = read_file(controller / "current_link_speed")
        width = to_int(read_file(controller / "current_link_width"))
        match = re.match(r"([\d.]+)\s*GT/s", speed or "")
        if match and width:
            lane = _PCIE_LANE_BYTES_PER_S.get(float(match.group(1)))
            return f"PCIe {match.group(1)} GT/s x{width}", None if lane is None else lane * width
        return "NVMe", None
    if name.startswith("vd"):
        return "virtio", None
    if name.startswith(("loop", "ram", "zram")):
        return name.rstrip("0123456789"), None
    return None, None


def _os_release() -> str | None:
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        text = read_file(Path(path))
        if text:
            fields = dict(
                (k, v.strip().strip('"')) for k, _, v in (line.partition("=") for line in text.splitlines()) if k
            )
            return fields.get("PRETTY_NAME") or fields.get("NAME")
    return None
