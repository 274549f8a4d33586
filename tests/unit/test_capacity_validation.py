"""The model against the published tables disklab ships (capacity/validation.py): the issue's done-criteria,
the exact arithmetic of study M2, the spec-sheet check, the arithmetic of errors, bands and crossovers on
hand-computable cases, and the copies of the published tables.

The block-size criteria are the issue's: median absolute error under 15 % and the first crossover at the
published 64 KiB with the curves crossing once. `pytest -s` prints every point's error.
"""

import filecmp
from importlib import resources
from pathlib import Path

import pytest

from disklab.capacity import validation
from disklab.capacity.validation_render import summary
from disklab.capacity.catalogue import drive_from_dict, load_catalogue
from disklab.capacity.cost import Money
from disklab.capacity.layout import parse_layout
from disklab.capacity.model import Ceilings
from disklab.capacity.planning import PlannedArray, plan_arrays, workload_tests
from disklab.capacity.bands import Evidence, build_band
from disklab.capacity.validation import Case, Point, as_published, lead_changes

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "published"
SHARED = ROOT.parent / "shared" / "data"  # the team's copy, beside the checkout (the issue's ../shared/data/)
PACKAGE = Path(str(resources.files("disklab.capacity") / "published"))
KIB = 1024
MAX_BLOCKSIZE_MEDIAN_ERROR_PERCENT = 15
PUBLISHED_CROSSOVER = 64 * KIB


@pytest.fixture(scope="module")
def result() -> validation.Validation:
    return validation.validate(validation.validation_catalogue())


def case(result: validation.Validation, source: str) -> Case:
    return next(c for c in result.cases if c.source == source)


def show(c: Case) -> None:
    print(f"\n{c.name}")
    for p in c.points:
        print(f"  {p.array:<30} {p.label:<28} published {p.published:>10,.1f} predicted {p.predicted:>12,.1f} "
              f"{p.error_percent:+7.1f} %")
    print(f"  {summary(c)}")


# --- the done-criteria: the block-size study ---

def test_blocksize_study_median_absolute_error_is_under_15_percent(result):
    sweep = case(result, "blocksize-arrays.csv")
    show(sweep)
    assert len(sweep.points) == 2 * 15  # both arrays, 4 KiB to 64 MiB
    assert sweep.median_error_percent < MAX_BLOCKSIZE_MEDIAN_ERROR_PERCENT


def test_predicted_crossover_is_the_published_64k_and_the_curves_cross_once(result):
    x = result.crossover
    print(f"\npublished: HDD leads from {x.published_bytes}, {x.published_crossings} crossing(s); "
          f"predicted: from {x.predicted_bytes}, {x.predicted_crossings} crossing(s)")
    assert (x.published_bytes, x.published_crossings) == (PUBLISHED_CROSSOVER, 1)  # the table, read the same way
    assert (x.predicted_bytes, x.predicted_crossings) == (PUBLISHED_CROSSOVER, 1)


# --- the other cases ---

def test_m2_arithmetic_is_reproduced_exactly_as_published(result):
    arithmetic = case(result, "arrays-setup.csv")
    ssd, hdd = (spec for _, spec in validation.M2_ARRAYS)
    assert [(p.array, p.label, p.unit, p.published) for p in arithmetic.points] == [
        (ssd, "net capacity", "TB", 9.6), (ssd, "energy per year", "kWh", 788), (ssd, "opex per year", "EUR", 72),
        (hdd, "net capacity", "TB", 28.8), (hdd, "energy per year", "kWh", 2015), (hdd, "opex per year", "EUR", 183),
    ]
    assert all(p.predicted == p.published and p.kind is None for p in arithmetic.points)
    assert arithmetic.max_error_percent == 0


def test_mixed_block_sizes_are_reported_for_both_arrays(result):
    mixed = case(result, "mixed-arrays.csv")
    show(mixed)
    assert [(p.array, p.published, p.kind) for p in mixed.points] == [
        ("8 x sata-ssd-1.6t raid6", 2400, "ssd"), ("24 x sas-hdd-10k-2.4t raid10", 3300, "hdd")]


def test_every_spec_sheet_capacity_is_modelled_or_named_as_not_checked(result):
    rows = validation.published_rows("spec-nvme-u3-example.csv")
    sheet = case(result, "spec-nvme-u3-example.csv")
    show(sheet)
    assert len(sheet.points) + len(result.skipped) == len(rows)
    assert "1 x nvme-u3-3.84t raid0" in {p.array for p in sheet.points}  # shipped since the first catalogue
    published = {f"1 x {validation.spec_sheet_drive(row, load_catalogue())} raid0": float(row["rand_70_30_iops"])
                 for row in rows}
    for p in sheet.points:
        assert (p.published, p.unit, p.kind) == (published[p.array], "IOPS", "ssd")
        assert p.label == "4KiB random 70% read QD256"


def test_bands_are_built_from_every_predicted_point_of_their_kind_by_study(result):
    """Each case's and each held-out table's predictions, each with its study: what bands.py cross-validates."""
    evidence = [Evidence(c.study, p.kind, p.published / p.predicted) for c in result.cases for p in c.points if p.kind]
    evidence += [Evidence(s.source, p.kind, p.published / p.predicted) for s in result.held_out for p in s.planned]
    assert {c.study for c in result.cases} == {"M2", "M4"}
    for band in result.bands:
        assert band == build_band(band.kind, [e for e in evidence if e.kind == band.kind])
        assert validation.shipped_band(band.kind) == band  # show/compare's band is validate's


