"""Open the store, bring its schema up to date, and turn SQLite's failures into StoreError."""

import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import NoReturn

from disklab.errors import StoreError
from disklab.store.file_system import ELSEWHERE, store_file_system
from disklab.store.migrations import LATEST_VERSION, MIGRATIONS

BUSY_TIMEOUT_S = 5.0
MEMORY = Path(":memory:")  # SQLite's in-memory database: no file, no file system


def default_store_path() -> Path:
    """$DISKLAB_HOME/results.db, else the XDG data folder."""
    home = os.environ.get("DISKLAB_HOME")
    if home:
        return Path(home) / "results.db"
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "disklab" / "results.db"


def connect(path: Path, read_only: bool = False, say: Callable[[str], None] | None = None) -> sqlite3.Connection:
    """The store, upgraded to the latest schema. Read-only opens never write (so a store on read-only media or one
    being salvaged can be listed and shown); a writing open first checks the file is not damaged.

    A write-ahead log where the file system allows one, else a rollback journal, which `say` is told of when this
    open makes the store or moves it to one (store/file_system.py)."""
    if path.exists() and not path.is_file():
        raise StoreError(f"the results store {path} is not a regular file; give a file with --db")
    if read_only and path.exists():
        conn = _connect_read_only(path)
        if conn is not None:
            return conn
    file_system = store_file_system(path.parent) if path != MEMORY else None
    refusal = file_system.refusal(path) if file_system else None
    if refusal:
        raise StoreError(refusal)
    made = not path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(f"cannot open the results store {path}: {exc}") from exc
    conn.row_factory = sqlite3.Row
    try:
        with translate_errors(path):
            conn.execute("PRAGMA foreign_keys = ON")
            _check_integrity(conn, path)
            mode = file_system.journal_mode if file_system else "WAL"
            left_wal = _set_journal_mode(conn, path, mode)
            if mode != "WAL" and (made or left_wal) and say:
                say(file_system.notice(path))
            migrate(conn, path)
    except BaseException:
        conn.close()  # a store refused leaves no lock behind: in WAL mode an open connection keeps others from switching
        raise
    return conn


def _set_journal_mode(conn: sqlite3.Connection, path: Path, mode: str) -> bool:
    """Switch to `mode` unless the store is in it; True when it left a write-ahead log. The switch needs the store to
    itself, and SQLite does not wait for that: asked again for as long as a busy store is waited for."""
    before = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if before.upper() == mode:
        return False
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute(f"PRAGMA journal_mode = {mode}")
            return before == "wal"
        except sqlite3.OperationalError as exc:
            if _primary_code(exc) != sqlite3.SQLITE_BUSY:
                raise
            if time.monotonic() > deadline:
                if before == "wal":
                    raise StoreError(f"the results store {path} must leave its write-ahead log on this file system "
                                     "and another process keeps it open (a disklab serve, a run of an older disklab): "
                                     "stop it and try again") from exc
                raise
        time.sleep(0.1)


def _connect_read_only(path: Path) -> sqlite3.Connection | None:
    """mode=ro; on read-only media without WAL files, immutable. None when the schema must be upgraded first."""
    uri = path.resolve().as_uri()
    wal = path.with_name(path.name + "-wal")
    # immutable skips the WAL: only safe when it holds nothing, else committed runs would be missed.
    unlogged = not wal.exists() or wal.stat().st_size == 0
    for query in ("mode=ro", *(("immutable=1",) if unlogged else ())):
        conn = sqlite3.connect(f"{uri}?{query}", uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.row_factory = sqlite3.Row
        try:
            version = _schema_version(conn)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if getattr(exc, "sqlite_errorcode", 0) == sqlite3.SQLITE_READONLY_ROLLBACK:
                return None  # a rollback journal a stopped writer left: the writing open rolls it back
            if _primary_code(exc) in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR):
                continue  # WAL mode on read-only media, a full disk or a shared file system: no -shm can be mapped
            raise store_error(path, exc) from exc
        if version == LATEST_VERSION:
            return conn
        conn.close()
        if version > LATEST_VERSION:
            _refuse_newer(path, version)
        return None
    file_system = store_file_system(path.parent)
    if file_system.shared:
        raise StoreError(f"cannot open the results store {path} for reading: it has a write-ahead log ({wal.name}) "
                         f"that SQLite cannot share on {file_system.named}; let the disklab writing it finish, or "
                         "copy the store with that file to a local disk and use --store")
    raise StoreError(f"cannot open the results store {path} for reading: its folder is read-only or full and it has "
                     f"a write-ahead log ({wal.name}); copy the folder somewhere writable and use --db")


def _schema_version(conn: sqlite3.Connection) -> int:
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'schema_migrations'").fetchone():
        return 0
    return conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]


