"""One import file is one transaction (issue 24): a file the store refuses midway, or one in flight when disklab is
interrupted (Ctrl-C, SIGTERM, SIGHUP) or killed (SIGKILL), leaves nothing; the files before it stay imported, whole;
and an import an older disklab left running when it was killed is marked interrupted by the next command."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.imports.fio_output import read_fio_json
from disklab.store.repository import NewRun, Store
from tests.conftest import FIO_FIXTURES
from tests.stores import NoStoreYet, query

FIXTURE = FIO_FIXTURES / "import-two-jobs.jsonplus.json"  # two jobs: two tests per run
OTHER = FIO_FIXTURES / "import-client-one-host.json"
# Enough files that a signal sent once the first run is stored lands before the last (each takes milliseconds).
MANY_FILES = 200
# Deadlines bound a hang; none is a performance expectation.
FIRST_RUN_DEADLINE_S = 120
EXIT_DEADLINE_S = 60


def copies(folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    paths = [folder / f"fio-{i:03}.json" for i in range(count)]
    for path in paths:
        path.write_bytes(FIXTURE.read_bytes())
    return paths


def stored_runs(db: Path | str) -> list[dict]:
    """Each run with its status, the file it came from and how many of its tests are stored."""
    try:
        rows = query(db, "SELECT runs.id, status, options_json, planned_tests, "
                         "(SELECT COUNT(*) FROM tests WHERE run_id = runs.id) FROM runs ORDER BY id")
    except NoStoreYet:
        return []
    return [{"id": id_, "status": status, "source": json.loads(options).get("imported_from"), "planned": planned,
             "tests": tests} for id_, status, options, planned, tests in rows]


def assert_whole(runs: list[dict], files: list[Path]) -> None:
    """The runs are the first files' in order, each complete with every test."""
    assert [r["source"] for r in runs] == [str(f.resolve()) for f in files[:len(runs)]]
    assert all(r["status"] == "complete" and r["tests"] == r["planned"] == 2 for r in runs), runs


def invoke(db: Path | str, *args: str):
    return CliRunner().invoke(cli, ["--store", str(db), *args])


def test_a_file_a_sqlite_store_refuses_midway_leaves_nothing_and_the_one_before_stays(tmp_path):
    db = tmp_path / "r.db"
    with Store(db) as store:  # the second file's second test is refused, as a full disk would
        store.conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON tests WHEN NEW.label LIKE '% @ %' AND NEW.seq = 1 "
                           "BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    result = invoke(db, "import", str(FIXTURE), str(OTHER))
    assert result.exit_code == 5 and "disk full" in result.stderr.splitlines()[-1]
    assert_whole(stored_runs(db), [FIXTURE])


def interrupted_storing(monkeypatch, file_index: int) -> None:
    """Ctrl-C while the file `file_index` stores its second test."""
    add_test, files_begun = Store.add_test, []

    def add_test_then_ctrl_c(self, run_id, seq, *args, **kwargs):
        if seq == 0:
            files_begun.append(run_id)
        if seq == 1 and len(files_begun) == file_index + 1:
            raise KeyboardInterrupt
        return add_test(self, run_id, seq, *args, **kwargs)

    monkeypatch.setattr(Store, "add_test", add_test_then_ctrl_c)


def test_ctrl_c_undoes_the_file_in_flight_and_says_which_files_were_imported(tmp_path, monkeypatch, store_location):
    files, db = copies(tmp_path / "files", 4), store_location
    interrupted_storing(monkeypatch, 2)
    result = invoke(db, "import", *map(str, files))
    assert result.exit_code == 130
    assert result.stderr.splitlines()[-1] == (
        f"disklab: interrupted: 2 of 4 files imported ({files[0]}, {files[1]}); not imported: {files[2]} and the 1 "
        "file after it")
    runs = stored_runs(db)
    assert len(runs) == 2
    assert_whole(runs, files)


