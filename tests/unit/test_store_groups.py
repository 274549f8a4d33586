"""The runs grouped by host, target and the environment keys naming their disks (store/groups.py), read through
migration 9's partial index, which an older store gains when opened."""

import json
import sqlite3

from disklab.analysis.history import disks_of
from disklab.env.registry import DEVICE_PREFIX, device_key
from disklab.store.db import _statements
from disklab.store.dialect import SQLITE
from disklab.store.groups import IDENTITY_KEYS, _identity_where, run_groups

_IDENTITY_WHERE = _identity_where(SQLITE)
from disklab.store.migrations import LATEST_VERSION, MIGRATIONS
from disklab.store.repository import Store
from tests.unit.test_history import disk_env, run_at
from tests.unit.test_store import old_store

INDEX = "run_env_identity"


def index_sql(conn) -> str | None:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (INDEX,)).fetchone()
    return row and row[0]


def test_a_sqlite_schema_8_store_gains_the_identity_index_once_and_the_migration_can_run_again(tmp_path, monkeypatch):
    path = tmp_path / "r.db"
    run_id = old_store(path, monkeypatch, 8)
    conn = sqlite3.connect(path)  # as disklab of schema 8 left it: the run's environment, no index
    assert index_sql(conn) is None
    with conn:
        conn.executemany("INSERT INTO run_env (run_id, key, value_json) VALUES (?, ?, ?)",
                         [(run_id, key, json.dumps(value)) for key, value in disk_env().items()])
    conn.close()
    with Store(path) as store:  # upgraded: the index is there, with the run's keys in it
        assert store.conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0] == LATEST_VERSION
        made = index_sql(store.conn)
        assert made is not None and _IDENTITY_WHERE in made
        (sql,) = [sql for version, _, sql in MIGRATIONS if version == 9]
        for statement in _statements(sql):  # idempotent: run again over the upgraded store, nothing changes
            store.conn.execute(statement)
        assert index_sql(store.conn) == made
        indexed = store.conn.execute(f"SELECT key FROM run_env INDEXED BY {INDEX} WHERE {_IDENTITY_WHERE}")
        assert sorted(row[0] for row in indexed) == ["device.sda.model", "device.sda.serial", "devices"]
    with Store(path) as store:  # opened again: not migrated twice
        assert [row[0] for row in store.conn.execute("SELECT version FROM schema_migrations WHERE version = 9")] == [9]


def test_the_grouping_reads_the_identity_index_not_every_key_of_every_run_of_a_sqlite_file(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run_at(store, 1, [1000], disk_env())
        statements = []
        store.conn.set_trace_callback(statements.append)
        run_groups(store)
        store.conn.set_trace_callback(None)
        (sql,) = statements
        plan = " ".join(row[-1] for row in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
    assert f"SEARCH run_env USING COVERING INDEX {INDEX} (run_id=?)" in plan


def test_runs_are_grouped_by_host_target_and_disks_oldest_first(store_location):
    with Store(store_location) as store:
        first = run_at(store, 3, [1000], disk_env("2.1"))
        second = run_at(store, 1, [1000], disk_env("2.2"))  # started earlier: first in its group; firmware aside
        other = run_at(store, 2, [1000], disk_env(serial="S2"))
        unrecorded = run_at(store, 4, [1000], None)
        groups = {(g.hostname, g.target, tuple(sorted(g.env.items()))): g.runs for g in run_groups(store)}
    s1, s2 = (tuple(sorted((k, v) for k, v in disk_env(serial=serial).items() if k in (
        "devices", "device.sda.model", "device.sda.serial"))) for serial in ("S1", "S2"))
    assert groups == {
        ("testhost", "/mnt/x", s1): ((second.info.started_at, second.info.id), (first.info.started_at, first.info.id)),
        ("testhost", "/mnt/x", s2): ((other.info.started_at, other.info.id),),
        ("testhost", "/mnt/x", ()): ((unrecorded.info.started_at, unrecorded.info.id),),
    }


def test_the_identity_keys_are_those_disks_of_reads():
    from fnmatch import fnmatchcase

    env = {"devices": "sda, nvme0n1", **{device_key(name, field): f"{name} {field}" for name in ("sda", "nvme0n1")
                                         for field in ("model", "serial", "firmware")}}
    kept = {key: value for key, value in env.items() if any(fnmatchcase(key, p) for p in IDENTITY_KEYS)}
    assert disks_of(kept) == disks_of(env) and all(k == "devices" or k.startswith(DEVICE_PREFIX) for k in kept)
