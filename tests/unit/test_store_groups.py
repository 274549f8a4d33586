"""The runs grouped by host, target and the environment keys naming their disks (store/groups.py): migration 9's
partial index of those keys, and migration 11's copy of them on the runs row (device_env, kept by triggers), read
through one index; an older store gains both when opened."""

import json
import sqlite3

from disklab.analysis.history import disks_of
from disklab.env.registry import DEVICE_PREFIX, device_key
from disklab.store.db import _statements
from disklab.store.groups import IDENTITY_KEYS, group_counts, run_groups
from disklab.store.migrations import LATEST_VERSION, MIGRATIONS
from disklab.store.repository import Store
from tests.unit.test_history import disk_env, run_at
from tests.unit.test_store import old_store

INDEX = "run_env_identity"
_IDENTITY_WHERE = "key GLOB 'devices' OR key GLOB 'device.*.model' OR key GLOB 'device.*.serial'"


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


def query_plans(store, read) -> str:
    statements = []
    store.conn.set_trace_callback(statements.append)
    read()
    store.conn.set_trace_callback(None)
    return " ".join(row[-1] for sql in statements for row in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}"))


def test_the_groups_are_read_from_one_index_of_the_runs_table_of_a_sqlite_file(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run_at(store, 1, [1000], disk_env())
        counted = query_plans(store, lambda: group_counts(store))
        listed = query_plans(store, lambda: run_groups(store))
        chosen = query_plans(store, lambda: run_groups(store, group_counts(store)[:1]))
    assert counted == "SCAN runs USING COVERING INDEX runs_by_device" == listed
    assert "SEARCH runs USING COVERING INDEX runs_by_device (hostname=? AND target=? AND device_env=?)" in chosen
    assert "run_env" not in counted + listed + chosen


def test_the_runs_row_keeps_the_keys_naming_its_disks_whatever_writes_the_environment(store_location):
    """The triggers of migration 11: an environment written, changed, removed, on both kinds of store."""
    with Store(store_location) as store:
        record = run_at(store, 1, [1000], None)

        def device_env():
            (text,) = store.conn.execute("SELECT device_env FROM runs WHERE id = ?", (record.info.id,)).fetchone()
            return json.loads(text)

        assert device_env() == {}
        store.set_run_values("run_env", record.info.id, disk_env())
        named = {"devices": "sda", "device.sda.model": "ACME NVMe 1TB", "device.sda.serial": "S1"}
        assert device_env() == named
        store.set_run_values("run_env", record.info.id, {"device.sda.serial": "S9", "kernel": "6.12"})
        assert device_env() == {**named, "device.sda.serial": "S9"}
        with store.transaction():
            store.conn.execute("DELETE FROM run_env WHERE run_id = ? AND key = 'device.sda.model'", (record.info.id,))
        assert device_env() == {"devices": "sda", "device.sda.serial": "S9"}
        (group,) = group_counts(store)
        assert (group.count, group.env, group.first) == (1, device_env(), record.info.started_at)


def test_a_schema_10_store_gains_the_keys_of_its_runs_disks_on_their_rows(tmp_path, monkeypatch):
    path = tmp_path / "r.db"
    run_id = old_store(path, monkeypatch, 10)
    with sqlite3.connect(path) as conn:  # as disklab of schema 10 left it: the run's environment, no device_env
        conn.executemany("INSERT INTO run_env (run_id, key, value_json) VALUES (?, ?, ?)",
                         [(run_id, key, json.dumps(value)) for key, value in disk_env(model="Größe ✓").items()])
    conn.close()
    with Store(path) as store:
        (group,) = run_groups(store)
    assert group.env == {"devices": "sda", "device.sda.model": "Größe ✓", "device.sda.serial": "S1"}
    assert (group.hostname, group.target, group.count, group.runs) == (
        "testhost", "/mnt/x", 1, (("2026-01-01T00:00:00+00:00", run_id),))


def test_runs_are_grouped_by_host_target_and_disks_oldest_first(store_location):
    with Store(store_location) as store:
        first = run_at(store, 3, [1000], disk_env("2.1"))
        second = run_at(store, 1, [1000], disk_env("2.2"))  # started earlier: first in its group; firmware aside
        other = run_at(store, 2, [1000], disk_env(serial="S2"))
        unrecorded = run_at(store, 4, [1000], None)
        listed = run_groups(store)
        counted = {(g.hostname, g.target, g.device_env): (g.count, g.first, g.last) for g in group_counts(store)}
    assert counted == {(g.hostname, g.target, g.device_env): (len(g.runs), g.runs[0][0], g.runs[-1][0])
                       for g in listed}
    groups = {(g.hostname, g.target, tuple(sorted(g.env.items()))): g.runs for g in listed}
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


def test_a_run_moved_to_another_store_takes_its_disks_keys_from_its_environment_there(tmp_path, store_location):
    """device_env is the store's own, derived from run_env: a bundle leaves it out (an older disklab would call it an
    unknown column) and the store it goes to makes it again, in its own words (SQLite's JSON, PostgreSQL's jsonb)."""
    from disklab.store.bundle import insert_entry, run_entry

    with Store(tmp_path / "from.db") as source:
        record = run_at(source, 1, [1000], disk_env())
        entry = run_entry(source, record.info.id)
        (expected,) = group_counts(source)
    assert "device_env" not in entry["run"]
    with Store(store_location) as target:
        moved = insert_entry(target, entry, {"store": "from.db"}, {})
        (group,) = run_groups(target)
    assert group.env == expected.env and group.runs == ((record.info.started_at, moved),)


def test_one_devices_groups_are_counted_from_the_table_of_groups_as_the_whole_count_has_them(store_location):
    """Migration 12: every host, target and disks ever stored in run_groups (kept by triggers), and group_counts of
    the chosen ones equal to those of the whole count; a group whose runs are all deleted counts none."""
    with Store(store_location) as store:
        run_at(store, 1, [1000], disk_env())
        run_at(store, 2, [1000], disk_env(serial="S2"))
        moved = run_at(store, 3, [1000], None)  # first in the group of no disks, then given S2's environment
        store.set_run_values("run_env", moved.info.id, disk_env(serial="S2"))
        gone = run_at(store, 4, [1000], disk_env(serial="S3"))
        store.delete_runs([gone.info.id])
        known = {tuple(row) for row in store.conn.execute("SELECT hostname, target, device_env FROM run_groups")}
        whole = group_counts(store)
        s2 = group_counts(store, lambda hostname, target, env: env.get("device.sda.serial") == "S2")
        none = group_counts(store, lambda hostname, target, env: env.get("device.sda.serial") == "S3")
    # Also kept: no disks, S3, and the environments half written (a key at a time): groups that count no run.
    assert {(g.hostname, g.target, g.device_env) for g in whole} < known and len(whole) == 2 and none == []
    assert s2 == [g for g in whole if g.env.get("device.sda.serial") == "S2"] and s2[0].count == 2


def test_one_devices_groups_are_counted_over_their_part_of_the_index(tmp_path):
    with Store(tmp_path / "r.db") as store:
        run_at(store, 1, [1000], disk_env())
        chosen = query_plans(store, lambda: group_counts(store, lambda hostname, target, env: True))
    assert "SEARCH runs USING COVERING INDEX runs_by_device (hostname=? AND target=? AND device_env=?)" in chosen
    assert "SCAN runs" not in chosen


def test_a_schema_11_store_gains_the_table_of_its_groups(tmp_path, monkeypatch):
    path = tmp_path / "r.db"
    run_id = old_store(path, monkeypatch, 11)
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO run_env (run_id, key, value_json) VALUES (?, ?, ?)",
                         [(run_id, key, json.dumps(value)) for key, value in disk_env().items()])
    conn.close()
    with Store(path) as store:
        (group,) = group_counts(store, lambda hostname, target, env: True)
    assert (group.count, group.env) == (1, {"devices": "sda", "device.sda.model": "ACME NVMe 1TB",
                                            "device.sda.serial": "S1"})
