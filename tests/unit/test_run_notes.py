"""`disklab note`: notes kept with a run in the store (schema 8), and shown by show, report, serve and publish.

Runs are the suites' plans replayed from real captured fio output (tests/unit/test_html_report.py's store_run).
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from werkzeug.test import Client

from disklab.cli.main import cli
from disklab.store.migrations import LATEST_VERSION
from disklab.store.notes import MAX_NOTE_CHARS, add_note, clear_notes, run_notes
from disklab.store.repository import Store
from disklab.web.app import WebApp
from tests.unit.test_html_report import QUICK, store_run

NOTE = "firmware 2B2QGXA7 · drive 61 % full\nsecond line <b>not bold</b>"


@pytest.fixture
def db(store_location):
    """Two runs, in a SQLite file or a PostgreSQL database."""
    return two_runs(store_location)


def two_runs(location):
    with Store(location) as store:
        store_run(store, QUICK)
        store_run(store, QUICK)
    return location


def invoke(db, *args):
    return CliRunner().invoke(cli, ["--store", str(db), *args])


def test_notes_round_trip_through_the_store_oldest_first_and_go_with_their_run(db):
    with Store(db) as store:
        assert add_note(store, 1, "first") == 1
        assert add_note(store, 1, NOTE) == 2
        assert [n.text for n in store.get_run(1).notes] == ["first", NOTE]
        assert store.get_run(2).notes == ()
        assert add_note(store, 1, "only", replace=True) == 1
        assert [n.text for n in run_notes(store, 1)] == ["only"]
        assert clear_notes(store, 1) == 1 and store.get_run(1).notes == ()
        add_note(store, 2, "kept")
        store.delete_runs([1])
        assert [n.text for n in store.get_run(2).notes] == ["kept"]
        assert store.conn.execute("SELECT COUNT(*) FROM run_notes WHERE run_id = 1").fetchone()[0] == 0


def test_note_adds_prints_replaces_and_clears(db):
    assert invoke(db, "note", "1", NOTE).exit_code == 0
    assert invoke(db, "note", "last~1", "  second  ").exit_code == 0
    printed = invoke(db, "note", "1")
    assert printed.exit_code == 0 and "firmware 2B2QGXA7" in printed.stdout and printed.stdout.count("\n") == 3
    assert printed.stdout.splitlines()[-1].split("  ", 1)[1] == "second"  # kept without the spaces around it
    assert invoke(db, "note", "1", "--clear", "instead").exit_code == 0
    assert [line.split("  ", 1)[1] for line in invoke(db, "note", "1").stdout.splitlines()] == ["instead"]
    cleared = invoke(db, "note", "1", "--clear")
    assert cleared.exit_code == 0 and "1 note removed" in cleared.stderr
    empty = invoke(db, "note", "1")
    assert empty.exit_code == 0 and empty.stdout == "" and "has no notes" in empty.stderr
    assert invoke(db, "note", "1", "words", "unquoted,", "one", "note").exit_code == 0
    with Store(db, read_only=True) as store:
        assert [n.text for n in store.get_run(1).notes] == ["words unquoted, one note"]


@pytest.mark.parametrize("args, fragment", [
    (("9", "x"), "there is no run 9"),
    (("1", ""), "a note cannot be empty or blank"),
    (("1", "   "), "a note cannot be empty or blank"),
    (("1", "x" * (MAX_NOTE_CHARS + 1)), f"at most {MAX_NOTE_CHARS} characters"),
    (("1", "ring \x07 bell"), "cannot hold a control character"),
    (("1", "turn \u202e around"), "a bidirectional text control"),
    (("x", "text"), "'x' is not a run"),
])
def test_a_bad_note_is_one_line_exit_2_and_the_store_unchanged(db, args, fragment):
    before = db.read_bytes() if isinstance(db, Path) else None
    result = invoke(db, "note", *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("disklab: error: ") and fragment in lines[0], result.stderr
    with Store(db, read_only=True) as store:
        assert store.get_run(1).notes == () and store.count_runs() == 2
    if before is not None:
        assert db.read_bytes() == before, "a SQLite file is not even touched"


def test_notes_show_in_show_its_json_the_report_serve_and_publish(db, tmp_path):
    assert invoke(db, "note", "1", NOTE).exit_code == 0
    shown = invoke(db, "show", "1")
    assert shown.exit_code == 0 and "note (" in shown.stdout and "firmware 2B2QGXA7" in shown.stdout
    document = json.loads(invoke(db, "show", "1", "-f", "json").stdout)
    assert [n["text"] for n in document["notes"]] == [NOTE] and document["notes"][0]["added_at"]

    report = tmp_path / "r.html"
    assert invoke(db, "report", "1", "2", "-o", str(report)).exit_code == 0
    html = report.read_text()
    escaped = "second line &lt;b&gt;not bold&lt;/b&gt;"  # a note is text: its markup is shown, not obeyed
    assert html.count('class="user-note"') == 1 and escaped in html and "<b>not bold" not in html
    where = html.index('class="user-note"')
    assert html.index('id="run-1"') < where < html.index('id="run-2"')

    page = Client(WebApp(db)).get("/runs/1").get_data(as_text=True)
    assert 'class="user-note"' in page and escaped in page
    assert 'class="user-note"' not in Client(WebApp(db)).get("/runs/2").get_data(as_text=True)

    site = tmp_path / "site"
    assert invoke(db, "publish", "-o", str(site)).exit_code == 0
    with_note = [p for p in site.rglob("*.html") if 'class="user-note"' in p.read_text()]
    assert with_note and all(escaped in p.read_text() for p in with_note)
    assert any("run-1" in p.read_text() and len(p.relative_to(site).parts) > 1 for p in with_note)


def test_a_sqlite_store_of_schema_7_gains_run_notes_with_its_runs_intact(tmp_path):
    db = two_runs(tmp_path / "results.db")
    with Store(db) as store:
        store.conn.execute("DROP TABLE run_notes")
        store.conn.execute("DROP INDEX run_env_identity")  # migration 9's
        store.conn.execute("DROP INDEX runs_by_uid")  # migration 10's, and its columns
        for index in ("runs_by_device", "runs_search"):  # migration 11's, its triggers and its column
            store.conn.execute(f"DROP INDEX {index}")
        for trigger in ("added", "changed", "removed"):
            store.conn.execute(f"DROP TRIGGER run_env_identity_{trigger}")
        for trigger in ("added", "changed"):  # migration 12's, and its table
            store.conn.execute(f"DROP TRIGGER runs_group_{trigger}")
        store.conn.execute("DROP TABLE run_groups")
        for column in ("uid", "user_name", "origin_json", "device_env"):
            store.conn.execute(f"ALTER TABLE runs DROP COLUMN {column}")
        store.conn.execute("ALTER TABLE metrics DROP COLUMN clat_bins_json")  # migration 13's
        store.conn.execute("DELETE FROM schema_migrations WHERE version >= 8")
    with Store(db) as store:  # opened again: migrated from 8 on
        assert store.conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == LATEST_VERSION
        assert len(store.get_run(1).tests) == 8 and store.get_run(1).notes == ()
        add_note(store, 1, "after the upgrade")
        assert [n.text for n in store.get_run(1).notes] == ["after the upgrade"]
