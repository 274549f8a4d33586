"""Runs read whole (their tests, figures, series, flags, environment, outcomes and notes), several at once: a
device's history page reads 40 runs, and reading them one by one took 10 queries a run (480 round trips to a
PostgreSQL server for one page); read together, each table is asked once for all of them.

Apart from repository.py (its size limit); the Store is passed in, as to notes.py and groups.py.
"""

import json
from collections.abc import Sequence
from functools import partial

from disklab.errors import UserError
from disklab.store.notes import notes_by_run
from disklab.store.records import (
    TEST_COLUMNS, RawText, RunRecord, run_info, series_by_test, stored_test,
)


def read_runs(store, run_ids: Sequence[int], per_host: bool = False) -> list[RunRecord]:
    """The runs in the order asked; a run on many hosts (options 'hosts') shows its per-step aggregates, `per_host`
    adds each host's tests. Their job files and fio outputs are read on first use, for all of them at once."""
    wanted = list(dict.fromkeys(run_ids))
    if not wanted:
        return []
    condition, values = store.dialect.is_one_of("run_id", tuple(wanted))
    of_tests = store.dialect.is_in("test_id", f"SELECT id FROM tests WHERE {condition}")
    numbered, _ = store.dialect.is_one_of("runs.id", tuple(wanted))
    with store.errors():
        rows = {row["id"]: row for row in store.conn.execute(
            f"SELECT {store.run_columns}, runs.suite_text FROM runs WHERE {numbered}", values).fetchall()}
        missing = [run_id for run_id in wanted if run_id not in rows]
        if missing:
            raise UserError(f"there is no run {missing[0]} in {store.name}")
        tests = _grouped(store.conn.execute(
            f"SELECT run_id, {TEST_COLUMNS} FROM tests WHERE {condition} ORDER BY run_id, seq", values), "run_id")
        metrics = _grouped(store.conn.execute(f"SELECT * FROM metrics WHERE {of_tests}", values), "test_id")
        flags = _grouped(store.conn.execute(f"SELECT * FROM test_flags WHERE {of_tests} ORDER BY flag", values),
                         "test_id")
        series = series_by_test(store.conn.execute(
            f"SELECT * FROM series WHERE {of_tests} ORDER BY test_id, t_ms", values).fetchall())
        env, outcomes = (_values(store, table, condition, values) for table in ("run_env", "run_outcomes"))
        notes = notes_by_run(store, wanted)
    raw = _RawTexts(store, tuple(wanted))
    records = []
    for run_id in wanted:
        row = rows[run_id]
        read = tuple(
            stored_test(t, metrics.get(t["id"], ()), series.get(t["id"], ()),
                        tuple((f["flag"], f["message"]) for f in flags.get(t["id"], ())),
                        RawText(partial(raw.of_run, run_id)))
            for t in tests.get(run_id, ()))
        if "hosts" in json.loads(row["options_json"]) and not per_host:
            read = tuple(t for t in read if t.host is None)
        records.append(RunRecord(
            info=run_info(row), suite_text=row["suite_text"], tests=read, env=env.get(run_id, {}),
            outcomes=outcomes.get(run_id, {}),
            notes=notes.get(run_id, ())))
    return records


class _RawTexts:
    """The job files and fio outputs of several runs' tests, read together the first time one of them is wanted."""

    def __init__(self, store, run_ids: tuple[int, ...]):
        self.store = store
        self.run_ids = run_ids
        self.by_run: dict[int, dict[int, tuple[str, str]]] | None = None

    def of_run(self, run_id: int) -> dict[int, tuple[str, str]]:
        if self.by_run is None:
            self.by_run = raw_texts(self.store, self.run_ids)
        return self.by_run[run_id]


def raw_texts(store, run_ids: tuple[int, ...]) -> dict[int, dict[int, tuple[str, str]]]:
    """{run id: {test id: (jobfile, fio_output)}} of the runs; a record read before the store was closed reopens
    it."""
    if store.closed:
        with type(store)(store.location, read_only=True) as reopened:
            return raw_texts(reopened, run_ids)
    condition, values = store.dialect.is_one_of("run_id", run_ids)
    texts: dict[int, dict[int, tuple[str, str]]] = {run_id: {} for run_id in run_ids}
    with store.errors():
        for row in store.conn.execute(f"SELECT run_id, id, jobfile, fio_output FROM tests WHERE {condition}", values):
            texts[row["run_id"]][row["id"]] = (row["jobfile"], row["fio_output"])
    return texts


def _values(store, table: str, condition: str, values: tuple) -> dict[int, dict]:
    """{run id: {key: value}} of run_env or run_outcomes, keys in order."""
    rows = store.conn.execute(f"SELECT run_id, key, value_json FROM {table} WHERE {condition} ORDER BY run_id, key",
                              values).fetchall()
    decoded = json.loads(f"[{','.join(value for _, _, value in rows)}]")  # one parse, not one a key (40 a run)
    found: dict[int, dict] = {}
    for (run_id, key, _), value in zip(rows, decoded):
        found.setdefault(run_id, {})[key] = value
    return found


def _grouped(rows, column: str) -> dict[int, list]:
    """The rows by the run or test (`column`) they belong to, in their order."""
    grouped: dict[int, list] = {}
    for row in rows:
        grouped.setdefault(row[column], []).append(row)
    return grouped
