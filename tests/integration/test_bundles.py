"""Runs made by real `disklab run`s (fio on small files: time series, repeats, a precision schedule's outcome, flags
of a file system in RAM, the environment, a note, a name), one imported with tests on two fio servers and SMART data
smartctl reported, moved to another store by export-run + import and by store copy: `show -f json` (and --per-host,
--env) says the same before and after, but for the run's number and its new origin."""

import json
import os
from pathlib import Path

import pytest

from disklab.store.repository import Store
from tests.conftest import FIO_FIXTURES
from tests.integration.conftest import NEEDS_FIO
from tests.integration.test_run_quick import disklab
from tests.integration.test_series import SUITE  # a test with log_interval: its time series travel too

pytestmark = [pytest.mark.integration, NEEDS_FIO]

SMART = Path(__file__).parents[1] / "fixtures" / "smart" / "virtio-vda.real.json"
IN_RAM = Path("/dev/shm")  # tmpfs on Linux: its runs are flagged memory-target


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, list[int]]:
    """A store (the home's results.db) of real runs, and their numbers."""
    folder = tmp_path_factory.mktemp("bundles")
    home, target, suite = folder / "home", folder / "target", folder / "logged.toml"
    target.mkdir()
    suite.write_text(SUITE)
    quick = ("--ramp", "0", "--runtime", "2", "--size", "16M")
    disklab("run", str(suite), "--target", str(target), "--repeat", "2", "--name", "tiny · two", *quick, home=home)
    disklab("run", str(suite), "--target", str(target), "--repeat", "2", "--precision", "50%", "--max-time", "8s",
            *quick, home=home)
    if IN_RAM.is_dir() and os.access(IN_RAM, os.W_OK):
        in_ram = Path(os.path.realpath(IN_RAM)) / f"disklab-bundles-{os.getpid()}"
        in_ram.mkdir(exist_ok=True)
        try:
            disklab("run", str(suite), "--target", str(in_ram), "--repeat", "1", *quick, home=home)
        finally:
            in_ram.rmdir()
    disklab("import", str(FIO_FIXTURES / "import-client-two-hosts.json"), home=home)
    disklab("note", "1", "the first, with a note", home=home)
    store = home / "results.db"
    with Store(store) as opened:
        opened.add_smart(1, "/dev/vda", "before", json.loads(SMART.read_text()))
        numbers = [row[0] for row in opened.conn.execute("SELECT id FROM runs ORDER BY id")]
        held = {table: opened.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("series", "metrics", "run_env", "run_outcomes", "run_smart", "run_notes", "test_flags")}
        hosts = opened.conn.execute("SELECT COUNT(*) FROM tests WHERE host IS NOT NULL").fetchone()[0]
    assert hosts and all(count for table, count in held.items() if table != "test_flags"), held
    assert held["test_flags"] or not IN_RAM.is_dir(), held
    return store, numbers


def shown(store: Path | str, number: int, home: Path | None = None) -> list[dict]:
    """show -f json, --per-host and --env -f json of the run, its number and origin left out."""
    documents = []
    for extra in ((), ("--per-host",), ("--env",)):
        document = json.loads(disklab("--store", str(store), "show", str(number), "-f", "json", *extra,
                                      home=home or store.parent).stdout)
        run = document.get("run", {})
        run.pop("id", None), run.pop("origin", None)
        document.pop("run_id", None)
        documents.append(document)
    return documents


def test_export_and_import_show_the_same_runs(made, tmp_path):
    store, numbers = made
    assert len(numbers) >= 4
    other = tmp_path / "other.db"
    disklab("--db", str(other), "import", str(FIO_FIXTURES / "import-two-jobs.json.json"), home=tmp_path)
    bundle = tmp_path / "runs.json.gz"
    disklab("--db", str(store), "export-run", *map(str, numbers), "-o", str(bundle), home=tmp_path)
    lines = disklab("--db", str(other), "import", str(bundle), home=tmp_path).stderr.splitlines()
    assert [line.split(" (was ")[0] for line in lines] == [f"{bundle}: stored as run {n + 1}" for n in numbers]
    for number in numbers:
        assert shown(other, number + 1) == shown(store, number)
        origin = json.loads(disklab("--db", str(other), "show", str(number + 1), "-f", "json",
                                    home=tmp_path).stdout)["run"]["origin"]
        assert origin["number"] == number and origin["store"] == str(store.resolve())


def test_store_copy_shows_the_same_runs_and_a_second_copy_adds_nothing(made, tmp_path):
    store, numbers = made
    copy = tmp_path / "copy.db"
    disklab("--db", str(copy), "import", str(FIO_FIXTURES / "import-two-jobs.json.json"), home=tmp_path)
    first = disklab("store", "copy", str(store), str(copy), home=tmp_path).stdout
    assert first == f"copied {len(numbers)} runs, skipped 0 already there\n"
    assert disklab("store", "copy", str(store), str(copy), home=tmp_path).stdout == (
        f"copied 0 runs, skipped {len(numbers)} already there\n")
    for number in numbers:
        assert shown(copy, number + 1) == shown(store, number)


@pytest.mark.postgresql
def test_store_copy_moves_the_runs_into_postgresql_and_out_again_as_they_were(made, tmp_path, postgres_server, request):
    """A lab's machines gather their files into the lab's database, and a copy comes back out of it to a file."""
    store, numbers = made
    name = postgres_server.create_database()
    request.addfinalizer(lambda: postgres_server.drop_database(name))
    url, back = postgres_server.url(name), tmp_path / "back.db"
    into = disklab("store", "copy", str(store), url, home=tmp_path)
    assert into.stdout == f"copied {len(numbers)} runs, skipped 0 already there\n"
    assert disklab("store", "copy", str(store), url, home=tmp_path).stdout == (
        f"copied 0 runs, skipped {len(numbers)} already there\n")
    out = disklab("store", "copy", url, str(back), home=tmp_path)
    assert out.stdout == f"copied {len(numbers)} runs, skipped 0 already there\n"
    assert not any(postgres_server.password in result.stdout + result.stderr for result in (into, out))
    for number in numbers:
        assert shown(url, number, home=tmp_path) == shown(store, number) == shown(back, number)
