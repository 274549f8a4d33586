"""The model against every published table the project ships (published/): each point's error, each case's
median and largest, and from them the error bands every prediction carries.

Cases: study M2's block-size sweep and mixed block sizes (8 x SATA SSD in RAID6, 24 x 10k SAS HDD in RAID10), with
the block size from which the HDD array leads; M2's arithmetic (net capacity, energy, operating cost), rounded as
published; study M4's spec sheet: one NVMe drive under 4 KiB random 70/30 at the sheet's queue depth against the
sheet's 70/30 IOPS (drive files hold the read and the write rating, not the mix, so this checks the model); and
the held-out tables (held_out.py). The drives are the shipped catalogue's, or the user's files that replace them
by name. Every prediction point is evidence for its drive kind's band (bands.py), cross-validated by study.
"""

import functools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from disklab.capacity.bands import Band, Evidence, build_band, not_validated
from disklab.capacity.catalogue import Drive, load_drive
from disklab.capacity.caveats import caveats, features
from disklab.capacity.cost import Money, energy_kwh_per_year, operating_cost_per_year
from disklab.capacity.held_out import HELD_OUT, HeldOutStudy, held_out
from disklab.capacity.layout import Layout, parse_layout
from disklab.capacity.model import Ceilings, Workload, ceilings_for, predict, workload_from_test
from disklab.capacity.planning import PlannedArray, crossovers_in_mb_per_s, plan_arrays, workload_tests
from disklab.capacity.tables import published_rows, shipped_catalogue
from disklab.errors import UserError
from disklab.suite.model import TestSpec
from disklab.units import format_size

M2_ARRAYS = (("ssd_array", "8 x sata-ssd-1.6t raid6"), ("hdd_array", "24 x sas-hdd-10k-2.4t raid10"))
# Data-center spec sheets rate 4 KiB random read, write and 70/30 at queue depth 256 (published/README.md).
SPEC_SHEET_BLOCK, SPEC_SHEET_QUEUE_DEPTH, SPEC_SHEET_READ_SHARE = 4096, 256, 0.7
# A setting counts as covered when published figures of the drive kind with it are at least this many.
MIN_FEATURE_POINTS = 3


@dataclass(frozen=True)
class Point:
    array: str  # the layout modelled
    label: str  # the block size, workload or figure
    unit: str
    published: float
    predicted: float
    kind: str | None  # the drive kind whose band the point counts towards; None: arithmetic, not a prediction
    features: frozenset[str] = frozenset()

    @property
    def error_percent(self) -> float:
        return (self.predicted - self.published) / self.published * 100


@dataclass(frozen=True)
class Case:
    name: str
    source: str  # the published file
    points: tuple[Point, ...]
    study: str  # the study the table belongs to: what cross-validation leaves out

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
class StudyCheck:
    """One study of one drive kind: its errors, and the band built with it (in-sample) and without it (its
    cross-validated band), each with the share of the study's figures inside."""

    study: str
    kind: str
    points: int
    median_error_percent: float
    in_sample: Band
    in_sample_inside: int | None
    cross_validated: Band
    cross_validated_inside: int | None


@dataclass(frozen=True)
class Validation:
    cases: tuple[Case, ...]
    crossover: Crossover | None  # None when the M2 arrays were not both modelled
    bands: tuple[Band, ...]
    skipped: tuple[str, ...]  # published rows without a drive to model them
    held_out: tuple[HeldOutStudy, ...]
    studies: tuple[StudyCheck, ...]


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
    used |= {drive for planning in HELD_OUT.values() for drive in planning.drives.values()}
    for path, drive in given:
        if drive.name not in used:
            raise UserError(f"--drives {path}: drive {drive.name!r} is in no published table; the validation models "
                            f"{', '.join(sorted(name for name in used if name))} (a file of one of these names "
                            "replaces it; an nvme-u3-* drive of a spec-sheet capacity adds a row)")
    return catalogue


def validate(catalogue: dict[str, Drive]) -> Validation:
    """Every case and held-out table; the bands from all their prediction points, each study's checked against
    the band built without it."""
    arrays = [(column, parse_layout(spec, catalogue)) for column, spec in M2_ARRAYS]
    columns, layouts = [column for column, _ in arrays], [layout for _, layout in arrays]
    sweep = plan_arrays(layouts, workload_tests(["blocksize"]), Money())
    by_size = {int(row["block_size_bytes"]): row for row in published_rows("blocksize-arrays.csv")}
    points = tuple(
        _point(array, test, f"{format_size(test.bs)}", float(by_size[test.bs][f"{column}_iops"]), j)
        for array, column in zip(sweep.arrays, columns) for j, test in enumerate(sweep.tests)
    )
    cases = [Case("M2 block-size sweep (suite blocksize)", "blocksize-arrays.csv", points, "M2"),
             _mixed_case(layouts, columns)]
    published = [[float(by_size[t.bs][f"{column}_mbps"]) * 1e6 for t in sweep.tests] for column in columns]
    predicted = [[p.bw_bytes_per_s for p in a.predictions] for a in sweep.arrays]
    (published_at, published_count), (predicted_at, predicted_count) = (
        lead_changes(sweep.tests, published), lead_changes(sweep.tests, predicted))
    crossover = Crossover(published_at, predicted_at, published_count, predicted_count)
    cases.append(_arithmetic_case(layouts))
    spec_case, skipped = _spec_sheet_case(catalogue)
    if spec_case.points:
        cases.append(spec_case)
    studies = held_out(catalogue)
    evidence = _evidence(cases, studies)
    kinds = sorted({e.kind for e in evidence})
    bands = tuple(build_band(kind, [e for e in evidence if e.kind == kind]) for kind in kinds)
    checks = tuple(_study_check(study, kind, evidence) for kind in kinds
                   for study in dict.fromkeys(e.study for e in evidence if e.kind == kind))
    return Validation(tuple(cases), crossover, bands, skipped, _with_bands(studies, evidence), checks)


