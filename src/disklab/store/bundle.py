"""A whole run as rows, to move it between stores without loss (`export-run`, `import`, `store copy`).

A run's entry holds every row it owns in every table of migrations.py, values exactly as stored (JSON columns stay
text, floats keep every bit); the numbers that are each store's own (the run's id, its tests' and notes' ids, the
run_id and test_id that tie rows to them) are left out: rows are nested under their run and test instead, and the
run's number travels only as provenance. The SQL is portable between SQLite and PostgreSQL (`?` placeholders,
RETURNING, columns read through the cursor's description).
"""

import json
from collections.abc import Iterable

from disklab.errors import UserError
from disklab.store.records import recorded_bins
from disklab.store.repository import Store

# The tables that hold rows of a run's tests and of the run itself, each with the columns that order its rows.
TEST_TABLES = {"metrics": "direction", "series": "kind, direction, t_ms", "test_flags": "flag"}
RUN_TABLES = {"run_env": "key", "run_smart": "device, phase", "run_outcomes": "key", "run_notes": "id"}
# Columns a store numbers or derives for itself: never exported, given again on the way in (device_env: the keys
# naming the run's disks, which the store's triggers copy from run_env, migration 11; clat_bins_json: the histogram
# in the test's fio output, migration 13).
OWN_NUMBERS = {**{table: ("test_id",) for table in TEST_TABLES}, **{table: ("run_id",) for table in RUN_TABLES},
               "runs": ("id", "device_env"), "tests": ("id", "run_id"), "run_notes": ("id", "run_id"),
               "metrics": ("test_id", "clat_bins_json")}


def run_entry(store: Store, run_id: int) -> dict:
    """Every row of the run: {'number', 'run': {column: value}, 'tests': [{..., 'metrics': [...], ...}], 'run_env':
    [...], ...}; 'series_uid' names the first run of its series (options 'series' is a number of this store)."""
    with store.errors():
        (run,) = _rows(store, "SELECT * FROM runs WHERE id = ?", (run_id,), "runs")
        tests, test_ids = [], []
        for row in _rows(store, "SELECT * FROM tests WHERE run_id = ? ORDER BY seq", (run_id,), "tests", keep="id"):
            test_ids.append(row.pop("id"))
            tests.append({**row, **{table: [] for table in TEST_TABLES}})
        by_id = dict(zip(test_ids, tests))
        for table, order in TEST_TABLES.items():
            for row in _rows(store, f"SELECT {table}.* FROM {table} JOIN tests ON tests.id = {table}.test_id WHERE "
                             f"tests.run_id = ? ORDER BY {table}.test_id, {_qualified(table, order)}", (run_id,),
                             table, keep="test_id"):
                by_id[row.pop("test_id")][table].append(row)
        entry = {"number": run_id, "run": run, "tests": tests}
        for table, order in RUN_TABLES.items():
            entry[table] = _rows(store, f"SELECT * FROM {table} WHERE run_id = ? ORDER BY {order}", (run_id,), table)
        head = _series_head(run)
        if head is not None:
            found = store.conn.execute("SELECT uid FROM runs WHERE id = ?", (head,)).fetchone()
            entry["series_uid"] = found[0] if found else None
    return entry


def stored_run_number(store: Store, uid: str) -> int | None:
    """The number the run of this uid has in the store, if it is there."""
    with store.errors():
        row = store.conn.execute("SELECT id FROM runs WHERE uid = ?", (uid,)).fetchone()
        return None if row is None else row[0]


def insert_entry(store: Store, entry: dict, origin: dict, heads: dict[str, int]) -> int | None:
    """The run of `entry` under the store's next number with `origin` as its origin_json, in one transaction; returns
    its number, or None when another writer stored the run of its uid meanwhile. `heads` maps a series' first run's uid to the run that stands for it here (the first of its runs to
    arrive when that run never did), for a series' runs to name their local first run."""
    with store.transaction():
        run_id = store.insert_run({**entry["run"], "origin_json": json.dumps(origin, sort_keys=True)})
        if run_id is None:
            return None
        if _series_head(entry["run"]) is not None:
            head_uid = entry.get("series_uid") or entry["run"]["uid"]
            head = stored_run_number(store, head_uid) or heads.setdefault(head_uid, run_id)
            options = {**json.loads(entry["run"]["options_json"]), "series": head}
            store.conn.execute("UPDATE runs SET options_json = ? WHERE id = ?", (json.dumps(options, sort_keys=True),
                                                                                run_id))
        for test in entry["tests"]:
            columns = {key: value for key, value in test.items() if key not in TEST_TABLES}
            test_id = store.conn.execute(
                f"INSERT INTO tests (run_id, {', '.join(columns)}) VALUES (?, {_marks(columns)}) RETURNING id",
                (run_id, *columns.values()),
            ).fetchall()[0][0]
            rows = {**test, "metrics": _with_bins(test["metrics"], test.get("fio_output"))}
            for table in TEST_TABLES:
                _insert(store, table, "test_id", test_id, rows[table])
        for table in RUN_TABLES:
            _insert(store, table, "run_id", run_id, entry[table])
    return run_id


