"""One store for a whole lab (issue 31): real runs and imports into a PostgreSQL store, given as a URL with a password,
several of them at once, one of them killed; and a store that cannot be reached said in one line, without its password.

The server is the tests' private one (tests/pgserver.py); each test has a new database on it. Runs are the smallest
real fio runs: a suite of 1 s random reads on a 16 MiB file.
"""

import json
import multiprocessing
import secrets
import signal
import subprocess
import urllib.request
from pathlib import Path

import psycopg
import pytest

from disklab.database.postgres import free_port
from disklab.store.migrations import LATEST_VERSION
from disklab.store.repository import Store
from tests.conftest import FIO_FIXTURES
from tests.integration.conftest import NEEDS_FIO, Disklab, error_lines, table_rows, wait_for
from tests.pgserver import ROLE, PrivateServer
from tests.stores import NoStoreYet, query

pytestmark = [pytest.mark.integration, pytest.mark.postgresql]

TINY = """
name = "tiny"
[defaults]
runtime = "1s"
size = "16M"
[[group]]
name = "RND4K"
label = "RND4K Q{iodepth} read"
pattern = "random"
bs = "4k"
iodepth = [IODEPTHS]
"""
RUN_OPTIONS = ("--ramp", "0", "--repeat", "1")
IMPORTED = ("import-two-jobs.jsonplus.json", "randread-4k-q32.json.json", "seqwrite-1m-q8.jsonplus.json",
            "randrw-70-4k-4jobs.json.json")
WRITERS = 4  # import processes at once, beside two real runs
DEADLINE_S = 300  # bounds a hang on a busy machine; it measures nothing
STORE_ERROR_EXIT = 5


@pytest.fixture
def url(postgres_server: PrivateServer, request) -> str:
    return new_url(postgres_server, request)


def new_url(server: PrivateServer, request) -> str:
    """A new database on the private server, dropped after the test."""
    name = server.create_database()
    request.addfinalizer(lambda: server.drop_database(name))
    return server.url(name)


def tiny_suite(folder: Path, depths: int = 2) -> str:
    path = folder / f"tiny-{depths}.toml"
    path.write_text(TINY.replace("IODEPTHS", ", ".join(str(2**n) for n in range(depths))))
    return str(path)


def target(folder: Path, name: str = "target") -> str:
    path = folder / name
    path.mkdir()
    return str(path)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stderr
    return result


def stored(url: str) -> list[tuple]:
    """(number, status, where it came from, tests stored) of each run, read from the database itself."""
    try:
        rows = query(url, "SELECT id, status, options_json, (SELECT COUNT(*) FROM tests WHERE run_id = runs.id) "
                          "FROM runs ORDER BY id")
    except NoStoreYet:
        return []
    return [(id_, status, json.loads(options).get("imported_from"), tests) for id_, status, options, tests in rows]


@NEEDS_FIO
def test_runs_stored_in_postgresql_are_listed_shown_compared_reported_and_served(disklab: Disklab, url, tmp_path,
                                                                                 postgres_server):
    suite, where = tiny_suite(tmp_path), target(tmp_path)
    for name in ("first", "second"):
        ran = ok(disklab("--store", url, "run", suite, "--target", where, "--name", name, *RUN_OPTIONS))
        assert "RND4K Q1 read" in ran.stdout and postgres_server.password not in ran.stdout + ran.stderr
    assert [row[:2] + row[3:] for row in stored(url)] == [(1, "complete", 2), (2, "complete", 2)]
    listed = ok(disklab("--store", url, "runs"))
    assert [(row[0], row[1]) for row in table_rows(listed.stdout)] == [("2", "second"), ("1", "first")]
    shown = json.loads(ok(disklab("--store", url, "show", "last", "-f", "json")).stdout)
    assert shown["run"]["name"] == "second" and [t["label"] for t in shown["tests"]] == ["RND4K Q1 read",
                                                                                         "RND4K Q2 read"]
    assert all(t["metrics"]["read"]["iops"] > 0 for t in shown["tests"])
    compared = json.loads(ok(disklab("--store", url, "compare", "1", "2", "-f", "json")).stdout)
    assert [r["label"].split(" ")[0] for r in compared["runs"]] == ["first", "second"]
    report = tmp_path / "report.html"
    ok(disklab("--store", url, "report", "1", "2", "-o", str(report)))
    assert 'id="run-1"' in report.read_text() and 'id="run-2"' in report.read_text()
    page = served(disklab, url, "/")
    assert "first" in page and "second" in page and postgres_server.password not in page
    kept = [query(url, f"SELECT * FROM {table}") for table in ("runs", "run_env", "run_outcomes", "tests")]
    assert kept[0] and postgres_server.password not in repr(kept)  # nothing stored names the store's credentials
    assert list(Path(where).iterdir()) == []


