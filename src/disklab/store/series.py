"""Runs made by one command, one per configuration (`run --condition`, `--fs`, `--write-cache`, `--overprovision`),
are one series: its first run's number names it, and `series:RUN` (RUN any run of it, 'last' too) stands for all of
its runs wherever runs are named for reading (compare, report)."""

import json
from collections.abc import Iterable

from disklab.errors import UserError
from disklab.store.records import RunInfo
from disklab.store.repository import Store

SERIES_PREFIX = "series:"


def series_id(info: RunInfo) -> int | None:
    """The series a run belongs to (its first run's number); None for a run made alone."""
    if "configuration" not in info.options:
        return None
    return info.options.get("series", info.id)


def resolve_refs(store: Store, refs: Iterable[str]) -> list[int]:
    """Run numbers, 'last', 'last~N' and series:RUN (its runs in order), in the order named."""
    ids: list[int] = []
    for ref in refs:
        if ref.startswith(SERIES_PREFIX):
            ids += _series_runs(store, store.resolve_run_id(ref.removeprefix(SERIES_PREFIX)), ref)
        else:
            ids.append(store.resolve_run_id(ref))
    return ids


def _series_runs(store: Store, run_id: int, ref: str) -> list[int]:
    with store.errors():
        (options_json,) = store.conn.execute("SELECT options_json FROM runs WHERE id = ?", (run_id,)).fetchone()
        options = json.loads(options_json)
        if "configuration" not in options:
            raise UserError(f"{ref}: run {run_id} is of no series (a series is made by run --condition, --fs, "
                            "--write-cache or --overprovision)")
        head = options.get("series", run_id)
        series = store.dialect.json_key.format(column="options_json", key="series")
        rows = store.conn.execute(f"SELECT id FROM runs WHERE id = ? OR {series} = ? ORDER BY id",
                                  (head, str(head))).fetchall()
    return [row[0] for row in rows]
