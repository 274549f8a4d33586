import sqlite3

import pytest

from disklab.errors import StoreError, UserError
from disklab.fio.logs import Series, SeriesPoint, parse_logs
from disklab.fio.parse import DirectionMetrics, JobResult, parse_fio_output
from disklab.store.migrations import LATEST_VERSION, MIGRATIONS
from disklab.store.repository import NewRun, RunFilter, Store
from tests.conftest import fixture_text
from tests.unit.test_logs import fixture_logs


def new_run(**changes) -> NewRun:
    values = dict(
        suite_name="quick", suite_source="built-in", suite_text="name = 'quick'", target="/mnt/x",
        target_kind="directory", test_path="/mnt/x/f", options={"runtime": 1.0}, disklab_version="0.1.0",
        fio_version="fio-3.33", fio_engine="io_uring", hostname="testhost", kernel="6.1", planned_tests=2,
    )
    values.update(changes)
    return NewRun(**values)


def test_a_test_round_trips_with_its_raw_output_and_metrics(store_location):
    output = fixture_text("randrw-70-4k-4jobs.jsonplus.json")
    (job,) = parse_fio_output(output).jobs
    with Store(store_location) as store:
        run_id = store.create_run(new_run())
        store.add_test(run_id, 0, "mixed", {"bs": 4096}, "[global]\n", output, "", "2026-01-01T00:00:00+00:00", job)
        store.finish_run(run_id, "complete")
        record = store.get_run(run_id)
    assert record.info.status == "complete" and record.info.finished_tests == 1
    (test,) = record.tests
    assert test.fio_output == output
    assert test.params == {"bs": 4096}
    assert test.metrics == job.directions
    assert test.series == ()


def test_a_tests_series_round_trip_exactly(store_location):
    output = fixture_text("randrw-70-4k-4jobs-log1s.jsonplus.json")
    (job,) = parse_fio_output(output).jobs
    series = parse_logs(fixture_logs(), 1000)
    with Store(store_location) as store:
        run_id = store.create_run(new_run())
        store.add_test(run_id, 0, "logged", {}, "[global]\n", output, "", "2026-01-01T00:00:00+00:00", job, series=series)
        store.add_test(run_id, 1, "plain", {}, "[global]\n", output, "", "2026-01-01T00:00:00+00:00", job)
        logged, plain = store.get_run(run_id).tests
    assert logged.series == series and len(series) == 6
    assert plain.series == ()


def test_a_failing_series_leaves_no_half_stored_test(store_location):
    output = fixture_text("randrw-70-4k-4jobs-log1s.jsonplus.json")
    (job,) = parse_fio_output(output).jobs
    (first, *_) = parse_logs(fixture_logs(), 1000)
    twice = (first, first)  # the same points again break the primary key
    with Store(store_location) as store:
        run_id = store.create_run(new_run())
        with pytest.raises(StoreError):
            store.add_test(run_id, 0, "logged", {}, "", output, "", "2026-01-01T00:00:00+00:00", job, series=twice)
        assert store.get_run(run_id).tests == ()


def test_schema_is_migrated_once_and_recorded(store_location):
    Store(store_location).close()
    with Store(store_location) as store:
        versions = [r[0] for r in store.conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        for table in ("runs", "tests", "metrics", "series", "run_env", "run_outcomes", "run_smart", "run_notes"):
            store.conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchall()
        store.conn.execute("SELECT iops, bw_bytes_per_s, lat_mean_ns, clat_p99_ns, clat_p99_99_ns FROM metrics")
    assert versions == list(range(1, LATEST_VERSION + 1))


def test_a_store_from_a_newer_disklab_is_refused(store_location):
    with Store(store_location) as store, store.transaction():
        store.conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 'x')",
                           (LATEST_VERSION + 1,))
    for read_only in (False, True):
        with pytest.raises(StoreError, match="newer"):
            Store(store_location, read_only=read_only)


def test_a_record_reads_its_raw_text_on_first_use_even_once_the_store_is_closed(store_location):
    """Commands render after closing the store."""
    output = fixture_text("randread-4k-q32.jsonplus.json")
    (job,) = parse_fio_output(output).jobs
    with Store(store_location) as store:
        run_id = store.create_run(new_run(planned_tests=3))
        for seq in range(2):
            store.add_test(run_id, seq, f"t{seq}", {}, f"[job{seq}]\n", output, "", "2026-01-01T00:00:00+00:00", job)
        record = store.get_run(run_id)
    assert [(t.jobfile, t.fio_output) for t in record.tests] == [("[job0]\n", output), ("[job1]\n", output)]


