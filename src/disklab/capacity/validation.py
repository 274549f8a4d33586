"""The model against every published table the project ships (published/): each point's error, each case's
median and largest, and from them the error band every prediction carries.

Cases: study M2's block-size sweep and mixed block sizes (8 x SATA SSD in RAID6, 24 x 10k SAS HDD in RAID10), with
the block size from which the HDD array leads; M2's arithmetic (net capacity, energy, operating cost), rounded as
published; study M4's spec sheet: one NVMe drive under 4 KiB random 70/30 at the sheet's queue depth against the
sheet's 70/30 IOPS (drive files hold the read and the write rating, not the mix, so this checks the model).
The drives are the shipped catalogue's, or the user's files that replace them by name.
"""

import csv
import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from disklab.capacity.catalogue import Drive, load_drive, shipped_drive_files
from disklab.capacity.cost import Money, energy_kwh_per_year, operating_cost_per_year
from disklab.capacity.layout import Layout, parse_layout
from disklab.capacity.model import Ceilings, Workload, ceilings_for, predict
from disklab.capacity.planning import PlannedArray, crossovers_in_mb_per_s, plan_arrays, workload_tests
from disklab.errors import UserError
from disklab.suite.model import TestSpec
from disklab.units import format_size

M2_ARRAYS = (("ssd_array", "8 x sata-ssd-1.6t raid6"), ("hdd_array", "24 x sas-hdd-10k-2.4t raid10"))
# Data-center spec sheets rate 4 KiB random read, write and 70/30 at queue depth 256 (published/README.md).
SPEC_SHEET_BLOCK, SPEC_SHEET_QUEUE_DEPTH, SPEC_SHEET_READ_SHARE = 4096, 256, 0.7
BAND_PERCENTILE = 90
MIN_BAND_POINTS = 10  # below this a 90th percentile is just the largest error of a handful
NOT_VALIDATED = "not validated"


@dataclass(frozen=True)
class Point:
    array: str  # the layout modelled
    label: str  # the block size, workload or figure
    unit: str
    published: float
    predicted: float
    kind: str | None  # the drive kind whose band the point counts towards; None: arithmetic, not a prediction

    @property
    def error_percent(self) -> float:
        return (self.predicted - self.published) / self.published * 100


@dataclass(frozen=True)
class Case:
    name: str
    source: str  # the published file
    points: tuple[Point, ...]

    @property
    def median_error_percent(self) -> float:
        """Of the absolute errors."""
        return statistics.median(abs(p.error_percent) for p in self.points)

    @property
    def max_error_percent(self) -> float:
        return max(abs(p.error_percent) for p in self.points)


@dataclass(frozen=True)
class Crossover:
    """Along block size in MB/s: the first block size at which the HDD array leads, and how often the lead
    changes (points where both are equal are skipped)."""

    published_bytes: int | None
    predicted_bytes: int | None
    published_crossings: int
    predicted_crossings: int


@dataclass(frozen=True)
class Band:
    """How far the validation points of one drive kind fell from the published figures."""

    kind: str
    percent: float | None  # the BAND_PERCENTILE-th percentile of the absolute errors; None: not validated
    points: int
    why: str

    def text(self) -> str:
        """What stands beside a figure: '±14 %' (rounded up) or '(not validated)'."""
        return f"({NOT_VALIDATED})" if self.percent is None else f"±{math.ceil(self.percent)} %"

    def described(self) -> str:
        """'±14 %, the 90th percentile of ...' or 'not validated: ...'."""
        return self.why if self.percent is None else f"{self.text()}, the {self.why}"


@dataclass(frozen=True)
class Validation:
    cases: tuple[Case, ...]
    crossover: Crossover | None  # None when only some drive kinds were validated
    bands: tuple[Band, ...]
    skipped: tuple[str, ...]  # published rows without a drive to model them
    held_out: tuple = ()  # held_out.HeldOutStudy: the tables the model never saw (capacity validate only)


def published_rows(name: str) -> list[dict[str, str]]:
    with (resources.files("disklab.capacity") / "published" / name).open(newline="") as f:
        return list(csv.DictReader(f))


def shipped_catalogue() -> dict[str, Drive]:
    """The drives disklab ships (not the user's folder): what the error bands describe."""
    drives = [load_drive(path) for path in shipped_drive_files()]
    return {d.name: d for d in drives}


def spec_sheet_drive(row: dict[str, str], catalogue: dict[str, Drive]) -> str | None:
    """The catalogue's drive of a spec-sheet row: a U.3 NVMe drive (nvme-u3-*) of the row's capacity."""
    capacity = int(row["capacity_gb"]) * 10**9
    return next((name for name in sorted(catalogue)
                 if name.startswith("nvme-u3-") and catalogue[name].capacity_bytes == capacity), None)


