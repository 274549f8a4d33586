"""Suite views and their figures, over runs replayed from real captured fio output into a store."""

import itertools
import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.errors import FioError
from disklab.run.execute import Execution, execute_schedule
from disklab.run.schedule import FixedSchedule
from disklab.plan.build import build_plan, resolve_engines
from disklab.report.export import to_csv, to_json, to_markdown
from disklab.report.metrics import REGISTRY
from disklab.report.views import build_view, cell_text
from disklab.store.repository import Store
from disklab.suite.loader import parse_suite
from disklab.suite.model import METRICS
from disklab.units import format_size
from tests.conftest import fixture_json, fixture_text
from tests.unit.test_execute import Recorder, ReplayExecutor
from tests.unit.test_store import new_run

READ = "randread-4k-q32.jsonplus.json"
WRITE = "seqwrite-1m-q8.jsonplus.json"
MIXED = "randrw-70-4k-4jobs.jsonplus.json"
FIXTURE_FOR = {"read": READ, "write": WRITE, "mixed": MIXED}  # each test replays a capture of its own direction

MATRIX = """
name = "matrix"
description = "M1 in small: numbered test cases x read/write x 1 and 4 jobs"

[view]
rows = "group"
columns = ["direction", "jobs"]
values = ["metric"]

[[group]]
name = "1. IOPS, random"
metric = "iops"
bs = "4k"
jobs = [1, 4]  # listed before direction: the columns still go direction first
direction = ["read", "write"]

[[group]]
name = "2. Throughput, sequential"
metric = "mb_per_s"
pattern = "sequential"
bs = "1M"
direction = ["read", "write"]
jobs = [1, 4]

[[group]]
name = "3. Throughput, random"
metric = "mb_per_s"
bs = "1M"
direction = ["read", "write"]
jobs = [1, 4]
"""

BLOCKSIZE = """
name = "blocksize"

[view]
rows = "bs"
values = ["iops", "mb_per_s"]

[[group]]
name = "random mixed"
rwmixread = 50
bs = ["4k", "64k", "1M"]
"""

DATABASE = """
name = "database"

[view]
rows = "rwmixread"
columns = ["iodepth"]
values = ["iops"]

[[group]]
name = "oltp"
bs = "8k"
rwmixread = [70, 30]
iodepth = [1, 16]
"""

VIDEO = """
name = "video"

[defaults]
frame_size = "64x64"
bit_depth = 8
fps = 250

[view]
rows = "size"
columns = ["direction"]
values = ["mb_per_s", "frames_missed"]

[[group]]
name = "frames"
size = ["1M", "2M"]
direction = ["write", "read"]
"""


def output_for(test) -> str:
    return fixture_text(FIXTURE_FOR[test.direction])


def stored_run(tmp_path, suite_text, keep=lambda test: True, fail_at=None):
    """Runs the suite's plan through the replaying executor; `keep` leaves tests out as a skip would."""
    suite = parse_suite(suite_text, source="test", where="test suite")
    plan = resolve_engines(build_plan(suite), lambda wanted: "io_uring")
    plan = replace(plan, tests=tuple(t for t in plan.tests if keep(t)))
    executor = ReplayExecutor([output_for(t) for t in plan.tests], fail_at=fail_at)
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(suite_name=suite.name, suite_text=suite_text, planned_tests=len(plan.tests)))
        execution = Execution(plan, str(tmp_path / "testfile"), str(tmp_path / "files"), run_id)
        if fail_at is None:
            execute_schedule(execution, FixedSchedule(plan), executor, store, Recorder())
        else:
            with pytest.raises(FioError):
                execute_schedule(execution, FixedSchedule(plan), executor, store, Recorder())
        return store.get_run(run_id)


def raw(name: str, direction: str) -> dict:
    return fixture_json(name)["jobs"][0][direction]


def cell_at(view, row: str, column: str):
    return view.cells[view.rows.index(row)][[c.heading for c in view.columns].index(column)]


def test_the_registry_covers_the_suite_metrics_exactly():
    assert tuple(REGISTRY) == METRICS
    assert all(name == metric.name for name, metric in REGISTRY.items())


