"""Runs moved between stores (`export-run`, `import` of a bundle, `store copy`): every row kept, each store's own
numbers given again, a run already there skipped, and a bad bundle refused whole in one line.

The runs are real fio output imported (tests/fixtures/fio); the integration tests (tests/integration/test_bundles.py)
move runs made by real `disklab run`s.
"""

import gzip
import json
import signal
import sqlite3
import subprocess
import sys
import uuid
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.store.bundle import RUN_TABLES, TEST_TABLES, run_entry
from disklab.store.bundle_file import BUNDLE_VERSION
from disklab.store.migrations import MIGRATIONS
from disklab.store.repository import Store
from tests.conftest import FIO_FIXTURES
from tests.stores import query
from tests.unit.test_import_figures import store_dump

FIXTURES = ("import-two-jobs.jsonplus.json", "import-client-two-hosts.json")


def disklab(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, list(args))
    if ok:
        assert result.exit_code == 0, (result.output, result.exception)
    return result


def imported_store(path: Path | str) -> Path | str:
    for name in FIXTURES:
        disklab("--store", str(path), "import", str(FIO_FIXTURES / name))
    disklab("--store", str(path), "note", "1", "kept with the run")
    disklab("--store", str(path), "rename", "1", "old array")
    return path


def rows(path: Path | str, number: int) -> dict:
    """Every row of the run, without the numbers that are each store's own and the origin a move sets."""
    with Store(path, read_only=True) as store:
        entry = run_entry(store, number)
    entry.pop("number")
    entry["run"].pop("origin_json")
    return entry


def numbers(path: Path | str) -> list[int]:
    return [row[0] for row in query(path, "SELECT id FROM runs ORDER BY id")]


def test_every_table_of_the_schema_travels_with_a_run(tmp_path):
    """A migration that adds a table of a run's rows must add it to the bundle too (run_groups is the store's own
    list of the groups its runs make, which the store a run moves to makes again)."""
    with Store(tmp_path / "r.db") as store:
        tables = {row[0] for row in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"runs", "tests", *TEST_TABLES, *RUN_TABLES, "deleted_runs", "schema_migrations",
                      "run_groups"}, MIGRATIONS[-1]


