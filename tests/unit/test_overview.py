"""One relative figure per run (analysis/overview.py): the geometric mean of the per-test throughput ratios, one
ratio per test, with a 95 % interval from the repeats, worked by hand; and where it shows first."""

import math

import pytest

from disklab.analysis.compare import compare_runs
from disklab.analysis.overview import overview
from disklab.report.compare import notes, shown
from disklab.store.repository import Store
from tests.unit.test_compare import job, passes, stored_run


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "results.db") as s:
        yield s


def two_tests(store, a, b, measure=passes):
    return stored_run(store, [("a", {"iodepth": 1}, measure(a)), ("b", {"iodepth": 32}, measure(b))])


def test_the_geometric_mean_of_one_ratio_per_test_with_its_interval_from_the_repeats(store):
    base, other = two_tests(store, 1000, 4000), two_tests(store, 3000, 3000)  # ratios 3 and 0.75
    base_relative, relative = overview(compare_runs([base, other]))
    assert (base_relative.run, base_relative.ratio) == (0, 1.0)
    assert relative.ratio == pytest.approx(math.sqrt(3 * 0.75)) and relative.tests == 2  # IOPS only, not MB/s too
    # three passes at 0.99, 1.00, 1.01 of the mean: sd / mean = 0.01 for each of the 4 figures
    half = 4.302653 * math.sqrt(4 * 0.01**2 / 3) / 2  # Student's t at 2 degrees of freedom
    assert relative.low == pytest.approx(1.5 * math.exp(-half)) and relative.high == pytest.approx(1.5 * math.exp(half))


def test_single_runs_have_no_interval_and_say_why(store):
    single = [two_tests(store, a, b, measure=lambda iops: [job(iops)]) for a, b in ((1000, 1000), (2000, 500))]
    _, relative = overview(compare_runs(single))
    assert relative.ratio == pytest.approx(1.0) and relative.low is None
    assert relative.why_no_interval == "2 of 2 figures are single runs (--repeat 3 or more gives an interval)"


def test_only_the_tests_both_runs_have_count(store):
    base = two_tests(store, 1000, 4000)
    fewer = stored_run(store, [("a", {"iodepth": 1}, passes(2000))])
    _, relative = overview(compare_runs([base, fewer]))
    assert (relative.ratio, relative.tests) == (pytest.approx(2.0), 1)


def test_compare_says_the_overview_first(store):
    runs = [two_tests(store, 1000, 4000), two_tests(store, 2000, 8000)]
    first = notes(shown(compare_runs(runs), False))[0]
    assert first.startswith("overview, relative to run 1 over the tests they share: run 2 2.00x (95 % 1.95-2.05, "
                            "2 tests) · geometric mean of each shared test's throughput ratio")


def test_figures_whose_verdicts_a_flag_withholds_give_no_interval(store):
    base = two_tests(store, 1000, 4000)
    busy = two_tests(store, 500, 2000)
    store.add_flag(busy.tests[0].id, "busy-machine", "other work ran beside this test")
    _, relative = overview(compare_runs([base, store.get_run(busy.info.id)]))
    assert relative.ratio == pytest.approx(0.5) and relative.low is None
    assert relative.why_no_interval.startswith("1 of 2 figures rest on tests whose verdicts are withheld: other work")
