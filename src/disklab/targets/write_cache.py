"""The drive's volatile write cache as a test variable (`run --write-cache on,off`): set through the interface's own
tool (hdparm for ATA, sdparm for SCSI/SAS, nvme-cli for NVMe), read back, and restored to what it was afterwards,
on Ctrl-C and errors too. Study M1's matrix is run with the cache off and on: the cache changes writes by large
factors. Devices with no cache a guest can set (virtio, loop, RAM disks) are refused with the reason.

The kernel's own view (queue/write_cache: write back or write through) is recorded beside it, not set: it only
tells the kernel whether to send flushes, it does not switch the drive's cache.
"""

import json
import re
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

    @property
    def tool(self) -> str:
        return {"ATA": "hdparm", "SCSI": "sdparm", "NVMe": "nvme"}[self.interface]

    def set_command(self, on: bool) -> list[str]:
        if self.interface == "ATA":
            return ["hdparm", f"-W{int(on)}", self.disk]
        if self.interface == "SCSI":
            return ["sdparm", "--set", f"WCE={int(on)}", self.disk]
        return ["nvme", "set-feature", self.disk, "--feature-id=6", f"--value={int(on)}"]  # 6: volatile write cache

    def get_command(self) -> list[str]:
        if self.interface == "ATA":
            return ["hdparm", "-W", self.disk]
        if self.interface == "SCSI":
            return ["sdparm", "--get", "WCE", self.disk]
        return ["nvme", "get-feature", self.disk, "--feature-id=6"]

    def state_of(self, output: str) -> bool | None:
        """What the get command printed, as on (True) or off; None when it does not say."""
        patterns = {"ATA": r"write-caching\s*=\s*([01])", "SCSI": r"^\s*WCE\s+([01])\b",
                    "NVMe": r"Current value:\s*(0x[0-9a-fA-F]+|\d+)"}
        match = re.search(patterns[self.interface], output, re.MULTILINE)
        return None if match is None else bool(int(match.group(1), 0) & 1)


def cache_control(device: BlockDevice, sysfs_root: str = "/sys") -> CacheControl:
    """How the drive's cache is set, or one UserError saying why it cannot be (before anything runs)."""
    name = disk_directory(device, sysfs_root).name
    for prefix, why in _NO_CONTROL.items():
        if name.startswith(prefix):
            raise UserError(f"--write-cache: {device.path} is {why}; run without --write-cache")
    if name.startswith("nvme"):
        control = CacheControl("NVMe", f"/dev/{name}")
    elif name.startswith("sd"):
        vendor = _read(Path(sysfs_root) / "block" / name / "device" / "vendor")
        control = CacheControl("ATA" if vendor == "ATA" else "SCSI", f"/dev/{name}")
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
    before = _current(control)
    # Where a kill (SIGKILL cannot be caught) would leave the drive's setting: the next run or doctor restores it.
    note = Path(tempfile.gettempdir()) / f"{owned_prefix(NOTE_PREFIX)}{Path(control.disk).name}.json"
    if before is not None:
        write_whole(note, json.dumps({"interface": control.interface, "disk": control.disk, "on": before}),
                    "write-cache note")
    run_checked(control.set_command(state == "on"), f"setting the write cache of {control.disk} {state}",
                COMMAND_TIMEOUT_S)
    try:
        now = _current(control)
        if now is not None and now != (state == "on"):
            raise UserError(f"--write-cache {state}: {control.disk} still reports its cache "
                            f"{'on' if now else 'off'} after {' '.join(control.set_command(state == 'on'))}")
        yield {"write_cache": state, "interface": control.interface, "disk": control.disk,
               "command": " ".join(control.set_command(state == "on")),
               "before": None if before is None else ("on" if before else "off"),
               "kernel_view": _read(Path(sysfs_root) / "block" / Path(control.disk).name / "queue" / "write_cache")}
    finally:
        if before is not None and before != (state == "on"):
            run_checked(control.set_command(before), f"restoring the write cache of {control.disk}",
                        COMMAND_TIMEOUT_S)
            say(f"write cache of {control.disk} restored to {'on' if before else 'off'}")
        note.unlink(missing_ok=True)


def cache_leftovers() -> list[Leftover]:
    """Drives whose cache a killed run left as its configuration set it, each with the setting to restore."""
    return [Leftover(path, "a killed run's write-cache setting, to restore", _restore)
            for path in dead_entries(tempfile.gettempdir(), NOTE_PREFIX) if path.is_file()]


def _restore(note: Path) -> bool:
    try:
        saved = json.loads(note.read_text())
        control = CacheControl(saved["interface"], saved["disk"])
        run_checked(control.set_command(bool(saved["on"])), f"restoring the write cache of {control.disk}",
                    COMMAND_TIMEOUT_S)
        note.unlink()
    except (OSError, ValueError, KeyError, TypeError, UserError):
        return False
    return True


def _current(control: CacheControl) -> bool | None:
    output = run_checked(control.get_command(), f"reading the write cache of {control.disk}", COMMAND_TIMEOUT_S)
    return control.state_of(output)


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
