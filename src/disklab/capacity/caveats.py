"""What a prediction stands on, said beside it: the settings it shares with no published table, and the cases the
model does not cover at all.

Features are what a prediction has beyond a local array under random I/O; a band exists only where published
tables of the drive kind have every feature of the prediction (validation.band_of). Caveats are sentences that
go beside a figure in every format: an `out_of_model` one means the model cannot back the figure and no band is
given; the others say what the figure assumes.
"""

from dataclasses import dataclass

from disklab.capacity.catalogue import Drive
from disklab.capacity.layout import Layout
from disklab.capacity.model import Ceilings, Workload

ZFS, NETWORK, HOST_LINK, WRITE_THROUGH, SEQUENTIAL_ARRAY, NVME_ARRAY = (
    "a ZFS pool", "an array reached over a network", "an array behind a host link", "an array without a write-back "
    "cache", "sequential I/O on an array", "an array of NVMe drives")
STAND_IN_TOPICS = ("performance", "mechanics", "transfer")  # the [source] topics of a drive's speed
TYPICAL = "typical for the class"


@dataclass(frozen=True)
class Caveat:
    text: str
    out_of_model: bool = False


def features(layout: Layout, ceilings: Ceilings, workload: Workload) -> frozenset[str]:
    """What the prediction has beyond a local hardware-RAID or single-drive setup under random I/O."""
    array = layout.count > 1
    return frozenset(name for applies, name in (
        (layout.level.zfs, ZFS),
        (layout.via.protocol != "local", NETWORK),
        (bool(ceilings.host_bytes_per_s) and layout.via.protocol == "local", HOST_LINK),
        (array and not layout.level.zfs and not layout.write_back, WRITE_THROUGH),
        (array and workload.sequential, SEQUENTIAL_ARRAY),
        (array and layout.drive.interface.startswith("nvme"), NVME_ARRAY),
    ) if applies)


def stand_in(drive: Drive) -> bool:
    """A drive file whose speed is typical for its class rather than one model's sheet: it stands in for the
    user's drive, which may be faster or slower."""
    return any(topic in STAND_IN_TOPICS and text.startswith(TYPICAL) for topic, text in drive.sources)


def caveats(layout: Layout, workload: Workload) -> tuple[Caveat, ...]:
    drive, writes = layout.drive, workload.read_share < 1
    found = []
    if stand_in(drive):
        found.append(Caveat(f"{drive.name} is typical for its class, not your drive: give your drive's file "
                            "(--drives) or calibrate one from runs"))
    if writes and layout.controller is not None and not layout.controller.stated:
        found.append(Caveat("the controller's cache mode is not given: write-back with "
                            f"{layout.controller.cache_bytes // 2**30} GiB assumed (say cache=SIZE or cache=none)"))
    if writes and not layout.write_cache and drive.kind != "hdd":
        found.append(Caveat("an SSD with its write cache off: drives without power-loss protection then write "
                            "each command to flash, at a rate no spec sheet gives", out_of_model=True))
    random_writes = writes and not workload.sequential and drive.kind != "hdd"
    if random_writes and layout.condition == "steady" and drive.rand_write_condition == "fresh":
        found.append(Caveat(f"{drive.name} rates random writes fresh (an empty drive, writes landing in its SLC cache) "
                            "and gives no steady-state figure, where a full drive writes far slower (say "
                            "condition=fresh to plan an empty drive, or give a steady-state rand_write_iops)",
                            out_of_model=True))
    if random_writes and layout.condition == "fresh" and drive.rand_write_condition == "steady":
        found.append(Caveat(f"{drive.name} rates random writes in steady state only: an empty drive writes faster "
                            "than predicted"))
    if layout.via.protocol != "local" and not layout.cpu_bytes_per_s:
        found.append(Caveat("the NAS's or target's CPU and file system are not charged (give cpu_mbps=)"))
    if layout.level.zfs and not layout.cpu_bytes_per_s and drive.interface.startswith("nvme"):
        found.append(Caveat("ZFS on NVMe drives is often bound by the CPU (checksums, compression, parity), which "
                            "is not charged (give cpu_mbps=)"))
    return tuple(found)
