"""run pgbench --tablespace-only: where the cluster goes off the target (refused on the target's file system, warned
in RAM), what is said and kept of it, and what a killed run's off-target cluster and tablespace leave for the sweep.
Real folders and the machine's own mounts; the run itself is in tests/integration/test_pgbench_tablespace.py."""

import os
import socket
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from disklab.cli.main import cli
from disklab.database.leftovers import cluster_leftovers, remove_stale_clusters
from disklab.database.placement import Placement, place_off_target
from disklab.errors import UserError
from disklab.system.leftovers import remove_leftovers
from disklab.system.mounts import mount_of


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    return int(done.stdout)


def test_a_cluster_folder_on_the_targets_file_system_is_refused(tmp_path, monkeypatch):
    target, elsewhere = tmp_path / "target", tmp_path / "tmp"
    target.mkdir()
    elsewhere.mkdir()
    monkeypatch.setenv("TMPDIR", str(elsewhere))
    with pytest.raises(UserError, match=f"--tablespace-only: {elsewhere} .*is on the same file system as the target "
                                        f"{target}, so the WAL would reach the disk under test anyway; set TMPDIR"):
        place_off_target(target)


def test_a_cluster_folder_in_ram_is_placed_with_a_warning(tmp_path, monkeypatch):
    shm = Path("/dev/shm")
    if not shm.is_dir() or getattr(mount_of(str(shm)), "fs_type", None) != "tmpfs" \
            or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("needs /dev/shm on a tmpfs of its own")
    monkeypatch.setenv("TMPDIR", str(shm))
    placement, warnings = place_off_target(tmp_path)
    assert placement.off_target == shm and placement.cluster.parent == shm
    assert placement.tablespace.parent == tmp_path and placement.tablespace.name.endswith(".pgtablespace")
    assert placement.on_target == placement.tablespace
    assert placement.description() == f"tablespace on the target; WAL and catalog off it: {shm}"
    (warning,) = warnings
    assert f"keeps the cluster and its WAL in {shm}, which is tmpfs (RAM)" in warning


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=300))
def test_any_tmpdir_is_placed_or_refused_in_one_line(tmpdir_text):
    target = Path("/tmp")
    with mock.patch.dict(os.environ, {"TMPDIR": tmpdir_text}):
        try:
            placement, _ = place_off_target(target)
        except UserError as exc:
            assert "--tablespace-only" in str(exc)
        else:
            assert placement.off_target.is_dir() and placement.off_target.stat().st_dev != target.stat().st_dev


def test_the_default_keeps_everything_on_the_target(tmp_path):
    placement = Placement(tmp_path)
    assert placement.tablespace is None and placement.on_target == placement.cluster
    assert placement.cluster.parent == tmp_path and placement.out_of_space("anything") == ("the target", tmp_path)
    assert placement.description() == "data directory, WAL and catalog on the target"


def test_the_folder_out_of_space_is_told_by_the_file_postgresql_names(tmp_path):
    placement = Placement(tmp_path / "target", tmp_path / "off")
    extend = 'could not extend file "pg_tblspc/16385/PG_15_202209061/5/16398": No space left on device'
    wal = 'could not write to file "pg_wal/xlogtemp.123": No space left on device'
    assert placement.out_of_space(extend) == ("the target", tmp_path / "target")
    assert placement.out_of_space(wal) == ("the folder off the target", tmp_path / "off")


def test_keeping_moves_both_parts_and_the_tablespace_link_follows(tmp_path):
    target, off = tmp_path / "target", tmp_path / "off"
    placement = Placement(target, off, ("vda",))
    (placement.cluster / "data" / "pg_tblspc").mkdir(parents=True)
    (placement.tablespace / "PG_15_202209061").mkdir(parents=True)
    (placement.cluster / "data" / "pg_tblspc" / "16385").symlink_to(placement.tablespace)
    placement.keep(7)
    kept_cluster, kept_tablespace = off / "disklab-run7.pgcluster", target / "disklab-run7.pgtablespace"
    assert sorted(p.name for p in off.iterdir()) == [kept_cluster.name]
    assert sorted(p.name for p in target.iterdir()) == [kept_tablespace.name]
    assert os.readlink(kept_cluster / "data" / "pg_tblspc" / "16385") == str(kept_tablespace)
    assert placement.kept_lines(7) == [
        f"cluster kept (server stopped): {kept_cluster} (data directory, WAL and catalog; off the target)",
        f"its tablespace kept: {kept_tablespace} (tables and indexes; on the target)",
    ]


def killed_runs_parts(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """A killed --tablespace-only run's cluster off the target linking to its tablespace on it, and a kept run's."""
    host, pid = socket.gethostname(), dead_pid()
    target, off = tmp_path / "target", tmp_path / "off"
    stale_cluster, stale_space = off / f"disklab-{host}-{pid}.pgcluster", target / f"disklab-{host}-{pid}.pgtablespace"
    kept_cluster, kept_space = off / "disklab-run2.pgcluster", target / "disklab-run2.pgtablespace"
    for cluster, space in ((stale_cluster, stale_space), (kept_cluster, kept_space)):
        (cluster / "data" / "pg_tblspc").mkdir(parents=True)
        space.mkdir(parents=True)
        (cluster / "data" / "pg_tblspc" / "16385").symlink_to(space)
    return target, off, stale_cluster, stale_space


def test_the_next_run_removes_a_killed_runs_cluster_off_the_target_with_its_tablespace(tmp_path, monkeypatch):
    target, off, stale_cluster, stale_space = killed_runs_parts(tmp_path)
    monkeypatch.setenv("TMPDIR", str(off))
    assert remove_stale_clusters(target) == [
        f"a PostgreSQL cluster left by a killed run: {stale_cluster}; its tablespace {stale_space}"]
    assert [p.name for p in off.iterdir()] == ["disklab-run2.pgcluster"]
    assert [p.name for p in target.iterdir()] == ["disklab-run2.pgtablespace"]


def test_doctor_lists_a_killed_runs_cluster_and_tablespace_and_removes_them(tmp_path, monkeypatch):
    target, off, stale_cluster, stale_space = killed_runs_parts(tmp_path)
    monkeypatch.setenv("TMPDIR", str(off))
    found = cluster_leftovers(str(target))
    assert [(leftover.path, leftover.what) for leftover in found] == [
        (stale_cluster, "a PostgreSQL cluster left by a killed run (its server stopped first)"),
        (stale_space, "a PostgreSQL tablespace left by a killed run"),
    ]
    assert remove_leftovers(found) == found
    assert not stale_cluster.exists() and not stale_space.exists()
    assert cluster_leftovers(None) == []


def test_a_dry_run_says_where_the_cluster_would_go(tmp_path):
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "run", "pgbench", "--target", str(tmp_path),
                                      "--tablespace-only", "--dry-run"], env={"TMPDIR": "/var/tmp"})
    assert result.exit_code == 0, result.output
    assert ("--tablespace-only: tables and indexes in a tablespace on the target; the cluster, its WAL and catalog "
            "in /var/tmp") in " ".join(result.output.split())
