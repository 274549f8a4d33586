"""Findings from stored runs: a peak then a decline in a time series, a dip in a read-share curve, and none of them
without the spread or the shape they need."""

import pytest

from disklab.analysis.findings import findings, limit_hit, peak_decline, read_share_dips, recovery
from disklab.analysis.verdict import NO_VERDICT
from disklab.fio.logs import Series, SeriesPoint
from disklab.store.repository import Store
from tests.unit.test_compare import DEFAULTS, job, stored_run
from tests.unit.test_store import new_run


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "results.db") as s:
        yield s


def logged_run(store: Store, per_second: list[float]):
    run_id = store.create_run(new_run(options={}))
    series = (Series("iops", "write", tuple(SeriesPoint(1000 * (i + 1), v) for i, v in enumerate(per_second))),)
    store.add_test(run_id, 0, "RND4K write", {**DEFAULTS, "direction": "write", "log_interval": 1.0}, "", "{}", "",
                   "2026-01-01T00:00:00+00:00", job(sum(per_second) / len(per_second)), series=series)
    store.finish_run(run_id, "complete")
    return store.get_run(run_id)


def test_a_fresh_peak_that_settles_lower_is_found_and_a_flat_series_is_not(store):
    falling = logged_run(store, [300_000, 290_000, 310_000] + [100_000 + 500 * (i % 3) for i in range(27)])
    (found,) = peak_decline(falling, 10)
    assert found.verdict == "an initial peak, then a decline" and found.basis.startswith("t-test")
    assert [f.name for f in found.figures] == ["start", "settled"] and found.figures[0].value == 300_000
    assert peak_decline(logged_run(store, [100_000 + 500 * (i % 3) for i in range(30)]), 10) == []


def mix_run(store, iops_by_share: dict[int, list[float]]):
    return stored_run(store, [(f"mix {share}", {"direction": "mixed", "rwmixread": share}, [job(v) for v in values])
                              for share, values in iops_by_share.items()])


def test_a_slump_in_a_read_share_curve_is_found_only_where_the_spread_supports_it(store):
    smooth = {share: [10_000 + 100 * share + d for d in (-50, 0, 50)] for share in range(0, 101, 10)}
    assert read_share_dips(mix_run(store, smooth), 10) == []
    slumped = {**smooth, 60: [4_000, 4_050, 3_950]}
    (dip,) = read_share_dips(mix_run(store, slumped), 10)
    assert dip.subject == "mix 60" and dip.verdict == "a dip" and "below both neighbours" in dip.statement
    single = {share: [values[0]] for share, values in slumped.items()}
    assert read_share_dips(mix_run(store, single), 10) == [], "one pass each: no spread, no dip called"


def test_an_imported_run_has_no_findings(store):
    """Imported fio output carries no plan: no regions, no caps to read a finding from."""
    run_id = store.create_run(new_run(options={"imported_from": "x.json"}))
    for seq, region in enumerate(("first:1GiB", "last:1GiB")):
        store.add_test(run_id, seq, region, {**DEFAULTS, "region": region}, "", "{}", "", "2026-01-01T00:00:00+00:00",
                       job(1000 * (seq + 1)), plan_index=seq)
    store.finish_run(run_id, "complete")
    assert findings(store.get_run(run_id)) == []
    made_here = store.create_run(new_run(options={}))
    for seq, region in enumerate(("first:1GiB", "last:1GiB")):
        store.add_test(made_here, seq, region, {**DEFAULTS, "region": region}, "", "{}", "",
                       "2026-01-01T00:00:00+00:00", job(1000 * (seq + 1)), plan_index=seq)
    (ends,) = findings(store.get_run(made_here))
    assert ends.kind == "start-vs-end" and ends.verdict == NO_VERDICT, "one pass each: figures, no verdict"


def test_throughput_at_a_links_ceiling_says_the_link_set_it(store):
    link = {"net_link_speed_mbit_per_s": 1000}  # 125 MB/s
    mib = 1024 * 1024
    near = stored_run(store, [("SEQ1M read", {"bs": mib}, [job(v / mib, bs=mib) for v in (119e6, 120e6, 121e6)])],
                      env=link)
    (limit,) = limit_hit(near)
    assert limit.verdict == "limited by the 1,000 Mb/s network link" and "96% of" in limit.statement
    assert [f.value for f in limit.figures] == [pytest.approx(120), 125]
    far = stored_run(store, [("SEQ1M read", {"bs": mib}, [job(v / mib, bs=mib) for v in (59e6, 60e6, 61e6)])],
                     env=link)
    assert limit_hit(far) == []
    single = stored_run(store, [("SEQ1M read", {"bs": mib}, [job(120e6 / mib, bs=mib)])], env=link)
    assert limit_hit(single)[0].verdict == NO_VERDICT


def test_a_test_that_recovers_over_longer_pauses_is_found(store):
    """M1: flash recovers while idle (161 -> 397 -> 488 MB/s with longer pauses)."""
    mib = 1024 * 1024
    params = {"bs": mib, "direction": "write", "metric": "mb_per_s"}
    record = stored_run(store, [(f"SEQ1M write after {pause:g} s", {**params, "pause": pause},
                                 [job(v * 1e6 / mib, bs=mib) for v in (rate * 0.99, rate, rate * 1.01)])
                                for pause, rate in ((0.0, 161), (30.0, 397), (300.0, 488))])
    (found,) = recovery(record, 10)
    assert found.verdict == "recovers with longer pauses" and found.basis.startswith("t-test on n = 3 and 3")
    assert [round(f.value) for f in found.figures] == [161, 397, 488]
    assert [f.name for f in found.figures] == ["after 0 s", "after 30 s", "after 300 s"]
