"""Every run, grouped in SQL by its host, target and the environment keys that name its disks (the runs row's
device_env, migration 11): the devices pages group 100,000 runs from a few such groups (analysis/history.py makes
devices of them), read from one index, not run by run; the groups there are listed in a table of their own (migration
12), so that one device's are counted without the others.

Apart from repository.py (its size limit); the Store is passed in, as to notes.py.
"""

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

# The environment keys that name a run's disks: env/registry.py's "devices" and device.NAME.model / .serial.
IDENTITY_KEYS = ("devices", "device.*.model", "device.*.serial")
_GROUP = "hostname, target, device_env"
_ONE_GROUP = "hostname = ? AND target = ? AND device_env = ?"


@dataclass(frozen=True)
class RunGroup:
    """Runs of one host and target whose disks the environment names alike (or not at all)."""

    hostname: str
    target: str
    device_env: str  # the IDENTITY_KEYS of the runs' environment as the runs row keeps them; '{}' when none
    count: int
    first: str  # when its first and last runs started
    last: str
    runs: tuple[tuple[str, int], ...] = field(default=(), compare=False)  # (started_at, id), oldest first; () unread

    @property
    def env(self) -> dict:
        return json.loads(self.device_env)


def group_counts(store, chosen: Callable[[str, str, dict], bool] | None = None) -> list[RunGroup]:
    """Every group, its runs counted but not listed: one pass over the index runs_by_device. `chosen` (host, target,
    disk keys -> whether wanted): only the groups it takes of the table of groups there are (migration 12), each
    counted over its own part of the index, so that one device's groups do not cost every run of the store."""
    text_order = store.dialect.text_order
    counted = f"SELECT {_GROUP}, COUNT(*), MIN(started_at{text_order}), MAX(started_at{text_order}) FROM runs"
    with store.errors():
        if chosen is None:
            rows = store.conn.execute(f"{counted} GROUP BY {_GROUP}").fetchall()
        else:
            known = store.conn.execute(f"SELECT {_GROUP} FROM run_groups").fetchall()
            rows = [store.conn.execute(f"{counted} WHERE {_ONE_GROUP} GROUP BY {_GROUP}", tuple(key)).fetchone()
                    for key in known if chosen(key[0], key[1], json.loads(key[2]))]
    return [RunGroup(*row) for row in rows if row is not None]


def run_groups(store, groups: Iterable[RunGroup] | None = None) -> list[RunGroup]:
    """The `groups` (every one when None) with their runs listed, read from the index in its order."""
    conditions, args = "", ()
    if groups is not None:
        chosen = list(groups)
        if not chosen:
            return []
        conditions, args = _of(chosen)
    text_order = store.dialect.text_order
    with store.errors():
        rows = store.conn.execute(
            f"SELECT {_GROUP}, started_at, id FROM runs{conditions} ORDER BY hostname{text_order}, "
            f"target{text_order}, device_env{text_order}, started_at{text_order}, id", args).fetchall()
    listed: dict[tuple[str, str, str], list[tuple[str, int]]] = {}
    for hostname, target, device_env, started_at, run_id in rows:
        listed.setdefault((hostname, target, device_env), []).append((started_at, run_id))
    return [RunGroup(*key, len(runs), runs[0][0], runs[-1][0], tuple(runs)) for key, runs in listed.items()]


def newest_runs(store, groups: Iterable[RunGroup], limit: int, offset: int = 0) -> list[int]:
    """The ids of the groups' runs, newest first (by start, then number), `limit` of them after `offset`: a page
    of a device's history without listing the device's other runs."""
    conditions, args = _of(list(groups))
    text_order = store.dialect.text_order
    with store.errors():
        rows = store.conn.execute(
            f"SELECT id FROM runs{conditions} ORDER BY started_at{text_order} DESC, id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset)).fetchall()
    return [row[0] for row in rows]


def _of(groups: list[RunGroup]) -> tuple[str, tuple]:
    """The WHERE that takes the runs of `groups` (none for no group), and its parameters."""
    condition = " OR ".join([f"({_ONE_GROUP})"] * len(groups)) or "FALSE"
    return f" WHERE {condition}", tuple(v for group in groups for v in (group.hostname, group.target, group.device_env))


def device_envs(store, run_ids: Sequence[int]) -> dict[int, dict]:
    """Run id -> the keys naming its disks (device_env), read a few hundred runs a query (a published site's runs
    list shows every run's disks)."""
    found = {}
    for start in range(0, len(run_ids), _IDS_A_QUERY):
        condition, values = store.dialect.is_one_of("id", tuple(run_ids[start:start + _IDS_A_QUERY]))
        with store.errors():
            rows = store.conn.execute(f"SELECT id, device_env FROM runs WHERE {condition}", values).fetchall()
        found.update((run_id, json.loads(env)) for run_id, env in rows)
    return found


_IDS_A_QUERY = 500  # well under any SQL engine's limit of parameters