def test_runs_of_dead_processes_are_marked_interrupted(store_location):
    with Store(store_location) as store:
        alive = store.create_run(new_run())
        dead = store.create_run(new_run())
        store.conn.execute("UPDATE runs SET pid = 2147483646 WHERE id = ?", (dead,))
        other_host = store.create_run(new_run(hostname="elsewhere"))
        store.conn.execute("UPDATE runs SET pid = 2147483646 WHERE id = ?", (other_host,))
        store.mark_abandoned_runs("testhost")
        status = {r.id: r.status for r in store.list_runs()}
    assert status == {alive: "running", dead: "interrupted", other_host: "running"}


def test_run_references(store_location):
    with Store(store_location) as store:
        with pytest.raises(UserError, match="no runs"):
            store.resolve_run_id("last")
        first, second = store.create_run(new_run()), store.create_run(new_run())
        assert store.resolve_run_id("last") == second
        assert store.resolve_run_id("last~1") == first
        assert store.resolve_run_id(str(first)) == first
        for bad in ("99", "latest", "last~x"):
            with pytest.raises(UserError):
                store.resolve_run_id(bad)


def test_runs_are_listed_newest_first_and_filtered(store_location):
    output = fixture_text("randread-4k-q32.json.json")
    (job,) = parse_fio_output(output).jobs
    with Store(store_location) as store:
        made = [
            store.create_run(new_run(name="Größe alt", started_at="2026-01-01T00:00:00+00:00")),
            store.create_run(new_run(suite_name="disk", target="/mnt/y", started_at="2026-02-01T00:00:00+00:00")),
            store.create_run(new_run(name="GRÖSSE neu", hostname="other", started_at="2026-03-01T00:00:00+00:00")),
        ]
        store.add_test(made[1], 0, "remote", {}, "", output, "", "2026-02-01T00:00:00+00:00", job, host="server-a")

        def ids(**where) -> list[int]:
            listed = [info.id for info in store.list_runs(where=RunFilter(**where))]
            assert store.count_runs(RunFilter(**where)) == len(listed)
            return listed

        assert ids() == made[::-1] and [info.id for info in store.list_runs(2)] == made[:0:-1]
        assert ids(suite="disk") == ids(targets=("/mnt/y", "/mnt/y/")) == [made[1]]
        assert ids(host="other") == [made[2]] and ids(host="server-a") == [made[1]]
        assert ids(since="2026-02-01T00:00:00+00:00") == made[:0:-1]
        assert ids(name="grösse") == [made[2], made[0]] and ids(name="100%") == []
        assert ids(suite="quick", host="testhost", name="alt") == [made[0]]
        assert store.list_runs(2**70) == store.list_runs()


def test_a_resumed_runs_header_says_it_was_resumed(store_location):
    """A resumed run's header did not say it was resumed."""
    from disklab.report.table import run_title

    with Store(store_location) as store:
        run_id = store.create_run(new_run())
        store.finish_run(run_id, "interrupted", "Ctrl-C")
        assert "resumed" not in run_title(store.get_run(run_id).info)
        store.reopen_run(run_id)
        store.finish_run(run_id, "complete")
        info = store.get_run(run_id).info
        assert " · complete · resumed · " in run_title(info)
        assert info.options["runtime"] == 1.0 and len(info.options["resumed"]) == 1  # the run's options kept
        store.reopen_run(run_id)
        assert " · running · resumed 2 times · " in run_title(store.get_run(run_id).info)


# SQLite files only: how a file is laid out, upgraded from older schemas, damaged or locked, and read by the plan
# SQLite makes (a PostgreSQL store starts at the latest schema, and its server does the locking).


def test_the_series_primary_key_in_a_sqlite_file(tmp_path):
    path = tmp_path / "r.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"runs", "tests", "metrics", "series", "schema_migrations"} <= tables
    series = {r[1]: r[5] for r in conn.execute("PRAGMA table_info(series)")}  # column -> place in the primary key
    assert series == {"test_id": 1, "kind": 2, "direction": 3, "t_ms": 4, "value": 0}


