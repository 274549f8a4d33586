"""Naming, renaming and deleting runs: the store's methods, the labels runs go by, and the commands."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from disklab.cli import curate
from disklab.cli.main import cli
from disklab.errors import UserError
from disklab.fio.logs import Series, SeriesPoint
from disklab.fio.parse import parse_fio_output
from disklab.report.labels import run_labels
from disklab.store.db import default_store_path
from disklab.store.names import MAX_NAME_CHARS, run_name
from disklab.store.notes import add_note
from disklab.store.repository import RunFilter, Store
from disklab.suite.loader import load_suite
from tests.conftest import BACKENDS, fixture_text, new_store_location
from tests.unit.test_store import new_run


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input)


_PARAMS = {"pattern": "random", "direction": "read", "rwmixread": None, "bs": 4096, "iodepth": 32, "jobs": 1}


def stored_run(store: Store, status: str = "complete", **changes) -> int:
    """A run with every kind of row a run owns: two tests with metrics, series and a flag, env, outcomes, SMART, a
    note."""
    output = fixture_text("randread-4k-q32.json.json")
    (job,) = parse_fio_output(output).jobs
    run_id = store.create_run(new_run(**changes))
    series = (Series("iops", "read", (SeriesPoint(0, 10.0), SeriesPoint(1000, 12.0))),)
    for seq in range(2):
        test_id = store.add_test(run_id, seq, f"t{seq}", _PARAMS, "[global]\n", output, "", "2026-01-01T00:00:00",
                                 job, series)
        store.add_flag(test_id, "device-cache", "fits in the cache")
    store.set_run_values("run_env", run_id, {"kernel": "6.1"})
    store.set_run_values("run_outcomes", run_id, {"steady": {"summary": "steady"}})
    store.add_smart(run_id, "/dev/sda", "before", {"temperature": 30})
    add_note(store, run_id, "a note")
    if status != "running":
        store.finish_run(run_id, status)
    return run_id


def tables_of(store: Store, location) -> dict[str, set[str]]:
    """Every table of the store and its columns, found (not listed), in either backend's catalogue."""
    if isinstance(location, Path):
        names = [row[0] for row in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: {row[1] for row in store.conn.execute(f"PRAGMA table_info({name})")} for name in names}
    tables: dict[str, set[str]] = {}
    for row in store.conn.execute("SELECT table_name, column_name FROM information_schema.columns "
                                  "WHERE table_schema = current_schema()"):
        tables.setdefault(row[0], set()).add(row[1])
    return tables


def rows_of(location, run_id: int) -> dict[str, int]:
    """Rows referring to the run in every table of the store that refers to runs or tests."""
    counts = {}
    with Store(location, read_only=True) as store:
        for table, columns in tables_of(store, location).items():
            if table == "runs":
                counts[table] = store.conn.execute("SELECT COUNT(*) FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
            elif "run_id" in columns:
                counts[table] = store.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE run_id = ?",
                                                   (run_id,)).fetchone()[0]
            elif "test_id" in columns:
                counts[table] = store.conn.execute(
                    f"SELECT COUNT(*) FROM {table} WHERE test_id IN (SELECT id FROM tests WHERE run_id = ?)", (run_id,)
                ).fetchone()[0]
    return counts


def consistent(location) -> bool:
    """No row refers to a run or test that is gone; a SQLite file also passes its integrity check."""
    with Store(location, read_only=True) as store:
        for table, columns in tables_of(store, location).items():
            for column, parent in (("run_id", "runs"), ("test_id", "tests")):
                if column in columns and store.conn.execute(
                        f"SELECT COUNT(*) FROM {table} WHERE {column} NOT IN (SELECT id FROM {parent})").fetchone()[0]:
                    return False
        if isinstance(location, Path):
            return (store.conn.execute("PRAGMA foreign_key_check").fetchall() == []
                    and [tuple(row) for row in store.conn.execute("PRAGMA integrity_check")] == [("ok",)])
    return True


# The store


