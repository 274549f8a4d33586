"""Power and money: each figure by hand, and unknown power or price kept unknown (never 0) through every output."""

import csv
import dataclasses
import io
import json

import pytest

from disklab.capacity.catalogue import drive_from_dict
from disklab.capacity.cost import Money, costs
from disklab.capacity.layout import parse_layout
from disklab.capacity.planning import plan_arrays, workload_tests
from disklab.capacity.render import fact_rows, to_csv, to_json

BASE = {"description": "x", "kind": "ssd", "interface": "sata-6g", "capacity": "1TB", "seq_read_mbps": 500,
        "seq_write_mbps": 450, "rand_read_iops": 90_000, "rand_write_iops": 30_000, "source": {"all": "a test"}}
PRICED = {"power_idle_w": 1, "power_active_w": 5, "price_eur": 250}
CATALOGUE = {
    "known": drive_from_dict({**BASE, **PRICED, "name": "known"}, "known.toml"),
    "no-price": drive_from_dict({**BASE, "name": "no-price", "power_idle_w": 1, "power_active_w": 5}, "n.toml"),
    "no-power": drive_from_dict({**BASE, "name": "no-power", "price_eur": 250}, "p.toml"),
    "unknown": drive_from_dict({**BASE, "name": "unknown"}, "u.toml"),
}
MONEY = Money(price_per_kwh=0.10, pue=1.5, years=3)


def array(drive: str):
    return parse_layout(f"4 x {drive} raid0", CATALOGUE)


def test_every_figure_by_hand():
    c = costs(array("known"), MONEY, iops=20_000)
    # 4 x 5 W = 20 W; 20 W x 8,760 h = 175.2 kWh; x 0.10 EUR x PUE 1.5 = 26.28 EUR a year
    assert (c.power_w, c.power_source, c.energy_kwh_per_year) == (20, "catalogue", pytest.approx(175.2))
    assert c.operating_per_year == pytest.approx(26.28)
    # 4 x 250 EUR = 1,000 EUR over 4 TB net; 1,000 EUR / 20 (thousand IOPS); + 3 years of 26.28 EUR
    assert (c.purchase, c.per_tb, c.per_1000_iops) == (1000, pytest.approx(250), pytest.approx(50))
    assert c.total == pytest.approx(1078.84)


def test_unknown_price_leaves_every_price_figure_unknown_and_power_known():
    c = costs(array("no-price"), MONEY, iops=20_000)
    assert (c.purchase, c.per_tb, c.per_1000_iops, c.total) == (None, None, None, None)
    assert (c.power_w, c.operating_per_year) == (20, pytest.approx(26.28))


def test_unknown_power_leaves_energy_and_operating_unknown_and_the_purchase_known():
    c = costs(array("no-power"), MONEY, iops=20_000)
    assert (c.power_w, c.energy_kwh_per_year, c.operating_per_year, c.total) == (None, None, None, None)
    assert (c.purchase, c.per_1000_iops) == (1000, pytest.approx(50))


def test_given_power_stands_in_for_an_unknown_one():
    c = costs(array("unknown"), MONEY, iops=20_000, given_power_w=40)
    # 40 W x 8,760 h = 350.4 kWh; x 0.15 = 52.56 EUR; without a price no purchase and no total
    assert (c.power_w, c.power_source, c.operating_per_year) == (40, "given", pytest.approx(52.56))
    assert (c.purchase, c.total) == (None, None)


@pytest.fixture(scope="module")
def plan():
    return plan_arrays([array("known"), array("unknown")], workload_tests(["mixed"]), MONEY)


def test_fact_rows_say_unknown_never_0_or_n_a(plan):
    rows = dict(fact_rows(plan))
    assert rows["power under load"] == ["20 W (catalogue)", "unknown (catalogue)"]
    assert rows["energy a year"] == ["175 kWh", "unknown"]
    for what in ("operating cost a year", "purchase", "purchase per net TB", "purchase per 1,000 IOPS",
                 "total over 3 years"):
        assert rows[what][1] == "unknown", what
    assert rows["purchase"][0] == "1,000 EUR" and rows["purchase per net TB"][0] == "250 EUR"


def test_a_price_without_a_prediction_is_n_a_not_unknown(plan):
    known = plan.arrays[0]
    unpredicted = dataclasses.replace(known, costs=dataclasses.replace(known.costs, per_1000_iops=None))
    rows = dict(fact_rows(dataclasses.replace(plan, arrays=(unpredicted, plan.arrays[1]))))
    assert rows["purchase per 1,000 IOPS"] == ["n/a", "unknown"]


def test_json_gives_null_and_csv_an_empty_cell_for_unknown(plan):
    known, unknown = (a["costs"] for a in json.loads(to_json(plan))["arrays"])
    assert known["purchase"] == 1000 and known["power_w"] == 20
    assert {k: unknown[k] for k in ("power_w", "energy_kwh_per_year", "operating_per_year", "purchase", "per_tb",
                                    "per_1000_iops", "total")} == dict.fromkeys(
        ("power_w", "energy_kwh_per_year", "operating_per_year", "purchase", "per_tb", "per_1000_iops", "total"))
    facts = list(csv.DictReader(io.StringIO(to_csv(plan).split("\n\n")[1])))
    assert facts[0]["purchase"] == "1000" and facts[0]["power_w"] == "20"
    assert [facts[1][k] for k in ("power_w", "energy_kwh_per_year", "operating_per_year", "purchase", "per_tb",
                                  "per_1000_iops", "total")] == [""] * 7