def validation_catalogue(drive_files: Sequence[Path] = ()) -> dict[str, Drive]:
    """The shipped drives, with the user's files replacing them by name; a file no case would model is refused
    (it would validate nothing)."""
    catalogue = shipped_catalogue()
    given = [(path, load_drive(path)) for path in drive_files]
    catalogue.update({drive.name: drive for _, drive in given})
    used = {spec.split()[2] for _, spec in M2_ARRAYS}
    used |= {spec_sheet_drive(row, catalogue) for row in published_rows("spec-nvme-u3-example.csv")}
    for path, drive in given:
        if drive.name not in used:
            raise UserError(f"--drives {path}: drive {drive.name!r} is in no published table; the validation models "
                            f"{', '.join(sorted(name for name in used if name))} (a file of one of these names "
                            "replaces it; an nvme-u3-* drive of a spec-sheet capacity adds a row)")
    return catalogue


def validate(catalogue: dict[str, Drive], kinds: frozenset[str] | None = None) -> Validation:
    """Every case; with kinds, only the points of those drive kinds (what a band needs: an SSD array's band
    need not wait for the HDD model), without the crossover and the arithmetic."""
    arrays = [(column, parse_layout(spec, catalogue)) for column, spec in M2_ARRAYS]
    arrays = [(column, layout) for column, layout in arrays if kinds is None or layout.drive.kind in kinds]
    columns, layouts = [column for column, _ in arrays], [layout for _, layout in arrays]
    cases, crossover = [], None
    if layouts:
        sweep = plan_arrays(layouts, workload_tests(["blocksize"]), Money())
        by_size = {int(row["block_size_bytes"]): row for row in published_rows("blocksize-arrays.csv")}
        points = tuple(
            Point(array.layout.spec, format_size(test.bs), "IOPS", float(by_size[test.bs][f"{column}_iops"]),
                  array.predictions[j].iops, array.layout.drive.kind)
            for array, column in zip(sweep.arrays, columns) for j, test in enumerate(sweep.tests)
        )
        cases = [Case("M2 block-size sweep (suite blocksize)", "blocksize-arrays.csv", points),
                 _mixed_case(layouts, columns)]
        if kinds is None:
            published = [[float(by_size[t.bs][f"{column}_mbps"]) * 1e6 for t in sweep.tests] for column in columns]
            predicted = [[p.bw_bytes_per_s for p in a.predictions] for a in sweep.arrays]
            (published_at, published_count), (predicted_at, predicted_count) = (
                lead_changes(sweep.tests, published), lead_changes(sweep.tests, predicted))
            crossover = Crossover(published_at, predicted_at, published_count, predicted_count)
            cases.append(_arithmetic_case(layouts))
    spec_case, skipped = _spec_sheet_case(catalogue, kinds)
    if spec_case.points:
        cases.append(spec_case)
    return Validation(tuple(cases), crossover, error_bands(cases), skipped)


def lead_changes(tests: Sequence[TestSpec], series: Sequence[Sequence[float]]) -> tuple[int | None, int]:
    """(the first block size from which the second array leads, how many times the lead changes), from two
    arrays' bytes/s per test, with the planner's crossovers."""
    crossovers = crossovers_in_mb_per_s(tests, series)
    if series[1][0] > series[0][0]:
        return tests[0].bs, len(crossovers)
    return next((x.value for x in crossovers if x.leader == 1), None), len(crossovers)


def _mixed_case(layouts, columns) -> Case:
    plan = plan_arrays(layouts, workload_tests(["mixed"]), Money())
    row = published_rows("mixed-arrays.csv")[0]
    points = tuple(Point(a.layout.spec, f"bssplit {row['bssplit']}", "IOPS", float(row[f"{column}_iops"]),
                         a.predictions[0].iops, a.layout.drive.kind)
                   for a, column in zip(plan.arrays, columns))
    return Case("M2 mixed block sizes (suite mixed)", "mixed-arrays.csv", points)


def _arithmetic_case(layouts) -> Case:
    """Net capacity from the layout; energy and operating cost from the study's measured power and prices."""
    setup = {row["parameter"]: row for row in published_rows("arrays-setup.csv")}
    points = []
    for layout, (column, _) in zip(layouts, M2_ARRAYS):
        watts = float(setup["power"][column])
        money = Money(float(setup["electricity_price"][column]), float(setup["pue"][column]))
        for figure, unit, value in (
            ("net_capacity", "TB", layout.net_capacity_bytes / 1e12),
            ("energy_per_year", "kWh", energy_kwh_per_year(watts)),
            ("opex_per_year", "EUR", operating_cost_per_year(watts, money)),
        ):
            text = setup[figure][column]
            points.append(Point(layout.spec, figure.replace("_", " "), unit, float(text),
                                as_published(value, text), None))
    return Case("M2 arithmetic (power -> energy -> operating cost, net capacity)", "arrays-setup.csv", tuple(points))


