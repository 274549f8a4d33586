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


def where_clause(where: RunFilter, dialect: Dialect) -> tuple[str, tuple]:
    """The WHERE that takes the runs `where` names (empty for every run), and its parameters; a dialect without
    `contains` is given `where` with its searches answered (searched)."""
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
    if where.name is not None:
        conditions.append(_holds(dialect, "runs.name", args, where.name))
    if where.device is not None:
        conditions.append(_holds_model(dialect, args, where.device))
    if where.text is not None:
        columns = ("runs.name", "runs.suite_name", "runs.target", "runs.hostname")
        conditions.append("(" + " OR ".join([*(_holds(dialect, c, args, where.text) for c in columns),
                                             _holds_model(dialect, args, where.text)]) + ")")
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
    """`column` holds `wanted` in any case, in SQL (SQLite's: PostgreSQL's are answered by `searched`); its
    parameters added to `args`."""
    condition = dialect.contains.format(column=column)
    args.extend([wanted.casefold()] * condition.count("?"))
    return condition


def _holds_model(dialect: Dialect, args: list, wanted: str) -> str:
    """A disk under the run's target (env/registry.py's device.NAME.model, in the runs row's device_env) has a model
    that holds `wanted`. Only the runs whose device_env might hold it are read as JSON: its text, all ASCII, folded by
    lower() holds it, or it has other characters (or JSON's escapes) that lower() does not fold."""
    might = ("(length(runs.device_env) < length(CAST(runs.device_env AS BLOB)) OR instr(runs.device_env, '\\') > 0 "
             "OR instr(lower(runs.device_env), ?) > 0)")
    args.append(wanted.casefold())
    model = _holds(dialect, "CAST(models.value AS TEXT)", args, wanted)
    return (f"({might} AND EXISTS (SELECT 1 FROM json_each(runs.device_env) AS models "
            f"WHERE models.key GLOB 'device.*.model' AND {model}))")


def searched(where: RunFilter, conn, dialect: Dialect) -> RunFilter:
    """`where` with its searches for text (name, device, text) answered as the run numbers that match: read from the
    runs table and the disks' models, folded by Python's casefold as SQLite's search folds them."""
    if where.name is None and where.device is None and where.text is None:
        return where
    def holds(texts, wanted: str) -> bool:
        return any(text is not None and wanted.casefold() in text.casefold() for text in texts)

    matched = set(where.ids) if where.ids else None
    found = []
    for run_id, name, suite, target, hostname, device_env in conn.execute(
            "SELECT id, name, suite_name, target, hostname, device_env FROM runs").fetchall():
        if matched is not None and run_id not in matched:
            continue
        disks = [value if isinstance(value, str) else json.dumps(value)  # as SQLite's CAST(... AS TEXT) reads them
                 for key, value in json.loads(device_env).items()
                 if fnmatchcase(key, "device.*.model") and value is not None]
        if ((where.name is None or holds((name,), where.name))
                and (where.device is None or holds(disks, where.device))
                and (where.text is None or holds((name, suite, target, hostname, *disks), where.text))):
            found.append(run_id)
    # No run is numbered 0: a search that matched nothing keeps matching nothing.
    return replace(where, name=None, device=None, text=None, ids=tuple(found) or (0,))


# The runs list's sort keys (list_runs' order) and the column each sorts by; ties go by run number.
RUN_ORDERS = {
    "id": "runs.id", "started": "runs.started_at", "name": "runs.name", "suite": "runs.suite_name",
    "target": "runs.target", "host": "runs.hostname", "status": "runs.status",
}
RUN_STATUSES = ("running", "complete", "interrupted", "failed")  # the runs table's CHECK (migrations.py)
