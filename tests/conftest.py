import json
from pathlib import Path

import pytest

from tests.children import Children

FIO_FIXTURES = Path(__file__).parent / "fixtures" / "fio"


@pytest.fixture(autouse=True)
def private_store(tmp_path, monkeypatch):
    """Every test gets its own results store; nothing touches the user's."""
    monkeypatch.setenv("DISKLAB_HOME", str(tmp_path / "disklab-home"))
    monkeypatch.delenv("DISKLAB_DB", raising=False)


@pytest.fixture
def children():
    """Start processes the test will signal (`children.start(command, ...)`): Ctrl-C reaches them even when the test
    run was started with SIGINT ignored, and whatever still runs at teardown is stopped, its process group killed."""
    started = Children()
    yield started
    started.end_all()


def fixture_text(name: str) -> str:
    return (FIO_FIXTURES / name).read_text()


def fixture_json(name: str) -> dict:
    text = fixture_text(name)
    return json.loads(text[text.index("\n{") + 1 :] if not text.startswith("{") else text)
