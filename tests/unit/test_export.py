import csv
import io
import json
from dataclasses import replace

from disklab.run.execute import Execution, execute_schedule
from disklab.run.schedule import FixedSchedule
from disklab.plan.build import build_plan, resolve_engines
from disklab.report.csv_text import CsvWriter
from disklab.report.export import to_csv, to_json, to_markdown
from disklab.store.repository import Store
from disklab.suite.loader import load_suite
from tests.conftest import fixture_json, fixture_text
from tests.unit.test_execute import Recorder, ReplayExecutor
from tests.unit.test_logs import fixture_logs
from tests.unit.test_store import new_run

MIXED = "randrw-70-4k-4jobs.json.json"
LOGGED = "randrw-70-4k-4jobs-log1s.jsonplus.json"


def stored_record(tmp_path):
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    plan = replace(plan, tests=plan.tests[:2])
    outputs = [fixture_text(MIXED), fixture_text("seqwrite-1m-q8.json.json")]
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run())
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), ReplayExecutor(outputs), store, Recorder())
        return store.get_run(run_id)


def test_json_export_is_versioned_and_keeps_fios_figures(tmp_path):
    document = json.loads(to_json(stored_record(tmp_path)))
    assert document["format"] == "disklab-run" and document["format_version"] == 10 and document["findings"] == [] and "undrawn" not in document
    assert document["notes"] == []
    raw = fixture_json(MIXED)["jobs"][0]
    first = document["tests"][0]
    assert set(first["metrics"]) == {"read", "write"}
    assert first["metrics"]["read"]["iops"] == raw["read"]["iops"]
    assert first["metrics"]["write"]["bw_bytes_per_s"] == raw["write"]["bw_bytes"]
    assert first["metrics"]["read"]["clat_percentiles_ns"]["p99"] == raw["read"]["clat_ns"]["percentile"]["99.000000"]


def test_json_export_carries_each_tests_series_compactly(tmp_path):
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    plan = replace(plan, tests=(replace(plan.tests[0], log_interval=1.0), plan.tests[1]))
    executor = ReplayExecutor([fixture_text(LOGGED)] * 2, logs=fixture_logs())
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run())
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), executor, store, Recorder())
        record = store.get_run(run_id)
    logged, plain = json.loads(to_json(record))["tests"]
    assert plain["series"] == {}
    assert set(logged["series"]) == {"iops", "bw_bytes_per_s", "lat_mean_ns"}
    for s in record.tests[0].series:
        assert logged["series"][s.kind][s.direction] == [[p.t_ms, p.value] for p in s.points]


def test_csv_has_a_row_per_direction_in_display_units(tmp_path):
    rows = list(csv.DictReader(io.StringIO(to_csv(stored_record(tmp_path)))))
    raw = fixture_json(MIXED)["jobs"][0]
    assert [(r["seq"], r["direction"]) for r in rows] == [("1", "read"), ("1", "write"), ("2", "write")]
    assert float(rows[0]["mb_per_s"]) == raw["read"]["bw_bytes"] / 1e6
    assert float(rows[1]["lat_mean_us"]) == raw["write"]["lat_ns"]["mean"] / 1e3


def test_a_label_with_a_carriage_return_keeps_its_row(tmp_path):
    """Quoted on every Python: before 3.11.9 csv left a bare CR unquoted under a line feed's line end, and readers
    took it for the row's end."""
    record = stored_record(tmp_path)
    record = replace(record, tests=tuple(replace(test, label="a\rb") for test in record.tests))
    rows = list(csv.DictReader(io.StringIO(to_csv(record), newline="")))
    assert [row["test"] for row in rows] == ["a\rb"] * 3 and [row["direction"] for row in rows] == [
        "read", "write", "write"]
    out = io.StringIO()
    CsvWriter(out).writerows([["a\rb", 1], ["c", 2]])
    assert out.getvalue() == '"a\rb","1"\nc,2\n'  # only a row that holds one is quoted whole


def test_markdown_is_a_table_with_units(tmp_path):
    text = to_markdown(stored_record(tmp_path))
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 3
    assert "MB/s" in table[0] and "10^6 bytes/s" in text
