"""The machine's mainboard and BIOS (DMI), and for each disk the PCI controller it hangs on and its queues.

All from sysfs, looked up as defensively as the rest of env/: what is not there
is None ("unknown") or left out, never guessed. DMI's serial numbers and UUIDs
are never read: they name the machine and its owner, and no comparison needs
them.
"""

from __future__ import annotations

import functools
import re
import shlex
import shutil
from pathlib import Path

from disklab.env.readers import read_file, run_quietly, to_int

# /sys/class/dmi/id files recorded, each under its own name.
DMI_FIELDS = ("board_vendor", "board_name", "board_version", "bios_vendor", "bios_version", "bios_date",
              "sys_vendor", "product_name")
# What firmware vendors leave in DMI fields they never filled in: no board is called that, so it is unknown.
_DMI_PLACEHOLDERS = frozenset({"to be filled by o.e.m.", "default string", "not specified", "not applicable",
                               "system manufacturer", "system product name", "system version", "none", "n/a"})
# A PCI function's name in sysfs: domain:bus:device.function.
_PCI_FUNCTION = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
# The SCSI host attribute holding the adapter's firmware version, as its driver names it: qla2xxx, qla4xxx, ipr
# and bfa `fw_version`; mpt3sas and mpi3mr `version_fw`; hpsa `firmware_revision`; lpfc `fwrev`; smartpqi
# `firmware_version`; arcmsr `host_fw_version`. Others (ahci, megaraid_sas, virtio) publish none.
_HOST_FIRMWARE = ("fw_version", "version_fw", "firmware_revision", "fwrev", "firmware_version", "host_fw_version")
# How lspci names what the PCI ID database does not list ("Device 0d57"): no name, only the number again.
_UNNAMED = re.compile(r"(Vendor|Device|Class) [0-9a-f]{4}")


def collect_board(sysfs: str = "/sys") -> dict:
    """The DMI fields of DMI_FIELDS; all None on machines without DMI (most ARM boards, some VMs)."""
    dmi = Path(sysfs) / "class" / "dmi" / "id"
    return {field: _filled(read_file(dmi / field)) for field in DMI_FIELDS}


def collect_queues(name: str, sysfs: str = "/sys") -> dict:
    """The device's own queues, beside the block layer's `nr_requests`: the SCSI / SATA (NCQ) queue depth the
    kernel set for the device, and blk-mq's hardware queues and the tags (requests in flight) each allows. Left
    out where the device has none (no SCSI queue_depth on NVMe, virtio-blk or loop)."""
    block = Path(sysfs) / "block" / name
    facts: dict = {}
    depth = to_int(read_file(block / "device" / "queue_depth"))
    if depth is not None:
        facts["device_queue_depth"] = depth
    tags = [to_int(read_file(path)) for path in sorted(block.glob("mq/*/nr_tags"))]
    if tags:
        facts["hw_queues"] = len(tags)
        # One tag set serves every hardware queue of a disk; differing counts would be a shape not known here.
        facts["hw_queue_depth"] = tags[0] if len(set(tags)) == 1 else None
    return facts


def collect_controller(name: str, sysfs: str = "/sys") -> dict:
    """The PCI function a whole disk hangs on (the nearest one up its sysfs path: the HBA, RAID or NVMe
    controller, virtio or USB host): slot, vendor:device IDs, driver, name and firmware. Nothing for a disk
    with no PCI device above it (loop, zram, device-mapper, md, a multipath NVMe head)."""
    try:
        node = (Path(sysfs) / "block" / name).resolve(strict=True)
    except OSError:
        return {}
    below = []
    for parent in node.parents:
        if _PCI_FUNCTION.fullmatch(parent.name) and (parent / "vendor").is_file():
            return _pci_facts(parent, below)
        below.append(parent)
    return {}


def _pci_facts(function: Path, below: list[Path]) -> dict:
    vendor, device = read_file(function / "vendor"), read_file(function / "device")
    ids = f"{vendor.removeprefix('0x')}:{device.removeprefix('0x')}" if vendor and device else None
    driver = function / "driver"
    return {
        "controller_pci_slot": function.name,
        "controller_pci_id": ids,
        "controller_driver": driver.resolve().name if driver.is_symlink() else None,
        "controller_name": pci_name(function.name),
        "controller_firmware": _firmware(below),
    }


def pci_name(slot: str) -> str | None:
    """ "vendor device (class)" as lspci finds them in the PCI ID database; None without lspci or when the
    database does not know the vendor. lspci, not our own reader of pci.ids: it knows where each distribution
    keeps the database (plain or gzipped, or udev's hwdb) and how to read every revision of its format."""
    lspci = shutil.which("lspci")
    return None if lspci is None else _lspci_name(lspci, slot)


@functools.cache
def _lspci_name(lspci: str, slot: str) -> str | None:
    """Asked once per process: a run names the controller for its header and again in the environment it records,
    and each lspci costs a start and a read of the PCI ID database (tens of ms)."""
    text = run_quietly([lspci, "-mm", "-s", slot]) or ""
    try:
        fields = shlex.split(text.splitlines()[0])  # slot "class" "vendor" "device" -rNN -pNN "subvendor" ...
    except (IndexError, ValueError):
        return None
    if len(fields) < 4 or _UNNAMED.fullmatch(fields[2]):
        return None
    kind = "" if _UNNAMED.fullmatch(fields[1]) else f" ({fields[1]})"
    return f"{fields[2]} {fields[3]}{kind}"


def _firmware(below: list[Path]) -> str | None:
    """The controller's firmware where sysfs has it: its SCSI host's attribute, or an NVMe controller's
    firmware_rev (for NVMe the controller is the drive, so this is the drive's firmware again)."""
    for node in below:
        if re.fullmatch(r"host\d+", node.name):
            candidates = [node / "scsi_host" / node.name / attribute for attribute in _HOST_FIRMWARE]
        elif re.fullmatch(r"nvme\d+", node.name):
            candidates = [node / "firmware_rev"]
        else:
            continue
        for path in candidates:
            found = read_file(path)
            if found:
                return found
    return None


def _filled(value: str | None) -> str | None:
    return None if value is None or value.strip().lower() in _DMI_PLACEHOLDERS else value
