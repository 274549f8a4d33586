"""Mean, spread and Student-t intervals against values computed by hand and published t tables."""

import math

import pytest

from disklab.analysis.stats import summarize, t_975, too_wide


@pytest.mark.parametrize("df, published", [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (29, 2.045),
                                           (30, 2.042), (40, 2.021), (60, 2.000), (120, 1.980), (math.inf, 1.960)])
def test_t_quantiles_match_published_tables(df, published):
    assert t_975(df) == pytest.approx(published, abs=5e-4)


def test_the_asymptotic_formula_joins_the_table_smoothly():
    values = [t_975(df) for df in range(25, 200)]
    assert all(a > b for a, b in zip(values, values[1:])), "t quantiles fall as df grows"
    assert t_975(31) == pytest.approx(2.039513, abs=1e-6)


def test_summary_of_three_values_by_hand():
    # mean 12; deviations -2, 0, 2 -> s^2 = 8/2 = 4, s = 2; half-width = 4.302653 * 2 / sqrt(3) = 4.968276
    s = summarize([10, 12, 14])
    assert (s.n, s.mean, s.stdev) == (3, 12, 2)
    assert s.ci95_half_width == pytest.approx(4.968276, abs=1e-6)
    assert s.ci95_percent == pytest.approx(41.40230, abs=1e-4)


def test_summary_of_four_values_by_hand():
    # mean 100; s^2 = (0 + 4 + 4 + 0) / 3; half-width = 3.182446 * sqrt(8/3) / 2 = 2.598456
    s = summarize([100, 102, 98, 100])
    assert s.stdev == pytest.approx(math.sqrt(8 / 3))
    assert s.ci95_half_width == pytest.approx(2.598456, abs=1e-6)
    assert s.ci95_percent == pytest.approx(2.598456, abs=1e-6)


def test_a_single_value_has_no_spread_and_is_not_judged():
    s = summarize([5000.0])
    assert (s.n, s.mean, s.stdev, s.ci95_half_width, s.ci95_percent) == (1, 5000.0, None, None, None)
    assert not too_wide(s)
    with pytest.raises(ValueError):
        summarize([])


def test_identical_values_have_a_zero_width_interval():
    assert summarize([7.0, 7.0, 7.0]).ci95_percent == 0.0


def test_a_noisy_series_is_too_wide_and_a_tight_one_is_not():
    noisy = [41_000, 52_000, 38_500, 60_200, 45_100]  # +/- 23 %: e.g. a disk busy with background work
    tight = [50_100, 49_900, 50_050, 49_980, 50_020]  # +/- 0.2 %
    assert summarize(noisy).ci95_percent == pytest.approx(23.10, abs=0.01) and too_wide(summarize(noisy))
    assert summarize(tight).ci95_percent < 0.3 and not too_wide(summarize(tight))
    assert not too_wide(summarize(noisy), threshold_percent=50)
