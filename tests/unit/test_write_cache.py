"""`run --write-cache on,off`: which tool sets which drive's cache, the exact commands, the state read back from the
tools' own output, the kernel's view brought along, and the refusals for devices with no cache a guest can set.
The interfaces are told from sysfs trees laid out as the kernel lays them out; the tools' outputs are real, captured
from QEMU's drives in the kernel tier's guest (tests/fixtures/write_cache/README.md), where
tests/kernel/checks/check_device_features.py also sets them for real."""

import json
import re
import tempfile
from pathlib import Path

import pytest

from disklab.errors import UserError
from disklab.system.leftovers import remove_leftovers
from disklab.targets.blockdev import BlockDevice
from disklab.targets.write_cache import CacheControl, cache_control, cache_leftovers, cache_set, parse_states
from tests.unit.test_leftovers import dead_pid

OUTPUTS = Path(__file__).parent.parent / "fixtures" / "write_cache"
# The real tool's answer to the get command of an interface, by the state of the cache.
ANSWERS = {"ATA": "hdparm-w-{}.txt", "SCSI": "sdparm-get-wce-current-{}.txt", "NVMe": "nvme-get-feature-{}.txt"}


def answer(interface: str, state: str) -> str:
    return (OUTPUTS / ANSWERS[interface].format(state)).read_text()


def device(sysfs: Path, name: str, number: tuple[int, int], vendor: str | None = None,
           partition_of: str | None = None, controller: str | None = None) -> BlockDevice:
    """A sysfs tree for one device: /sys/block/DISK[/PART] (under its NVMe controller's folder, whose link
    `device` names it, as the kernel lays out a namespace) and the /sys/dev/block/M:m link to it."""
    if controller:
        disk = sysfs / "devices" / controller / name
        disk.mkdir(parents=True)
        (disk / "device").symlink_to(disk.parent)
        (sysfs / "block").mkdir(exist_ok=True)
        (sysfs / "block" / name).symlink_to(disk)
    else:
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
    assert control == CacheControl("ATA", "/dev/sda", "/dev/sda")
    assert control.set_command(False) == ["hdparm", "-W0", "/dev/sda"]
    assert control.get_command() == ["hdparm", "-W", "/dev/sda"]
    assert control.state_of(answer("ATA", "on")) is True and control.state_of(answer("ATA", "off")) is False


def test_a_scsi_or_sas_disk_is_set_with_sdparm_and_read_by_its_current_value_only(tmp_path, tools):
    control = cache_control(device(tmp_path, "sdb", (8, 16), vendor="QEMU"), str(tmp_path))
    assert control == CacheControl("SCSI", "/dev/sdb", "/dev/sdb")
    assert control.set_command(True) == ["sdparm", "--set", "WCE=1", "/dev/sdb"]
    assert control.get_command() == ["sdparm", "--get=WCE=1", "/dev/sdb"]
    assert control.state_of(answer("SCSI", "on")) is True and control.state_of(answer("SCSI", "off")) is False
    # a real drive's saved values, where sdparm is asked for them
    assert control.state_of("    /dev/sdb: SEAGATE   ST600MM0006       0003\nWCE           0  [cha: y, def:  1, sav:  0]\n") \
        is False


def test_an_nvme_namespaces_cache_is_set_on_its_controller_and_read_in_hexadecimal(tmp_path, tools):
    control = cache_control(device(tmp_path, "nvme0n1", (259, 0), controller="nvme0"), str(tmp_path))
    assert control == CacheControl("NVMe", "/dev/nvme0n1", "/dev/nvme0")
    assert control.set_command(True) == ["nvme", "set-feature", "/dev/nvme0", "--feature-id=6", "--value=1"]
    assert control.get_command() == ["nvme", "get-feature", "/dev/nvme0", "--feature-id=6"]
    assert control.state_of(answer("NVMe", "on")) is True  # Current value:0x00000001
    assert control.state_of(answer("NVMe", "off")) is False  # Current value:00000000, no 0x
    assert control.state_of("get-feature:0x06 (Volatile Write Cache), Current value:0x00000010\n") is False
    assert control.state_of("something else") is None


