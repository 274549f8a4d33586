"""Deleting runs: every row a run owns, in each table of migrations.py, goes with it."""

import sqlite3
from collections.abc import Sequence

from disklab.errors import UserError
from disklab.store.db import now_iso

# Rows that belong to a run's tests, then to the run itself; tests' raw text (job files, fio output) is in tests.
_TEST_TABLES = ("series", "metrics", "test_flags")
_RUN_TABLES = ("tests", "run_env", "run_smart", "run_outcomes", "run_notes")


def delete_runs(conn: sqlite3.Connection, run_ids: Sequence[int]) -> None:
    """Called inside one transaction; a run still marked running (its disklab alive, or on another host) is refused.

    The tables also cascade from runs; deleting each one by name keeps a run's rows from outliving it even on a
    connection without foreign keys.
    """
    for run_id in run_ids:
        row = conn.execute("SELECT status, hostname FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise UserError(f"there is no run {run_id}")
        if row["status"] == "running":
            raise still_running(run_id, row["hostname"])
    for run_id in run_ids:
        for table in _TEST_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE test_id IN (SELECT id FROM tests WHERE run_id = ?)", (run_id,))
        for table in _RUN_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        conn.execute("DELETE FROM runs WHERE id = ?", (run_id,))
        conn.execute("INSERT INTO deleted_runs (id, deleted_at) VALUES (?, ?)", (run_id, now_iso()))


def still_running(run_id: int, hostname: str) -> UserError:
    """Its disklab is alive (one killed on this host is marked interrupted when the store opens), or on another host."""
    return UserError(f"run {run_id} is still running on {hostname}: stop it first (Ctrl-C), then delete it; "
                     "nothing was deleted")