@NEEDS_FIO
def test_the_quick_profile_runs_into_postgresql_as_into_a_file(disklab: Disklab, url, tmp_path):
    """The README's first run, short: its 8 tests committed one by one to the database, shown the same as a file's."""
    where = target(tmp_path)
    options = ("run", "quick", "--target", where, "--runtime", "1", "--ramp", "0", "--size", "16M", "--repeat", "1")
    ok(disklab("--store", url, *options))
    ok(disklab("--db", str(tmp_path / "results.db"), *options))
    assert [row[:2] + row[3:] for row in stored(url)] == [(1, "complete", 8)]
    database, file = (json.loads(ok(disklab(*store, "show", "last", "-f", "json")).stdout)
                      for store in (("--store", url), ("--db", str(tmp_path / "results.db"))))
    assert [t["label"] for t in database["tests"]] == [t["label"] for t in file["tests"]]
    assert len(database["tests"]) == 8 and all(t["metrics"] for t in database["tests"])
    assert list(Path(where).iterdir()) == []


def served(disklab: Disklab, url: str, path: str) -> str:
    """A page of `disklab serve` on the store, as a browser gets it."""
    server = disklab.start("--store", url, "serve", "--port", "0")
    line = server.stdout.readline()
    assert "http://" in line, server.stderr.read() if server.poll() is not None else line
    base = line[line.index("http://"):].split()[0].rstrip("/")
    with urllib.request.urlopen(base + path, timeout=DEADLINE_S) as response:
        return response.read().decode()


def copies(folder: Path, writer: int) -> list[Path]:
    """The writer's own copies of real fio outputs, so that each stored run names the file it came from."""
    folder = folder / f"writer-{writer}"
    folder.mkdir()
    paths = []
    for name in IMPORTED:
        path = folder / name
        path.write_bytes((FIO_FIXTURES / name).read_bytes())
        paths.append(path)
    return paths


@NEEDS_FIO
def test_writers_at_once_store_every_run_once_under_numbers_of_their_own(disklab: Disklab, url, tmp_path):
    ok(disklab("--store", url, "runs"))  # the schema made first: this test is about runs, the next about schemas
    suite = tiny_suite(tmp_path)
    files = [copies(tmp_path, writer) for writer in range(WRITERS)]
    runs = [disklab.start("--store", url, "run", suite, "--target", target(tmp_path, f"t{n}"), *RUN_OPTIONS)
            for n in range(2)]
    imports = [disklab.start("--store", url, "import", *map(str, paths)) for paths in files]
    for process in (*imports, *runs):
        _, stderr = process.communicate(timeout=DEADLINE_S)
        assert process.returncode == 0, stderr
    rows = stored(url)
    numbers = [row[0] for row in rows]
    assert len(set(numbers)) == len(numbers) == WRITERS * len(IMPORTED) + 2, "every run stored once"
    assert numbers == list(range(1, len(numbers) + 1)), "numbered 1, 2, 3 ... with no gap"
    imported = sorted(str(path.resolve()) for paths in files for path in paths)
    assert sorted(row[2] for row in rows if row[2] is not None) == imported
    assert {row[1] for row in rows} == {"complete"}
    listed = json.loads(ok(disklab("--store", url, "runs", "--all", "-f", "json")).stdout)
    assert sorted(r["id"] for r in listed["runs"]) == numbers and listed["matched"] == len(numbers)


