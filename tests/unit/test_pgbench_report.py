"""pgbench steps stored from real pgbench output, then shown as a client sweep, exported and compared by clients."""

import json

from disklab.analysis.compare import compare_runs
from disklab.database.benchmark import OUTCOME_KEY, step_figures, store_step
from disklab.system.cpu import CpuUse
from disklab.database.pgbench import Step, StepResult
from disklab.database.pgbench_output import parse_progress, parse_summary, percentiles_ns, transaction_latencies_us
from disklab.report.export import to_csv, to_json, to_markdown
from disklab.report.rows import result_rows, sweep_rows
from disklab.store.repository import Store
from tests.unit.test_pgbench import fixture
from tests.unit.test_store import new_run


def step_result(clients: int, stdout: str, stderr: str = "") -> StepResult:
    latencies = [latency for name in ("transactions-2-clients.log", "transactions-2-clients.log.1")
                 for latency in transaction_latencies_us(fixture(name))[0]]  # 100: enough for a p99
    return StepResult(
        step=Step(clients, 2, 1, None, 3.0, False), command="pgbench -n -c 4", started_at="2026-01-01T00:00:00+00:00",
        stdout=stdout, stderr=stderr, summary=parse_summary(stdout), progress=parse_progress(stderr),
        percentiles_ns=percentiles_ns(latencies), latency_max_ns=max(latencies) * 1000.0, cpu=CpuUse(50.0, 20.0, 5.0),
    )


def stored_run(store: Store, results: list[StepResult]) -> int:
    run_id = store.create_run(new_run(suite_name="pgbench", fio_engine="pgbench", planned_tests=len(results)))
    for seq, result in enumerate(results):
        store_step(store, run_id, seq, result)
    steps = {str(r.step.clients): step_figures(r) for r in results}
    store.set_run_values("run_outcomes", run_id, {OUTCOME_KEY: {"summary": "pgbench: ...", "steps": steps}})
    return run_id


def test_a_step_is_stored_as_a_transaction_direction_and_shown_as_a_sweep_row(tmp_path):
    with Store(tmp_path / "r.db") as store:
        result = step_result(4, fixture("time-4-clients.stdout"), fixture("time-4-clients.stderr"))
        record = store.get_run(stored_run(store, [result]))
    (test,) = record.tests
    (metrics,) = test.metrics
    assert (metrics.direction, metrics.iops, metrics.total_ios, metrics.lat_mean_ns) == ("transaction", 1322.213622,
                                                                                         3965, 3.014e6)
    assert [p.value for p in test.series[0].points] == [1128.8, 1287.1, 1545.6]  # TPS per second
    assert result_rows(record) == []  # not a fio test
    (row,) = sweep_rows(record)
    assert (row.clients, row.tps, row.failed, row.initial_connection_ms) == (4, 1322.213622, 0, 11.030)
    assert row.tps_including_connections == result.summary.tps_including_connections
    assert row.latency_p50_ms == metrics.clat_percentiles_ns["p50"] / 1e6
    assert to_csv(record).splitlines()[0].startswith("run_id,run_name,seq,test,clients,threads,tps,tps_including_")
    assert to_csv(record).splitlines()[1].startswith(f"{record.info.id},,")
    assert "| 4 | 1,322.2 | " in to_markdown(record)
    assert json.loads(to_json(record))["sweep"][0]["clients"] == 4


def test_compare_matches_steps_by_clients_and_judges_tps(tmp_path):
    with Store(tmp_path / "r.db") as store:
        slow = stored_run(store, [step_result(2, fixture("transactions-2-clients.stdout")),
                                  step_result(4, fixture("time-4-clients.stdout"))])
        fast_output = fixture("time-4-clients.stdout").replace("tps = 1322.213622", "tps = 2644.427244")
        fast = stored_run(store, [step_result(4, fast_output)])
        comparison = compare_runs([store.get_run(slow), store.get_run(fast)])
    tps = [row for row in comparison.rows if row.metric == "tps"]
    # One pass of each step on both sides: the ratio, but no verdict (no measured spread).
    assert [(dict(row.key.params)["clients"], row.cells[1].ratio, row.cells[1].verdict) for row in tps] == [
        (4, 2.0, "no verdict")]
    assert {row.metric for row in comparison.rows} == {"tps", "lat_mean_us", "clat_p99_us"}
    assert comparison.unmatched == (("pgbench 2 clients",), ())
