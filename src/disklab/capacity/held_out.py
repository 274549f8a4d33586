"""Published tables gathered from sources the model was not built against (published/README.md, "Studies
gathered for out-of-sample checks"): each row planned as a user would plan it, from the nearest catalogue drive.
Their misses join the evidence the bands are built from (validation.py), and each of their figures is checked
against the band built without its own study. What the model cannot plan (dRAID, a pattern the source does not
state, a drive with no catalogue stand-in, caches and logs the model does not have) is listed with the reason,
never guessed."""

import re
import statistics
from dataclasses import dataclass, field

from disklab.capacity.bands import Band
from disklab.capacity.catalogue import Drive
from disklab.capacity.caveats import caveats, features
from disklab.capacity.layout import LEVELS, Layout, parse_layout
from disklab.capacity.model import Workload, ceilings_for, predict
from disklab.capacity.tables import published_rows
from disklab.units import format_size, parse_size



@dataclass(frozen=True)
class Planning:
    """How a user would plan one table's arrays: the catalogue drive nearest the source's drives (by the source's
    array name, or for all of them: "*"), the layout options the source states (ZFS recordsize, software RAID's or
    a disabled controller cache: cache=none), and the data set the source's test covered, by array name or "*"
    (none: the whole array; per job: each job had a file of that size)."""

    drives: dict[str, str]
    options: str = ""
    data_sets: dict[str, str] = field(default_factory=dict)
    per_job: bool = False
    several_jobs: str | None = None  # why rows of several jobs cannot be read, if they cannot

    def pick(self, table: dict[str, str], layout: str) -> str | None:
        return table.get(layout, table.get("*"))


HELD_OUT = {
    "nas-hdd-raidz2-draid2.csv": Planning({"*": "sata-hdd-7.2k-12t"}, "record=1MiB"),
    "nas-nvme-raidz1-dd.csv": Planning({"m50/fire": "nvme-u3-1.92t"}),
    "nas-ssd-raid-levels.csv": Planning({"*": "sata-ssd-consumer-1t"}),
    "array-hdd-raid5-md-8x2tb.csv": Planning(
        {"*": "sata-hdd-7.2k-12t"}, "cache=none",
        {"SERVER/HIGHPOINT/RAID5 (md6)": "50000MiB", "SERVER/IBM_M1015/8x2TBRAID5MDADM (md6)": "100GiB"}),
    "array-hdd-r720xd-iozone.csv": Planning(
        {"*": "nl-sas-7.2k-12t"}, "cache=none", {"*": "1GiB"}, per_job=True,
        several_jobs="the source does not say whether iozone's -t figures are per thread or for all threads, and "
                     "they fit neither: as totals, 10 threads of 512 KiB random reads deliver less than one thread; "
                     "per thread, 10 threads of 512 KiB writes would move 5-8 GB/s through 12 hard disks"),
    "array-ssd-raid0-md-mx200.csv": Planning({"*": "sata-ssd-consumer-1t"}, "cache=none"),
    "array-nvme-raid0-md-p4510.csv": Planning({"*": "nvme-u3-1.92t"}),
}
_UNITS = {"IOPS": 1.0, "MB/s": 1e6, "MiB/s": 2**20}
_SEQUENTIAL, _RANDOM = ("read", "write"), ("randread", "randwrite", "randrw")


@dataclass(frozen=True)
class HeldOutPoint:
    array: str  # the layout planned, or the source's name of an array not planned
    label: str  # the workload in words
    unit: str
    published: float
    predicted: float | None  # None: not planned (why_not says why)
    kind: str | None = None
    features: frozenset[str] = frozenset()
    why_not: str | None = None
    band: Band | None = None  # the band built without this point's study (validation.py)

    @property
    def error_percent(self) -> float | None:
        return None if self.predicted is None else (self.predicted - self.published) / self.published * 100

    @property
    def inside(self) -> bool | None:
        """Whether the published figure lies within the band; None: no prediction or no band."""
        if self.predicted is None or self.band is None:
            return None
        return self.band.holds(self.published, self.predicted)


@dataclass(frozen=True)
class HeldOutStudy:
    source: str  # the published file
    points: tuple[HeldOutPoint, ...]

    @property
    def planned(self) -> list[HeldOutPoint]:
        return [p for p in self.points if p.predicted is not None]

    @property
    def banded(self) -> list[HeldOutPoint]:
        return [p for p in self.planned if p.inside is not None]

    def summary(self) -> str:
        planned, banded = self.planned, self.banded
        inside = sum(bool(p.inside) for p in banded)
        median = (f", median absolute error {statistics.median(abs(p.error_percent) for p in planned):.0f} %"
                  if planned else "")
        share = f" ({inside / len(banded):.0%})" if banded else ""
        return (f"{len(planned)} of {len(self.points)} figures planned{median}; {len(banded)} carry a band built "
                f"without this study, {inside} of them lie inside it{share}")