def test_each_study_is_checked_against_the_band_built_without_it(result):
    for check in result.studies:
        others = [p for p in result.studies if p.kind == check.kind and p.study != check.study]
        assert check.in_sample == validation.shipped_band(check.kind)
        assert check.cross_validated.points == sum(p.points for p in others)
        assert check.cross_validated.studies == len(others)


# --- the arithmetic, on hand-computable cases ---

def test_error_is_relative_to_the_published_figure_and_a_case_summarises_absolute_errors():
    points = (Point("a", "x", "IOPS", 100, 110, "ssd"), Point("a", "y", "IOPS", 200, 150, "ssd"),
              Point("a", "z", "IOPS", 50, 50, "ssd"))
    assert [p.error_percent for p in points] == [10, -25, 0]
    c = Case("c", "f.csv", points, "M2")
    assert (c.median_error_percent, c.max_error_percent) == (10, 25)


def test_lead_changes_finds_where_the_second_curve_takes_the_lead_and_counts_crossings():
    tests = workload_tests(["blocksize"])[:4]  # 4, 8, 16 and 32 KiB

    def changes(pairs):
        first, count = lead_changes(tests, [[a for a, _ in pairs], [b for _, b in pairs]])
        return (None if first is None else first // 1024, count)

    assert changes([(10, 5), (10, 20), (10, 30), (10, 40)]) == (8, 1)
    assert changes([(10, 5), (5, 10), (10, 5), (5, 10)]) == (8, 3)
    assert changes([(10, 5), (7, 7), (5, 10), (5, 10)]) == (16, 1)  # a tie leads nobody
    assert changes([(10, 5)] * 4) == (None, 0)
    assert changes([(5, 10)] * 4) == (4, 0)


def test_arithmetic_is_rounded_as_the_figure_was_printed():
    assert as_published(788.4, "788") == 788
    assert as_published(72.53, "72") == 73
    assert as_published(9.6000000001, "9.6") == 9.6


# --- which predictions carry a band ---

def planned(spec: str, host_bytes_per_s: float | None = None, catalogue=None) -> PlannedArray:
    catalogue = catalogue or load_catalogue()
    return plan_arrays([parse_layout(spec, catalogue)], workload_tests(["mixed"]), Money(),
                       host_bytes_per_s=host_bytes_per_s).arrays[0]


def test_local_hardware_raid_arrays_get_their_drive_kinds_band():
    assert validation.band_for(planned("8 x sata-ssd-1.6t raid6")) == validation.shipped_band("ssd")
    assert validation.band_for(planned("12 x nl-sas-7.2k-12t raid6")) == validation.shipped_band("hdd")
    assert validation.shipped_band("ssd").validated and validation.shipped_band("hdd").validated


def test_settings_and_kinds_no_published_table_covers_are_not_validated():
    behind_link = validation.band_for(planned("8 x sata-ssd-1.6t raid6", host_bytes_per_s=3125e6))
    assert not behind_link.validated and "host link" in behind_link.why
    zfs = validation.band_for(planned("6 x nvme-u3-3.84t raidz2"))
    assert not zfs.validated and "ZFS" in zfs.why
    cacheless = validation.band_for(planned("8 x sata-ssd-1.6t raid6 write_cache=off"), workload_tests(["mixed"])[0])
    assert not cacheless.validated and cacheless.why.startswith("not validated: out of the model: an SSD with its")
    measured = drive_from_dict({
        "name": "my-ssd", "description": "fitted", "kind": "measured", "interface": "sata-6g", "capacity": "1.6TB",
        "seq_read_mbps": 500, "seq_write_mbps": 450, "rand_read_iops": 80000, "rand_write_iops": 20000,
        "power_idle_w": 1, "power_active_w": 5, "price_eur": 100, "source": {"performance": "calibrate"},
    }, "test")
    band = validation.band_for(planned("8 x my-ssd raid6", catalogue={"my-ssd": measured}))
    assert (band.validated, band.why) == (False, "not validated: no published table has measured drives")


def test_band_for_reads_the_arrays_ceilings_not_the_defaults():
    array = planned("8 x sata-ssd-1.6t raid6")
    linked = PlannedArray(array.layout, Ceilings(array.ceilings.controller_bytes_per_s, 1e9), array.predictions,
                          array.costs)
    assert not validation.band_for(linked).validated


# --- the copies of the published tables ---

def test_package_fixture_and_shared_copies_of_the_published_tables_are_identical():
    names = sorted(p.name for p in PACKAGE.glob("*.csv"))
    assert sorted(p.name for p in FIXTURES.glob("*.csv")) == names
    shared = ["arrays-setup.csv", "blocksize-arrays.csv", "mixed-arrays.csv", "spec-nvme-u3-example.csv"]
    assert set(shared) <= set(names)  # the rest are public studies gathered for issue 27, not in shared/data/
    copies = [(FIXTURES, names)] + ([(SHARED, shared)] if SHARED.is_dir() else [])
    for folder, expected in copies:
        assert sorted(p.name for p in folder.glob("*.csv")) == expected, folder
        for name in expected:
            assert filecmp.cmp(PACKAGE / name, folder / name, shallow=False), folder / name


def test_the_package_says_where_its_tables_come_from():
    readme = (PACKAGE / "README.md").read_text()
    for name in ("arrays-setup.csv", "blocksize-arrays.csv", "mixed-arrays.csv", "spec-nvme-u3-example.csv"):
        assert f"`{name}`" in readme
    assert "queue depth 256" in readme and "micron.com" in readme