def test_a_version_1_store_is_upgraded_with_its_runs_intact(tmp_path, monkeypatch):
    path = tmp_path / "r.db"
    run_id = old_store(path, monkeypatch, 1)
    before = stored_rows(path)
    assert before["schema_migrations"] == [(1,)]
    with Store(path) as store:
        record = store.get_run(run_id)
    after = stored_rows(path)
    assert after["schema_migrations"] == [(v,) for v in range(1, LATEST_VERSION + 1)] and after["series"] == []
    # Later migrations add columns at the end of runs and tests: the old columns are untouched; the step is (seq, 1).
    assert [row[: len(before["runs"][0])] for row in after["runs"]] == before["runs"]
    assert [row[: len(before["tests"][0])] for row in after["tests"]] == before["tests"]
    assert record.info.status == "complete" and [(t.label, t.fio_output, t.series) for t in record.tests] == [("old", "out", ())]
    assert [(t.plan_index, t.attempt) for t in record.tests] == [(0, 1)]


def old_store(path, monkeypatch, version: int, fio_output: str = "out") -> int:
    """A store as the disklab of schema `version` left it: one complete run with a test 'old', in schema 1's columns."""
    with monkeypatch.context() as old_disklab:
        old_disklab.setattr("disklab.store.db.MIGRATIONS", MIGRATIONS[:version])
        old_disklab.setattr("disklab.store.db.LATEST_VERSION", version)
        with Store(path) as store:
            run_id = store.conn.execute(
                """INSERT INTO runs (suite_name, suite_source, suite_text, target, target_kind, test_path, options_json,
                   status, started_at, disklab_version, fio_version, fio_engine, hostname, kernel, pid, planned_tests)
                   VALUES ('quick', 'built-in', '', '/mnt/x', 'directory', '/mnt/x/f', '{}', 'complete',
                   '2026-01-01T00:00:00+00:00', '0.1.0', 'fio-3.33', 'io_uring', 'testhost', '6.1', 1, 1)"""
            ).lastrowid
            store.conn.execute(
                """INSERT INTO tests (run_id, seq, label, params_json, jobfile, fio_output, fio_stderr, started_at,
                   finished_at, usr_cpu_percent, sys_cpu_percent) VALUES (?, 0, 'old', '{}', 'job', ?, '', 'a', 'b', 1, 2)""",
                (run_id, fio_output),
            )
    return run_id


def stored_rows(path) -> dict[str, list[tuple]]:
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    rows = {t: conn.execute(f"SELECT * FROM {t}").fetchall() for t in tables}
    rows["schema_migrations"] = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    conn.close()
    return rows


def test_a_corrupt_store_is_a_store_error(tmp_path):
    path = tmp_path / "r.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="corrupt"):
        Store(path)


def test_a_locked_store_is_a_store_error(tmp_path, monkeypatch):
    monkeypatch.setattr("disklab.store.db.BUSY_TIMEOUT_S", 0.1)
    path = tmp_path / "r.db"
    with Store(path) as store:
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreError, match="locked"):
            store.create_run(new_run())
        blocker.execute("ROLLBACK")


def test_migration_scripts_split_only_at_statement_ends():
    from disklab.store.db import _statements

    script = "CREATE TABLE t (x TEXT DEFAULT 'a;b');\nINSERT INTO t VALUES ('c;d');\n"
    assert [s.strip() for s in _statements(script)] == [
        "CREATE TABLE t (x TEXT DEFAULT 'a;b');", "INSERT INTO t VALUES ('c;d');"]


def test_a_version_3_store_gains_run_names_and_test_hosts_with_its_data_intact(tmp_path, monkeypatch):
    path = tmp_path / "r.db"
    output = fixture_text("randread-4k-q32.json.json")
    (job,) = parse_fio_output(output).jobs
    run_id = old_store(path, monkeypatch, 3, output)
    before = stored_rows(path)
    assert before["schema_migrations"] == [(1,), (2,), (3,)]
    with Store(path) as store:
        old = store.get_run(run_id)
        named = store.create_run(new_run(name="old array"))
        store.add_test(named, 0, "remote", {}, "", output, "", "2026-01-01T00:00:00+00:00", job, host="server-a")
        new = store.get_run(named)
    after = stored_rows(path)
    assert [row[: len(before["runs"][0])] for row in after["runs"][:1]] == before["runs"]
    assert [row[: len(before["tests"][0])] for row in after["tests"][:1]] == before["tests"]
    assert old.info.name is None and [(t.label, t.fio_output, t.host) for t in old.tests] == [("old", output, None)]
    assert new.info.name == "old array" and [(t.host, t.metrics) for t in new.tests] == [("server-a", job.directions)]


