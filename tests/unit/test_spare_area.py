"""Steady state by spare area (M4): the levels of an over-provisioning series, each judged by its steady window
against the least over-provisioned level that reached steady state; a level that did not has no figure and no
verdict, and other work beside a window withholds better/worse."""

import pytest

from disklab.analysis.overprovision import spare_area_levels
from disklab.analysis.verdict import BETTER, INCONCLUSIVE, NO_VERDICT, WITHIN_NOISE
from disklab.report.html.charts import spare_area_charts
from disklab.report.spare_area import spare_area_table
from disklab.store.repository import Store
from tests.unit.test_compare import DEFAULTS, job
from tests.unit.test_store import new_run

MIB = 1024 * 1024


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "results.db") as s:
        yield s


def level(store: Store, percent: int, rounds: list[float], window: int | None, busy: bool = False):
    """A run of the overprovision suite at one level: two preconditioning passes, then its rounds; `window`: the
    round that completed the steady window (5 rounds), None when steady state was not reached."""
    configuration = {"label": f"OP {percent} %", "overprovision": {
        "percent": percent, "discard": "blkdiscard --force /dev/x", "used_bytes": (100 - percent) * MIB,
        "device_bytes": 100 * MIB}}
    run_id = store.create_run(new_run(suite_name="overprovision", options={"configuration": configuration}))
    precondition = {**DEFAULTS, "group": "precondition", "pattern": "sequential", "bs": 131072}
    for seq in range(2):
        store.add_test(run_id, seq, f"precondition pass {seq + 1}", precondition, "", "{}", "",
                       "2026-01-01T00:00:00+00:00", job(20_000), plan_index=seq)
    for attempt, iops in enumerate(rounds, start=1):
        test_id = store.add_test(run_id, attempt + 1, "RND4K Q32T1 write", {**DEFAULTS, "group": "RND4K write"}, "",
                                 "{}", "", "2026-01-01T00:00:00+00:00", job(iops), plan_index=2, attempt=attempt)
        if busy:
            store.add_flag(test_id, "busy-machine", "other work ran beside this test: ...")
    steady = {"reached": window is not None, "round": window, "rounds": len(rounds), "unit": "IOPS",
              "window": rounds[window - 5:window] if window else rounds[-5:],
              "summary": f"steady state reached in round {window}" if window else
              f"not reached after {len(rounds)} rounds (last window: excursion 80.0 %, slope 60.0 %)"}
    store.set_run_values("run_outcomes", run_id, {"steady_state": steady})
    store.finish_run(run_id, "complete")
    return store.get_run(run_id)


def test_each_level_is_its_steady_window_judged_against_the_least_over_provisioned(store):
    unsteady = level(store, 0, [90_000, 60_000, 30_000, 15_000, 8_000, 4_000], None)
    base = level(store, 20, [80_000, 50_000, 40_400, 40_000, 39_600, 40_200, 39_800], 7)
    same = level(store, 40, [70_000, 41_000, 40_600, 40_100, 39_900, 40_300], 6)
    faster = level(store, 60, [90_000, 80_400, 80_000, 79_600, 80_200, 79_800], 6)
    levels = spare_area_levels([faster, same, unsteady, base])  # any order: by level
    assert [x.percent for x in levels] == [0, 20, 40, 60]
    assert levels[0].steady is None and levels[0].rounds == (90_000, 60_000, 30_000, 15_000, 8_000, 4_000)
    assert (levels[0].judgement.verdict, levels[1].judgement) == (NO_VERDICT, None), "OP 20 % is the baseline"
    assert "OP 0 % did not reach steady state" in levels[0].judgement.reason
    assert (levels[1].steady.n, levels[1].steady.mean) == (5, pytest.approx(40_000)), "rounds 3-7, not 1-2"
    assert levels[2].judgement.verdict == WITHIN_NOISE and levels[3].judgement.verdict == BETTER
    assert levels[3].ratio == pytest.approx(2.0)
    assert levels[1].used_bytes == 80 * MIB and levels[1].round_ends_s[-1] == pytest.approx(7.0)

    table = spare_area_table(levels)
    assert [row[0] for row in table.rows] == ["OP 0 %", "OP 20 %", "OP 40 %", "OP 60 %"]
    assert table.rows[0][4:] == ("no", "-", "", NO_VERDICT) and table.rows[1][-1] == "baseline"
    assert table.rows[3][5].startswith("80,000 ±") and table.rows[3][6:] == ("2.00x", BETTER)
    assert any(note.startswith("OP 0 %: not reached after 6 rounds") for note in table.notes)

    charts = {chart.id: chart for chart in spare_area_charts([unsteady, base, same, faster])}
    steady = charts["spare-area-steady"]
    assert [x for x, _ in steady.series[0].points] == [20, 40, 60], "the level without steady state left out"
    assert "not steady, left out: OP 0 %" in steady.caption
    assert [s.name for s in charts["spare-area-rounds"].series] == ["OP 0 %", "OP 20 %", "OP 40 %", "OP 60 %"]


def test_other_work_beside_a_window_withholds_better_or_worse(store):
    base = level(store, 0, [40_000] * 5, 5)
    busy = level(store, 50, [80_000, 80_400, 79_600, 80_200, 79_800], 5, busy=True)
    (_, judged) = spare_area_levels([base, busy])
    assert judged.judgement.verdict == INCONCLUSIVE and "busy-machine" in judged.judgement.reason


def test_runs_of_no_over_provisioning_series_have_no_levels(store):
    assert spare_area_levels([store.get_run(store.create_run(new_run()))]) == []
    assert spare_area_charts([level(store, 0, [40_000] * 5, 5)]) == [], "one level: nothing to set against"
