"""The environment keys every run records: each with its type, unit and formatter (pyperf's metadata registry).

A run's environment is a flat dict of JSON values. Facts about a block device
are keyed `device.<name>.<field>` (for example `device.sda.model`), one set per
disk under the target. A fact that could not be found is stored as None and
shown as "unknown".
"""

from dataclasses import dataclass
from typing import Callable

from disklab.units import format_capacity

UNKNOWN = "unknown"
DEVICE_PREFIX = "device."
# device_key(ARRAY, "model"): the md array a device target is, named without the kernel's names (env/collect.py), so
# that a device's history keeps each array of the same disks apart.
ARRAY = "array"


def _text(value) -> str:
    return str(value)


def _bytes(value) -> str:
    if value >= 1024**3:
        return f"{format_capacity(value)} ({value:,} bytes)"
    return format_capacity(value)


def _yes_no(value) -> str:
    return "yes" if value else "no"


def _rate(value) -> str:
    return f"{value / 1e6:,.0f} MB/s"


@dataclass(frozen=True)
class EnvKey:
    name: str  # for devices: the field after `device.<name>.`
    label: str
    kind: type
    unit: str = ""
    formatter: Callable[[object], str] = _text
    # Keys that may explain why two runs' figures differ; env_differences() compares them.
    explains_difference: bool = False
    # Recorded only where it applies (a network target, a disk on a PCI controller ...), else absent.
    optional: bool = False


_KEYS = (
    EnvKey("hostname", "host name", str),
    EnvKey("kernel", "kernel", str, explains_difference=True),
    EnvKey("distribution", "distribution", str),
    EnvKey("cpu_model", "CPU model", str),
    EnvKey("cpu_count", "CPUs", int, "logical CPUs"),
    EnvKey("ram_bytes", "RAM", int, "bytes", _bytes),
    # DMI (/sys/class/dmi/id), never its serial numbers or UUIDs; unknown on machines without DMI.
    EnvKey("sys_vendor", "system vendor", str),
    EnvKey("product_name", "system model", str, explains_difference=True),
    EnvKey("board_vendor", "mainboard vendor", str),
    EnvKey("board_name", "mainboard", str, explains_difference=True),
    EnvKey("board_version", "mainboard version", str),
    EnvKey("bios_vendor", "BIOS vendor", str),
    EnvKey("bios_version", "BIOS version", str, explains_difference=True),
    EnvKey("bios_date", "BIOS date", str),
    EnvKey("fio_version", "fio version", str, explains_difference=True),
    EnvKey("fio_engines", "fio engine(s)", str, explains_difference=True),
    EnvKey("fs_type", "file system", str, explains_difference=True),
    EnvKey("fs_mount_point", "mount point", str),
    EnvKey("fs_source", "file system source", str),
    EnvKey("fs_mount_options", "mount options", str, explains_difference=True),
    EnvKey("fs_compression", "compression / dedup", str, explains_difference=True),
    # Only for a target on a network file system (env/network.py): the path its data takes.
    EnvKey("net_server", "network server", str, optional=True),
    EnvKey("net_protocol", "network protocol", str, explains_difference=True, optional=True),
    EnvKey("net_transport", "network transport", str, explains_difference=True, optional=True),
    EnvKey("net_rsize_bytes", "largest read per request (rsize)", int, "bytes",
           explains_difference=True, optional=True),
    EnvKey("net_wsize_bytes", "largest write per request (wsize)", int, "bytes",
           explains_difference=True, optional=True),
    EnvKey("net_interface", "local interface to the server", str, explains_difference=True, optional=True),
    EnvKey("net_link_speed_mbit_per_s", "link speed of that interface", int, "Mb/s",
           explains_difference=True, optional=True),
    EnvKey("net_mtu_bytes", "MTU of that interface", int, "bytes", explains_difference=True, optional=True),
    EnvKey("devices", "disks under the target", str),
    # One line naming the block device, model, file system and mount (env/where.py): what the run measured.
    EnvKey("target_on", "disk under test", str),
    EnvKey("layout", "md / LVM / ZFS / btrfs layout", str, explains_difference=True),
    # Given by the user (run --cache): no interface reports a drive's or controller's cache size.
    EnvKey("declared_cache_bytes", "drive / controller cache (declared)", int, "bytes", _bytes,
           explains_difference=True),
    EnvKey("smart", "SMART", str),
    # What differed when an interrupted run was resumed: {key: value then}.
    EnvKey("resumed_with", "changed when resumed", dict, "", lambda v: "; ".join(f"{k} = {v[k]}" for k in sorted(v))),
)
_DEVICE_KEYS = (
    EnvKey("model", "model", str, explains_difference=True),
    EnvKey("serial", "serial", str),
    EnvKey("firmware", "firmware", str, explains_difference=True),
    EnvKey("size_bytes", "size", int, "bytes", _bytes),
    EnvKey("rotational", "rotational", bool, "", _yes_no, explains_difference=True),
    EnvKey("logical_block_size", "logical sector", int, "bytes"),
    EnvKey("physical_block_size", "physical sector", int, "bytes"),
    EnvKey("scheduler", "I/O scheduler", str, explains_difference=True),
    # Three queues not to confuse: the block layer's request limit, the device's own (SCSI / SATA NCQ) queue depth,
    # and blk-mq's hardware queues (NVMe: one per CPU or so) with the tags each allows in flight.
    EnvKey("nr_requests", "block layer request limit (nr_requests)", int, "requests"),
    EnvKey("device_queue_depth", "device queue depth (SCSI / SATA NCQ)", int, "commands",
           explains_difference=True, optional=True),
    EnvKey("hw_queues", "hardware queues (blk-mq)", int, "", explains_difference=True, optional=True),
    EnvKey("hw_queue_depth", "tags per hardware queue (blk-mq nr_tags)", int, "requests",
           explains_difference=True, optional=True),
    EnvKey("write_cache", "write cache", str, explains_difference=True),
    EnvKey("interface", "interface", str, explains_difference=True),
    EnvKey("interface_ceiling_bytes_per_s", "interface ceiling", float, "bytes/s", _rate),
    # The PCI function the disk hangs on (env/hardware.py); absent for disks with none (loop, zram ...).
    EnvKey("controller_name", "controller", str, explains_difference=True, optional=True),
    EnvKey("controller_pci_id", "controller PCI vendor:device", str, optional=True),
    EnvKey("controller_pci_slot", "controller PCI slot", str, optional=True),
    EnvKey("controller_driver", "controller driver", str, explains_difference=True, optional=True),
    EnvKey("controller_firmware", "controller firmware", str, explains_difference=True, optional=True),
    # "none", or what keeps the device's data in RAM (zram, brd, a loop device over a file on tmpfs ...).
    EnvKey("ram_backing", "held in RAM", str, explains_difference=True),
)
KEYS = {key.name: key for key in _KEYS}
DEVICE_KEYS = {key.name: key for key in _DEVICE_KEYS}


