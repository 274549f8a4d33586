"""Published tables the model was never tuned on (published/README.md, "Studies gathered for out-of-sample
checks"): each row planned as a user would plan it, from the nearest catalogue drive, and set against the band the
planner prints beside such a prediction. A band is a promise about data it never saw; this is where it is kept or
broken. What the model cannot plan (dRAID, a pattern the source does not state, a drive with no catalogue stand-in,
reads a RAM cache served) is listed with the reason, never guessed."""

import statistics
from dataclasses import dataclass

from disklab.capacity.catalogue import Drive
from disklab.capacity.layout import LEVELS, parse_layout
from disklab.capacity.model import Workload, ceilings_for, predict
from disklab.capacity.validation import Band, band_of, published_rows
from disklab.units import format_size

# Each held-out table, the catalogue drive a user would plan its arrays with (by the source's array name, or for
# all of them: "*"), and the ZFS recordsize its pools were made with. Arrays with no stand-in are left out.
HELD_OUT = {
    "nas-hdd-raidz2-draid2.csv": ({"*": "nl-sas-7.2k-12t"}, "1MiB"),
    "nas-nvme-raidz1-dd.csv": ({"m50/fire": "nvme-u3-1.92t"}, None),
    "nas-ssd-raid-levels.csv": ({"*": "sata-ssd-1.6t"}, None),
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
    band: Band | None  # the band the planner prints beside the prediction
    why_not: str | None = None

    @property
    def error_percent(self) -> float | None:
        return None if self.predicted is None else (self.predicted - self.published) / self.published * 100

    @property
    def inside(self) -> bool | None:
        """Whether the published figure lies within the printed band; None: no prediction or no band."""
        if self.predicted is None or self.band is None or self.band.percent is None:
            return None
        return abs(self.predicted - self.published) <= self.band.percent / 100 * self.predicted


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
        return (f"{len(planned)} of {len(self.points)} figures planned{median}; {len(banded)} carry a band, "
                f"{inside} of them lie inside it{share}")


def held_out(catalogue: dict[str, Drive]) -> tuple[HeldOutStudy, ...]:
    return tuple(HeldOutStudy(name, tuple(_point(row, *setting, catalogue) for row in published_rows(name)))
                 for name, setting in HELD_OUT.items())


def _point(row: dict[str, str], drives: dict[str, str], record: str | None,
           catalogue: dict[str, Drive]) -> HeldOutPoint:
    block, depth, jobs = int(row["block_size_bytes"]), int(row["queue_depth"]), int(row["jobs"])
    label = (f"{row['workload']} {format_size(block)} QD{depth} x {jobs} "
             f"{row['read_percent']} % read ({row['direction']})")
    unit = "IOPS" if row["metric"] == "iops" else "MB/s"
    published = float(row["published"]) * _UNITS[row["unit"]] / _UNITS[unit]

    def not_planned(why: str) -> HeldOutPoint:
        return HeldOutPoint(row["layout"], label, unit, published, None, None, why)

    drive = drives.get(row["layout"], drives.get("*"))
    level = row["raid_level"]
    if drive is None or drive not in catalogue:
        return not_planned("no catalogue drive stands in for these drives (a drive file of them is needed)")
    if level not in LEVELS:
        return not_planned(f"the planner has no level {level}")
    if row["workload"] not in _SEQUENTIAL + _RANDOM:
        return not_planned("the source does not say whether the I/O was sequential or random")
    if "buffered" in row["tool"]:
        return not_planned("buffered I/O through the NAS's RAM cache, which the planner does not model")
    spec = f"{row['drive_count']} x {drive} {level}" + (f" record={record}" if record else "")
    layout = parse_layout(spec, catalogue)
    workload = Workload(label, ((block, 1.0),), int(row["read_percent"]) / 100, depth * jobs,
                        sequential=row["workload"] in _SEQUENTIAL, streams=jobs)
    ceilings = ceilings_for(layout)
    prediction = predict(layout, workload, ceilings)
    predicted = prediction.iops if unit == "IOPS" else prediction.bw_bytes_per_s / 1e6
    return HeldOutPoint(spec, label, unit, published, predicted,
                        band_of(layout, ceilings, workload.sequential))
