"""The drive's volatile write cache as a test variable (`run --write-cache on,off`): set through the interface's own
tool (hdparm for ATA, sdparm for SCSI/SAS, nvme-cli for NVMe), read back, and restored to what it was afterwards,
on Ctrl-C and errors too. Study M1's matrix is run with the cache off and on: the cache changes writes by large
factors. Devices with no cache a guest can set (virtio, loop, RAM disks) are refused with the reason.

The kernel's own view (queue/write_cache: write back or write through) tells it whether to send flushes; it is
recorded beside the drive's state. For a SCSI or ATA disk the kernel takes it from the drive's caching mode page
when it revalidates the disk, which a MODE SELECT need not prompt (SPC sends its unit attention to the other
initiators), so a view that lags is re-read (the disk rescanned): a cache left on behind a kernel that thinks it
off gets no flushes. An NVMe namespace's view says only that the controller has a volatile write cache, whatever
its state, and stays as it is.
"""

import json
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from disklab.errors import UserError
from disklab.system.commands import run_checked
from disklab.system.leftovers import Leftover, dead_entries, owned_prefix
from disklab.system.outputs import write_whole
from disklab.targets.blockdev import BlockDevice, disk_directory

STATES = ("on", "off")
NOTE_PREFIX = "disklab-cache-"
COMMAND_TIMEOUT_S = 60
# Where a guest or a driver has no cache of the drive's to set: why, and what the user can do instead.
_NO_CONTROL = {
    "vd": "a virtio disk: its write cache is the host's (set it there, e.g. QEMU's cache= option)",
    "xvd": "a Xen virtual disk: its write cache is the host's",
    "loop": "a loop device: it has no drive cache of its own (its backing file's page cache is the kernel's)",
    "zram": "a compressed RAM disk: there is no drive cache", "ram": "a RAM disk: there is no drive cache",
    "md": "a software RAID: set the cache of each member disk", "dm-": "a device-mapper device: set its disks' caches",
    "mmcblk": "an SD/eMMC card: the kernel has no switch for its cache",
}
_PACKAGES = {"hdparm": "hdparm", "sdparm": "sdparm", "nvme": "nvme-cli"}
# queue/write_cache as the kernel says it, for a cache on and off.
_KERNEL_VIEWS = {True: "write back", False: "write through"}


def parse_states(text: str) -> tuple[str, ...]:
    """'on,off' -> ('on', 'off'); a ValueError says what is wrong."""
    states = tuple(part.strip().lower() for part in text.split(","))
    if not states or any(state not in STATES for state in states):
        raise ValueError(f"{text!r}: give on, off or both in the order to run them, e.g. on,off")
    if len(set(states)) != len(states):
        raise ValueError(f"{text!r} names a state twice; each is one configuration")
    return states


@dataclass(frozen=True)
class CacheControl:
    """The interface's tool for one whole disk."""

    interface: str  # ATA, SCSI or NVMe
    disk: str  # /dev/sda, /dev/nvme0n1: the cache is the whole drive's, also for a partition's run
    # What the tool is given: the disk, or for NVMe its controller (/dev/nvme0): the volatile write cache is the
    # controller's, and a controller refuses to set it through a namespace ("Feature Not Namespace Specific").
    device: str

    @property
    def tool(self) -> str:
        return {"ATA": "hdparm", "SCSI": "sdparm", "NVMe": "nvme"}[self.interface]

    def set_command(self, on: bool) -> list[str]:
        if self.interface == "ATA":
            return ["hdparm", f"-W{int(on)}", self.device]
        if self.interface == "SCSI":
            return ["sdparm", "--set", f"WCE={int(on)}", self.device]
        return ["nvme", "set-feature", self.device, "--feature-id=6", f"--value={int(on)}"]  # 6: volatile write cache

    def get_command(self) -> list[str]:
        if self.interface == "ATA":
            return ["hdparm", "-W", self.device]
        if self.interface == "SCSI":
            # =1: the current value only. Asked for the saved value too, sdparm exits 5 on drives and bridges that
            # keep no saved mode pages (QEMU, libata's translation, scsi_debug), after printing the current one.
            return ["sdparm", "--get=WCE=1", self.device]
        return ["nvme", "get-feature", self.device, "--feature-id=6"]

    def state_of(self, output: str) -> bool | None:
        """What the get command printed, as on (True) or off; None when it does not say. nvme-cli prints the value
        in hexadecimal, with 0x before it except for zero ("Current value:00000000")."""
        patterns = {"ATA": r"write-caching\s*=\s*([01])", "SCSI": r"^\s*WCE\s+([01])\b",
                    "NVMe": r"Current value:\s*(?:0x)?([0-9a-fA-F]+)\b"}
        match = re.search(patterns[self.interface], output, re.MULTILINE)
        return None if match is None else bool(int(match.group(1), 16) & 1)


