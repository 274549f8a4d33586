"""Every run, grouped in SQL by its host, target and the environment keys that name its disks: the devices pages
group 10,000 runs from a few such groups (analysis/history.py makes devices of them), not run by run.

Apart from repository.py (its size limit); the Store is passed in, as to notes.py.
"""

import json
from dataclasses import dataclass

from disklab.store.dialect import POSTGRESQL, SQLITE, Dialect

# The environment keys that name a run's disks: env/registry.py's "devices" and device.NAME.model / .serial.
IDENTITY_KEYS = ("devices", "device.*.model", "device.*.serial")


def _identity_where(dialect: Dialect) -> str:
    """Word for word the WHERE of migration 9's partial index, which SQLite reads only for a query that says the same."""
    return " OR ".join(dialect.like("key", pattern) for pattern in IDENTITY_KEYS)


# The same grouping in each dialect's JSON functions (PostgreSQL groups jsonb: json has no equality).
_GROUPS = {
    SQLITE.name: f"""SELECT hostname, target, env, json_group_array(json_array(started_at, id)) AS runs FROM (
                        SELECT runs.id, runs.started_at, runs.hostname, runs.target,
                               (SELECT json_group_object(key, json(value_json)) FROM run_env
                                WHERE run_env.run_id = runs.id AND ({_identity_where(SQLITE)})) AS env
                        FROM runs)
                    GROUP BY hostname, target, env""",
    POSTGRESQL.name: f"""SELECT hostname, target, env::text AS env, json_agg(json_build_array(started_at, id))::text AS runs
                    FROM (SELECT runs.id, runs.started_at, runs.hostname, runs.target,
                                 COALESCE((SELECT jsonb_object_agg(key, value_json::jsonb) FROM run_env
                                           WHERE run_env.run_id = runs.id AND ({_identity_where(POSTGRESQL)})),
                                          '{{}}'::jsonb) AS env
                          FROM runs) AS named
                    GROUP BY hostname, target, env""",
}


@dataclass(frozen=True)
class RunGroup:
    """Runs of one host and target whose disks the environment names alike (or not at all)."""

    hostname: str
    target: str
    env: dict  # the IDENTITY_KEYS of the runs' environment; {} when they recorded none
    runs: tuple[tuple[str, int], ...]  # (started_at, run id) of each run, oldest first


def run_groups(store) -> list[RunGroup]:
    """Every stored run in its group: one read of the runs table and of the identity index."""
    with store.errors():
        rows = store.conn.execute(_GROUPS[store.dialect.name]).fetchall()
    return [RunGroup(row["hostname"], row["target"], json.loads(row["env"]),
                     tuple(sorted((started, run_id) for started, run_id in json.loads(row["runs"]))))
            for row in rows]
