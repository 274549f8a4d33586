"""Which run wins overall: the geometric mean of each run's throughput ratios, ranked only where the spread
supports a difference, and said to be no ranking where it supports none."""

import pytest

from disklab.analysis.compare import compare_runs
from disklab.analysis.ranking import standings
from disklab.report.compare import notes, shown
from disklab.store.repository import Store
from tests.unit.test_compare import job, passes, stored_run


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "results.db") as s:
        yield s


def runs(store, *iops_pairs, measure=passes):
    return [stored_run(store, [("a", {"iodepth": 1}, measure(a)), ("b", {"iodepth": 32}, measure(b))])
            for a, b in iops_pairs]


def test_runs_rank_by_the_geometric_mean_of_their_throughput_ratios(store):
    base, faster, same = runs(store, (1000, 4000), (2000, 8000), (1010, 4040))
    comparison = compare_runs([base, faster, same])
    ranked = standings(comparison)
    assert [s.run for s in ranked] == [1, 2, 0]
    assert ranked[0].geomean_ratio == pytest.approx(2.0) and ranked[0].figures == 2  # the IOPS of a and of b
    assert dict(ranked[0].verdicts) == {"better": 2} and dict(ranked[1].verdicts) == {"within noise": 2}
    (line,) = [n for n in notes(shown(comparison, False)) if n.startswith("overall")]
    assert "1. run 2 2.00x (better 2); 2. run 3 1.01x (within noise 2); 3. run 1 1.00x (baseline)" in line


def test_no_ranking_where_the_spread_supports_no_difference(store):
    single = runs(store, (1000, 4000), (2000, 8000), (500, 2000), measure=lambda iops: [job(iops)])
    (line,) = [n for n in notes(shown(compare_runs(single), False)) if n.startswith("overall")]
    assert line.startswith("overall: no ranking: the spread supports no better or worse in any of the 2 tests'")
    assert "run 2 2.00x; run 3 0.50x" in line
    two = compare_runs(runs(store, (1000, 4000), (2000, 8000)))
    assert not [n for n in notes(shown(two, False)) if n.startswith("overall")], "two runs: the table says it all"
