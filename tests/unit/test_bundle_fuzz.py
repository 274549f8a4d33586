"""Fuzzing `disklab import` of bundles: random bytes (some that look like a bundle), real bundles cut short (plain
and gzip), values made wrong (another type, null, a count beyond SQLite's integers, a key deleted) and other format
versions.

The promise for every file: exit 0 with its runs stored whole, or exit 2 with one `disklab: error:` line naming the
file and the store's bytes as they were; never 70, never a traceback, never half a bundle.
"""

import gzip
import json
import math
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from disklab.cli.main import cli
from tests.conftest import FIO_FIXTURES
from tests.unit.test_import_fuzz import DELETE, changed, value_paths

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
_WRONG = st.one_of(
    st.just(DELETE),
    st.sampled_from([None, math.nan, math.inf, 2**63, 2**64, -1, 1.5, True, "", "12", "{", "running", [], {}, [1],
                     {"a": 1}, 10**400]),
    st.integers(), st.floats(), st.text(max_size=8),
)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> bytes:
    """A real bundle of two imported runs (one of tests on two fio servers), one with a note."""
    folder = tmp_path_factory.mktemp("bundle-fuzz")
    source = str(folder / "source.db")
    for name in ("import-two-jobs.jsonplus.json", "import-client-two-hosts.json"):
        assert CliRunner().invoke(cli, ["--db", source, "import", str(FIO_FIXTURES / name)]).exit_code == 0
    assert CliRunner().invoke(cli, ["--db", source, "note", "1", "a note"]).exit_code == 0
    result = CliRunner().invoke(cli, ["--db", source, "export-run", "1", "2", "-o", str(folder / "b.json")])
    assert result.exit_code == 0, result.output
    return (folder / "b.json").read_bytes()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bundle-fuzz-store") / "results.db"
    result = CliRunner().invoke(cli, ["--db", str(path), "import", str(FIO_FIXTURES / "import-two-jobs.json.json")])
    assert result.exit_code == 0, result.output
    return path


def imported(store: Path, path: Path, content: bytes) -> None:
    path.write_bytes(content)
    before = store.read_bytes()
    result = CliRunner().invoke(cli, ["--db", str(store), "import", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 0:
        with closing(sqlite3.connect(store)) as conn:
            assert conn.execute("SELECT COUNT(*) FROM runs WHERE status = 'running'").fetchone()[0] == 0
        return
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    (line,) = result.stderr.splitlines()
    assert line.startswith("disklab: error: ") and str(path) in line, line  # the fio reader's words, not a bundle
    assert store.read_bytes() == before


@FUZZ
@given(st.one_of(st.binary(max_size=300), st.binary(max_size=300).map(lambda b: b"\x1f\x8b" + b),
                 st.binary(max_size=300).map(lambda b: b'{"format": "disklab-bundle", ' + b)))
def test_random_bytes(store, tmp_path, content):
    imported(store, tmp_path / "b.json", content)


@FUZZ
@given(st.floats(min_value=0, max_value=1, exclude_max=True), st.booleans())
def test_a_bundle_cut_short(bundle, store, tmp_path, fraction, packed):
    content = gzip.compress(bundle, mtime=0) if packed else bundle
    imported(store, tmp_path / "b.json", content[: int(len(content) * fraction)])


@st.composite
def edits(draw, document: dict):
    """One to three (place, wrong value) pairs: short, so that a failure prints a readable recipe."""
    return draw(st.lists(st.tuples(st.sampled_from(value_paths(document)), _WRONG), min_size=1, max_size=3))


@FUZZ
@given(st.data())
def test_wrong_values(bundle, store, tmp_path, data):
    document = json.loads(bundle)
    imported(store, tmp_path / "b.json", json.dumps(changed(document, data.draw(edits(document)))).encode())


@FUZZ
@given(st.one_of(st.integers(), st.floats(), st.text(max_size=3), st.none()))
def test_other_format_versions(bundle, store, tmp_path, version):
    document = json.loads(bundle)
    document["format_version"] = version
    imported(store, tmp_path / "b.json", json.dumps(document).encode())
