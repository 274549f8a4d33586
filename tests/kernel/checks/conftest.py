"""What every check in the guest has: its disks by their serials (the kernel's names change from boot to boot), the
real `disklab` command with a private store, and a guard that no check runs anywhere but in the guest: they write
raw devices."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.children import Children
from tests.integration.conftest import Disklab
from tests.kernel.guest import NVME, SATA_HDD, SATA_SSD, SCSI

BY_ID = {
    **{serial: f"/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_{serial}" for serial in NVME},
    SATA_HDD: f"/dev/disk/by-id/ata-QEMU_HARDDISK_{SATA_HDD}", SATA_SSD: f"/dev/disk/by-id/ata-QEMU_HARDDISK_{SATA_SSD}",
    SCSI: f"/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_{SCSI}",
}


@pytest.fixture(autouse=True)
def in_the_guest():
    """The checks write raw disks: only in the guest the kernel tier boots (tests/kernel/batch.py)."""
    if os.environ.get("DISKLAB_IN_GUEST") != "1" or socket.gethostname() != "guest":
        pytest.fail("a kernel-tier check runs only in the guest: .venv/bin/python -m tests.kernel.batch")


def disk(serial: str) -> str:
    """The kernel's name of a disk of the guest, /dev/nvme0n1, /dev/sdb ..., from its serial."""
    return os.path.realpath(BY_ID[serial])


@pytest.fixture
def disklab(tmp_path: Path) -> Disklab:
    """The real command, a private store, one pass per test (the figures under emulation mean nothing)."""
    yield from private_disklab(tmp_path)


def private_disklab(folder: Path) -> Iterator[Disklab]:
    """The `disklab` fixture's command, with its store in `folder`; for a fixture whose runs several checks read."""
    children = Children()
    env = {**os.environ, "DISKLAB_HOME": str(folder / "disklab-home"), "DISKLAB_CONFIG": "", "COLUMNS": "250",
           "DISKLAB_REPEAT": "1"}
    yield Disklab(home=folder / "disklab-home", env=env, children=children)
    children.end_all()


def faulted(device: str) -> None:
    """Say that a check makes `device` fail on purpose: its I/O errors in the kernel log are the check's."""
    with open(Path(os.environ["GUEST_OUT"]) / "faulted", "a") as record:
        record.write(Path(os.path.realpath(device)).name + "\n")