def _point(array: PlannedArray, test: TestSpec, label: str, published: float, index: int) -> Point:
    return Point(array.layout.spec, label, "IOPS", published, array.predictions[index].iops, array.layout.drive.kind,
                 features(array.layout, array.ceilings, workload_from_test(test)))


def _evidence(cases: Sequence[Case], studies: Sequence[HeldOutStudy]) -> list[Evidence]:
    evidence = [Evidence(case.study, p.kind, p.published / p.predicted, p.features)
                for case in cases for p in case.points if p.kind]
    evidence += [Evidence(study.source, p.kind, p.published / p.predicted, p.features)
                 for study in studies for p in study.planned]
    return evidence


def _study_check(study: str, kind: str, evidence: list[Evidence]) -> StudyCheck:
    own = [e for e in evidence if e.kind == kind and e.study == study]
    others = [e for e in evidence if e.kind == kind and e.study != study]
    in_sample, cross = build_band(kind, [e for e in evidence if e.kind == kind]), build_band(kind, others)
    errors = [abs(1 / e.ratio - 1) * 100 for e in own]

    def inside(band: Band) -> int | None:
        return None if not band.validated else sum(band.low <= e.ratio <= band.high for e in own)

    return StudyCheck(study, kind, len(own), statistics.median(errors), in_sample, inside(in_sample), cross,
                      inside(cross))


def _with_bands(studies: Sequence[HeldOutStudy], evidence: list[Evidence]) -> tuple[HeldOutStudy, ...]:
    """Each held-out point with the band its kind would have without its study."""
    bands: dict[tuple[str, str], Band] = {}

    def band(study: str, kind: str) -> Band:
        if (study, kind) not in bands:
            bands[study, kind] = build_band(kind, [e for e in evidence if e.kind == kind and e.study != study])
        return bands[study, kind]

    return tuple(replace(study, points=tuple(p if p.kind is None else replace(p, band=band(study.source, p.kind))
                                             for p in study.points)) for study in studies)


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
    points = tuple(_point(a, plan.tests[0], f"bssplit {row['bssplit']}", float(row[f"{column}_iops"]), 0)
                   for a, column in zip(plan.arrays, columns))
    return Case("M2 mixed block sizes (suite mixed)", "mixed-arrays.csv", points, "M2")


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
    return Case("M2 arithmetic (power -> energy -> operating cost, net capacity)", "arrays-setup.csv",
                tuple(points), "M2")


def as_published(value: float, text: str) -> float:
    """Rounded to the decimals the published figure was printed with: 788.4 against '788' is 788."""
    return round(value, len(text.partition(".")[2]))


def _spec_sheet_case(catalogue: dict[str, Drive]) -> tuple[Case, tuple[str, ...]]:
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
        layout = parse_layout(f"1 x {name} raid0", catalogue)
        ceilings = ceilings_for(layout)
        prediction = predict(layout, workload, ceilings)
        points.append(Point(layout.spec, workload.name, "IOPS", float(row["rand_70_30_iops"]), prediction.iops,
                            layout.drive.kind, features(layout, ceilings, workload)))
    return (Case("M4 spec sheet, 70/30 IOPS of one drive", "spec-nvme-u3-example.csv", tuple(points), "M4"),
            tuple(skipped))


@functools.cache
def shipped_validation() -> Validation:
    """The validation of the shipped tables and catalogue, computed when a band is first needed."""
    return validate(shipped_catalogue())


@functools.cache
def shipped_evidence(kind: str) -> tuple[Evidence, ...]:
    """One drive kind's evidence, gathered once: band_of asks for it for every figure it bands."""
    v = shipped_validation()
    return tuple(e for e in _evidence(v.cases, v.held_out) if e.kind == kind)


def band_for(array: PlannedArray, test: TestSpec | None = None) -> Band:
    """The band of one prediction of the array (for one of its tests; without: its random I/O)."""
    workload = workload_from_test(test) if test is not None else Workload("random", ((4096, 1.0),), 1.0, 1)
    return band_of(array.layout, array.ceilings, workload)


def band_of(layout: Layout, ceilings: Ceilings, workload: Workload) -> Band:
    """The cross-validated band of the layout's drive kind, where the published tables of that kind cover every
    setting of the prediction and the model can back it (caveats.py); else not validated, with the reason."""
    kind = layout.drive.kind
    beyond = next((c.text for c in caveats(layout, workload) if c.out_of_model), None)
    if beyond:
        return not_validated(kind, f"out of the model: {beyond}")
    evidence = shipped_evidence(kind)
    for feature in sorted(features(layout, ceilings, workload)):
        count = sum(feature in e.features for e in evidence)
        if count < MIN_FEATURE_POINTS:
            return not_validated(kind, f"the published tables have {count} {kind} figure{'s' * (count != 1)} of "
                                       f"{feature} (a band needs {MIN_FEATURE_POINTS})")
    return shipped_band(kind)


def shipped_band(kind: str) -> Band:
    """The cross-validated band of one drive kind from the shipped tables and catalogue."""
    band = next((b for b in shipped_validation().bands if b.kind == kind), None)
    return band or not_validated(kind, f"no published table has {kind} drives")
