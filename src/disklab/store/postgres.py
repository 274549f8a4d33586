"""A results store in a PostgreSQL database, for a lab whose machines keep their runs together.

The store's SQL is written once, with SQLite's `?` placeholders; this connection speaks it to PostgreSQL through
psycopg (libpq: credentials from the URL, PGPASSWORD, ~/.pgpass or a service file, TLS from sslmode and its kin),
gives rows that read by name or position as sqlite3.Row does, and turns every failure into one StoreError line
that names the database without its password. psycopg is loaded only for such a store.
"""

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import NoReturn

from disklab.errors import StoreError
from disklab.store.migrations import LATEST_VERSION, MIGRATIONS
from disklab.store.postgresql_migrations import POSTGRESQL

URL_SCHEMES = ("postgresql://", "postgres://")
CONNECT_TIMEOUT_S = 10
# Held by whoever brings the schema up to date, so that machines connecting at once migrate it once.
_MIGRATION_LOCK = 0x6469736B6C6162  # "disklab"


def is_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(URL_SCHEMES)


def shown_url(url: str) -> str:
    """The URL as messages name it: user, host, port and database, never a password (libpq parses it)."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        parts = conninfo_to_dict(url)
    except Exception:  # no psycopg, or a URL libpq cannot parse: the scheme and host part only
        return re.sub(r"//[^@/]*@", "//", url.split("?")[0])
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host", "")
    host = "" if host.startswith("/") else host  # a socket folder is not part of a plain URL
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname', '')}"


class PostgresConnection:
    """The calls the store makes of a sqlite3 connection, made on a psycopg one in autocommit mode (the store says
    BEGIN and COMMIT itself, as it does on SQLite)."""

    def __init__(self, url: str, read_only: bool):
        self.shown = shown_url(url)
        self._url = url  # kept in memory only, to connect again after an interruption
        self._read_only = read_only
        self._conn = self._connect()
        with self.errors():
            _migrate(self)
        self._session()

    def _connect(self):
        psycopg = _psycopg(self.shown)
        try:
            conn = psycopg.connect(self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                   application_name="disklab")
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to the results store {self.shown}: {_reason(exc)}") from exc
        conn.row_factory = _rows
        self._interrupted = False
        return conn

    def _session(self) -> None:
        if self._read_only:  # a reading command never writes, whatever it asks
            with self.errors():
                self._conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")

    def execute(self, sql: str, params: Iterable = ()):
        """Without parameters the text goes as it is (a migration's script of many statements, a literal's %)."""
        params = tuple(params)
        with self.errors(), self._watched():
            return self._conn.execute(_placeholders(sql) if params else sql, params or None)

    def batches(self, sql: str, params: Iterable = (), size: int = 1000) -> Iterator[list]:
        """A query's rows, `size` at a time, through a cursor of the server's (kept there, not all sent at once);
        inside a transaction (the store's snapshot), as a server's cursor lives in one."""
        params = tuple(params)
        with self.errors(), self._watched(), self._conn.cursor(name="disklab_batches") as cursor:
            cursor.execute(_placeholders(sql) if params else sql, params or None)
            while rows := cursor.fetchmany(size):
                yield rows

    def executemany(self, sql: str, rows: Iterable) -> None:
        with self.errors(), self._watched(), self._conn.cursor() as cursor:
            cursor.executemany(_placeholders(sql), [tuple(row) for row in rows])

    @contextmanager
    def _watched(self):
        """Ctrl-C (or SIGTERM, made one) may land while libpq is still busy with a query; the connection is then
        given up and made again before its next use (the server rolls back what the old one had begun), so that
        marking the run interrupted and exiting 130 still work."""
        if self._interrupted:
            self._conn.close()
            self._conn = self._connect()
            self._session()
        try:
            yield
        except KeyboardInterrupt:
            self._interrupted = True
            raise

    @property
    def in_transaction(self) -> bool:
        """False after an interruption: the connection made again has begun nothing."""
        return not self._interrupted and self._conn.info.transaction_status != 0  # TransactionStatus.IDLE

    def close(self) -> None:
        self._conn.close()

    @contextmanager
    def errors(self):
        import psycopg

        try:
            yield
        except psycopg.Error as exc:
            raise translated(self.shown, exc) from exc


def translated(shown: str, exc: Exception) -> StoreError:
    """psycopg's failure as one line saying what is wrong with the store and what to do."""
    import psycopg
    from psycopg import errors

    reason = _reason(exc)
    if isinstance(exc, errors.ReadOnlySqlTransaction):
        return StoreError(f"the results store {shown} was opened for reading only: {reason}")
    if isinstance(exc, (errors.InsufficientPrivilege,)):
        return StoreError(f"the results store {shown} refuses this: {reason}; ask its owner to grant the user "
                          "rights on disklab's tables (README: A store for a whole lab)")
    if isinstance(exc, (errors.DiskFull, errors.OutOfMemory)):
        return StoreError(f"the database server of {shown} is out of space ({reason}); nothing more was stored")
    if isinstance(exc, errors.CharacterNotInRepertoire) or "0x00" in reason:
        return StoreError(f"results store {shown}: PostgreSQL cannot keep this text ({reason})")
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(f"lost the connection to the results store {shown}: {reason}")
    return StoreError(f"results store {shown}: {reason}")


def _reason(exc: Exception) -> str:
    """libpq's message on one line, without its hints' tabs and the 'connection failed:' prefix."""
    text = " ".join(str(exc).split()).removeprefix("connection failed: ").removeprefix("connection is bad: ")
    return text or type(exc).__name__


def _psycopg(shown: str):
    try:
        import psycopg
    except ImportError as exc:
        what = ("libpq, PostgreSQL's client library (apt install libpq5)" if "libpq" in str(exc)
                else "psycopg (pip install 'psycopg>=3.1', or scripts/setup.sh lab)")
        raise StoreError(f"the results store {shown} is a PostgreSQL database, which needs {what}") from exc
    return psycopg


@lru_cache(maxsize=512)
def _placeholders(sql: str) -> str:
    """SQLite's ? as psycopg's %s, and a % of a literal doubled; quoted text is left as it is."""
    pieces = re.split(r"('(?:[^']|'')*')", sql)
    return "".join(piece.replace("%", "%%") if index % 2 else piece.replace("%", "%%").replace("?", "%s")
                   for index, piece in enumerate(pieces))


def _rows(cursor):
    """Rows as tuples that also read by column name, as sqlite3.Row does."""
    if cursor.description is None:
        return tuple
    row_class = _row_class(tuple(column.name for column in cursor.description))
    return row_class


@lru_cache(maxsize=256)
def _row_class(names: tuple[str, ...]) -> type:
    # Names and positions alike: one dictionary lookup a column (a device's history page reads 35,000 of them).
    index = {**{name: position for position, name in enumerate(names)},
             **{position: position for position in range(-len(names), len(names))}}

    class Row(tuple):
        __slots__ = ()

        def __getitem__(self, key, _item=tuple.__getitem__, _position=index.__getitem__):
            try:
                return _item(self, _position(key))
            except (KeyError, TypeError):  # a slice, a position out of range, or a name that is no column
                if isinstance(key, str):
                    raise KeyError(key) from None
                return _item(self, key)

        def keys(self) -> list[str]:
            return list(names)

    return Row


def _migrate(conn: PostgresConnection) -> None:
    """The schema brought up to date once, by the first machine to connect: the others wait on the lock, then find
    it done. Each migration lands whole (PostgreSQL's DDL is transactional). An up-to-date schema is only read, so a
    user granted no more than reading can list and show."""
    if _version(conn) == LATEST_VERSION:
        return
    from disklab.store.db import now_iso

    conn.execute("BEGIN")
    try:
        conn.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, "
                     "applied_at TEXT NOT NULL)")
        current = _version(conn)
        for version, name, _ in MIGRATIONS:
            if version > current:
                conn.execute(POSTGRESQL[version])
                conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                             (version, name, now_iso()))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _version(conn: PostgresConnection) -> int:
    """0 for a database disklab has not used yet."""
    if conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None:
        return 0
    version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
    if version > LATEST_VERSION:
        _refuse_newer(conn.shown, version)
    return version


def _refuse_newer(shown: str, version: int) -> NoReturn:
    raise StoreError(f"the results store {shown} has schema version {version}, newer than this disklab knows "
                     f"({LATEST_VERSION}); upgrade disklab")