def test_ctrl_c_while_the_files_are_read_imports_none(tmp_path, monkeypatch, store_location):
    files, db = copies(tmp_path / "files", 3), store_location
    read, seen = read_fio_json, []

    def read_then_ctrl_c(path):
        seen.append(path)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return read(path)

    monkeypatch.setattr("disklab.cli.importer.read_fio_json", read_then_ctrl_c)
    result = invoke(db, "import", *map(str, files))
    assert result.exit_code == 130
    assert result.stderr.splitlines()[-1] == (
        f"disklab: interrupted: no file imported; not imported: {files[0]} and the 2 files after it")
    assert stored_runs(db) == []


def old_import_left_running(store: Store, pid: int) -> int:
    """What a disklab before imports were one transaction left when killed midway: a run still running, of host
    'unknown' (fio's output names no host), with the tests it had stored."""
    imported = read_fio_json(FIXTURE)
    run_id = store.create_run(NewRun(
        suite_name="import", suite_source=str(FIXTURE), suite_text="", target="unknown", target_kind="directory",
        test_path="unknown", options={"imported_from": str(FIXTURE), "client_server": False}, disklab_version="0.9",
        fio_version="fio-3.33", fio_engine="psync", hostname="unknown", kernel="unknown", planned_tests=2,
    ))
    test = imported.tests[0]
    store.add_test(run_id, 0, test.label, test.params, test.jobfile, test.fio_output, "", imported.started_at,
                   test.job)
    store.conn.execute("UPDATE runs SET pid = ? WHERE id = ?", (pid, run_id))
    return run_id


def test_an_import_an_older_disklab_left_running_is_marked_interrupted_by_the_next_command(store_location):
    db = store_location
    with Store(db) as store:
        dead = old_import_left_running(store, 2147483646)  # no process has this number
        alive = old_import_left_running(store, os.getpid())  # still importing: left as it is
    assert invoke(db, "runs").exit_code == 0
    with Store(db, read_only=True) as store:
        status = {r.id: (r.status, r.error) for r in store.list_runs()}
    assert status == {dead: ("interrupted", "the disklab process ended without finishing the run"),
                      alive: ("running", None)}


def start_import(children, db: Path | str, files: list[Path]) -> subprocess.Popen:
    """`disklab import` of many files, once it has stored the first (the rest are on their way)."""
    process = children.start([sys.executable, "-m", "disklab", "--store", str(db), "import", *map(str, files)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + FIRST_RUN_DEADLINE_S
    while not stored_runs(db):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no run stored"
        time.sleep(0.005)
    return process


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_a_termination_signal_undoes_the_file_in_flight_and_exits_130(tmp_path, children, stop, store_location):
    if signal.getsignal(stop) is signal.SIG_IGN:
        pytest.skip(f"{stop.name} is ignored in this test run (nohup), so disklab keeps it ignored, as asked")
    files, db = copies(tmp_path / "files", MANY_FILES), store_location
    process = start_import(children, db, files)
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=EXIT_DEADLINE_S)
    assert process.returncode == 130, stderr
    runs = stored_runs(db)
    assert 0 < len(runs) < MANY_FILES
    assert_whole(runs, files)
    left = MANY_FILES - len(runs) - 1
    line = stderr.splitlines()[-1]
    assert line.startswith(f"disklab: interrupted: {len(runs)} of {MANY_FILES} files imported ("), stderr
    assert line.endswith(f"; not imported: {files[len(runs)]} and the {left} file{'s' if left != 1 else ''} after it")


def test_a_killed_import_leaves_no_run_running(tmp_path, children, store_location):
    files, db = copies(tmp_path / "files", MANY_FILES), store_location
    process = start_import(children, db, files)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=EXIT_DEADLINE_S)
    listed = invoke(db, "runs", "--format", "json")
    assert listed.exit_code == 0
    assert {run["status"] for run in json.loads(listed.stdout)["runs"]} == {"complete"}
    runs = stored_runs(db)
    assert 0 < len(runs) < MANY_FILES
    assert_whole(runs, files)
