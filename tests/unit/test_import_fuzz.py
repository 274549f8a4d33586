"""Fuzzing `disklab import` with real fio output made wrong in a few places (issue 24): a value replaced by a string,
null, a list, an object, NaN, 1e309, a count beyond SQLite's integers or a negative number, or a key deleted.

The promise for every file: exit 0 with its run stored whole, or exit 2 with one `disklab: error:` line and the store
as it was, table by table; never 70, never a traceback, never a run left running or failed by a refusal.
"""

import json
import math
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from disklab.cli.main import cli
from tests.conftest import FIO_FIXTURES, fixture_json
from tests.unit.test_import_figures import LITERALS, store_dump

# Every layout import reads differently: json+ bins, client/server entries, fio 2.x usec and KiB, fio 3.1 without
# bw_bytes, fdatasync counted by lat_ns.N, ungrouped jobs combined.
FIXTURES = ("import-two-jobs.jsonplus.json", "import-client-two-hosts.json", "layouts/layout-fio-2.20.randrw.json",
            "layouts/layout-fio-3.1.randrw.json", "layouts/sync-fdatasync.json", "layouts/numjobs4-ungrouped.json")
DELETE = object()
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def value_paths(node, path=()) -> list[tuple]:
    """Where a value sits in the document; only a few of json+'s hundreds of bins, so that they do not crowd out the
    figures."""
    paths = [path] if path else []
    if isinstance(node, dict):
        items = list(node.items())[:3] if path and path[-1] == "bins" else node.items()
    else:
        items = enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        paths += value_paths(child, (*path, key))
    return paths


PATHS = {name: value_paths(fixture_json(name)) for name in FIXTURES}
_WRONG = st.one_of(
    st.just(DELETE),
    st.sampled_from([None, math.nan, math.inf, -math.inf, *LITERALS, 10**21, 2**63, 2**63 - 1, 2**64, 10**400, -1,
                     -0.5, 1.5, True, False, "", "12", "NaN", [], [1], {}, {"mean": 1}]),
    st.integers(min_value=-10**6, max_value=-1), st.integers(min_value=2**62, max_value=2**70),
    st.floats(), st.text(max_size=8), st.lists(st.integers(), max_size=2),
)


@st.composite
def edits(draw):
    """A fixture and one to three (place, wrong value) pairs: short, so that a failure prints a readable recipe."""
    name = draw(st.sampled_from(FIXTURES))
    return name, draw(st.lists(st.tuples(st.sampled_from(PATHS[name]), _WRONG), min_size=1, max_size=3))


def edited(name: str, changes: list[tuple]) -> str:
    data = changed(fixture_json(name), changes)
    text = json.dumps(data)
    for marker, literal in LITERALS.items():
        text = text.replace(json.dumps(marker), literal)
    return text


def changed(data, changes: list[tuple]):
    """`data` with each (place, value) set, DELETE deleting the place; a place an earlier change removed is passed."""
    for path, value in changes:
        node = data
        try:
            for key in path[:-1]:
                node = node[key]
            if value is DELETE:
                del node[path[-1]]
            else:
                node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier change removed or replaced the place
    return data


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fuzz-import") / "results.db"
    result = CliRunner().invoke(cli, ["--db", str(path), "import", str(FIO_FIXTURES / FIXTURES[0])])
    assert result.exit_code == 0, result.output
    return path


def runs(store: Path) -> list[tuple]:
    with closing(sqlite3.connect(store)) as conn:
        return conn.execute("SELECT id, status, planned_tests, (SELECT COUNT(*) FROM tests WHERE run_id = runs.id) "
                            "FROM runs ORDER BY id").fetchall()


@FUZZ
@given(edits())
def test_import_of_wrong_fio_output(store, tmp_path, recipe):
    path = tmp_path / "fio.json"
    path.write_text(edited(*recipe))
    before, runs_before = store_dump(store), runs(store)
    result = CliRunner().invoke(cli, ["--db", str(store), "import", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 0:
        (new,) = runs(store)[len(runs_before):]
        assert new[1] in ("complete", "interrupted", "failed") and new[2] == new[3], new  # fio's own outcome, whole
        return
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"disklab: error: {path}: "), line
    assert store_dump(store) == before
