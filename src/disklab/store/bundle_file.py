"""The bundle file `export-run` writes and `import` reads: whole runs (store/bundle.py) in one versioned JSON
document, gzip-compressed when its name ends in .gz.

Plain JSON by default: a bundle is read by people and by jq as well as by disklab, and `-o -` pipes into any
compressor; gzip when asked by the name, since fio's raw output makes most of a bundle's bytes and shrinks ~10x.
Read back, a bundle is checked whole before its first run is stored: the structure, the columns (each known to this
schema), the values (plain scalars, JSON columns that parse), then every run stored in a scratch store of this
schema held in memory and read back equal, so that the store's own constraints refuse a damaged run before the
real store is touched.
"""

import gzip
import json
import sqlite3
import zlib
from pathlib import Path

import disklab
from disklab.errors import StoreError, UserError
from disklab.store.bundle import OWN_NUMBERS, RUN_TABLES, TEST_TABLES, insert_entry, run_entry, table_columns
from disklab.store.db import MEMORY
from disklab.store.migrations import LATEST_VERSION
from disklab.store.repository import Store

BUNDLE_FORMAT = "disklab-bundle"
# Each change of the format, with the version that brought it:
#   1: the first; runs with every row of schema version 10.
BUNDLE_VERSION = 1
_GZIP_MAGIC = b"\x1f\x8b"
_SNIFF_BYTES = 4096
_FINISHED = ("complete", "interrupted", "failed")  # a running run is never exported (store/bundle.py)


def bundle_document(store: Store, run_ids: list[int], host: str, exported_at: str) -> dict:
    return {"format": BUNDLE_FORMAT, "format_version": BUNDLE_VERSION, "disklab_version": disklab.version(),
            "schema_version": LATEST_VERSION, "exported_at": exported_at, "host": host, "store": store_location(store),
            "runs": [run_entry(store, run_id) for run_id in run_ids]}


def store_location(store: Store) -> str:
    """How a bundle and an origin name a store: its file's absolute path, or its URL without a password."""
    return store.name if store.path is None else str(store.path.resolve())


def bundle_bytes(document: dict, compressed: bool) -> bytes:
    """The file's bytes; mtime 0 in the gzip header, so that one export gives one file."""
    text = (json.dumps(document, indent=1) + "\n").encode()
    return gzip.compress(text, mtime=0) if compressed else text


def looks_like_bundle(path: Path) -> bool:
    """A gzip file, or JSON naming the bundle format near its start (fio's output never does); False for anything
    that cannot be read as a file, which the fio reader then refuses with its reason."""
    try:
        if not path.is_file():  # a name too long for the file system raises here too
            return False
        with path.open("rb") as file:
            head = file.read(_SNIFF_BYTES)
    except OSError:
        return False
    return head.startswith(_GZIP_MAGIC) or f'"{BUNDLE_FORMAT}"'.encode() in head