def as_published(value: float, text: str) -> float:
    """Rounded to the decimals the published figure was printed with: 788.4 against '788' is 788."""
    return round(value, len(text.partition(".")[2]))


def _spec_sheet_case(catalogue: dict[str, Drive], kinds: frozenset[str] | None) -> tuple[Case, tuple[str, ...]]:
    workload = Workload(f"{format_size(SPEC_SHEET_BLOCK)} random {SPEC_SHEET_READ_SHARE:.0%} read "
                        f"QD{SPEC_SHEET_QUEUE_DEPTH}", ((SPEC_SHEET_BLOCK, 1.0),), SPEC_SHEET_READ_SHARE,
                        SPEC_SHEET_QUEUE_DEPTH)
    points, skipped = [], []
    for row in published_rows("spec-nvme-u3-example.csv"):
        name = spec_sheet_drive(row, catalogue)
        if name is None:
            skipped.append(f"{row['model']} {row['capacity_label']}: no nvme-u3-* drive of "
                           f"{row['capacity_gb']} GB in the catalogue")
            continue
        if kinds is not None and catalogue[name].kind not in kinds:
            continue
        layout = parse_layout(f"1 x {name} raid0", catalogue)
        prediction = predict(layout, workload, ceilings_for(layout))
        points.append(Point(layout.spec, workload.name, "IOPS", float(row["rand_70_30_iops"]), prediction.iops,
                            layout.drive.kind))
    return Case("M4 spec sheet, 70/30 IOPS of one drive", "spec-nvme-u3-example.csv", tuple(points)), tuple(skipped)


def error_bands(cases: Sequence[Case]) -> tuple[Band, ...]:
    """Per drive kind, the BAND_PERCENTILE-th percentile of the absolute errors of its prediction points."""
    errors: dict[str, list[float]] = {}
    for case in cases:
        for point in case.points:
            if point.kind:
                errors.setdefault(point.kind, []).append(abs(point.error_percent))
    bands = []
    for kind, values in sorted(errors.items()):
        if len(values) < MIN_BAND_POINTS:
            few = f"{len(values)} published point" + "s" * (len(values) != 1)
            bands.append(Band(kind, None, len(values), f"{NOT_VALIDATED}: only {few} (a band needs {MIN_BAND_POINTS})"))
        else:
            bands.append(Band(kind, percentile(values, BAND_PERCENTILE), len(values),
                              f"{BAND_PERCENTILE}th percentile of the absolute errors of {len(values)} {kind} points"))
    return tuple(bands)


def percentile(values: Sequence[float], percent: float) -> float:
    """Nearest rank: the smallest value that at least `percent` % of the values do not exceed."""
    ranked = sorted(values)
    return ranked[max(1, math.ceil(percent / 100 * len(ranked))) - 1]


@functools.cache
def shipped_band(kind: str) -> Band:
    """The band of one drive kind from the shipped tables and catalogue, computed when first needed."""
    bands = validate(shipped_catalogue(), frozenset([kind])).bands
    return bands[0] if bands else Band(kind, None, 0, f"{NOT_VALIDATED}: no published table has {kind} drives")


def band_for(array: PlannedArray, test: TestSpec | None = None) -> Band:
    """The band of the array's drive kind (for one of its tests, when given)."""
    return band_of(array.layout, array.ceilings, test is not None and test.pattern == "sequential")


def band_of(layout: Layout, ceilings: Ceilings, sequential: bool = False) -> Band:
    """The band of the layout's drive kind; settings and workloads no published table covers have none: the
    published arrays are local, on hardware RAID with a write-back cache (or single NVMe drives), with nothing
    between them and the host, under random I/O."""
    kind = layout.drive.kind
    uncovered = [why for applies, why in (
        (layout.via.protocol != "local", f"an array reached over {layout.via.text}"),
        (layout.level.zfs, "a ZFS pool"),
        (bool(ceilings.host_bytes_per_s), "an array behind a host link"),
        (layout.controller is not None and not layout.controller.write_back, "a RAID controller without a cache"),
        (sequential, "sequential I/O on an array"),
    ) if applies]
    if uncovered:
        return Band(kind, None, 0, f"{NOT_VALIDATED}: no published table has {uncovered[0]}")
    return shipped_band(kind)