def test_delete_removes_every_row_of_the_run_and_nothing_of_the_others(store_location):
    with Store(store_location) as store:
        keep, gone, also_kept = stored_run(store), stored_run(store), stored_run(store)
        before = [store.get_run(keep), store.get_run(also_kept)]
        raw_before = store.raw_text(keep)
    counts = rows_of(store_location, gone)
    assert set(counts) >= {"runs", "tests", "metrics", "series", "test_flags", "run_env", "run_smart", "run_outcomes"}
    assert all(counts.values()), f"the fixture run has a row in every table: {counts}"
    with Store(store_location) as store:
        store.delete_runs([gone])
        assert [store.get_run(keep), store.get_run(also_kept)] == before
        assert store.raw_text(keep) == raw_before and store.smart(keep) == {"/dev/sda": {"before": {"temperature": 30}}}
        assert [info.id for info in store.list_runs()] == [also_kept, keep]
    assert set(rows_of(store_location, gone).values()) == {0}
    assert all(rows_of(store_location, keep).values())
    assert consistent(store_location)


def test_a_running_run_is_refused_and_nothing_of_the_batch_is_deleted(store_location):
    with Store(store_location) as store:
        done, running = stored_run(store), stored_run(store, status="running")
        with pytest.raises(UserError, match=f"run {running} is still running on testhost: stop it first"):
            store.delete_runs([done, running])
        assert [info.id for info in store.list_runs()] == [running, done]
    assert all(rows_of(store_location, done).values()) and consistent(store_location)


def test_rename_sets_and_clears_the_name(store_location):
    with Store(store_location) as store:
        run_id = stored_run(store)
        store.rename_run(run_id, "old array")
        assert store.get_run(run_id).info.name == "old array"
        store.rename_run(run_id, None)
        assert store.get_run(run_id).info.name is None
        with pytest.raises(UserError, match="there is no run 99"):
            store.rename_run(99, "x")


def test_runs_are_filtered_by_status_and_ids(store_location):
    with Store(store_location) as store:
        ids = [stored_run(store, status=s) for s in ("complete", "failed", "interrupted", "complete")]
        assert [i.id for i in store.list_runs(None, RunFilter(status="complete"))] == [ids[3], ids[0]]
        assert store.count_runs(RunFilter(status="failed")) == 1
        assert [i.id for i in store.list_runs(None, RunFilter(ids=(ids[1], ids[2])))] == [ids[2], ids[1]]


# Names


@pytest.mark.parametrize("text, why", [
    ("", "empty"), ("   ", "empty"), (" x", "white space"), ("x\t", "white space"), ("a\nb", "control character"),
    ("a\x1b[31mb", "control character"), ("a\u2028b", "line break"), ("a\u202eb", "bidirectional"),
    ("a\ud800", "surrogate"), ("x" * (MAX_NAME_CHARS + 1), "at most"),
])
def test_names_that_would_not_read_back_on_one_line_are_refused(text, why):
    with pytest.raises(ValueError, match=why):
        run_name(text)


@pytest.mark.parametrize("text", [
    "old array", "ü 测试 ✓", "RAID-10 [8 disks] | 'new'", "👩‍💻 laptop", "3", "last", "x" * MAX_NAME_CHARS,
])
def test_names_are_kept_exactly(text):
    assert run_name(text) == text


# Labels


def info(run_id: int, **changes):
    with Store(default_store_path()) as store:
        return replace(store.list_runs(None, RunFilter(ids=(stored_run(store, **changes),)))[0], id=run_id)


def test_labels_name_the_run_and_what_differs_between_the_runs():
    a, b = info(1), info(3, fio_engine="libaio", name="old array")
    assert run_labels([a]) == ["run 1"]
    assert run_labels([a, replace(b, fio_engine="io_uring")]) == ["run 1", "old array (run 3)"]
    assert run_labels([a, b]) == ["run 1 (io_uring)", "old array (run 3, libaio)"]
    c = replace(a, id=4, hostname="other", target="/dev/sdb", disklab_version="0.2.0", fio_version="fio-3.36",
                fio_engine="libaio, psync")
    assert run_labels([a, c]) == [
        "run 1 (io_uring, on testhost, /mnt/x, disklab 0.1.0, fio-3.33)",
        "run 4 (libaio+psync, on other, /dev/sdb, disklab 0.2.0, fio-3.36)",
    ]
    assert run_labels([]) == []