def test_processes_opening_a_new_store_at_once_make_its_schema_once(disklab: Disklab, postgres_server, request):
    """Machines of a lab first pointed at a new database at the same moment: each opens it, one makes the schema.
    The processes are let go together (a barrier), on several new databases, for the moment to be the same."""
    for _ in range(3):
        url = new_url(postgres_server, request)
        start = multiprocessing.Barrier(WRITERS)
        opening = [multiprocessing.Process(target=open_store, args=(url, start)) for _ in range(WRITERS)]
        for process in opening:
            process.start()
        for process in opening:
            process.join(DEADLINE_S)
        assert [process.exitcode for process in opening] == [0] * WRITERS, "see the failures' tracebacks above"
        versions = [row[0] for row in query(url, "SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == list(range(1, LATEST_VERSION + 1))
        listed = ok(disklab("--store", url, "runs"))
        assert "no runs stored yet" in listed.stdout + listed.stderr


def open_store(url: str, start) -> None:
    start.wait(DEADLINE_S)
    Store(url).close()


@NEEDS_FIO
def test_a_killed_run_keeps_its_finished_tests_is_shown_interrupted_and_resumes(disklab: Disklab, url, tmp_path):
    killed = disklab.start("--store", url, "run", tiny_suite(tmp_path, depths=6), "--target", target(tmp_path),
                           *RUN_OPTIONS)
    other = disklab.start("--store", url, "import", *map(str, copies(tmp_path, 0)))
    assert wait_for(lambda: any(row[3] >= 2 for row in stored(url) if row[2] is None), seconds=DEADLINE_S,
                    interval=0.1), "the run stored no two tests"
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=DEADLINE_S)
    _, stderr = other.communicate(timeout=DEADLINE_S)
    assert other.returncode == 0, stderr
    (run,) = [row for row in stored(url) if row[2] is None]
    assert run[1] == "running" and 2 <= run[3] < 6, run
    shown = json.loads(ok(disklab("--store", url, "show", str(run[0]), "-f", "json")).stdout)
    assert shown["run"]["status"] == "interrupted" and len(shown["tests"]) == run[3]
    assert [row[1] for row in stored(url) if row[2] is not None] == ["complete"] * len(IMPORTED)
    resumed = ok(disklab("--store", url, "resume", str(run[0])))
    assert f"resuming run {run[0]}: {run[3]} tests already stored" in resumed.stderr
    shown = json.loads(ok(disklab("--store", url, "show", str(run[0]), "-f", "json")).stdout)
    assert shown["run"]["status"] == "complete" and len(shown["tests"]) == 6
    assert len(shown["run"]["options"]["resumed"]) == 1


def test_the_socket_pgpassword_and_the_environment_reach_the_same_store(disklab: Disklab, postgres_server, url):
    ok(disklab("--store", url, "import", str(FIO_FIXTURES / IMPORTED[0])))
    name = url.rsplit("/", 1)[1]
    by_socket = postgres_server.url(name, socket=True)
    without_password = by_socket.replace(f":{postgres_server.password}@", "@")
    for location, extra in ((by_socket, {}), (without_password, {"PGPASSWORD": postgres_server.password})):
        listed = json.loads(ok(disklab("--store", location, "runs", "-f", "json",
                                       env={**disklab.env, **extra})).stdout)
        assert [r["id"] for r in listed["runs"]] == [1]
    from_env = ok(disklab("runs", "-f", "json", env={**disklab.env, "DISKLAB_STORE": url}))
    assert [r["id"] for r in json.loads(from_env.stdout)["runs"]] == [1]


def unreachable(server: PrivateServer, url: str) -> dict[str, str]:
    name = url.rsplit("/", 1)[1]
    return {
        "wrong password": server.url(name, password="not" + server.password),
        "no server there": url.replace(f":{server.port}/", f":{free_port()}/"),
        "no such database": server.url("no_such_" + name),
        "no such role": url.replace(f"{ROLE}:", "nobody_here:"),
    }


@pytest.mark.parametrize("case", ["wrong password", "no server there", "no such database", "no such role"])
@pytest.mark.parametrize("command", [("runs",), ("show", "1"), ("import", str(FIO_FIXTURES / IMPORTED[0]))])
def test_a_store_that_cannot_be_reached_is_one_line_exit_5_without_its_password(
        disklab: Disklab, postgres_server, url, case, command):
    location = unreachable(postgres_server, url)[case]
    result = disklab("--store", location, *command)
    assert result.returncode == STORE_ERROR_EXIT, result.stderr
    assert len(error_lines(result.stderr)) == 1 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert postgres_server.password not in result.stdout + result.stderr


def test_a_user_error_on_a_postgresql_store_does_not_print_its_password(disklab: Disklab, postgres_server, url):
    ok(disklab("--store", url, "import", str(FIO_FIXTURES / IMPORTED[0])))
    for command in (("show", "9"), ("rename", "9", "x"), ("delete", "9", "--yes"), ("compare", "1", "9")):
        result = disklab("--store", url, *command)
        assert result.returncode == 2 and "there is no run 9" in result.stderr, result.stderr
        assert postgres_server.password not in result.stdout + result.stderr, command
    deleted = ok(disklab("--store", url, "delete", "1", "--yes"))
    assert postgres_server.password not in deleted.stdout + deleted.stderr


def test_a_postgresql_store_has_the_indexes_the_runs_list_reads(url, disklab: Disklab):
    ok(disklab("--store", url, "runs"))
    indexes = {row[0] for row in query(url, "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")}
    assert {"tests_by_run_host", "runs_by_suite", "runs_by_target", "runs_by_start", "runs_running",
            "run_env_identity", "runs_by_uid"} <= indexes


def test_a_member_allowed_to_read_lists_and_shows_and_is_refused_writing_in_one_line(disklab: Disklab, postgres_server,
                                                                                    url):
    """A lab's reader: a role of its own whose password needs quoting in a URL, granted SELECT by the store's owner."""
    ok(disklab("--store", url, "import", str(FIO_FIXTURES / IMPORTED[0])))
    reader, password = "reader_" + secrets.token_hex(4), "p@ss:w/rd %" + secrets.token_hex(4)
    postgres_server.add_role(reader, password)
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}")
    location = postgres_server.url(url.rsplit("/", 1)[1], role=reader, password=password)
    secret = (password, location.split(":")[2].split("@")[0])  # as typed, and as quoted in the URL
    listed = disklab("--store", location, "runs", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    assert [r["id"] for r in json.loads(listed.stdout)["runs"]] == [1]
    assert ok(disklab("--store", location, "show", "1")).stdout
    refused = disklab("--store", location, "rename", "1", "mine")
    assert refused.returncode == STORE_ERROR_EXIT and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert not any(text in refused.stdout + refused.stderr + listed.stderr for text in secret)