def device_key(device: str, field: str) -> str:
    return f"{DEVICE_PREFIX}{device}.{field}"


def lookup(name: str) -> EnvKey | None:
    """The registry entry of a stored key; None for keys this version does not know (kept, shown raw)."""
    if name.startswith(DEVICE_PREFIX):
        return DEVICE_KEYS.get(name.rpartition(".")[2])
    return KEYS.get(name)


def label_of(name: str) -> str:
    key = lookup(name)
    if key is None:
        return name
    if name.startswith(DEVICE_PREFIX):
        device = name[len(DEVICE_PREFIX):].rpartition(".")[0]
        return f"{device}: {key.label}"
    return key.label


def format_value(name: str, value) -> str:
    """The value with its unit, or "unknown"."""
    if value is None:
        return UNKNOWN
    key = lookup(name)
    if key is None:
        return str(value)
    try:
        text = key.formatter(value)
    except (TypeError, ValueError):
        return str(value)
    if key.unit and key.formatter is _text:
        text = f"{text} {key.unit}"
    return text


def ordered(env: dict) -> list[tuple[str, object]]:
    """Host keys in registry order, then each device's keys in registry order, then keys unknown to the registry."""
    rows = [(name, env[name]) for name in KEYS if name in env]
    devices = sorted({name[len(DEVICE_PREFIX):].rpartition(".")[0] for name in env if name.startswith(DEVICE_PREFIX)})
    for device in devices:
        rows += [(device_key(device, f), env[device_key(device, f)]) for f in DEVICE_KEYS if device_key(device, f) in env]
    known = {name for name, _ in rows}
    rows += [(name, env[name]) for name in sorted(env) if name not in known]
    return rows


def env_differences(env_a: dict, env_b: dict) -> list[str]:
    """Keys that differ between two runs and may explain a difference in their figures, as lines for a reader."""
    lines = []
    names = [name for name, _ in ordered({**env_b, **env_a})]
    for name in names:
        key = lookup(name)
        if key is None or not key.explains_difference:
            continue
        a, b = env_a.get(name), env_b.get(name)
        if a != b:
            lines.append(f"{label_of(name)}: {format_value(name, a)} -> {format_value(name, b)}")
    return lines