def test_compare_and_the_report_use_the_labels():
    from disklab.report.html.model import build_report

    with Store(default_store_path()) as store:
        quick = load_suite("quick")  # a suite with a view, whose title names the run too
        first = stored_run(store, suite_text=quick.text, suite_source=quick.source)
        second = stored_run(store, fio_engine="libaio", name="new array", suite_text=quick.text,
                            suite_source=quick.source)
        records = [store.get_run(first), store.get_run(second)]
    labels = ["run 1 (io_uring)", "new array (run 2, libaio)"]
    table = invoke("compare", "1", "2", "-f", "json")
    assert table.exit_code == 0, table.output
    assert [r["label"] for r in json.loads(table.stdout)["runs"]] == labels
    assert invoke("compare", "1", "2", "-f", "csv").stdout.splitlines()[0].startswith(
        "test,direction,metric,run 1 (io_uring) mean,")
    report = build_report(records, "2026-01-01T00:00:00+00:00")
    assert report.title == f"disklab report · {', '.join(labels)} · quick"
    assert report.tested.rows[1][0] == labels[1] and report.comparison.headings[3:5] == tuple(labels)
    assert [run.title.split(" · ")[0] for run in report.runs] == labels
    assert report.runs[1].tables[-1].title == f"{labels[1]} · every test"
    assert [run.tables[0].title.split(" · ")[:2] for run in report.runs] == [[label, "quick"] for label in labels]
    legends = {s.name for chart in report.charts if chart.kind != "grid" for s in chart.series}  # a grid: no legend
    assert legends and all(any(label in name for label in labels) for name in legends)


# The commands


@pytest.fixture
def three(commands_store):
    """Runs 1 to 3, run 2 named; with every kind of row a run owns."""
    with Store(commands_store) as store:
        return [stored_run(store), stored_run(store, name="old array"), stored_run(store)]


def listed() -> list[tuple[int, str | None]]:
    return [(r["id"], r["name"]) for r in json.loads(invoke("runs", "-f", "json").stdout)["runs"]]


def one_error_line(result, exit_code: int = 2) -> str:
    assert result.exit_code == exit_code, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("disklab: error: ")
    return line


def test_rename_and_clear_through_the_cli(three):
    result = invoke("rename", "last", "new array ✓")
    assert result.exit_code == 0 and result.stderr == "run 3 is now named 'new array ✓'\n"
    assert invoke("rename", "2", "--clear").stderr == "run 2 has no name now\n"
    assert listed() == [(3, "new array ✓"), (2, None), (1, None)]
    assert "give a NAME, or --clear" in one_error_line(invoke("rename", "1"))
    assert "exclude each other" in one_error_line(invoke("rename", "1", "x", "--clear"))
    assert "there is no run 9" in one_error_line(invoke("rename", "9", "x"))
    assert "control character" in one_error_line(invoke("rename", "1", "a\nb"))


def test_delete_refuses_without_a_terminal_unless_yes(three, commands_store):
    line = one_error_line(invoke("delete", "1"))
    assert line == "disklab: error: delete asks for confirmation on a terminal: add --yes to delete without asking"
    assert [i for i, _ in listed()] == [3, 2, 1]
    result = invoke("delete", "last~1", "1", "--yes")
    assert result.exit_code == 0 and result.stderr.startswith("deleted 2 runs (1, 2) from ")
    assert listed() == [(3, None)]
    assert consistent(commands_store)
    assert "there is no run 1" in one_error_line(invoke("delete", "1", "--yes"))
    assert "is not a run" in one_error_line(invoke("delete", "old array", "--yes"))


