"""What a killed disklab leaves outside the store is told from what a live one uses by the PID in its name, and
removed by the next command of its kind or by `disklab doctor`."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.fio.executor import FOLDER_PREFIX
from disklab.run.replay import iolog_folder
from disklab.system.leftovers import dead_entries, owned_prefix, remove_dead
from disklab.trace.leftovers import REPLAY_PREFIX, replay_parent


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_dead_entries_tell_a_killed_process_from_a_live_one(tmp_path: Path) -> None:
    (tmp_path / f"disklab-replay-{dead_pid()}-abc").mkdir()
    (tmp_path / f"{owned_prefix('disklab-replay-')}abc").mkdir()
    (tmp_path / "disklab-replay-notapid").mkdir()
    (tmp_path / f"disklab-replay-{10**30}-x").mkdir()  # no process has such a number
    assert len(dead_entries(tmp_path, "disklab-replay-")) == 2
    remove_dead(tmp_path, "disklab-replay-")
    assert sorted(os.listdir(tmp_path)) == sorted([f"{owned_prefix('disklab-replay-')}abc", "disklab-replay-notapid"])


def test_a_zombie_counts_as_dead(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: a zombie
    (tmp_path / f"disklab-fio-{child.pid}-x").mkdir()
    try:
        assert dead_entries(tmp_path, "disklab-fio-") == [tmp_path / f"disklab-fio-{child.pid}-x"]
    finally:
        child.wait()


def test_a_replay_removes_the_iolog_folder_a_killed_replay_left() -> None:
    left = replay_parent() / f"{REPLAY_PREFIX}{dead_pid()}-abcdefgh"
    left.mkdir()
    (left / "big.iolog").write_text("fio version 3 iolog\n")
    with iolog_folder() as folder:
        assert folder.name.startswith(owned_prefix(REPLAY_PREFIX))
        assert not left.exists()
    assert not folder.exists()


def test_doctor_lists_and_removes_leftovers(tmp_path: Path, monkeypatch) -> None:
    # Folders of their own: another disklab running beside the test sweeps the shared ones too.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # where a killed pgbench --tablespace-only run's cluster is looked for
    (tmp_path / "var").mkdir()
    monkeypatch.setattr("disklab.trace.leftovers.replay_parent", lambda: tmp_path / "var")
    fio_folder = tmp_path / f"{FOLDER_PREFIX}{dead_pid()}-xyz"
    fio_folder.mkdir()
    replay = tmp_path / "var" / f"{REPLAY_PREFIX}{dead_pid()}-xyz"
    replay.mkdir()
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "results.db"), "doctor"])
    assert "removed 2 left by killed disklab processes (listed below)" in result.output
    assert f"removed a killed run's fio folder: {fio_folder}" in result.output.splitlines()
    assert f"removed a killed replay's rewritten iolog: {replay}" in result.output.splitlines()
    assert not fio_folder.exists() and not replay.exists()
