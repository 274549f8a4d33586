"""The device's state as a test variable (`run --condition fresh,full`): study M1 compares a drive fresh after a
secure erase with the same drive written full several times (its worst case; random 1 MiB writes differ 6.5x).

fresh: the whole device discarded (blkdiscard), or, where the user asks for `fresh:secure-erase`, erased by the
drive itself (NVMe: `nvme format --ses=1`); full[:N]: the whole device written N times over (default 2) with
128 KiB sequential writes by fio, as SNIA's workload-independent preconditioning does (run/condition.py).
"""

import re
import shutil
from dataclasses import dataclass

from disklab.errors import UserError
from disklab.targets.blockdev import disk_directory
from disklab.targets.purge import check_discard, discard_command
from disklab.targets.target import Target

DEFAULT_FULL_PASSES = 2
MAX_FULL_PASSES = 100
_CONDITION = re.compile(r"^(fresh)(?::(discard|secure-erase))?$|^(full)(?::(\d+))?$")


@dataclass(frozen=True)
class Condition:
    state: str  # "fresh" or "full"
    method: str = "discard"  # fresh: "discard" or "secure-erase"
    passes: int = 0  # full: how many times the whole device is written

    @property
    def label(self) -> str:
        """As runs are named: 'fresh', 'fresh (secure erase)', 'full (written 2x)'."""
        if self.state == "full":
            return f"full (written {self.passes}x)"
        return "fresh" if self.method == "discard" else "fresh (secure erase)"


def parse_conditions(text: str) -> tuple[Condition, ...]:
    """'fresh,full' -> each condition; a ValueError says what is wrong."""
    conditions = []
    for part in text.split(","):
        match = _CONDITION.match(part.strip().lower())
        if match is None:
            raise ValueError(f"{part.strip()!r}: give fresh, fresh:secure-erase, full or full:N (the whole device "
                             "written N times), e.g. fresh,full")
        if match.group(1):
            conditions.append(Condition("fresh", match.group(2) or "discard"))
        else:
            passes = int(match.group(4) or DEFAULT_FULL_PASSES)
            if not 1 <= passes <= MAX_FULL_PASSES:
                raise ValueError(f"{part.strip()!r}: the device is written 1 to {MAX_FULL_PASSES} times")
            conditions.append(Condition("full", passes=passes))
    labels = [condition.label for condition in conditions]
    if len(set(labels)) != len(labels):
        raise ValueError(f"{text!r} names a condition twice; each is one configuration")
    return tuple(conditions)


def check_condition(condition: Condition, device: Target, sysfs_root: str = "/sys") -> None:
    """What the condition needs of the device, refused before anything runs."""
    if condition.state == "full":
        return
    if condition.method == "discard":
        check_discard(device, "--condition fresh", sysfs_root)
        return
    disk = disk_directory(device.device, sysfs_root).name
    if not disk.startswith("nvme"):
        raise UserError(f"--condition fresh:secure-erase: {device.path} is not an NVMe namespace, and disklab erases "
                        "only through NVMe's own format (ATA's security erase needs a password set on a drive that "
                        "is not frozen: do it with the drive's tools); use --condition fresh (a full discard)")
    if device.path != f"/dev/{disk}":
        raise UserError(f"--condition fresh:secure-erase formats the whole namespace /dev/{disk}, not only "
                        f"{device.path}: give the namespace as --target")
    if shutil.which("nvme") is None:
        raise UserError("--condition fresh:secure-erase: nvme is not installed (apt-get install nvme-cli)")


def erase_command(condition: Condition, device: Target) -> list[str]:
    """The command that makes the device fresh."""
    if condition.method == "secure-erase":
        return ["nvme", "format", device.test_path, "--ses=1", "--force"]  # ses 1: user data erase
    return discard_command(device)
