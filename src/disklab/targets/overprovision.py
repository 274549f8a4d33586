"""Over-provisioning as a test variable (`run --overprovision 0,20,40,60`, study M4): before each level the whole
device is discarded, then the suite uses only the first (100 - OP) % of it, so the drive's controller has OP % of
its flash as spare area. The levels' steady-state IOPS, set side by side, are what the NAS review plots."""

import shutil
from dataclasses import replace

from disklab.errors import UserError
from disklab.system.commands import run_checked
from disklab.targets.blockdev import disk_directory
from disklab.targets.target import Target

MAX_PERCENT = 90  # beyond it, too little of the device is left to measure
ALIGN_BYTES = 1024 * 1024  # the usable region ends on a MiB, a multiple of every block size a suite uses
COMMAND_TIMEOUT_S = 3600  # discarding a large HDD-sized range can take long; a hung device still ends in a line


def parse_levels(text: str) -> tuple[int, ...]:
    """'0,20,40,60' -> (0, 20, 40, 60); a ValueError says what is wrong."""
    try:
        levels = tuple(int(part.strip().removesuffix("%")) for part in text.split(","))
    except ValueError:
        raise ValueError(f"{text!r}: give whole percentages of the device to leave unused, e.g. 0,20,40,60") from None
    if any(not 0 <= level <= MAX_PERCENT for level in levels):
        raise ValueError(f"{text!r}: each level is from 0 to {MAX_PERCENT} (% of the device left unused)")
    if len(set(levels)) != len(levels):
        raise ValueError(f"{text!r} names a level twice; each is one configuration")
    return levels


def check_discard(target: Target, sysfs_root: str = "/sys") -> None:
    """The device discards (a full discard is what makes the spare area spare), and blkdiscard is there."""
    device = target.device
    try:
        discard_max = int((disk_directory(device, sysfs_root) / "queue" / "discard_max_bytes").read_text())
    except (OSError, ValueError):
        discard_max = 0
    if discard_max == 0:
        raise UserError(f"--overprovision: {device.path} does not support discard (queue/discard_max_bytes is 0), "
                        "so its unused share would not be spare area; run without --overprovision")
    if shutil.which("blkdiscard") is None:
        raise UserError("--overprovision: blkdiscard is not installed (Debian: apt-get install util-linux)")


def usable(target: Target, level: int) -> Target:
    """The device as the suite sees it at `level`: its first (100 - level) % only."""
    size = target.capacity_bytes * (100 - level) // 100 // ALIGN_BYTES * ALIGN_BYTES
    if size < ALIGN_BYTES:
        raise UserError(f"--overprovision {level}: {target.path} leaves less than 1 MiB to test")
    return replace(target, capacity_bytes=size)


def discard_whole(target: Target) -> str:
    """The whole device discarded (blkdiscard --force: the user's consent was checked before the first level)."""
    command = ["blkdiscard", "--force", target.test_path]
    run_checked(command, "--overprovision", COMMAND_TIMEOUT_S)
    return " ".join(command)