def read_bundle(path: Path) -> dict:
    """The bundle in `path`, checked whole (see the module's docstring); UserError in one line otherwise."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if raw.startswith(_GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            raise UserError(f"{path}: its gzip data is damaged or cut short; nothing was imported") from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _damaged(path, "it is not whole JSON (cut short?)") from None
    if not isinstance(document, dict) or document.get("format") != BUNDLE_FORMAT:
        raise UserError(f"{path}: not a disklab bundle (one is written by 'disklab export-run'); nothing was imported")
    version = document.get("format_version")
    if not _integer(version) or version < 1:
        raise _damaged(path, f"its format_version is {version!r}")
    if version > BUNDLE_VERSION:
        raise UserError(f"{path}: a bundle of format version {version} (disklab {document.get('disklab_version')}); "
                        f"this disklab reads versions up to {BUNDLE_VERSION}: upgrade disklab; nothing was imported")
    for key in ("exported_at", "host", "store"):
        if not isinstance(document.get(key), str):
            raise _damaged(path, f"its {key!r} is not text")
    if not isinstance(document.get("runs"), list):
        raise _damaged(path, "it has no list of runs")
    try:
        _check_stored(path, document["runs"])
    except RecursionError:
        raise _damaged(path, "its values nest too deep") from None
    return document


def _check_stored(path: Path, entries: list) -> None:
    """Every run stored in a scratch store and read back as the bundle has it."""
    with Store(MEMORY) as scratch:  # this schema, nothing on disk
        columns = {table: set(table_columns(scratch, table)) - set(OWN_NUMBERS[table])
                   for table in ("runs", "tests", *TEST_TABLES, *RUN_TABLES)}
        heads: dict[str, int] = {}
        for index, entry in enumerate(entries, start=1):
            where = f"run {index} of {len(entries)}"
            _check_entry(path, where, entry, columns)
            try:
                stored = run_entry(scratch, insert_entry(scratch, entry, {}, heads))
            except (StoreError, sqlite3.Error, OverflowError) as exc:
                raise _damaged(path, f"{where} cannot be stored: {exc}") from None
            wanted = {key: value for key, value in entry.items() if key not in ("number", "series_uid")}
            # Text as given (checked above), and the two the import sets: origin, and the series' first run.
            wanted["run"] = {key: value for key, value in entry["run"].items()
                             if key not in ("origin_json", "options_json")}
            if not _same(wanted, stored):
                raise _damaged(path, f"{where} does not read back as the bundle has it (a value of the wrong type)")


def _check_entry(path: Path, where: str, entry, columns: dict[str, set[str]]) -> None:
    if not isinstance(entry, dict) or not _integer(entry.get("number")) or not isinstance(entry.get("run"), dict):
        raise _damaged(path, f"{where} is not a run with its number")
    if not isinstance(entry.get("series_uid", ""), (str, type(None))):
        raise _damaged(path, f"{where}: its series_uid is not text")
    run = entry["run"]
    _check_row(path, where, "runs", run, columns)
    if not isinstance(run.get("uid"), str) or not run["uid"] or run.get("status") not in _FINISHED:
        raise _damaged(path, f"{where}: a run needs its uid and a finished status ({', '.join(_FINISHED)})")
    for test in _row_list(path, where, entry, "tests"):
        _check_row(path, where, "tests", {k: v for k, v in test.items() if k not in TEST_TABLES}, columns)
        for table in TEST_TABLES:
            for row in _row_list(path, where, test, table):
                _check_row(path, where, table, row, columns)
    for table in RUN_TABLES:
        for row in _row_list(path, where, entry, table):
            _check_row(path, where, table, row, columns)


def _row_list(path: Path, where: str, owner: dict, key: str) -> list[dict]:
    rows = owner.get(key)
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise _damaged(path, f"{where}: its {key} is not a list of rows")
    return rows


def _check_row(path: Path, where: str, table: str, row: dict, columns: dict[str, set[str]]) -> None:
    unknown = sorted(set(row) - columns[table])
    if unknown:
        raise UserError(f"{path}: {where} has columns this disklab does not know ({table}.{unknown[0]}): it was made "
                        "by a newer disklab, or damaged; nothing was imported")
    if not row:
        raise _damaged(path, f"{where}: a row of {table} is empty")
    for name, value in row.items():
        if not (value is None or isinstance(value, (str, float)) or _integer(value)):
            raise _damaged(path, f"{where}: {table}.{name} is not a plain value")
        if name.endswith("_json") and value is not None:
            try:
                json.loads(value)
            except (TypeError, ValueError):
                raise _damaged(path, f"{where}: {table}.{name} is not JSON text") from None


def _same(wanted, stored) -> bool:
    """The bundle's values as the store gave them back: the same keys (of those the bundle names), rows and types
    (a whole number kept in a REAL column reads back as a float, and equal)."""
    if isinstance(wanted, dict):
        return isinstance(stored, dict) and all(key in stored and _same(value, stored[key])
                                                for key, value in wanted.items())
    if isinstance(wanted, list):
        return isinstance(stored, list) and len(wanted) == len(stored) and all(map(_same, wanted, stored))
    numbers = (int, float)
    return wanted == stored and (type(wanted) is type(stored) or (isinstance(wanted, numbers)
                                                                  and isinstance(stored, numbers)))


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _damaged(path: Path, why: str) -> UserError:
    return UserError(f"{path}: a damaged disklab bundle: {why}; nothing was imported")