def test_matrix_rows_are_groups_in_suite_order_and_cells_show_each_tests_own_metric(tmp_path):
    skipped = ("2. Throughput, sequential", "write", 4)

    def ran(test):  # one test skipped, and the run interrupted before group 3
        return (test.group, test.direction, test.jobs) != skipped and not test.group.startswith("3.")

    record = stored_run(tmp_path, MATRIX, keep=ran)
    view = build_view(record)
    assert view.row_heading == "Test"
    assert view.rows == ("1. IOPS, random", "2. Throughput, sequential", "3. Throughput, random")
    assert [c.heading for c in view.columns] == ["read 1 job", "read 4 jobs", "write 1 job", "write 4 jobs"]
    assert len(record.tests) == 7
    for test in record.tests:
        p = test.params
        captured = raw(FIXTURE_FOR[p["direction"]], p["direction"])
        cell = cell_at(view, p["group"], f"{p['direction']} {p['jobs']} job{'s' if p['jobs'] > 1 else ''}")
        (stored,) = test.metrics
        assert cell.metric == p["metric"]
        if p["metric"] == "iops":
            assert cell.value == stored.iops == captured["iops"]
            assert cell_text(cell, view.columns[0]) == f"{stored.iops:,.0f} IOPS"
        else:
            assert cell.value == stored.bw_bytes_per_s / 1e6 == captured["bw_bytes"] / 1e6
            assert cell_text(cell, view.columns[0]) == f"{stored.bw_bytes_per_s / 1e6:,.1f} MB/s"
    missing = [cell_at(view, "2. Throughput, sequential", "write 4 jobs")] + list(view.cells[2])
    assert all(c.value is None for c in missing)
    assert {cell_text(c, view.columns[0]) for c in missing} == {"n/a"}
    assert any(note.startswith("n/a:") for note in view.notes)


def test_blocksize_rows_are_block_sizes_with_a_column_per_value_and_an_interrupted_row_is_na(tmp_path):
    record = stored_run(tmp_path, BLOCKSIZE, fail_at=2)
    view = build_view(record)
    assert view.row_heading == "Block size"
    assert view.rows == ("4KiB", "64KiB", "1MiB")
    assert [(c.heading, c.metric) for c in view.columns] == [("IOPS", "iops"), ("MB/s", "mb_per_s")]
    read, write = raw(MIXED, "read"), raw(MIXED, "write")
    for row in view.cells[:2]:
        iops, mb = row
        assert iops.value == read["iops"] + write["iops"]  # a mixed test counts both directions
        assert mb.value == (read["bw_bytes"] + write["bw_bytes"]) / 1e6
        assert cell_text(mb, view.columns[1]) == f"{mb.value:,.1f}"
    assert [c.value for c in view.cells[2]] == [None, None]


def test_database_is_a_grid_of_read_share_by_queue_depth(tmp_path):
    record = stored_run(tmp_path, DATABASE, keep=lambda t: (t.rwmixread, t.iodepth) != (30, 16))
    view = build_view(record)
    assert view.rows == ("70 % read", "30 % read")
    assert [c.heading for c in view.columns] == ["QD1 IOPS", "QD16 IOPS"]
    by_params = {(t.params["rwmixread"], t.params["iodepth"]): t for t in record.tests}
    for (share, depth), test in by_params.items():
        cell = cell_at(view, f"{share} % read", f"QD{depth} IOPS")
        assert cell.value == sum(m.iops for m in test.metrics)
    assert cell_at(view, "30 % read", "QD16 IOPS").value is None


def test_video_rows_are_the_data_sets_that_ran_and_frames_missed_count_late_requests(tmp_path):
    record = stored_run(tmp_path, VIDEO)
    view = build_view(record)
    frame = 64 * 64 * 3
    # Whole frames only: the plan rounds each set down, so the rows are the sizes that ran, not the suite's.
    assert view.rows == (format_size(1024**2 // frame * frame), format_size(2 * 1024**2 // frame * frame))
    assert [c.heading for c in view.columns] == ["write MB/s", "write frames missed", "read MB/s", "read frames missed"]
    deadline_ns = 1e9 / 250
    for name, direction, columns in ((WRITE, "write", slice(0, 2)), (READ, "read", slice(2, 4))):
        bins = raw(name, direction)["clat_ns"]["bins"]
        late = sum(count for value, count in bins.items() if int(value) > deadline_ns)
        for row in view.cells:
            mb, missed = row[columns]
            assert mb.value == raw(name, direction)["bw_bytes"] / 1e6
            assert missed.value == late
    assert view.cells[0][1].value > 0


def test_latency_figures_weight_by_io_count_and_read_the_percentile_of_every_io(tmp_path):
    record = stored_run(tmp_path, DATABASE)
    test = record.tests[0]
    read, write = raw(MIXED, "read"), raw(MIXED, "write")
    ios = read["total_ios"] + write["total_ios"]
    expected_mean = (read["lat_ns"]["mean"] * read["total_ios"] + write["lat_ns"]["mean"] * write["total_ios"]) / ios
    assert REGISTRY["lat_mean_us"].compute([test]) == pytest.approx(expected_mean / 1e3)
    # The p99 of reads and writes together: fio's two histograms added, the first bin reaching 99 % of the I/Os
    merged = {}
    for direction in (read, write):
        for value, count in direction["clat_ns"]["bins"].items():
            merged[int(value)] = merged.get(int(value), 0) + count
    assert sum(merged.values()) == ios
    running = itertools.accumulate(count for _, count in sorted(merged.items()))
    p99 = next(value for (value, _), seen in zip(sorted(merged.items()), running) if seen >= 0.99 * ios)
    assert REGISTRY["clat_p99_us"].compute([test]) == p99 / 1e3
    assert min(read["clat_ns"]["percentile"]["99.000000"], write["clat_ns"]["percentile"]["99.000000"]) <= p99
    assert REGISTRY["sync_p99_us"].compute([test]) is None
    assert REGISTRY["frames_missed"].compute([test]) is None


def test_sync_calls_are_not_io_but_have_their_own_p99(tmp_path):
    data = json.loads(fixture_text(WRITE))
    flushes = {"total_ios": 1000, "lat_ns": {"mean": 900.0, "max": 4000.0, "percentile": {"99.000000": 3000}}}
    data["jobs"][0]["sync"] = flushes  # as fio reports fsync calls (no capture of one yet)
    suite_text = "name = 'sync'\n[[group]]\nname = 'fsync'\ndirection = 'write'\nsync = 'fsync'\n"
    suite = parse_suite(suite_text, source="test", where="test suite")
    plan = resolve_engines(build_plan(suite), lambda wanted: "psync")
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(suite_text=suite_text))
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), ReplayExecutor([json.dumps(data)]), store, Recorder())
        (test,) = store.get_run(run_id).tests
    assert [m.direction for m in test.metrics] == ["write", "sync"]
    assert REGISTRY["iops"].compute([test]) == data["jobs"][0]["write"]["iops"]
    assert REGISTRY["sync_p99_us"].compute([test]) == 3.0  # fio's own p99: no bins of the calls to merge
    fewer = replace(test, metrics=tuple(replace(m, total_ios=999) if m.direction == "sync" else m
                                        for m in test.metrics))
    assert REGISTRY["sync_p99_us"].compute([fewer]) is None  # 999 calls cannot support a p99


