"""Network file systems for real: the guest serves NFS to itself over 127.0.0.1 (tests/kernel/nfs.py); disklab runs
on NFS 4.2 and 3 targets, describes them, and keeps its store there with a rollback journal (SQLite's write-ahead log
needs memory one machine shares), two runs writing it at once; where locks stay on this machine (NFS mounted
nolock, the out share's 9p) a store is read but never written."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from disklab.env.doctor import _store_check
from disklab.errors import StoreError
from disklab.store.db import store_error
from disklab.store.repository import Store
from tests.integration.conftest import COMMAND_TIMEOUT_S, Disklab, error_lines
from tests.kernel.nfs import nfs_mount, nfs_server

# The journal mode a SQLite file's header records (bytes 18 and 19, its read and write versions): 1 a rollback
# journal, 2 a write-ahead log.
ROLLBACK, WAL = b"\x01\x01", b"\x02\x02"


@dataclasses.dataclass(frozen=True)
class Served:
    export: Path  # the server's folder
    v4: Path  # NFS 4.2 over TCP
    v3: Path  # NFS 3 over TCP


@pytest.fixture(scope="module")
def nfs(tmp_path_factory) -> Served:
    root = tmp_path_factory.mktemp("nfs")
    with nfs_server(root / "export"), \
            nfs_mount(root / "v4", "/", "vers=4.2,proto=tcp") as v4, \
            nfs_mount(root / "v3", str(root / "export"), "vers=3,proto=tcp") as v3:
        yield Served(root / "export", v4, v3)


def at_home(disklab: Disklab, home: Path) -> Disklab:
    """The same command with its store in `home`."""
    return dataclasses.replace(disklab, home=home, env={**disklab.env, "DISKLAB_HOME": str(home)})


def notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("note:")]


def wal_store(folder: Path) -> Path:
    """An empty store as disklab makes it on a local disk (this guest's /tmp, tmpfs): in WAL mode, closed cleanly."""
    folder.mkdir(parents=True)
    with Store(folder / "results.db"):
        pass
    assert (folder / "results.db").read_bytes()[18:20] == WAL
    return folder / "results.db"


def check_a_store_on_nfs_says_once_it_keeps_a_rollback_journal_and_takes_two_runs_at_once(nfs, disklab):
    """Made by `runs` (the note), then written by two runs at once, on NFS 4.2 and 3 targets (no note, nothing lost),
    each target recorded as the mount has it."""
    lab = at_home(disklab, nfs.v4 / "lab")
    made = lab("runs")
    assert made.returncode == 0, made.stderr
    assert notes(made.stderr) == [
        f"note: the results store {lab.store_path} is on nfs4 (127.0.0.1:/), where SQLite's write-ahead log cannot "
        "work: it keeps a rollback journal there (several machines may write it; each commit takes longer); a lab's "
        "machines share a PostgreSQL store better (--store postgresql://...)"]
    targets = {"NFS 4.2": nfs.v4 / "data", "NFS 3": nfs.v3 / "data3"}
    started = {}
    for protocol, target in targets.items():
        target.mkdir()
        started[protocol] = lab.start("run", "--rw", "randwrite", "--bs", "4k", "--runtime", "1s", "--size", "8MiB",
                                      "--target", str(target), "--name", protocol)
    for protocol, process in started.items():
        _, err = process.communicate(timeout=COMMAND_TIMEOUT_S)
        assert process.returncode == 0, f"{protocol}: {err}"
        assert "error" not in err.lower() and notes(err) == [], err
    runs = {row["name"]: row for row in lab.runs()}
    assert {name: (row["status"], len(lab.tests(row["id"]))) for name, row in runs.items()} == {
        "NFS 4.2": ("complete", 1), "NFS 3": ("complete", 1)}
    # What `show --env` prints of a network target (tests/integration/test_machine_record.py reads it on sshfs).
    described = {}
    for name, row in runs.items():
        recorded = {env["key"]: json.loads(env["value_json"]) for env in lab.query(
            "SELECT key, value_json FROM run_env WHERE run_id = ?", (row["id"],))}
        described[name] = tuple(recorded.get(key) for key in (
            "fs_type", "net_server", "net_protocol", "net_transport", "net_interface"))
    assert described == {"NFS 4.2": ("nfs4", "127.0.0.1", "NFS 4.2", "tcp", "lo"),
                         "NFS 3": ("nfs", "127.0.0.1", "NFS 3", "tcp", "lo")}
    assert lab.store_path.read_bytes()[18:20] == ROLLBACK
    assert not [p.name for p in lab.home.iterdir() if p.name.endswith(("-wal", "-shm"))]
    doctor = _store_check(lab.store_path)
    assert (doctor.status, doctor.detail) == (
        "ok", f"{lab.store_path} (on nfs4 (127.0.0.1:/): a rollback journal, not a write-ahead log)")


def check_a_store_moved_to_nfs_in_wal_mode_leaves_it_once_no_other_process_has_it_open(nfs, tmp_path):
    made = wal_store(tmp_path / "made-here")
    moved = nfs.v4 / "moved" / "results.db"
    moved.parent.mkdir()
    shutil.copy(made, moved)
    # Another connection with the store open in WAL mode, as a `disklab serve` would have it (SQLite counts the
    # connections of this process as it counts another process's).
    with closing(sqlite3.connect(moved, isolation_level=None)) as holder:
        assert holder.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        with pytest.raises(StoreError) as held:
            Store(moved).close()
    assert str(held.value) == (
        f"the results store {moved} must leave its write-ahead log on this file system and another process keeps it "
        "open (a disklab serve, a run of an older disklab): stop it and try again")
    assert moved.read_bytes()[18:20] == WAL
    heard = []
    with Store(moved, say=heard.append):
        pass
    assert len(heard) == 1 and heard[0].startswith(f"the results store {moved} is on nfs4 (127.0.0.1:/)")
    assert moved.read_bytes()[18:20] == ROLLBACK
    assert not [p.name for p in moved.parent.iterdir() if p.name.endswith(("-wal", "-shm"))]


def check_a_store_on_an_nfs_mount_without_locks_is_refused_in_one_line(nfs, disklab, tmp_path):
    with nfs_mount(tmp_path / "nolock", str(nfs.export), "vers=3,proto=tcp,nolock") as point:
        store = point / "other" / "results.db"
        refused = disklab("--store", str(store), "runs")
        assert not store.exists()
    assert refused.returncode == 5
    assert error_lines(refused.stderr) == refused.stderr.splitlines() == [
        f"disklab: error: the results store {store} is on nfs (127.0.0.1:{nfs.export}), mounted with local_lock=all "
        "(nolock): its locks stay on this machine, so SQLite cannot keep another machine from writing it at the same "
        "moment; nothing is stored there: keep the store on a local disk (--store FILE, or DISKLAB_HOME) or use a "
        "PostgreSQL store (--store postgresql://...)"]


def check_a_store_on_the_out_share_9p_from_the_host_is_read_but_never_written(disklab, tmp_path):
    share = Path(os.environ["GUEST_OUT"]) / "store-on-9p"
    lab = at_home(disklab, share / "kept")
    lab.home.mkdir(parents=True)
    shutil.copy(wal_store(tmp_path / "made-here"), lab.store_path)
    listed = lab("runs")
    assert listed.returncode == 0, listed.stderr
    assert "no runs" in listed.stdout + listed.stderr
    with closing(sqlite3.connect(tmp_path / "busy.db", isolation_level=None)) as writer:  # its log not yet folded in
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("CREATE TABLE t (x)")
        for name in ("busy.db", "busy.db-wal"):
            shutil.copy(tmp_path / name, lab.home / name)
    with pytest.raises(StoreError) as unread:
        Store(lab.home / "busy.db", read_only=True).close()
    assert str(unread.value) == (
        f"cannot open the results store {lab.home / 'busy.db'} for reading: it has a write-ahead log (busy.db-wal) "
        "that SQLite cannot share on 9p (guestout); let the disklab writing it finish, or copy the store with that "
        "file to a local disk and use --store")
    fresh = share / "new" / "results.db"  # refused as the NFS mount without locks is, in one line (the check above)
    with pytest.raises(StoreError) as refused:
        Store(fresh).close()
    assert str(refused.value) == (
        f"the results store {fresh} is on 9p (guestout), whose servers need not hold locks (QEMU's grants every lock "
        "without taking it), so SQLite cannot keep another machine from writing it at the same moment; nothing is "
        "stored there: keep the store on a local disk (--store FILE, or DISKLAB_HOME) or use a PostgreSQL store "
        "(--store postgresql://...)")
    assert not fresh.parent.exists()
    # Beneath the refusal, what SQLite itself meets there: no shared memory for a write-ahead log. A file system
    # disklab does not know to be shared says as much in one line.
    with closing(sqlite3.connect(share / "wal.db")) as conn, pytest.raises(sqlite3.OperationalError) as failed:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x)")
    assert failed.value.sqlite_errorname == "SQLITE_IOERR_SHMMAP"
    assert str(store_error(share / "wal.db", failed.value)) == (
        f"the results store {share / 'wal.db'} is on 9p (guestout), which cannot give SQLite the shared memory or the "
        "locks it needs (disk I/O error: SQLITE_IOERR_SHMMAP); keep the store on a local disk (--store FILE, or "
        "DISKLAB_HOME) or use a PostgreSQL store (--store postgresql://...)")