def test_a_multipath_nvme_namespace_hangs_on_no_one_controller_and_is_refused(tmp_path, tools):
    with pytest.raises(UserError, match=r"reached through nvme-subsys0, not one controller"):
        cache_control(device(tmp_path, "nvme0n1", (259, 0), controller="nvme-subsys0"), str(tmp_path))


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
        cache_control(device(tmp_path, "nvme0n1", (259, 0), controller="nvme0"), str(tmp_path))


@pytest.mark.parametrize("text, states", [("on,off", ("on", "off")), ("off", ("off",)), (" OFF , on", ("off", "on"))])
def test_states(text, states):
    assert parse_states(text) == states


@pytest.mark.parametrize("text", ["", "on,on", "yes", "on;off", "1"])
def test_bad_states(text):
    with pytest.raises(ValueError):
        parse_states(text)


class FakeDrive:
    """Stands in for the interface's tool: set commands change its state, get commands answer as the real tool
    did for that state; every command is kept. With a `queue` folder, its write_cache is the kernel's view, which
    follows a set (as libata's does) unless `lags` (as a SCSI disk's may: the drive need not prompt the kernel)."""

    def __init__(self, interface: str, on: bool, queue: Path | None = None, lags: bool = False,
                 refuses: bool = False):
        self.interface, self.on, self.queue, self.lags, self.refuses = interface, on, queue, lags, refuses
        self.commands: list[list[str]] = []
        if queue:
            queue.mkdir(parents=True)
            self._kernel_follows()

    def __call__(self, command: list[str], what: str, timeout_s: float) -> str:
        self.commands.append(command)
        setting = [arg for arg in command if re.fullmatch(r"-W[01]|WCE=[01]|--value=[01]", arg)]
        if not setting:
            return answer(self.interface, "on" if self.on else "off")
        if self.refuses:
            raise UserError(f"{what} failed: {' '.join(command)}: NVMe status: Feature Not Namespace Specific")
        self.on = setting[0].endswith("1")
        if self.queue and not self.lags:
            self._kernel_follows()
        return ""

    def _kernel_follows(self) -> None:
        (self.queue / "write_cache").write_text("write back\n" if self.on else "write through\n")