def test_delete_asks_on_a_terminal_showing_what_goes(three, monkeypatch):
    monkeypatch.setattr(curate, "_interactive", lambda: True)
    declined = invoke("delete", "2", "3", input="n\n")
    assert declined.exit_code == 0 and declined.stderr.splitlines()[-1] == "nothing deleted"
    shown = declined.stderr.splitlines()
    assert shown[0].startswith("  run 2 'old array' · quick · /mnt/x · 2 tests · complete · started ")
    assert shown[1].startswith("  run 3 · quick · /mnt/x · 2 tests · complete")
    assert shown[2].startswith("delete 2 runs and everything stored with them? [y/N]")
    assert [i for i, _ in listed()] == [3, 2, 1]
    ended = invoke("delete", "2", input="")  # Ctrl-D at the question
    assert ended.exit_code == 0 and ended.stderr.splitlines()[-1] == "nothing deleted"
    assert "delete 1 run and everything stored with it? [y/N]" in ended.stderr  # said "with them"
    accepted = invoke("delete", "2", input="y\n")
    assert accepted.exit_code == 0 and "deleted 1 run (2)" in accepted.stderr
    assert [i for i, _ in listed()] == [3, 1]


def test_delete_refuses_a_run_still_running(three, commands_store):
    with Store(commands_store) as store:
        running = stored_run(store, status="running")  # this process's pid: its disklab is alive
    line = one_error_line(invoke("delete", "1", str(running), "--yes"))
    assert line.endswith(f"run {running} is still running on testhost: stop it first (Ctrl-C), then delete it; "
                         "nothing was deleted")
    assert [i for i, _ in listed()] == [running, 3, 2, 1]


def test_runs_filters_by_status(three, commands_store):
    with Store(commands_store) as store:
        store.finish_run(2, "failed", "fio failed")
    failed = json.loads(invoke("runs", "-f", "json", "--status", "failed").stdout)
    assert [r["id"] for r in failed["runs"]] == [2] and failed["matched"] == 1
    assert [r["id"] for r in json.loads(invoke("runs", "-f", "json", "--status", "complete").stdout)["runs"]] == [3, 1]
    assert "'done' is not one of" in one_error_line(invoke("runs", "--status", "done"))


def test_import_takes_its_name_through_the_same_check():
    fixture = str(default_store_path().parent)  # any path: the name is refused before a file is read
    assert "white space" in one_error_line(invoke("import", fixture, "--name", "old array "))


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module", params=BACKENDS)
def fuzz_db(request, tmp_path_factory):
    db = new_store_location(request, tmp_path_factory.mktemp("names"))
    with Store(db) as store:
        stored_run(store)
    return str(db)


@FUZZ
@given(st.text(max_size=MAX_NAME_CHARS + 20))
def test_any_name_is_shown_back_exactly_or_refused_in_one_line(fuzz_db, text):
    result = CliRunner().invoke(cli, ["--store", fuzz_db, "rename", "1", "--", text])
    if result.exit_code == 0:
        runs = json.loads(CliRunner().invoke(cli, ["--store", fuzz_db, "runs", "-f", "json"]).stdout)["runs"]
        assert runs[0]["name"] == text
        assert f"run 1 is now named {text!r}" in result.stderr
        found = json.loads(CliRunner().invoke(cli, ["--store", fuzz_db, "runs", "-f", "json", "--name", text]).stdout)
        assert [r["id"] for r in found["runs"]] == [1]
    else:
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith("disklab: error: ")


def test_a_deleted_runs_number_is_never_given_again(store_location):
    """Deleting the newest run must not hand its number to the next one: 'run 2' in a note stays that run or none."""
    with Store(store_location) as store:
        first, second = store.create_run(new_run()), store.create_run(new_run())
        for run_id in (first, second):
            store.finish_run(run_id, "complete")
        store.delete_runs([second])
        third = store.create_run(new_run())
        assert third == second + 1 and [r.id for r in store.list_runs()] == [third, first]
