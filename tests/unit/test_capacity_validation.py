"""Study M2 against the model: its arithmetic exactly, its block-size curves within the stated error.

The drives are the catalogue's (spec-sheet figures, not fitted to the table); `pytest -s` prints the error
of every point.
"""

import csv
import statistics
from pathlib import Path

import pytest

from disklab.capacity.catalogue import load_catalogue
from disklab.capacity.cost import Money, costs, energy_kwh_per_year, operating_cost_per_year
from disklab.capacity.layout import parse_layout
from disklab.capacity.planning import plan_arrays, workload_tests

PUBLISHED = Path(__file__).parents[1] / "fixtures" / "published"
SSD_ARRAY, HDD_ARRAY = "8 x sata-ssd-1.6t raid6", "24 x sas-hdd-10k-2.4t raid10"
MAX_MEDIAN_ERROR_PERCENT = 35
PUBLISHED_CROSSOVER = 64 * 1024


@pytest.fixture(scope="module")
def setup() -> dict:
    with open(PUBLISHED / "arrays-setup.csv") as f:
        return {row["parameter"]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def layouts():
    catalogue = load_catalogue()
    return parse_layout(SSD_ARRAY, catalogue), parse_layout(HDD_ARRAY, catalogue)


@pytest.fixture(scope="module")
def sweep(layouts):
    """The model over the `blocksize` suite (M2's sweep) and the published rows, by block size."""
    plan = plan_arrays(layouts, workload_tests(["blocksize"]), Money())
    with open(PUBLISHED / "blocksize-arrays.csv") as f:
        published = {int(row["block_size_bytes"]): row for row in csv.DictReader(f)}
    return plan, published


def test_m2_energy_and_operating_cost(setup):
    for array in ("ssd_array", "hdd_array"):
        watts = float(setup["power"][array])
        money = Money(float(setup["electricity_price"][array]), float(setup["pue"][array]))
        assert round(energy_kwh_per_year(watts)) == int(setup["energy_per_year"][array])
        assert round(operating_cost_per_year(watts, money)) == int(setup["opex_per_year"][array])


def test_m2_net_capacity(setup, layouts):
    for layout, array in zip(layouts, ("ssd_array", "hdd_array")):
        assert layout.count == int(setup["drive_count"][array])
        assert layout.net_capacity_bytes / 1e12 == pytest.approx(float(setup["net_capacity"][array]))


def test_m2_costs_with_the_measured_power(setup, layouts):
    ssd, hdd = layouts
    ssd_costs = costs(ssd, Money(), iops=None, given_power_w=90)
    hdd_costs = costs(hdd, Money(), iops=None, given_power_w=230)
    assert (round(ssd_costs.energy_kwh_per_year), round(hdd_costs.energy_kwh_per_year)) == (788, 2015)
    assert (round(ssd_costs.operating_per_year), round(hdd_costs.operating_per_year)) == (72, 183)
    assert ssd_costs.per_1000_iops is None


def test_m2_blocksize_curves_within_the_stated_error(sweep):
    plan, published = sweep
    errors = []
    print(f"\n{'block size':>10} | {'SSD model':>9} {'published':>9} {'error':>7} | "
          f"{'HDD model':>9} {'published':>9} {'error':>7}")
    for i, test in enumerate(plan.tests):
        row = published[test.bs]
        cells = []
        for array, key in zip(plan.arrays, ("ssd_array_iops", "hdd_array_iops")):
            model, measured = array.predictions[i].iops, float(row[key])
            error = (model - measured) / measured * 100
            errors.append(abs(error))
            cells.append(f"{model:>9,.0f} {measured:>9,.0f} {error:>+6.0f}%")
        print(f"{test.bs // 1024:>8}Ki | " + " | ".join(cells))
    median = statistics.median(errors)
    print(f"median absolute error {median:.1f} % over {len(errors)} points (IOPS; MB/s follows from them)")
    assert len(errors) == 2 * len(published)
    assert median <= MAX_MEDIAN_ERROR_PERCENT


def test_m2_crossover_within_one_doubling_of_the_published(sweep):
    plan, published = sweep
    sizes = sorted(published)
    hdd_leads = [float(published[s]["hdd_array_mbps"]) > float(published[s]["ssd_array_mbps"]) for s in sizes]
    assert sizes[hdd_leads.index(True)] == PUBLISHED_CROSSOVER  # the published table, read the same way
    first = plan.crossovers[0]
    print(f"\nfirst crossover of the model: {first.value} bytes; all: {[x.value for x in plan.crossovers]}")
    assert first.parameter == "bs" and first.leader == 1 and first.previous_leader == 0
    assert PUBLISHED_CROSSOVER / 2 <= first.value <= PUBLISHED_CROSSOVER * 2


def test_m2_mixed_workload_prediction_is_reported(layouts):
    """The mixed block sizes (published 2,400 vs 3,300 IOPS); shown, and held to the same bound."""
    plan = plan_arrays(layouts, workload_tests(["mixed"]), Money())
    with open(PUBLISHED / "mixed-arrays.csv") as f:
        row = next(csv.DictReader(f))
    for array, key in zip(plan.arrays, ("ssd_array_iops", "hdd_array_iops")):
        error = (array.predictions[0].iops - float(row[key])) / float(row[key]) * 100
        print(f"\nmixed, {array.layout.spec}: model {array.predictions[0].iops:,.0f} IOPS, published {row[key]}, "
              f"error {error:+.0f} %")
        assert abs(error) <= MAX_MEDIAN_ERROR_PERCENT
