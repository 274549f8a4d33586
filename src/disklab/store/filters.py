"""Which stored runs a list takes (runs, serve, delete): the filter, its SQL, and the orders a list may take."""

import json
from fnmatch import fnmatchcase
from dataclasses import dataclass, replace

from disklab.store.dialect import Dialect


@dataclass(frozen=True)
class RunFilter:
    """Which stored runs `list_runs` and `count_runs` take; a field left None matches every run."""

    suite: str | None = None
    targets: tuple[str, ...] = ()  # the target as given or as stored (absolute); any of them matches
    host: str | None = None  # the machine that ran disklab, or a fio server one of the run's tests ran on
    since: str | None = None  # ISO time in UTC (as started_at is stored): runs started then or later
    until: str | None = None  # ISO time in UTC: runs started before then
    name: str | None = None  # a part of the run's name, in any case
    status: str | None = None  # one of RUN_STATUSES
    ids: tuple[int, ...] = ()  # these runs only
    device: str | None = None  # a part of the model of a disk under the target (run_env), in any case
    text: str | None = None  # a part of the run's name, suite, target, host or a disk's model, in any case
    user: str | None = None  # who ran it (its login name; a shared store holds many users' runs)


def where_clause(where: RunFilter, dialect: Dialect, apart: tuple[int, ...] = ()) -> tuple[str, tuple]:
    """The WHERE that takes the runs `where` names (empty for every run), and its parameters. A dialect that does not
    casefold in SQL folds ASCII's letters alone there, and is given the runs with other text its searches take
    (`apart`, found by searched_apart)."""
    conditions, args = [], []
    if where.suite is not None:
        conditions.append("runs.suite_name = ?")
        args.append(where.suite)
    if where.targets:
        conditions.append(f"runs.target IN ({', '.join('?' * len(where.targets))})")
        args.extend(where.targets)
    if where.host is not None:
        conditions.append(
            "(runs.hostname = ? OR EXISTS (SELECT 1 FROM tests WHERE tests.run_id = runs.id AND tests.host = ?))"
        )
        args.extend((where.host, where.host))
    if where.since is not None:
        conditions.append("runs.started_at >= ?")
        args.append(where.since)
    if where.until is not None:
        conditions.append("runs.started_at < ?")
        args.append(where.until)
    searches = []
    if where.name is not None:
        searches.append(_holds(dialect, "runs.name", args, where.name))
    if where.device is not None:
        searches.append(_holds_model(dialect, args, where.device))
    if where.text is not None:
        searches.append("(" + " OR ".join([*(_holds(dialect, f"runs.{c}", args, where.text) for c in _SEARCHED[:4]),
                                           _holds_model(dialect, args, where.text)]) + ")")
    if searches and apart:
        # What a dialect folding only ASCII in SQL finds, casefold finds too; what it misses in text that is not all
        # ASCII (the Kelvin sign, ß ...), `apart` holds. Without any, the search reads only runs_search's columns.
        numbers, values = dialect.is_one_of("runs.id", apart)
        searches = [f"(({' AND '.join(searches)}) OR {numbers})"]
        args.extend(values)
    conditions.extend(searches)
    if where.user is not None:
        conditions.append("runs.user_name = ?")
        args.append(where.user)
    if where.status is not None:
        conditions.append("runs.status = ?")
        args.append(where.status)
    if where.ids:
        condition, values = dialect.is_one_of("runs.id", where.ids)
        conditions.append(condition)
        args.extend(values)
    return (" WHERE " + " AND ".join(conditions) if conditions else ""), tuple(args)


def _holds(dialect: Dialect, column: str, args: list, wanted: str) -> str:
    """`column` holds `wanted` in any case (on PostgreSQL: if it is all ASCII); its parameters added to `args`."""
    condition = dialect.contains.format(column=column)
    args.extend([wanted.casefold()] * condition.count("?"))
    return condition


def _holds_model(dialect: Dialect, args: list, wanted: str) -> str:
    """A disk under the run's target (env/registry.py's device.NAME.model, in the runs row's device_env) has a model
    that holds `wanted`. Only the runs whose device_env might hold it are read as JSON: its text holds it, or holds
    a backslash (JSON's escapes)."""
    might = " OR ".join(_holds(dialect, "runs.device_env", args, text) for text in (_BACKSLASH, wanted))
    model = _holds(dialect, "CAST(models.value AS TEXT)", args, wanted)
    return (f"(({might}) AND EXISTS (SELECT 1 FROM {dialect.json_models} "
            f"WHERE {dialect.like('models.key', 'device.*.model')} AND {model}))")


def _non_ascii(dialect: Dialect) -> str:
    """Some text a search reads of the run is not all ASCII; in the words of PostgreSQL's partial index of those runs
    (runs_non_ascii, migration 12), which its planner matches to take it."""
    return dialect.non_ascii.format(column=" || ".join(
        f"coalesce(runs.{c}, '')" if c == "name" else f"runs.{c}" for c in _SEARCHED))


def searched_apart(where: RunFilter, conn, dialect: Dialect) -> tuple[int, ...]:
    """For a dialect that does not casefold in SQL: the runs whose text is not all ASCII that `where`'s searches for
    text take, found by Python's casefold (as SQLite's search folds), from the few rows that hold such text."""
    if dialect.casefolds or (where.name is None and where.device is None and where.text is None):
        return ()

    def holds(texts, wanted: str) -> bool:
        return any(text is not None and wanted.casefold() in text.casefold() for text in texts)

    found = []
    for run_id, name, suite, target, hostname, device_env in conn.execute(
            f"SELECT id, {', '.join(_SEARCHED)} FROM runs WHERE {_non_ascii(dialect)}").fetchall():
        disks = [value if isinstance(value, str) else json.dumps(value)  # as SQL's CAST(... AS TEXT) reads them
                 for key, value in json.loads(device_env).items()
                 if fnmatchcase(key, "device.*.model") and value is not None]
        if ((where.name is None or holds((name,), where.name))
                and (where.device is None or holds(disks, where.device))
                and (where.text is None or holds((name, suite, target, hostname, *disks), where.text))):
            found.append(run_id)
    return tuple(found)


# What a search for text reads of a run: its name, suite, target and host, and its disks' models (in device_env).
_SEARCHED = ("name", "suite_name", "target", "hostname", "device_env")
_BACKSLASH = "\\"


# The runs list's sort keys (list_runs' order) and the column each sorts by; ties go by run number.
RUN_ORDERS = {
    "id": "runs.id", "started": "runs.started_at", "name": "runs.name", "suite": "runs.suite_name",
    "target": "runs.target", "host": "runs.hostname", "status": "runs.status",
}
RUN_STATUSES = ("running", "complete", "interrupted", "failed")  # the runs table's CHECK (migrations.py)
