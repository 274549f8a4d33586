"""Where SQLite can keep the store (store/file_system.py), judged on real mount lines: the kernel tier's guest serving
NFS to itself, with its out share over 9p (tests/fixtures/env/network-mounts/guest-mountinfo; the README beside it
says how it was made), the older NFS and sshfs lines, and this machine's own folders; and a store a writer killed
mid-transaction left with a rollback journal, read afterwards."""

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from disklab.store.db import connect
from disklab.store.file_system import StoreFileSystem, store_file_system
from disklab.system.mounts import deepest_mount, mount_of

MOUNTS = Path(__file__).parents[1] / "fixtures" / "env" / "network-mounts"
# The header of a SQLite file says its journal (bytes 18 and 19): 1 a rollback journal, 2 a write-ahead log.
ROLLBACK, WAL = b"\x01\x01", b"\x02\x02"


def mounted(fixture: str, fs_type: str, point: str | None, tmp_path: Path) -> StoreFileSystem:
    """The file system of `point` (or of the fixture's one mount of `fs_type`), read by the parser a store uses."""
    lines = (MOUNTS / fixture).read_text().splitlines()
    (line,) = [line for line in lines if f" - {fs_type} " in line and (point is None or f" {point} " in line)]
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mountinfo").write_text(line + "\n")
    return StoreFileSystem(deepest_mount(line.split(" ")[4], None, str(proc)))


@pytest.mark.parametrize(("point", "fs_type", "named"), [
    ("/mnt/nfs4", "nfs4", "nfs4 (127.0.0.1:/)"), ("/mnt/nfs3", "nfs", "nfs (127.0.0.1:/srv/nfs)")])
def test_nfs_with_its_locks_keeps_a_rollback_journal(tmp_path, point, fs_type, named):
    file_system = mounted("guest-mountinfo", fs_type, point, tmp_path)
    assert (file_system.shared, file_system.journal_mode, file_system.named) == (True, "DELETE", named)
    assert file_system.refusal(Path(point) / "results.db") is None
    assert file_system.notice(Path(point) / "results.db") == (
        f"the results store {point}/results.db is on {named}, where SQLite's write-ahead log cannot work: it keeps a "
        "rollback journal there (several machines may write it; each commit takes longer); a lab's machines share a "
        "PostgreSQL store better (--store postgresql://...)")


def test_nfs_mounted_without_locks_is_refused_naming_its_option_and_the_fix(tmp_path):
    file_system = mounted("guest-mountinfo", "nfs", "/mnt/nfs3-nolock", tmp_path)
    assert file_system.refusal(Path("/mnt/nfs3-nolock/results.db")) == (
        "the results store /mnt/nfs3-nolock/results.db is on nfs (127.0.0.1:/srv/nfs), mounted with local_lock=all "
        "(nolock): its locks stay on this machine, so SQLite cannot keep another machine from writing it at the same "
        "moment; nothing is stored there: keep the store on a local disk (--store FILE, or DISKLAB_HOME) or use a "
        "PostgreSQL store (--store postgresql://...)")


def test_the_hosts_folder_over_9p_is_refused(tmp_path):
    file_system = mounted("guest-mountinfo", "9p", None, tmp_path)
    assert file_system.shared and file_system.named == "9p (guestout)"
    assert "whose servers need not hold locks (QEMU's grants every lock without taking it)" in file_system.refusal(
        Path(file_system.mount.mount_point) / "results.db")


@pytest.mark.parametrize(("point", "fs_type"), [("/", "overlay"), ("/tmp", "tmpfs"), ("/proc/fs/nfsd", "nfsd")])
def test_the_guests_own_file_systems_keep_a_write_ahead_log(tmp_path, point, fs_type):
    file_system = mounted("guest-mountinfo", fs_type, point, tmp_path)
    assert (file_system.shared, file_system.journal_mode, file_system.local_locks()) == (False, "WAL", None)


def test_older_nfs_lines_keep_a_rollback_journal_and_sshfs_is_refused(tmp_path):
    nfs4 = mounted("mountinfo", "nfs4", None, tmp_path / "nfs4")
    nfs3_over_udp = mounted("mountinfo", "nfs", None, tmp_path / "nfs3")
    assert [(fs.journal_mode, fs.local_locks()) for fs in (nfs4, nfs3_over_udp)] == [("DELETE", None)] * 2
    sshfs = mounted("mountinfo", "fuse.sshfs", None, tmp_path / "sshfs")
    assert sshfs.journal_mode == "DELETE"
    assert sshfs.local_locks() == "whose protocol (SFTP) has no locks: they stay on this machine"


def test_a_folder_still_to_be_made_is_judged_by_its_nearest_parent_here(tmp_path):
    assert store_file_system(tmp_path / "not" / "yet").mount == mount_of(str(tmp_path))
    assert store_file_system(tmp_path / "not" / "yet").mount is not None


def test_a_store_on_this_machines_disk_keeps_a_write_ahead_log_and_says_nothing(tmp_path):
    heard = []
    connect(tmp_path / "results.db", say=heard.append).close()
    assert (tmp_path / "results.db").read_bytes()[18:20] == WAL and heard == []


def test_a_read_after_a_writer_was_killed_mid_transaction_in_a_rollback_journal_sees_the_store_as_it_was(tmp_path):
    """What a reading command meets on NFS after a killed run: a hot journal, which only a writing open can undo
    (a read-only one is refused with SQLITE_READONLY_ROLLBACK)."""
    path = tmp_path / "results.db"
    connect(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA journal_mode = DELETE")  # as the store keeps itself on NFS
    writer = subprocess.Popen([sys.executable, "-c", f"""
import sqlite3, time
conn = sqlite3.connect({str(path)!r}, isolation_level=None)
conn.execute("PRAGMA cache_size = 1")  # pages spill to the file before the commit
conn.execute("BEGIN")
conn.execute("CREATE TABLE filler (x BLOB)")
conn.execute("INSERT INTO filler SELECT zeroblob(100000) FROM (SELECT 1 UNION SELECT 2 UNION SELECT 3)")
print("written", flush=True)
time.sleep(60)
"""], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "written\n"
    finally:
        writer.kill()
        writer.wait()
    assert path.with_name("results.db-journal").stat().st_size > 0
    conn = connect(path, read_only=True)
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'filler'").fetchall() == []
    conn.close()
    assert not path.with_name("results.db-journal").exists()