@pytest.fixture
def notes(tmp_path, monkeypatch) -> Path:
    """Where the notes of cache_set go: a folder of the test's own."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_the_cache_is_set_read_back_and_restored_and_the_kernel_view_recorded(tmp_path, monkeypatch, notes):
    drive = FakeDrive("ATA", on=True, queue=tmp_path / "block" / "sda" / "queue")
    monkeypatch.setattr("disklab.targets.write_cache.run_checked", drive)
    said = []
    with cache_set(CacheControl("ATA", "/dev/sda", "/dev/sda"), "off", said.append, str(tmp_path)) as recorded:
        assert drive.on is False
        assert recorded == {"write_cache": "off", "read_back": "off", "interface": "ATA", "disk": "/dev/sda",
                            "device": "/dev/sda", "command": "hdparm -W0 /dev/sda", "before": "on",
                            "kernel_view": "write through", "kernel_reread": False}
        assert len(cache_leftovers()) == 0  # this process's note: alive, not a leftover
    assert drive.on is True and said == ["write cache of /dev/sda restored to on"]
    assert not list(notes.iterdir())  # the note is gone with the restore


def test_a_scsi_disk_whose_kernel_view_lags_is_rescanned(tmp_path, monkeypatch, notes):
    drive = FakeDrive("SCSI", on=True, queue=tmp_path / "block" / "sdb" / "queue", lags=True)
    (tmp_path / "block" / "sdb" / "device").mkdir()
    monkeypatch.setattr("disklab.targets.write_cache.run_checked", drive)
    with cache_set(CacheControl("SCSI", "/dev/sdb", "/dev/sdb"), "off", lambda line: None, str(tmp_path)) as recorded:
        assert (recorded["read_back"], recorded["kernel_reread"]) == ("off", True)
        # the kernel re-reads the caching mode page when the disk's `rescan` is written
        assert (tmp_path / "block" / "sdb" / "device" / "rescan").read_text() == "1"
    assert drive.on is True


def test_an_nvme_controllers_cache_is_switched_and_the_kernels_flag_left_as_it_is(tmp_path, monkeypatch, notes):
    drive = FakeDrive("NVMe", on=True)
    (tmp_path / "block" / "nvme0n1" / "queue").mkdir(parents=True)
    (tmp_path / "block" / "nvme0n1" / "queue" / "write_cache").write_text("write back\n")
    monkeypatch.setattr("disklab.targets.write_cache.run_checked", drive)
    with cache_set(CacheControl("NVMe", "/dev/nvme0n1", "/dev/nvme0"), "off", lambda line: None,
                   str(tmp_path)) as recorded:
        assert recorded["command"] == "nvme set-feature /dev/nvme0 --feature-id=6 --value=0"
        assert (recorded["read_back"], recorded["kernel_view"], recorded["kernel_reread"]) == ("off", "write back", False)
    assert drive.commands[-1] == ["nvme", "set-feature", "/dev/nvme0", "--feature-id=6", "--value=1"]


def test_a_refused_setting_leaves_the_drive_and_no_note(tmp_path, monkeypatch, notes):
    drive = FakeDrive("NVMe", on=True, refuses=True)
    monkeypatch.setattr("disklab.targets.write_cache.run_checked", drive)
    with pytest.raises(UserError, match="Feature Not Namespace Specific"):
        with cache_set(CacheControl("NVMe", "/dev/nvme0n1", "/dev/nvme0"), "off", lambda line: None, str(tmp_path)):
            pass
    assert [command[1] for command in drive.commands] == ["get-feature", "set-feature"]  # no restore tried
    assert not list(notes.iterdir())


def test_a_state_the_tool_does_not_say_is_refused_before_anything_is_set(tmp_path, monkeypatch, notes):
    commands = []
    monkeypatch.setattr("disklab.targets.write_cache.run_checked",
                        lambda command, what, timeout_s: commands.append(command) or "\n/dev/sdb:\n")
    with pytest.raises(UserError, match=r"hdparm -W /dev/sdb did not say whether the cache is on or off"):
        with cache_set(CacheControl("ATA", "/dev/sdb", "/dev/sdb"), "off", lambda line: None, str(tmp_path)):
            pass
    assert commands == [["hdparm", "-W", "/dev/sdb"]] and not list(notes.iterdir())


def test_a_killed_runs_setting_is_restored_by_the_next(monkeypatch, notes):
    drive = FakeDrive("NVMe", on=False)  # as the killed run left it
    monkeypatch.setattr("disklab.targets.write_cache.run_checked", drive)
    note = notes / f"disklab-cache-{dead_pid()}-nvme0n1.json"
    note.write_text(json.dumps({"interface": "NVMe", "disk": "/dev/nvme0n1", "device": "/dev/nvme0", "on": True}))
    assert [leftover.path for leftover in remove_leftovers(cache_leftovers())] == [note]
    assert drive.commands == [["nvme", "set-feature", "/dev/nvme0", "--feature-id=6", "--value=1"]]
    assert drive.on is True and not note.exists()


def test_a_note_of_an_older_disklab_names_the_disk_its_tool_was_given(monkeypatch, notes):
    drive = FakeDrive("ATA", on=False)
    monkeypatch.setattr("disklab.targets.write_cache.run_checked", drive)
    (notes / f"disklab-cache-{dead_pid()}-sdq.json").write_text(json.dumps({"interface": "ATA", "disk": "/dev/sdq",
                                                                             "on": True}))
    assert len(remove_leftovers(cache_leftovers())) == 1 and drive.commands == [["hdparm", "-W1", "/dev/sdq"]]
