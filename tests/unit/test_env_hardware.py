"""Mainboard and BIOS (DMI), a disk's controller and its queues (env/hardware.py), over sysfs trees in the shapes the
kernel makes (the test machine has no DMI, no SATA, SAS or NVMe: its own virtio disk and loop devices are tested
for real in tests/integration/test_machine_record.py)."""

import os
import stat
from pathlib import Path

import pytest

from disklab.env import hardware
from disklab.env.collect import collect_device
from disklab.env.hardware import DMI_FIELDS, collect_board, collect_controller, collect_queues, pci_name
from tests.unit.test_env import CAPTURED, _captured


def _files(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")


def _disk(sysfs: Path, device_path: str, name: str, **files: str) -> Path:
    """A whole disk at devices/<device_path>/block/<name>, its `device` link to the device it belongs to, and linked
    from block/ as sysfs links it; `files` are relative to the disk's folder, '__' for '/'."""
    node = sysfs / "devices" / device_path / "block" / name
    _files(node, {"dev": "8:0", **{path.replace("__", "/"): text for path, text in files.items()}})
    (node / "device").symlink_to(os.path.relpath(node.parent.parent, node))
    (sysfs / "block").mkdir(exist_ok=True)
    (sysfs / "block" / name).symlink_to(os.path.relpath(node, sysfs / "block"))
    return node


def _pci(sysfs: Path, path: str, vendor: str, device: str, driver: str) -> None:
    function = sysfs / "devices" / path
    _files(function, {"vendor": vendor, "device": device})
    (sysfs / "bus" / "pci" / "drivers" / driver).mkdir(parents=True, exist_ok=True)
    (function / "driver").symlink_to(os.path.relpath(sysfs / "bus" / "pci" / "drivers" / driver, function))


@pytest.fixture
def named(monkeypatch):
    """lspci's answer stands in for the slot itself: a fake tree's slot may be a real, other device here."""
    monkeypatch.setattr(hardware, "pci_name", lambda slot: f"named {slot}")


def test_dmi_gives_board_and_bios_and_never_a_serial_or_uuid(tmp_path):
    values = {"sys_vendor": "Supermicro", "product_name": "SYS-1029P-WTR", "board_vendor": "Supermicro",
              "board_name": "X11DDW-L", "board_version": "1.10", "bios_vendor": "American Megatrends Inc.",
              "bios_version": "3.4", "bios_date": "10/29/2020"}
    secrets = {"product_serial": "S123456", "board_serial": "B123456", "chassis_serial": "C1", "product_uuid": "u-1"}
    _files(tmp_path / "class" / "dmi" / "id", {**values, **secrets})
    board = collect_board(str(tmp_path))
    assert board == values and tuple(board) == DMI_FIELDS
    assert not set(secrets.values()) & set(board.values())


def test_dmi_placeholders_and_a_machine_without_dmi_are_unknown(tmp_path):
    _files(tmp_path / "class" / "dmi" / "id", {"board_name": "Default string", "board_version": "To Be Filled By O.E.M.",
                                               "product_name": "System Product Name", "bios_version": "F12"})
    board = collect_board(str(tmp_path))
    assert board["bios_version"] == "F12"
    assert board["board_name"] is board["board_version"] is board["product_name"] is board["sys_vendor"] is None
    assert set(collect_board(str(tmp_path / "nowhere")).values()) == {None}


def test_a_sata_disk_has_its_ncq_depth_and_the_ahci_function_it_hangs_on(tmp_path, named):
    # libata puts the disk under ataN/hostN/targetH:C:I/H:C:I:L; the SCSI device's queue_depth is the NCQ depth.
    scsi_device = "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0"
    _pci(tmp_path, "pci0000:00/0000:00:17.0", "0x8086", "0xa352", "ahci")
    _files(tmp_path / "devices" / scsi_device, {"queue_depth": "32", "model": "ST4000NM0035-1V4"})
    _disk(tmp_path, scsi_device, "sda", queue__nr_requests="64", mq__0__nr_tags="32")
    assert collect_queues("sda", str(tmp_path)) == {"device_queue_depth": 32, "hw_queues": 1, "hw_queue_depth": 32}
    assert collect_controller("sda", str(tmp_path)) == {
        "controller_pci_slot": "0000:00:17.0", "controller_pci_id": "8086:a352", "controller_driver": "ahci",
        "controller_name": "named 0000:00:17.0", "controller_firmware": None}  # ahci publishes no firmware


def test_a_sas_disk_gets_its_hbas_firmware_and_not_the_bridge_above_the_hba(tmp_path, named):
    # mpt3sas: hostN/scsi_host/hostN/version_fw; the HBA sits behind a PCIe root port (0000:00:03.0).
    host = "pci0000:00/0000:00:03.0/0000:02:00.0/host0"
    _pci(tmp_path, "pci0000:00/0000:00:03.0", "0x8086", "0x2f08", "pcieport")
    _pci(tmp_path, "pci0000:00/0000:00:03.0/0000:02:00.0", "0x1000", "0x0097", "mpt3sas")
    _files(tmp_path / "devices" / host / "scsi_host" / "host0", {"version_fw": "16.00.01.00"})
    scsi_device = f"{host}/port-0:0/end_device-0:0/target0:0:0/0:0:0:0"
    _files(tmp_path / "devices" / scsi_device, {"queue_depth": "254"})
    _disk(tmp_path, scsi_device, "sdb")
    assert collect_queues("sdb", str(tmp_path)) == {"device_queue_depth": 254}
    facts = collect_controller("sdb", str(tmp_path))
    assert facts["controller_pci_slot"] == "0000:02:00.0" and facts["controller_pci_id"] == "1000:0097"
    assert facts["controller_driver"] == "mpt3sas" and facts["controller_firmware"] == "16.00.01.00"


def test_an_nvme_drive_has_its_hardware_queues_and_its_firmware_as_the_controllers(tmp_path, named):
    controller = "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0"
    _pci(tmp_path, "pci0000:00/0000:00:1d.0/0000:3d:00.0", "0x144d", "0xa80a", "nvme")
    _files(tmp_path / "devices" / controller, {"firmware_rev": "4B2QGXA7", "model": "Samsung SSD 980 PRO 1TB"})
    _disk(tmp_path, controller, "nvme0n1", **{f"mq__{q}__nr_tags": "1023" for q in range(4)})
    assert collect_queues("nvme0n1", str(tmp_path)) == {"hw_queues": 4, "hw_queue_depth": 1023}
    facts = collect_controller("nvme0n1", str(tmp_path))
    assert facts["controller_pci_slot"] == "0000:3d:00.0" and facts["controller_firmware"] == "4B2QGXA7"


def test_disks_without_a_pci_device_above_them_record_no_controller():
    sysfs, proc = _captured()  # loop devices under devices/virtual, as captured on the test machine
    for name in (CAPTURED["loop_on_disk"], CAPTURED["zram"]):
        assert collect_controller(name, sysfs) == {}
        assert not [key for key in collect_device(name, sysfs, proc) if ".controller_" in key]
    assert collect_controller("nosuch", sysfs) == {} and collect_queues("nosuch", sysfs) == {}


# lspci -mm -s SLOT, as it answered on the test machine (pciutils 3.9.0, Debian's pci.ids of 2023-04-11).
LSPCI = {
    "0000:00:02.0": '00:02.0 "Mass storage controller" "Red Hat, Inc." "Virtio 1.0 block device" -r01 -p00 '
                    '"Red Hat, Inc." "Virtio 1.0 block device"',
    "0000:00:00.0": '00:00.0 "Host bridge" "Intel Corporation" "Device 0d57" -p00 "" ""',
    "0000:00:07.0": "",  # no such function: lspci says nothing and exits 0
}


def test_the_name_is_lspcis_and_a_device_the_database_does_not_know_keeps_its_number(tmp_path, monkeypatch):
    answers = tmp_path / "answers"
    answers.mkdir()
    for slot, line in LSPCI.items():
        (answers / slot).write_text(line + "\n" if line else "")
    lspci = tmp_path / "bin" / "lspci"
    lspci.parent.mkdir()
    lspci.write_text(f'#!/bin/sh\n[ "$1 $2" = "-mm -s" ] && exec /bin/cat "{answers}/$3"\nexit 1\n')
    lspci.chmod(lspci.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(lspci.parent))
    assert pci_name("0000:00:02.0") == "Red Hat, Inc. Virtio 1.0 block device (Mass storage controller)"
    assert pci_name("0000:00:00.0") == "Intel Corporation Device 0d57 (Host bridge)"
    assert pci_name("0000:00:07.0") is None
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert pci_name("0000:00:02.0") is None  # no lspci: unknown


def test_lspci_is_asked_once_per_slot_however_often_a_run_names_the_controller(tmp_path, monkeypatch):
    """A run names the controller for its header and again in the environment it records: one lspci each slot."""
    asked = tmp_path / "asked"
    lspci = tmp_path / "bin" / "lspci"
    lspci.parent.mkdir()
    lspci.write_text(f'#!/bin/sh\necho "$3" >> "{asked}"\necho \'{LSPCI["0000:00:02.0"]}\'\n')
    lspci.chmod(lspci.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(lspci.parent))
    names = [pci_name("0000:00:02.0") for _ in range(3)] + [pci_name("0000:00:00.0")]
    assert names[:3] == ["Red Hat, Inc. Virtio 1.0 block device (Mass storage controller)"] * 3
    assert asked.read_text().split() == ["0000:00:02.0", "0000:00:00.0"]
