"""`show --series`: the per-interval table of tests run with log_interval, from real captured fio logs."""

from dataclasses import replace

from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.run.execute import Execution, execute_schedule
from disklab.run.schedule import FixedSchedule
from disklab.plan.build import build_plan, resolve_engines
from disklab.report.series import render_series_table, series_tables
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from disklab.suite.loader import load_suite
from tests.conftest import fixture_text
from tests.unit.test_execute import Recorder, ReplayExecutor
from tests.unit.test_logs import fixture_logs
from tests.unit.test_store import new_run

LOGGED = "randrw-70-4k-4jobs-log1s.jsonplus.json"


def stored_record(logged: bool):
    """A run of two quick tests, the first with log_interval = 1s when `logged`, in the default store."""
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    first = replace(plan.tests[0], log_interval=1.0) if logged else plan.tests[0]
    plan = replace(plan, tests=(first, plan.tests[1]))
    executor = ReplayExecutor([fixture_text(LOGGED)] * 2, logs=fixture_logs())
    with Store(default_store_path()) as store:
        run_id = store.create_run(new_run())
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), executor, store, Recorder())
        return store.get_run(run_id)


def test_one_table_per_logged_test_with_a_row_per_second_in_display_units():
    record = stored_record(logged=True)
    (table,) = series_tables(record)
    assert (table.seq, table.test, table.directions) == (1, record.tests[0].label, ("read", "write"))
    series = {(s.kind, s.direction): s.points for s in record.tests[0].series}
    assert [row.t_s for row in table.rows] == [p.t_ms / 1000 for p in series["iops", "read"]]
    first = table.rows[0]
    assert first.iops == (series["iops", "read"][0].value, series["iops", "write"][0].value)
    assert first.mb_per_s == (series["bw_bytes_per_s", "read"][0].value / 1e6,
                              series["bw_bytes_per_s", "write"][0].value / 1e6)
    assert first.lat_mean_us == (series["lat_mean_ns", "read"][0].value / 1e3,
                                 series["lat_mean_ns", "write"][0].value / 1e3)


def test_an_interval_without_a_value_shows_a_dash():
    record = stored_record(logged=True)
    test = record.tests[0]
    # Only the read IOPS of the last second, as when fio logged nothing else for it.
    iops_read, *others = test.series
    others = [replace(s, points=s.points[:-1]) for s in others]
    record = replace(record, tests=(replace(test, series=(iops_read, *others)),))
    (table,) = series_tables(record)
    assert table.rows[-1].iops[1] is None and table.rows[-1].lat_mean_us == (None, None)


def test_show_series_prints_the_table_and_says_when_there_is_none():
    record = stored_record(logged=True)
    result = CliRunner().invoke(cli, ["show", str(record.info.id), "--series"])
    assert result.exit_code == 0, result.output
    assert "IOPS read" in result.output and "Mean lat µs write" in result.output
    assert record.tests[1].label not in result.output
    body = [line for line in result.output.splitlines() if line.startswith("│")]
    assert len(body) == len(series_tables(record)[0].rows)
    plain = stored_record(logged=False)
    result = CliRunner().invoke(cli, ["show", str(plain.info.id), "--series"])
    assert result.exit_code == 0 and "no time series" in result.output and "log_interval" in result.output


def test_show_series_is_a_terminal_table():
    record = stored_record(logged=True)
    result = CliRunner().invoke(cli, ["show", str(record.info.id), "--series", "--format", "json"])
    assert result.exit_code == 2 and "--format json" in result.output


def test_the_rendered_table_names_its_units():
    (table,) = series_tables(stored_record(logged=True))
    rendered = render_series_table(table)
    assert [c.header for c in rendered.columns][:3] == ["t s", "IOPS read", "IOPS write"]
    assert "MB/s = 10^6 bytes/s" in rendered.caption
