"""The machine record on real targets: the controller and queues of the disk under / (a virtio disk on the test
machine), a loop device (no PCI device above it: no controller keys), and a network target (sshfs over 127.0.0.1)
with its server, protocol and link, as `disklab run` stores them and `show --env` and `compare` say them."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from disklab.env.collect import collect_device, collect_target
from tests.integration.conftest import NEEDS_FIO, NEEDS_LOOP_DEVICES, needs
from tests.integration.sshfs import NEEDS_SSHFS, sshfs_mount

pytestmark = pytest.mark.integration


def root_disk() -> str:
    env = collect_target("/", False)
    if not env["devices"] or "," in env["devices"]:
        pytest.skip("/ is not on one disk here")
    return env["devices"]


def test_the_root_disks_controller_is_the_one_lspci_lists_with_its_driver():
    if shutil.which("lspci") is None:
        pytest.skip("lspci (pciutils) is not installed")
    disk = root_disk()
    facts = collect_device(disk)
    slot = facts.get(f"device.{disk}.controller_pci_slot")
    if slot is None:
        assert "/pci" not in str(Path("/sys/block", disk).resolve())  # no PCI device above it: nothing recorded
        pytest.skip(f"{disk} hangs on no PCI device here")
    # lspci's own word on that slot: -n gives "class: vendor:device", -k the driver in use.
    numeric = subprocess.run(["lspci", "-n", "-s", slot], capture_output=True, text=True, check=True).stdout
    assert facts[f"device.{disk}.controller_pci_id"] in numeric.split()
    driver = subprocess.run(["lspci", "-k", "-s", slot], capture_output=True, text=True, check=True).stdout
    assert f"Kernel driver in use: {facts[f'device.{disk}.controller_driver']}" in driver
    named = subprocess.run(["lspci", "-s", slot], capture_output=True, text=True, check=True).stdout
    vendor_and_device = facts[f"device.{disk}.controller_name"].rpartition(" (")[0]
    assert vendor_and_device in named
    tags = sorted(Path("/sys/block", disk).glob("mq/*/nr_tags"))
    assert facts[f"device.{disk}.hw_queues"] == len(tags)
    assert facts[f"device.{disk}.hw_queue_depth"] == int(tags[0].read_text())


@needs(NEEDS_LOOP_DEVICES)
def test_a_loop_device_has_queues_but_no_controller(attach_loop):
    name = Path(attach_loop()).name
    facts = collect_device(name)
    assert not [key for key in facts if ".controller_" in key]
    assert facts[f"device.{name}.hw_queues"] >= 1 and facts[f"device.{name}.hw_queue_depth"] >= 1
    assert f"device.{name}.device_queue_depth" not in facts  # no SCSI device under a loop device


@needs([NEEDS_FIO, *NEEDS_SSHFS])
def test_a_run_on_a_network_target_records_its_server_protocol_and_link(tmp_path, disklab, children, request):
    point, local = sshfs_mount(tmp_path / "sshfs", children, request), tmp_path / "local"
    local.mkdir()
    for target in (point, local):
        result = disklab("run", "quick", "--target", str(target), "--runtime", "1", "--ramp", "0", "--size", "16M",
                         "--read-only")
        assert result.returncode == 0, result.stderr
    shown = disklab("show", "1", "--env").stdout
    rows = dict(re.findall(r"│ ([^│]+?) +│ ([^│]+?) +│", shown))
    mtu = int(Path("/sys/class/net/lo/mtu").read_text())
    assert rows["file system"] == "fuse.sshfs"
    assert rows["network server"] == "127.0.0.1" and rows["network protocol"] == "SFTP (sshfs)"
    assert rows["network transport"] == "tcp (ssh)" and rows["local interface to the server"] == "lo"
    assert rows["link speed of that interface"] == "unknown"  # sysfs refuses a loopback interface's speed
    assert rows["MTU of that interface"] == f"{mtu} bytes"
    assert "network server" not in disklab("show", "2", "--env").stdout  # a local target records none
    compared = disklab("compare", "1", "2")
    assert "network protocol: SFTP (sshfs) -> unknown" in compared.stdout + compared.stderr
