"""Open the store, bring its schema up to date, and turn SQLite's failures into StoreError."""

import os
import sqlite3
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from disklab.errors import StoreError
from disklab.store.migrations import LATEST_VERSION, MIGRATIONS

BUSY_TIMEOUT_S = 5.0


def default_store_path() -> Path:
    """$DISKLAB_HOME/results.db, else the XDG data folder."""
    home = os.environ.get("DISKLAB_HOME")
    if home:
        return Path(home) / "results.db"
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "disklab" / "results.db"


def connect(path: Path) -> sqlite3.Connection:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open the results store {path}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    with translate_errors(path):
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn, path)
    return conn


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    current = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
    if current > LATEST_VERSION:
        raise StoreError(
            f"the results store {path} has schema version {current}, newer than this disklab knows ({LATEST_VERSION}); upgrade disklab"
        )
    for version, name, sql in MIGRATIONS:
        if version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, now_iso()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _statements(sql: str) -> list[str]:
    """Split a script at the semicolons that end statements (not those inside literals or triggers)."""
    statements, pending = [], ""
    for piece in sql.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                statements.append(pending)
            pending = ""
    return statements


@contextmanager
def translate_errors(path: Path):
    try:
        yield
    except sqlite3.DatabaseError as exc:
        message = str(exc)
        if "locked" in message or "busy" in message:
            raise StoreError(f"the results store {path} is locked by another process; try again when it has finished") from exc
        if "not a database" in message or "malformed" in message:
            raise StoreError(f"the results store {path} is corrupt ({message}); move it aside to start a new one") from exc
        raise StoreError(f"results store {path}: {message}") from exc


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
