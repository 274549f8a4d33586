"""Cross-validated error bands (capacity/bands.py) on hand-computable evidence: a band is the narrowest candidate
whose left-out studies' figures lie inside it at least 90 % of the time, and each study weighs the same."""

import pytest

from disklab.capacity.bands import Band, Evidence, build_band, left_out_coverage, not_validated


def evidence(study: str, ratios) -> list[Evidence]:
    return [Evidence(study, "hdd", ratio) for ratio in ratios]


def test_three_studies_that_disagree_get_the_range_widened_until_each_left_out_one_fits():
    # Left out, B (1.1) lies outside A and C's [0.9, 1.0] until widened 1.1x; C (0.9) outside A and B's [1.0, 1.1]
    # until widened 1.25x (1.0 / 1.25 = 0.8); A always inside. So: the full range [0.9, 1.1] widened 1.25x.
    band = build_band("hdd", evidence("A", [1.0] * 5) + evidence("B", [1.1] * 5) + evidence("C", [0.9] * 5))
    assert band.low == pytest.approx(0.9 / 1.25) and band.high == pytest.approx(1.1 * 1.25)
    assert (band.points, band.studies, band.coverage) == (15, 3, 1.0)
    assert band.text() == "-28/+38 %"
    assert "the full range widened 1.25x" in band.why


def test_studies_that_agree_get_a_central_interval():
    ratios = [0.8, 0.9, 1.0, 1.1, 1.2]
    band = build_band("ssd", [Evidence(s, "ssd", r) for s in "ABCD" for r in ratios])
    assert (band.low, band.high) == (0.8, 1.2)  # each left-out study's extremes need the others' extremes
    assert band.text() == "-20/+20 %" and band.coverage == 1.0
    assert band.why.startswith("the central 80% (each study weighing the same)")


def test_a_study_with_many_points_weighs_as_much_as_one_with_few():
    # 40 points of A at 1.0 and one point each of B..E far out: by points A would decide every quantile.
    many = evidence("A", [1.0] * 40) + [e for s, r in zip("BCDE", (2.0, 2.0, 0.5, 0.5)) for e in evidence(s, [r])]
    band = build_band("hdd", many)
    assert band.low <= 0.5 and band.high >= 2.0


def test_no_band_from_too_few_points_or_one_study():
    few = build_band("hdd", evidence("A", [1.0] * 4) + evidence("B", [1.0] * 5))
    assert not few.validated and few.text() == "(not validated)"
    assert few.why == ("not validated: 9 published points from 2 studies (a band needs 10 points from 2 studies, "
                       "so that leaving one out still leaves a band)")
    one = build_band("hdd", evidence("A", [1.0] * 30))
    assert not one.validated and "from 1 study " in one.why


def test_left_out_coverage_pools_the_figures_of_every_study():
    by_study = {"A": [1.0, 1.0, 1.0], "B": [3.0]}
    assert left_out_coverage(by_study, lambda others: (0.5, 2.0)) == 0.75


def test_a_band_holds_a_published_figure_between_its_ends():
    band = Band("ssd", 0.5, 2.0, 20, 3, "test")
    assert band.range(1000) == (500, 2000)
    assert band.holds(1999, 1000) and band.holds(500, 1000) and not band.holds(2001, 1000)
    none = not_validated("ssd", "why")
    assert none.range(1000) is None and none.holds(1000, 1000) is None and none.described() == "not validated: why"