def _check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    """Before writing: SQLite's quick check, so nothing is added to a damaged file (which could spread the damage).

    The check reads the whole file (about 1 s per 200 MB), so it is skipped when the file is exactly as disklab left
    it after its last writing session (remember_checked): any change by anything else makes it run again.
    """
    if _checked_mark(path) == _file_mark(path):
        return
    try:
        problems = [" ".join(row[0].split()) for row in conn.execute("PRAGMA quick_check(3)").fetchall()]
    except sqlite3.DatabaseError as exc:
        if not _corruption(exc):
            raise  # read-only, full, locked: translate_errors says which
        problems = [str(exc)]  # damage bad enough that the check itself cannot read on
    if problems != ["ok"]:
        raise StoreError(
            f"the results store {path} is damaged ({'; '.join(problems)}); nothing was written to it. Move it aside "
            f"to start a new store (mv {path} {path}.damaged), and salvage its runs with: sqlite3 {path}.damaged "
            f".recover | sqlite3 {path}"
        )


def remember_checked(path: Path) -> None:
    """After a writing session closed cleanly: the file as it now is, checked then and changed only by disklab."""
    mark = _file_mark(path)
    if mark is None:
        return
    try:
        _checked_path(path).write_text(mark)
    except OSError:
        pass  # no mark: the next writing open checks the whole file again, as it would anyway


def _file_mark(path: Path) -> str | None:
    """Identity, size and change time of the store; None while a write-ahead log holds changes not in the file."""
    wal = path.with_name(path.name + "-wal")
    try:
        if wal.exists() and wal.stat().st_size:
            return None
        stat = path.stat()
    except OSError:
        return None
    return f"{stat.st_dev} {stat.st_ino} {stat.st_size} {stat.st_mtime_ns} {stat.st_ctime_ns}"


def _checked_mark(path: Path) -> str | None:
    try:
        return _checked_path(path).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _checked_path(path: Path) -> Path:
    return path.with_name(path.name + ".checked")


def migrate(conn: sqlite3.Connection, path: Path) -> None:
    """Each migration under the write lock, after reading the version again: of two processes opening an old store at
    once, the second finds the first one's migrations done."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for version, name, sql in MIGRATIONS:
        if version <= _current_version(conn, path):
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            if version > _current_version(conn, path):
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


def _current_version(conn: sqlite3.Connection, path: Path) -> int:
    current = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]
    if current > LATEST_VERSION:
        _refuse_newer(path, current)
    return current


def _refuse_newer(path: Path, version: int) -> NoReturn:
    raise StoreError(
        f"the results store {path} has schema version {version}, newer than this disklab knows ({LATEST_VERSION}); upgrade disklab"
    )


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
        raise store_error(path, exc) from exc


def store_error(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    """SQLite's failure as one line that says what is wrong with the store and what to do."""
    message = str(exc)
    code = _primary_code(exc)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in message or "busy" in message:
        return StoreError(f"the results store {path} is locked by another process; try again when it has finished")
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _nearly_full(path)):
        return StoreError(f"the store's file system is full: {path} cannot grow (nothing more was stored); free "
                          "space there, or use another store with --db or DISKLAB_HOME")
    if getattr(exc, "sqlite_errorcode", 0) in _SHARED_MEMORY_OR_LOCKS:
        return StoreError(f"the results store {path} is on {store_file_system(path.parent).named}, which cannot give "
                          f"SQLite the shared memory or the locks it needs ({message}: {exc.sqlite_errorname}); "
                          f"{ELSEWHERE}")
    if code == sqlite3.SQLITE_READONLY or (code == sqlite3.SQLITE_CANTOPEN and not _writable(path)):
        return StoreError(f"the results store {path} is read-only; it can be listed and shown, but to "
                          "store runs use a writable one with --db or DISKLAB_HOME")
    if _corruption(exc):
        return StoreError(f"the results store {path} is corrupt ({message}); move it aside to start a new one "
                          f"(mv {path} {path}.damaged), and salvage its runs with: sqlite3 {path}.damaged .recover "
                          f"| sqlite3 {path}")
    return StoreError(f"results store {path}: {message}")


def _primary_code(exc: sqlite3.Error) -> int:
    """SQLite's primary result code of an extended one (SQLITE_IOERR of SQLITE_IOERR_SHMMAP)."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF


def _corruption(exc: sqlite3.DatabaseError) -> bool:
    message = str(exc)
    return (_primary_code(exc) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
            or "not a database" in message or "malformed" in message)


# A file system this disklab does not know to be shared, where mapping the write-ahead log's index or locking failed.
_SHARED_MEMORY_OR_LOCKS = frozenset({
    sqlite3.SQLITE_IOERR_SHMOPEN, sqlite3.SQLITE_IOERR_SHMSIZE, sqlite3.SQLITE_IOERR_SHMMAP, sqlite3.SQLITE_IOERR_SHMLOCK,
    sqlite3.SQLITE_IOERR_LOCK, sqlite3.SQLITE_IOERR_RDLOCK, sqlite3.SQLITE_IOERR_UNLOCK,
    sqlite3.SQLITE_IOERR_CHECKRESERVEDLOCK})

# SQLite reports a write refused for want of space as an I/O error (ENOSPC) as often as SQLITE_FULL.
_FULL_BELOW_BYTES = 1024**2


def _writable(path: Path) -> bool:
    """access(2) also answers for read-only mounts (EROFS), even for root."""
    return os.access(path if path.exists() else path.parent, os.W_OK) and os.access(path.parent, os.W_OK)


def _nearly_full(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.parent).free < _FULL_BELOW_BYTES
    except OSError:
        return False


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