def test_repeated_tests_share_a_cell_as_the_mean_per_test_with_a_note(tmp_path):
    suite_text = BLOCKSIZE.replace('bs = ["4k", "64k", "1M"]', 'bs = "4k"\nrepeat = 2')
    record = stored_run(tmp_path, suite_text)
    view = build_view(record)
    assert view.rows == ("4KiB",)
    assert view.cells[0][0].value == sum(m.iops for t in record.tests for m in t.metrics) / 2
    assert any("1 cells combine several tests" in note for note in view.notes)


def test_exports_carry_the_view_unless_flat(tmp_path):
    record = stored_run(tmp_path, DATABASE)
    document = json.loads(to_json(record))
    assert document["view"]["rows"] == ["70 % read", "30 % read"]
    assert document["view"]["cells"][0][0]["value"] == sum(m.iops for m in record.tests[0].metrics)
    assert "view" not in json.loads(to_json(record, flat=True))
    csv_text = to_csv(record)
    assert "Read share" not in csv_text and csv_text.startswith("run_id,"), "the CSV is the one tidy table of tests"
    assert to_csv(record, flat=True) == csv_text
    assert "| Read share | QD1 IOPS | QD16 IOPS |" in to_markdown(record)
    assert "Read share" not in to_markdown(record, flat=True)


def test_a_suite_without_a_view_or_unreadable_now_shows_flat(tmp_path):
    without_view = DATABASE.replace('[view]\nrows = "rwmixread"\ncolumns = ["iodepth"]\nvalues = ["iops"]', "")
    assert "[view]" not in without_view
    record = stored_run(tmp_path, without_view)
    assert build_view(record) is None
    assert build_view(replace(record, suite_text="name = 'no groups'")) is None
    assert "view" not in json.loads(to_json(record))


def test_show_prints_the_view_before_the_tests_and_flat_leaves_it_out(tmp_path):
    record = stored_run(tmp_path, MATRIX, keep=lambda t: t.group.startswith("1."))
    db = str(tmp_path / "r.db")
    markdown = CliRunner().invoke(cli, ["--db", db, "show", "last", "--format", "markdown"])
    assert markdown.exit_code == 0, markdown.output
    lines = markdown.output.splitlines()
    header = "| Test | read 1 job | read 4 jobs | write 1 job | write 4 jobs |"
    per_test = next(line for line in lines if line.startswith("| Test | Dir"))
    assert header in lines and lines.index(header) < lines.index(per_test)
    first = record.tests[0].metrics[0]
    assert f"| 1. IOPS, random | {first.iops:,.0f} IOPS |" in markdown.output
    assert "| 3. Throughput, random | n/a | n/a | n/a | n/a |" in markdown.output
    flat = CliRunner().invoke(cli, ["--db", db, "show", "last", "--format", "markdown", "--flat"])
    assert header not in flat.output and "| Test | Dir" in flat.output
    table = CliRunner().invoke(cli, ["--db", db, "show", "last"])
    assert table.exit_code == 0 and table.output.index("read 4 jobs") < table.output.index("Mean lat µs")