def held_out(catalogue: dict[str, Drive]) -> tuple[HeldOutStudy, ...]:
    return tuple(HeldOutStudy(name, tuple(_point(row, planning, catalogue) for row in published_rows(name)))
                 for name, planning in HELD_OUT.items())


def _point(row: dict[str, str], planning: Planning, catalogue: dict[str, Drive]) -> HeldOutPoint:
    block, depth, jobs = int(row["block_size_bytes"]), int(row["queue_depth"]), int(row["jobs"])
    label = (f"{row['workload']} {format_size(block)} QD{depth} x {jobs} "
             f"{row['read_percent']} % read ({row['direction']})")
    unit = "IOPS" if row["metric"] == "iops" else "MB/s"
    published = float(row["published"]) * _UNITS[row["unit"]] / _UNITS[unit]
    why_not = _not_planned(row, planning, catalogue)
    if why_not:
        return HeldOutPoint(row["layout"], label, unit, published, None, why_not=why_not)
    drive = planning.pick(planning.drives, row["layout"])
    spec = f"{row['drive_count']} x {drive} {row['raid_level']} {planning.options}".strip()
    layout = parse_layout(spec, catalogue)
    data_set = planning.pick(planning.data_sets, row["layout"])
    data_set = data_set and parse_size(data_set) * (jobs if planning.per_job else 1)
    workload = Workload(label, ((block, 1.0),), int(row["read_percent"]) / 100, depth * jobs, data_set,
                        sequential=row["workload"] in _SEQUENTIAL, streams=jobs)
    beyond = next((c.text for c in caveats(layout, workload) if c.out_of_model), None)
    if beyond:
        return HeldOutPoint(spec, label, unit, published, None, why_not=f"out of the model: {beyond}")
    cached = _cache_answered(layout, row, published if unit == "IOPS" else published * 1e6 / block)
    if cached:
        return HeldOutPoint(spec, label, unit, published, None, why_not=cached)
    ceilings = ceilings_for(layout)
    prediction = predict(layout, workload, ceilings)
    # A mixed test's figure counts one direction: the reads' (or writes') share of the I/Os predicted.
    share = {"read": workload.read_share, "write": 1 - workload.read_share}[row["direction"]]
    predicted = share * (prediction.iops if unit == "IOPS" else prediction.bw_bytes_per_s / 1e6)
    return HeldOutPoint(spec, label, unit, published, predicted, layout.drive.kind,
                        features(layout, ceilings, workload))


def _cache_answered(layout: Layout, row: dict[str, str], iops: float) -> str | None:
    """Random I/O one at a time on hard disks that must read first (reads; small writes to parity, which read the
    old data) faster than the heads can move: a cache answered (the source's, whichever it is), so the figure says
    nothing about the drives the model plans."""
    drive, block = layout.drive, int(row["block_size_bytes"])
    one_at_a_time = int(row["queue_depth"]) * int(row["jobs"]) == 1
    reads_first = row["workload"] == "randread" or (
        row["workload"] == "randwrite" and layout.level.parity and block < layout.stripe_width_bytes)
    if drive.kind != "hdd" or not reads_first or not one_at_a_time or iops * drive.seek_track_s < 1:
        return None
    return (f"{iops:,.0f} random I/Os a second, one at a time, each reading the disk first, is faster than a hard "
            f"disk's heads move (a single-track seek takes {drive.seek_track_s * 1e3:g} ms): a cache answered them")


def _not_planned(row: dict[str, str], planning: Planning, catalogue: dict[str, Drive]) -> str | None:
    drive = planning.pick(planning.drives, row["layout"])
    block, zfs, options = int(row["block_size_bytes"]), "ZFS" in row["file_system"], planning.options
    record = parse_size(options.partition("record=")[2].split()[0]) if "record=" in options else None
    if drive is None or drive not in catalogue:
        return "no catalogue drive stands in for these drives (a drive file of them is needed)"
    if row["raid_level"] not in LEVELS:
        return f"the planner has no level {row['raid_level']}"
    if row["workload"] not in _SEQUENTIAL + _RANDOM:
        return "the source does not say whether the I/O was sequential or random"
    if "buffered" in row["tool"]:
        return "buffered I/O through the NAS's RAM cache, which the planner does not model"
    if planning.several_jobs and int(row["jobs"]) > 1:
        return planning.several_jobs
    if zfs and re.search(r"(?<![a-z])sync=1\b", row["note"]):  # fio's sync=1, not fsync=N
        return "synchronous writes go to ZFS's intent log (ZIL), which the planner does not model"
    if zfs and row["workload"] in _RANDOM and record and block < record:
        return ("random I/O smaller than a record on a pool whose files fit its RAM (OpenZFS before 2.3 ignores "
                "direct=1): the ARC and the transaction groups answer, and how many writes share a record depends "
                "on the data set, which the source does not give")
    return None