def origin_of(entry: dict, source: dict, imported_at: str) -> dict:
    """The run's origin_json here: the host and store it was exported (or copied) from (`source`'s), its number
    there and the times. A run that had come from elsewhere before keeps, as 'first', where it was first exported
    from: hops add no chain, and the store it was made in stays named."""
    origin = {"host": source["host"], "store": source["store"], "number": entry["number"],
              "exported_at": source["exported_at"], "imported_at": imported_at}
    earlier = json.loads(entry["run"].get("origin_json") or "null")
    if isinstance(earlier, dict):
        origin["first"] = earlier.get("first") or {key: earlier.get(key) for key in ("host", "store", "number")}
    return origin


def table_columns(store: Store, table: str) -> tuple[str, ...]:
    """The table's columns as this store has them (the cursor's description: no catalogue query of one database)."""
    with store.errors():
        return tuple(d[0] for d in store.conn.execute(f"SELECT * FROM {table} WHERE 1 = 0").description)


def oldest_first(store: Store) -> list[tuple[int, str, str, str]]:
    """(number, uid, status, hostname) of every run in the store, oldest first."""
    with store.errors():
        return [tuple(row) for row in store.conn.execute("SELECT id, uid, status, hostname FROM runs ORDER BY id")]


def refuse_running(store: Store, run_ids: Iterable[int]) -> None:
    """A run still running has not all its rows yet: it is refused, never moved half."""
    with store.errors():
        for run_id in run_ids:
            row = store.conn.execute("SELECT status, hostname FROM runs WHERE id = ?", (run_id,)).fetchone()
            if row[0] == "running":
                raise UserError(f"run {run_id} is still running on {row[1]}: export it when it has finished "
                                "(or stop it with Ctrl-C); nothing was written")


def _series_head(run: dict) -> int | None:
    """The number of the series' first run when options names one (`run --condition`, --fs ...)."""
    try:
        head = json.loads(run["options_json"]).get("series")
    except (TypeError, ValueError, AttributeError):
        return None
    return head if isinstance(head, int) and not isinstance(head, bool) else None


def _rows(store: Store, sql: str, args: tuple, table: str, keep: str | None = None) -> list[dict]:
    cursor = store.conn.execute(sql, args)
    names = [d[0] for d in cursor.description]
    dropped = set(OWN_NUMBERS.get(table, ())) - {keep}
    return [{name: row[i] for i, name in enumerate(names) if name not in dropped} for row in cursor.fetchall()]


def _insert(store: Store, table: str, owner: str, owner_id: int, rows: list[dict]) -> None:
    """The rows in their order, one statement for each set of columns (an older bundle's rows may name fewer)."""
    by_columns: dict[tuple, list[tuple]] = {}
    for row in rows:
        by_columns.setdefault(tuple(row), []).append((owner_id, *row.values()))
    for columns, values in by_columns.items():
        store.conn.executemany(f"INSERT INTO {table} ({owner}, {', '.join(columns)}) VALUES (?, {_marks(columns)})",
                               values)


def _with_bins(metrics: list[dict], fio_output) -> list[dict]:
    """The test's rows of metrics with the histogram add_test records, made from the output the bundle carries (a
    bundle whose output is not text is refused when its rows are stored)."""
    if not isinstance(fio_output, str):
        return metrics
    return [{**row, "clat_bins_json": recorded_bins(fio_output, row.get("direction"))} for row in metrics]


def _marks(columns) -> str:
    return ", ".join("?" * len(columns))


def _qualified(table: str, order: str) -> str:
    return ", ".join(f"{table}.{column.strip()}" for column in order.split(","))
