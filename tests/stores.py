"""A test's store read directly, whichever its backend, beside disklab's own reading: what is really stored.

A SQLite file is opened read-only (polling never creates a store nor takes a write lock from the process watched),
a PostgreSQL database through psycopg in a read-only session. Queries are written with `?` placeholders.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


class NoStoreYet(Exception):
    """The store or its tables are not made yet (a process being watched is still making them)."""


def query(location: Path | str, sql: str, params: tuple = ()) -> list[tuple]:
    if isinstance(location, Path):
        if not location.exists():
            raise NoStoreYet(str(location))
        with closing(sqlite3.connect(f"file:{location}?mode=ro", uri=True, timeout=10)) as conn:
            try:
                return [tuple(row) for row in conn.execute(sql, params).fetchall()]
            except sqlite3.OperationalError as exc:
                if "no such table" in str(exc):
                    raise NoStoreYet(str(exc)) from exc
                raise
    import psycopg

    with psycopg.connect(location, autocommit=True, options="-c default_transaction_read_only=on") as conn:
        try:
            return [tuple(row) for row in conn.execute(sql.replace("?", "%s"), params).fetchall()]
        except psycopg.errors.UndefinedTable as exc:
            raise NoStoreYet(str(exc)) from exc
