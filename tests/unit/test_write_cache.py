"""`run --write-cache on,off`: which tool sets which drive's cache, the exact commands, the state read back from the
tools' own output, and the refusals for devices with no cache a guest can set. This machine has no ATA, SCSI or
NVMe drive, so the interfaces are told from sysfs trees laid out as the kernel lays them out, and the tools' outputs
are written in the shape hdparm -W, sdparm --get and nvme get-feature print them: not captured from a real drive
(none here), so the parsing is checked on the real tools' output only where such a drive is."""

import json
import tempfile
from pathlib import Path

import pytest

from disklab.errors import UserError
from disklab.targets.blockdev import BlockDevice
from disklab.system.leftovers import remove_leftovers
from disklab.targets.write_cache import CacheControl, cache_control, cache_leftovers, cache_set, parse_states
from tests.unit.test_leftovers import dead_pid


def device(sysfs: Path, name: str, number: tuple[int, int], vendor: str | None = None,
           partition_of: str | None = None) -> BlockDevice:
    """A sysfs tree for one device: /sys/block/DISK[/PART] and the /sys/dev/block/M:m link to it."""
    disk = sysfs / "block" / (partition_of or name)
    folder = disk / name if partition_of else disk
    folder.mkdir(parents=True, exist_ok=True)
    if partition_of:
        (folder / "partition").write_text("1\n")
    if vendor is not None:
        (disk / "device").mkdir(exist_ok=True)
        (disk / "device" / "vendor").write_text(f"{vendor}    \n")
    (sysfs / "dev" / "block").mkdir(parents=True, exist_ok=True)
    (sysfs / "dev" / "block" / f"{number[0]}:{number[1]}").symlink_to(folder)
    return BlockDevice(f"/dev/{name}", name, *number, 1 << 30, 512, 4096, False, False)


@pytest.fixture
def tools(monkeypatch):
    monkeypatch.setattr("disklab.targets.write_cache.shutil.which", lambda tool: f"/usr/sbin/{tool}")


def test_an_ata_disk_is_set_with_hdparm_also_for_a_partitions_run(tmp_path, tools):
    device(tmp_path, "sda", (8, 0), vendor="ATA")
    control = cache_control(device(tmp_path, "sda1", (8, 1), partition_of="sda"), str(tmp_path))
    assert control == CacheControl("ATA", "/dev/sda")
    assert control.set_command(False) == ["hdparm", "-W0", "/dev/sda"]
    assert control.get_command() == ["hdparm", "-W", "/dev/sda"]
    assert control.state_of("\n/dev/sda:\n write-caching =  1 (on)\n") is True
    assert control.state_of("\n/dev/sda:\n write-caching =  0 (off)\n") is False


def test_a_scsi_or_sas_disk_is_set_with_sdparm(tmp_path, tools):
    control = cache_control(device(tmp_path, "sdb", (8, 16), vendor="SEAGATE"), str(tmp_path))
    assert control == CacheControl("SCSI", "/dev/sdb")
    assert control.set_command(True) == ["sdparm", "--set", "WCE=1", "/dev/sdb"]
    assert control.state_of("    /dev/sdb: SEAGATE   ST600MM0006       0003\nWCE           0  [cha: y, def:  1, sav:  0]\n") \
        is False


def test_an_nvme_namespace_is_set_with_nvme_cli(tmp_path, tools):
    control = cache_control(device(tmp_path, "nvme0n1", (259, 0)), str(tmp_path))
    assert control.set_command(True) == ["nvme", "set-feature", "/dev/nvme0n1", "--feature-id=6", "--value=1"]
    assert control.state_of("get-feature:0x06 (Volatile Write Cache), Current value:0x00000001\n") is True
    assert control.state_of("get-feature:0x06 (Volatile Write Cache), Current value:0x00000000\n") is False
    assert control.state_of("something else") is None


@pytest.mark.parametrize("name, says", [
    ("vda", "a virtio disk: its write cache is the host's"), ("loop3", "a loop device"),
    ("zram0", "a compressed RAM disk"), ("mmcblk0", "an SD/eMMC card"), ("pmem0", "does not know how"),
])
def test_devices_without_a_cache_to_set_are_refused_naming_why(tmp_path, tools, name, says):
    with pytest.raises(UserError, match=says):
        cache_control(device(tmp_path, name, (250, 0)), str(tmp_path))


def test_a_missing_tool_names_its_package(tmp_path, monkeypatch):
    monkeypatch.setattr("disklab.targets.write_cache.shutil.which", lambda tool: None)
    with pytest.raises(UserError, match=r"apt-get install nvme-cli"):
        cache_control(device(tmp_path, "nvme0n1", (259, 0)), str(tmp_path))


@pytest.mark.parametrize("text, states", [("on,off", ("on", "off")), ("off", ("off",)), (" OFF , on", ("off", "on"))])
def test_states(text, states):
    assert parse_states(text) == states


@pytest.mark.parametrize("text", ["", "on,on", "yes", "on;off", "1"])
def test_bad_states(text):
    with pytest.raises(ValueError):
        parse_states(text)


class FakeDrive:
    """Stands in for the interface's tool (no drive here has a cache to set): set commands change its state, get
    commands print it as hdparm does; every command is kept."""

    def __init__(self, on: bool):
        self.on, self.commands = on, []

    def __call__(self, command: list[str], what: str, timeout_s: float) -> str:
        self.commands.append(command)
        if command[1].startswith("-W") and command[1] != "-W":
            self.on = command[1] == "-W1"
            return ""
        return f"\n{command[-1]}:\n write-caching =  {int(self.on)} ({'on' if self.on else 'off'})\n"


def test_the_cache_is_set_for_the_run_and_restored_after_it(tmp_path, monkeypatch):
    drive = FakeDrive(on=True)
    monkeypatch.setattr("disklab.targets.write_cache.run_checked", drive)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    said = []
    with cache_set(CacheControl("ATA", "/dev/sda"), "off", said.append, str(tmp_path)) as recorded:
        assert drive.on is False and recorded["before"] == "on" and recorded["command"] == "hdparm -W0 /dev/sda"
        assert len(cache_leftovers()) == 0  # this process's note: alive, not a leftover
    assert drive.on is True and said == ["write cache of /dev/sda restored to on"]
    assert not list(tmp_path.iterdir())  # the note is gone with the restore


def test_a_killed_runs_setting_is_restored_by_the_next(tmp_path, monkeypatch):
    drive = FakeDrive(on=False)  # as the killed run left it
    monkeypatch.setattr("disklab.targets.write_cache.run_checked", drive)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    note = tmp_path / f"disklab-cache-{dead_pid()}-sda.json"
    note.write_text(json.dumps({"interface": "ATA", "disk": "/dev/sda", "on": True}))
    assert [leftover.path for leftover in remove_leftovers(cache_leftovers())] == [note]
    assert drive.commands == [["hdparm", "-W1", "/dev/sda"]] and drive.on is True and not note.exists()
