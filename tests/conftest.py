import json
from pathlib import Path

import pytest

from tests.children import Children
from tests.pgserver import PrivateServer, ServerMissing

FIO_FIXTURES = Path(__file__).parent / "fixtures" / "fio"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The kernel tier's tests last: its guest runs beside every other test, and the tier's tests wait for it only
    once there is nothing else to run."""
    items.sort(key=lambda item: item.get_closest_marker("kernel") is not None)  # stable: the rest keep their order


def pytest_collection_finish(session: pytest.Session) -> None:
    """The kernel tier's guest boots as soon as a kernel-tier test is collected, and runs its checks beside the other
    tests (tests/kernel/batch.py); the tier's tests wait for it."""
    if not session.config.option.collectonly and any(item.get_closest_marker("kernel") for item in session.items):
        from tests.kernel.batch import BATCH, Background

        session.config.stash[BATCH] = background = Background()
        background.start()


@pytest.fixture(autouse=True)
def private_store(tmp_path, monkeypatch):
    """Every test gets its own results store; nothing touches the user's, nor the one a config file of the user or
    the machine names (DISKLAB_CONFIG empty: the disklab processes tests start read none either)."""
    monkeypatch.setenv("DISKLAB_HOME", str(tmp_path / "disklab-home"))
    monkeypatch.setenv("DISKLAB_CONFIG", "")
    monkeypatch.delenv("DISKLAB_DB", raising=False)
    monkeypatch.delenv("DISKLAB_STORE", raising=False)


@pytest.fixture(scope="session")
def postgres_server():
    """One private PostgreSQL server for the whole session (tests/pgserver.py), started when a test first asks for
    it and stopped at the session's end, also after failures and Ctrl-C."""
    try:
        server = PrivateServer.start()
    except ServerMissing as exc:
        pytest.skip(f"no PostgreSQL server to test the store on: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def children():
    """Start processes the test will signal (`children.start(command, ...)`): Ctrl-C reaches them even when the test
    run was started with SIGINT ignored, and whatever still runs at teardown is stopped, its process group killed."""
    started = Children()
    yield started
    started.end_all()


# The store's backends, for a fixture's params: a PostgreSQL test is marked, to be chosen or left out with -m.
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql)]


@pytest.fixture(params=BACKENDS)
def store_location(request, tmp_path):
    """Where a test's store is, on each backend: a new SQLite file, or a new database on the private server (a URL
    with the role's password), dropped after the test. For `Store(...)` and for `disklab --store`."""
    return new_store_location(request, tmp_path)


@pytest.fixture
def commands_store(store_location, monkeypatch):
    """store_location made the store commands use when given none: DISKLAB_STORE, as a lab sets it."""
    monkeypatch.setenv("DISKLAB_STORE", str(store_location))
    return store_location


def new_store_location(request, folder: Path) -> Path | str:
    """For a fixture of any scope parametrised over BACKENDS."""
    if request.param == "sqlite":
        return folder / "results.db"
    server = request.getfixturevalue("postgres_server")
    name = server.create_database()
    request.addfinalizer(lambda: server.drop_database(name))
    return server.url(name)


def fixture_text(name: str) -> str:
    return (FIO_FIXTURES / name).read_text()


def fixture_json(name: str) -> dict:
    text = fixture_text(name)
    return json.loads(text[text.index("\n{") + 1 :] if not text.startswith("{") else text)