def test_a_version_4_store_keeps_its_metrics_and_series_and_takes_pgbench_transactions(tmp_path, monkeypatch):
    path = tmp_path / "r.db"
    run_id = old_store(path, monkeypatch, 4)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO metrics VALUES (1, 'read', 10, 40960, 409600, 100, 10000, 5, 4, 9, 4, 5, 6, 7, 8)")
    conn.execute("INSERT INTO series VALUES (1, 'iops', 'read', 1000, 10)")
    conn.commit()
    conn.close()
    before = stored_rows(path)
    with Store(path) as store:
        metrics = DirectionMetrics("transaction", 0, 50, 25.0, 0.0, 2000, 4e6, 4e6, 9e6, {"p50": 3e6})
        store.add_test(run_id, 1, "pgbench 1 client", {"benchmark": "pgbench", "clients": 1}, "pgbench -c 1", "out",
                       "progress", "2026-01-01T00:00:00+00:00", JobResult("pgbench 1 client", 0, 50, 20, (metrics,)),
                       series=(Series("iops", "transaction", (SeriesPoint(1000, 25.0),)),))
        record = store.get_run(run_id)
    after = stored_rows(path)
    assert after["metrics"][0] == (*before["metrics"][0], None)  # migration 13: no histogram recorded
    assert after["series"][0] == before["series"][0]
    assert record.tests[1].metrics == (metrics,) and record.tests[1].series[0].direction == "transaction"
    assert after["metrics"][1][-1] == "null" and record.tests[1].latency_bins("transaction") is None  # pgbench's


def test_the_final_schema_lists_runs_through_indexes(tmp_path):
    """Counting a run's tests reads an index, never the tests' rows (their host lies after fio's whole output)."""
    with Store(tmp_path / "r.db") as store:
        indexes = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        plan = " ".join(r[3] for r in store.conn.execute("EXPLAIN QUERY PLAN " + _RUN_LIST_QUERY))
        running = " ".join(r[3] for r in store.conn.execute(
            "EXPLAIN QUERY PLAN SELECT id, pid FROM runs WHERE status = 'running' AND hostname = 'h'"))
    assert {"tests_by_run_host", "runs_by_suite", "runs_by_target", "runs_by_start", "runs_running"} <= indexes
    assert "COVERING INDEX tests_by_run_host" in plan and "SCAN tests" not in plan
    assert "runs_running" in running


_RUN_LIST_QUERY = (
    "SELECT (SELECT COUNT(*) FROM tests WHERE tests.run_id = runs.id AND (tests.host IS NULL"
    " OR json_extract(runs.options_json, '$.hosts') IS NULL)) FROM runs ORDER BY id DESC LIMIT 20"
)


def columns_read(store: Store) -> list[tuple[str, str]]:
    """Every (table, column) SQLite is asked to read from now on."""
    read: list[tuple[str, str]] = []

    def authorize(action, table, column, *_):
        if action == sqlite3.SQLITE_READ:
            read.append((table, column))
        return sqlite3.SQLITE_OK

    store.conn.set_authorizer(authorize)
    return read


RAW_COLUMNS = {("tests", "fio_output"), ("tests", "jobfile"), ("tests", "fio_stderr"), ("runs", "suite_text")}


def test_listing_and_getting_a_run_read_no_raw_text_until_asked(tmp_path):
    output = fixture_text("randread-4k-q32.jsonplus.json")
    (job,) = parse_fio_output(output).jobs
    store = Store(tmp_path / "r.db")
    run_id = store.create_run(new_run(planned_tests=3))
    for seq in range(2):
        store.add_test(run_id, seq, f"t{seq}", {}, f"[job{seq}]\n", output, "", "2026-01-01T00:00:00+00:00", job)
    read = columns_read(store)
    (info,) = store.list_runs()
    assert store.count_runs() == 1 and (info.finished_tests, info.planned_tests) == (2, 3)
    assert not RAW_COLUMNS & set(read)
    store.get_run(run_id)
    assert not {("tests", "fio_output"), ("tests", "jobfile")} & set(read)
    store.close()