@pytest.mark.parametrize("name", ["bundle.json", "bundle.json.gz"])
def test_export_and_import_keep_every_row_and_give_new_numbers(tmp_path, name, store_location):
    """Into a SQLite file or a lab's PostgreSQL database alike."""
    source = imported_store(tmp_path / "a.db")
    target = store_location
    disklab("--store", str(target), "import", str(FIO_FIXTURES / FIXTURES[1]))  # run 1 there: the numbers differ
    bundle = tmp_path / name
    result = disklab("--db", str(source), "export-run", "1", "last", "-o", str(bundle))
    assert result.stderr == f"exported 2 runs (1, 2) to {bundle}\n"
    assert (bundle.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
    result = disklab("--store", str(target), "import", str(bundle))
    assert result.stderr.splitlines() == [f"{bundle}: stored as run 2 (was run 1 on {_host()})",
                                          f"{bundle}: stored as run 3 (was run 2 on {_host()})"]
    assert rows(source, 1) == rows(target, 2) and rows(source, 2) == rows(target, 3)
    origin = json.loads(disklab("--store", str(target), "show", "2", "-f", "json").stdout)["run"]["origin"]
    assert origin["number"] == 1 and origin["store"] == str(source.resolve()) and origin["host"] == _host()
    assert set(origin) == {"host", "store", "number", "exported_at", "imported_at"}
    again = disklab("--store", str(target), "import", str(bundle))
    assert again.stderr.splitlines()[0] == f"{bundle}: already here as run 2 (was run 1 on {_host()}): skipped"
    assert numbers(target) == [1, 2, 3]


@pytest.mark.postgresql
def test_a_run_exported_from_postgresql_names_its_store_without_the_password(tmp_path, postgres_server, request):
    name = postgres_server.create_database()
    request.addfinalizer(lambda: postgres_server.drop_database(name))
    source, target, bundle = postgres_server.url(name), tmp_path / "b.db", tmp_path / "b.json"
    imported_store(source)
    disklab("--store", source, "export-run", "1", "2", "-o", str(bundle))
    assert postgres_server.password not in bundle.read_text()
    disklab("--store", str(target), "import", str(bundle))
    assert rows(source, 1) == rows(target, 1) and rows(source, 2) == rows(target, 2)
    origin = json.loads(disklab("--store", str(target), "show", "1", "-f", "json").stdout)["run"]["origin"]
    assert origin["number"] == 1 and origin["store"] == f"postgresql://lab@127.0.0.1:{postgres_server.port}/{name}"


def test_a_run_imported_twice_over_keeps_the_store_it_was_first_exported_from(tmp_path):
    first, second, third = imported_store(tmp_path / "a.db"), tmp_path / "b.db", tmp_path / "c.db"
    disklab("store", "copy", str(first), str(second))
    disklab("--db", str(second), "export-run", "2", "-o", str(tmp_path / "b.json"))
    disklab("--db", str(third), "import", str(tmp_path / "b.json"))
    origin = json.loads(disklab("--db", str(third), "show", "1", "-f", "json").stdout)["run"]["origin"]
    assert origin["store"] == str(second.resolve()) and origin["number"] == 2
    assert origin["first"] == {"host": _host(), "store": str(first.resolve()), "number": 2}


def test_a_series_names_its_first_run_by_its_number_in_the_new_store(tmp_path):
    """options 'series' is a run number of its store: moved, it names the same first run under its new number."""
    source, target = imported_store(tmp_path / "a.db"), tmp_path / "b.db"
    with closing(sqlite3.connect(source)) as conn, conn:  # made as `run --condition` makes a series of two runs
        conn.execute("UPDATE runs SET options_json = json_set(options_json, '$.configuration', json('{}'))")
        conn.execute("UPDATE runs SET options_json = json_set(options_json, '$.series', 1) WHERE id = 2")
    disklab("--db", str(target), "import", str(FIO_FIXTURES / FIXTURES[0]))
    disklab("--db", str(source), "export-run", "series:2", "-o", str(tmp_path / "s.json"))
    disklab("--db", str(target), "import", str(tmp_path / "s.json"))
    assert json.loads(disklab("--db", str(target), "show", "3", "-f", "json").stdout)["run"]["options"]["series"] == 2
    compared = disklab("--db", str(target), "compare", "series:3", ok=False)
    assert "run 2" in compared.output and "run 3" in compared.output, compared.output


def test_a_running_run_is_refused_in_one_line(tmp_path):
    source = imported_store(tmp_path / "a.db")
    with closing(sqlite3.connect(source)) as conn, conn:
        conn.execute("UPDATE runs SET status = 'running', pid = 1, hostname = 'elsewhere' WHERE id = 2")
    result = disklab("--db", str(source), "export-run", "1", "2", "-o", str(tmp_path / "x.json"), ok=False)
    assert result.exit_code == 2 and not (tmp_path / "x.json").exists()
    assert result.stderr.splitlines() == ["disklab: error: run 2 is still running on elsewhere: export it when it has "
                                          "finished (or stop it with Ctrl-C); nothing was written"]
    copied = disklab("store", "copy", str(source), str(tmp_path / "b.db"))
    assert copied.stdout == "copied 1 run, skipped 0 already there, left 1 run still running\n"


def test_a_newer_bundle_is_refused_and_leaves_the_store_as_it_was(tmp_path):
    source = imported_store(tmp_path / "a.db")
    disklab("--db", str(source), "export-run", "1", "-o", str(tmp_path / "b.json"))
    document = json.loads((tmp_path / "b.json").read_text())
    document["format_version"] = BUNDLE_VERSION + 1
    (tmp_path / "b.json").write_text(json.dumps(document))
    target = tmp_path / "t.db"
    disklab("--db", str(target), "import", str(FIO_FIXTURES / FIXTURES[0]))
    before = target.read_bytes()
    result = disklab("--db", str(target), "import", str(tmp_path / "b.json"), ok=False)
    assert result.exit_code == 2 and target.read_bytes() == before
    assert result.stderr == (f"disklab: error: {tmp_path / 'b.json'}: a bundle of format version {BUNDLE_VERSION + 1} "
                             f"(disklab {document['disklab_version']}); this disklab reads versions up to "
                             f"{BUNDLE_VERSION}: upgrade disklab; nothing was imported\n")


def test_bundles_and_fio_output_are_imported_apart(tmp_path):
    source = imported_store(tmp_path / "a.db")
    disklab("--db", str(source), "export-run", "1", "-o", str(tmp_path / "b.json"))
    fio = str(FIO_FIXTURES / FIXTURES[0])
    mixed = disklab("--db", str(tmp_path / "t.db"), "import", str(tmp_path / "b.json"), fio, ok=False)
    assert mixed.exit_code == 2 and "import bundles and fio output with separate commands" in mixed.stderr
    named = disklab("--db", str(tmp_path / "t.db"), "import", str(tmp_path / "b.json"), "--name", "x", ok=False)
    assert named.exit_code == 2 and "keep their own names" in named.stderr


def many_runs_bundle(source: Path, count: int, path: Path) -> None:
    """`count` copies of a real run, each its own uid, in one bundle (how the big stores below are made fast)."""
    disklab("--db", str(source), "export-run", "1", "-o", str(path))
    document = json.loads(path.read_text())
    (entry,) = document["runs"]
    document["runs"] = [{**entry, "number": n, "run": {**entry["run"], "uid": uuid.uuid4().hex}}
                        for n in range(1, count + 1)]
    path.write_text(json.dumps(document))


def test_store_copy_of_a_thousand_runs_and_back_keeps_every_run_and_adds_nothing_twice(tmp_path):
    big, other = tmp_path / "big.db", tmp_path / "other.db"
    many_runs_bundle(imported_store(tmp_path / "a.db"), 1000, tmp_path / "many.json")
    disklab("--db", str(big), "import", str(tmp_path / "many.json"))
    disklab("--db", str(other), "import", str(FIO_FIXTURES / FIXTURES[1]))  # one run of its own first
    assert disklab("store", "copy", str(big), str(other)).stdout == "copied 1000 runs, skipped 0 already there\n"
    assert disklab("store", "copy", str(big), str(other)).stdout == "copied 0 runs, skipped 1000 already there\n"
    assert disklab("store", "copy", str(other), str(big)).stdout == "copied 1 run, skipped 1000 already there\n"
    assert numbers(other) == list(range(1, 1002)) and numbers(big) == list(range(1, 1002))
    for number in range(1, 1001):
        assert rows(big, number) == rows(other, number + 1)
    assert rows(other, 1) == rows(big, 1001)


def test_store_copy_refuses_a_source_that_is_not_there(tmp_path):
    result = disklab("store", "copy", str(tmp_path / "none.db"), str(tmp_path / "b.db"), ok=False)
    assert result.exit_code == 2 and not (tmp_path / "b.db").exists()
    assert result.stderr == f"disklab: error: there is no results store at {tmp_path / 'none.db'}\n"


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT])
def test_a_stopped_import_leaves_only_whole_runs_and_the_rest_is_imported_again(tmp_path, children, stop):
    bundle, target = tmp_path / "many.json", tmp_path / "t.db"
    many_runs_bundle(imported_store(tmp_path / "a.db"), 300, bundle)
    disklab("--db", str(target), "import", str(FIO_FIXTURES / FIXTURES[1]))  # the store exists, its schema made
    process = children.start([sys.executable, "-m", "disklab", "--db", str(target), "import", str(bundle)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stored = []
    while process.poll() is None and len(stored) < 3:
        stored = _runs(target)
    process.send_signal(stop)
    stderr = process.communicate()[1]
    if stop == signal.SIGINT and process.returncode != 0:  # stopped before it had stored every run (it may not be)
        assert process.returncode == 130 and stderr.splitlines()[-1].startswith("disklab: interrupted: "), stderr
        assert "the run in flight left nothing: import again" in stderr
    entries = {e["run"]["uid"]: e for e in json.loads(bundle.read_text())["runs"]}
    kept = _runs(target)[1:]
    for number, uid in kept:  # every run there is whole: all its rows, none of another
        expected = {**entries[uid], "run": {k: v for k, v in entries[uid]["run"].items() if k != "origin_json"}}
        expected.pop("number")
        assert rows(target, number) == expected
    result = disklab("--db", str(target), "import", str(bundle))
    assert result.stderr.count("skipped") == len(kept) and len(_runs(target)) == 301


def _runs(path: Path) -> list[tuple[int, str]]:
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            return conn.execute("SELECT id, uid FROM runs ORDER BY id").fetchall()
    except sqlite3.OperationalError:  # locked for a moment by the import's commit
        return []


def _host() -> str:
    from disklab.system.host import host_identity

    return host_identity().hostname


def test_gzip_and_plain_bundles_read_alike(tmp_path):
    source = imported_store(tmp_path / "a.db")
    before = store_dump(source)
    disklab("--db", str(source), "export-run", "1", "2", "-o", str(tmp_path / "b.json.gz"))
    disklab("--db", str(source), "export-run", "1", "2", "-o", str(tmp_path / "b.json"))
    plain, packed = json.loads((tmp_path / "b.json").read_text()), json.loads(gzip.decompress(
        (tmp_path / "b.json.gz").read_bytes()))
    assert plain["runs"] == packed["runs"]
    assert store_dump(source) == before


def test_a_bundle_written_to_stdout_is_the_plain_bundle_and_imports_alike(tmp_path):
    """`-o -` (to pipe into gzip or ssh): the bytes on stdout are the plain bundle, no warning on stderr."""
    source = imported_store(tmp_path / "a.db")
    piped = subprocess.run([sys.executable, "-W", "error", "-m", "disklab", "--db", str(source), "export-run", "1",
                            "2", "-o", "-"], capture_output=True, check=False, timeout=120)
    assert piped.returncode == 0 and b"Warning" not in piped.stderr, piped.stderr
    disklab("--db", str(source), "export-run", "1", "2", "-o", str(tmp_path / "b.json"))
    assert json.loads(piped.stdout)["runs"] == json.loads((tmp_path / "b.json").read_text())["runs"]
    (tmp_path / "piped.json").write_bytes(piped.stdout)
    disklab("--db", str(tmp_path / "c.db"), "import", str(tmp_path / "piped.json"))
    assert [rows(tmp_path / "c.db", n) for n in (1, 2)] == [rows(source, n) for n in (1, 2)]
