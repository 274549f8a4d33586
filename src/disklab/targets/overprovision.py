"""Over-provisioning as a test variable (`run --overprovision 0,20,40,60`, study M4): before each level the whole
device is discarded, then the suite uses only the first (100 - OP) % of it, so the drive's controller has OP % of
its flash as spare area. The levels' steady-state IOPS, set side by side, are what the NAS review plots."""

from dataclasses import replace

from disklab.errors import UserError
from disklab.targets.target import Target

MAX_PERCENT = 90  # beyond it, too little of the device is left to measure
ALIGN_BYTES = 1024 * 1024  # the usable region ends on a MiB, a multiple of every block size a suite uses


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


def usable(target: Target, level: int) -> Target:
    """The device as the suite sees it at `level`: its first (100 - level) % only."""
    size = target.capacity_bytes * (100 - level) // 100 // ALIGN_BYTES * ALIGN_BYTES
    if size < ALIGN_BYTES:
        raise UserError(f"--overprovision {level}: {target.path} leaves less than 1 MiB to test")
    return replace(target, capacity_bytes=size)
