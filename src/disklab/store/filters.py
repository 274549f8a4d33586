"""Which stored runs a list takes (runs, serve, delete): the filter, its SQL, and the orders a list may take."""

from dataclasses import dataclass

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
    """The WHERE that takes the runs `where` names (empty for every run), and its parameters."""
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
    contains, fold = dialect.contains, dialect.fold
    if where.name is not None:
        conditions.append(contains.format(column="runs.name"))
        args.append(fold(where.name))
    device_model = (f"EXISTS (SELECT 1 FROM run_env WHERE run_env.run_id = runs.id AND "
                    f"{dialect.like('run_env.key', 'device.*.model')} AND "
                    f"{contains.format(column=dialect.json_value.format(column='run_env.value_json'))})")
    if where.device is not None:  # a disk under the run's target (env/registry.py's device.NAME.model)
        conditions.append(device_model)
        args.append(fold(where.device))
    if where.text is not None:
        columns = ("runs.name", "runs.suite_name", "runs.target", "runs.hostname")
        conditions.append("(" + " OR ".join([*(contains.format(column=c) for c in columns), device_model]) + ")")
        args.extend([fold(where.text)] * (len(columns) + 1))
    if where.user is not None:
        conditions.append("runs.user_name = ?")
        args.append(where.user)
    if where.status is not None:
        conditions.append("runs.status = ?")
        args.append(where.status)
    if where.ids:
        conditions.append(f"runs.id IN ({', '.join('?' * len(where.ids))})")
        args.extend(where.ids)
    return (" WHERE " + " AND ".join(conditions) if conditions else ""), tuple(args)


# The runs list's sort keys (list_runs' order) and the column each sorts by; ties go by run number.
RUN_ORDERS = {
    "id": "runs.id", "started": "runs.started_at", "name": "runs.name", "suite": "runs.suite_name",
    "target": "runs.target", "host": "runs.hostname", "status": "runs.status",
}
RUN_STATUSES = ("running", "complete", "interrupted", "failed")  # the runs table's CHECK (migrations.py)
