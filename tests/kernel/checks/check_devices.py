"""The guest's disks are the drivers' own: NVMe, AHCI SATA (one rotational) and SCSI, each by its serial."""

from pathlib import Path

from tests.kernel.checks.conftest import disk
from tests.kernel.guest import NVME, SATA_HDD, SATA_SSD, SCSI


def check_each_disk_is_on_its_driver():
    drivers = {serial: Path(f"/sys/block/{Path(disk(serial)).name}/device").resolve() for serial in
               (*NVME, SATA_HDD, SATA_SSD, SCSI)}
    assert all(Path(disk(serial)).name.startswith("nvme") for serial in NVME)
    rotational = {serial: Path(f"/sys/block/{Path(disk(serial)).name}/queue/rotational").read_text().strip()
                  for serial in (SATA_HDD, SATA_SSD)}
    assert rotational == {SATA_HDD: "1", SATA_SSD: "0"}
    assert "ata" in str(drivers[SATA_HDD]) and "virtio" in str(drivers[SCSI]), drivers