def cache_control(device: BlockDevice, sysfs_root: str = "/sys") -> CacheControl:
    """How the drive's cache is set, or one UserError saying why it cannot be (before anything runs)."""
    directory = disk_directory(device, sysfs_root)
    name = directory.name
    for prefix, why in _NO_CONTROL.items():
        if name.startswith(prefix):
            raise UserError(f"--write-cache: {device.path} is {why}; run without --write-cache")
    if name.startswith("nvme"):
        controller = (directory / "device").resolve().name
        if not re.fullmatch(r"nvme\d+", controller):  # a multipath head hangs on its subsystem, not a controller
            raise UserError(f"--write-cache: {device.path} is an NVMe namespace reached through {controller}, not "
                            "one controller: set each controller's cache with nvme set-feature --feature-id=6; run "
                            "without --write-cache")
        control = CacheControl("NVMe", f"/dev/{name}", f"/dev/{controller}")
    elif name.startswith("sd"):
        vendor = _read(directory / "device" / "vendor")
        control = CacheControl("ATA" if vendor == "ATA" else "SCSI", f"/dev/{name}", f"/dev/{name}")
    else:
        raise UserError(f"--write-cache: disklab does not know how to set the write cache of {device.path} ({name}); "
                        "it sets ATA (hdparm), SCSI/SAS (sdparm) and NVMe (nvme-cli) drives")
    if shutil.which(control.tool) is None:
        raise UserError(f"--write-cache: {control.tool} is not installed, which sets the cache of {control.interface} "
                        f"drives such as {control.disk} (apt-get install {_PACKAGES[control.tool]})")
    return control


@contextmanager
def cache_set(control: CacheControl, state: str, say: Callable[[str], None],
              sysfs_root: str = "/sys") -> Iterator[dict]:
    """The drive's cache `state` ('on' or 'off') while the block runs, checked by reading it back; what it was is
    restored afterwards. Yields what the run records of it."""
    on = state == "on"
    before = _current(control)
    # Where a kill (SIGKILL cannot be caught) would leave the drive's setting: the next run or doctor restores it.
    note = Path(tempfile.gettempdir()) / f"{owned_prefix(NOTE_PREFIX)}{Path(control.disk).name}.json"
    write_whole(note, json.dumps({"interface": control.interface, "disk": control.disk, "device": control.device,
                                  "on": before}), "write-cache note")
    try:
        reread = _switch(control, on, f"setting the write cache of {control.device} {state}", sysfs_root)
    except UserError:  # the tool refused: the drive keeps its setting, there is nothing to restore
        note.unlink(missing_ok=True)
        raise
    try:
        now = _current(control)
        if now != on:
            raise UserError(f"--write-cache {state}: {control.device} still reports its cache {_word(now)} after "
                            f"{shlex.join(control.set_command(on))}")
        yield {"write_cache": state, "read_back": _word(now), "interface": control.interface, "disk": control.disk,
               "device": control.device, "command": shlex.join(control.set_command(on)), "before": _word(before),
               "kernel_view": _kernel_view(control, sysfs_root), "kernel_reread": reread}
    finally:
        if before != on:
            _switch(control, before, f"restoring the write cache of {control.device}", sysfs_root)
            say(f"write cache of {control.device} restored to {_word(before)}")
        note.unlink(missing_ok=True)


def cache_leftovers() -> list[Leftover]:
    """Drives whose cache a killed run left as its configuration set it, each with the setting to restore."""
    return [Leftover(path, "a killed run's write-cache setting, to restore", _restore)
            for path in dead_entries(tempfile.gettempdir(), NOTE_PREFIX) if path.is_file()]


def _restore(note: Path) -> bool:
    try:
        saved = json.loads(note.read_text())
        # A note of an older disklab names only the disk, which its tool was given.
        control = CacheControl(saved["interface"], saved["disk"], saved.get("device", saved["disk"]))
        _switch(control, bool(saved["on"]), f"restoring the write cache of {control.device}")
        note.unlink()
    except (OSError, ValueError, KeyError, TypeError, UserError):
        return False
    return True


def _switch(control: CacheControl, on: bool, what: str, sysfs_root: str = "/sys") -> bool:
    """The drive's cache set; a SCSI or ATA disk whose kernel view lags behind is rescanned, so that the kernel
    re-reads its caching mode page. True when it was."""
    run_checked(control.set_command(on), what, COMMAND_TIMEOUT_S)
    if control.interface == "NVMe" or _kernel_view(control, sysfs_root) in (None, _KERNEL_VIEWS[on]):
        return False
    try:
        (Path(sysfs_root) / "block" / Path(control.disk).name / "device" / "rescan").write_text("1")
    except OSError:
        return False
    return True


def _current(control: CacheControl) -> bool:
    output = run_checked(control.get_command(), f"reading the write cache of {control.device}", COMMAND_TIMEOUT_S)
    state = control.state_of(output)
    if state is None:
        raise UserError(f"--write-cache: {shlex.join(control.get_command())} did not say whether the cache is on or "
                        f"off: {' '.join(output.split())[:200] or 'it printed nothing'}")
    return state


def _kernel_view(control: CacheControl, sysfs_root: str) -> str | None:
    return _read(Path(sysfs_root) / "block" / Path(control.disk).name / "queue" / "write_cache")


def _word(on: bool) -> str:
    return "on" if on else "off"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
