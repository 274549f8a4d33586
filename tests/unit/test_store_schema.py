"""One schema in two dialects: every migration of migrations.py has its PostgreSQL words, and the two stores end
with the same tables, columns, nullability, keys and indexes, read from each database's own catalogue."""

import sqlite3
from contextlib import closing

import pytest

from disklab.store.migrations import LATEST_VERSION, MIGRATIONS
from disklab.store.postgresql_migrations import POSTGRESQL
from disklab.store.repository import Store
from tests.stores import query

pytestmark = pytest.mark.postgresql

# What each dialect's declared type is stored as: SQLite's INTEGER and REAL are 64 bits, as BIGINT and DOUBLE are.
_SAME_TYPE = {"INTEGER": "bigint", "REAL": "double precision", "TEXT": "text"}


def test_every_migration_has_its_postgresql_words():
    assert sorted(POSTGRESQL) == [version for version, _, _ in MIGRATIONS] and max(POSTGRESQL) == LATEST_VERSION


@pytest.fixture(scope="module")
def both(tmp_path_factory, postgres_server):
    """A new store of each kind, migrated by disklab from nothing."""
    name = postgres_server.create_database()
    url = postgres_server.url(name)
    path = tmp_path_factory.mktemp("schema") / "results.db"
    for location in (path, url):
        Store(location).close()
    yield path, url
    postgres_server.drop_database(name)


def sqlite_columns(path) -> dict[str, dict[str, tuple[str, bool]]]:
    with closing(sqlite3.connect(path)) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {table: {row[1]: (_SAME_TYPE[row[2]], bool(row[3]) or bool(row[5]))
                        for row in conn.execute(f"PRAGMA table_info({table})")}
                for table in tables}


def postgresql_columns(url) -> dict[str, dict[str, tuple[str, bool]]]:
    columns: dict[str, dict[str, tuple[str, bool]]] = {}
    for table, column, kind, nullable in query(
            url, "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
                 "WHERE table_schema = current_schema()"):
        columns.setdefault(table, {})[column] = (kind, nullable == "NO")
    return columns


def test_the_two_stores_have_the_same_tables_and_columns(both):
    path, url = both
    sqlite, postgresql = sqlite_columns(path), postgresql_columns(url)
    assert set(sqlite) == set(postgresql)
    for table in sqlite:
        assert sqlite[table] == postgresql[table], table


def test_the_two_stores_have_the_same_indexes(both):
    path, url = both
    with closing(sqlite3.connect(path)) as conn:
        sqlite = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'")}
    postgresql = {row[0] for row in query(url, "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")
                  if not row[0].endswith(("_pkey", "_key"))}  # those of primary keys and UNIQUE: compared as keys
    # PostgreSQL's search folds only ASCII in SQL: its index of the runs it searches in Python (postgresql_migrations).
    assert sqlite == postgresql - {"runs_non_ascii"} and "runs_by_uid" in sqlite and "runs_non_ascii" in postgresql


def sqlite_keys(path) -> set[tuple[str, bool, tuple[str, ...]]]:
    """(table, primary?, columns) of every primary key and unique constraint or index."""
    keys = set()
    with closing(sqlite3.connect(path)) as conn:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            primary = sorted((row[5], row[1]) for row in conn.execute(f"PRAGMA table_info({table})") if row[5])
            keys.add((table, True, tuple(name for _, name in primary)))
            for _, index, unique, origin, _ in conn.execute(f"PRAGMA index_list({table})").fetchall():
                if unique and origin != "pk":
                    columns = conn.execute(f"PRAGMA index_info({index})").fetchall()
                    keys.add((table, False, tuple(column[2] for column in sorted(columns))))
    return keys


def postgresql_keys(url) -> set[tuple[str, bool, tuple[str, ...]]]:
    rows = query(url, """SELECT c.relname, i.indisprimary, array_agg(a.attname::text ORDER BY k.ord)
                         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
                         JOIN pg_namespace n ON n.oid = c.relnamespace
                         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                         WHERE n.nspname = current_schema() AND i.indisunique
                         GROUP BY c.relname, i.indexrelid, i.indisprimary""")
    return {(table, primary, tuple(columns)) for table, primary, columns in rows}


def test_the_two_stores_have_the_same_keys(both):
    path, url = both
    keys = sqlite_keys(path)
    assert keys == postgresql_keys(url)
    assert ("runs", False, ("uid",)) in keys and ("series", True, ("test_id", "kind", "direction", "t_ms")) in keys


def test_both_stores_record_every_migration(both):
    path, url = both
    with closing(sqlite3.connect(path)) as conn:
        sqlite = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
    assert sqlite == [tuple(row) for row in query(url, "SELECT version, name FROM schema_migrations ORDER BY version")]
    assert [version for version, _ in sqlite] == list(range(1, LATEST_VERSION + 1))
