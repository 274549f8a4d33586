"""Steady-state detection (SNIA): windows that do and do not meet the excursion and slope criteria."""

import pytest

from disklab.analysis.steady import steady_verdict, window_figures
from disklab.suite.settings import SteadyCriteria


def test_a_flat_window_is_steady_in_the_round_that_completes_it():
    verdict = steady_verdict([200, 150, 120, 100, 101, 99, 100, 102, 100, 98])
    assert verdict.reached and verdict.round == 8
    assert verdict.window == (100, 101, 99, 100, 102)
    assert verdict.excursion_percent == pytest.approx(3 / 100.4 * 100)
    assert verdict.summary("IOPS").startswith(
        "steady state reached in round 8: 100 IOPS over rounds 4-8 (excursion 3.0 %, slope")


def test_the_window_must_be_full_before_anything_is_judged():
    verdict = steady_verdict([100, 100, 100, 100])
    assert not verdict.reached and verdict.round is None and verdict.excursion_percent is None
    assert verdict.rounds == 4 and "fewer than a full window" in verdict.summary()


def test_exactly_the_window_size_can_be_steady():
    assert steady_verdict([100] * 5).round == 5


def test_a_steady_decline_within_the_excursion_fails_on_the_slope():
    # 104 .. 96: excursion 8/100 = 8 % (fine), but the fit falls 8 % across the window; with 5 % allowed it fails.
    values = [104, 102, 100, 98, 96]
    excursion, slope = window_figures(values)
    assert excursion == pytest.approx(8.0) and slope == pytest.approx(8.0)
    assert steady_verdict(values).reached
    verdict = steady_verdict(values, SteadyCriteria(slope_percent=5))
    assert not verdict.reached and verdict.slope_percent == pytest.approx(8.0)


def test_slope_is_the_fitted_change_across_the_window():
    # A line rising 3 per round over 5 rounds changes by 12 across the window: 12 % of an average of 100.
    _, slope = window_figures([94, 97, 100, 103, 106])
    assert slope == pytest.approx(12.0)
    assert not steady_verdict([94, 97, 100, 103, 106]).reached


def test_a_noisy_but_flat_window_fails_on_the_excursion():
    values = [120, 80, 100, 80, 120]  # no trend, but max - min is 40 % of the average
    excursion, slope = window_figures(values)
    assert excursion == pytest.approx(40.0) and slope == pytest.approx(0.0)
    verdict = steady_verdict(values)
    assert not verdict.reached
    assert verdict.summary() == "not reached after 5 rounds (last window: excursion 40.0 %, slope 0.0 %)"


def test_only_the_first_max_rounds_count():
    values = [100 * 0.9**n for n in range(30)] + [10] * 5  # falls 10 % a round, flat only after round 30
    verdict = steady_verdict(values)
    assert not verdict.reached and verdict.rounds == 25
    assert verdict.summary().startswith("not reached after 25 rounds")
    assert steady_verdict(values, SteadyCriteria(max_rounds=40)).round == 35


def test_zero_rounds_are_steady_only_when_all_are_zero():
    assert steady_verdict([0] * 5).reached
    assert not steady_verdict([0, 0, 0, 0, 1]).reached


def test_verdict_serialises_with_its_summary():
    data = steady_verdict([100] * 6).as_dict()
    assert data["reached"] is True and data["round"] == 5 and data["window"] == [100] * 5
    assert data["summary"].startswith("steady state reached in round 5")
