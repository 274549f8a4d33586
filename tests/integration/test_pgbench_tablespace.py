"""`disklab run pgbench --tablespace-only`, as the SSD review (M3) ran it: a real PostgreSQL whose cluster (WAL and
catalog) lies off the target and whose tablespace, with pgbench's tables and indexes, lies on it. The target is a
tmpfs of its own, the cluster's folder ($TMPDIR) a folder on the machine's disk; both cleaned up after success,
Ctrl-C and SIGKILL, and refused when they share a file system or a disk."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Disklab, error_lines, run, wait_for
from tests.pgserver import postgres_pids, stop_postgres_under
from tests.integration.test_pgbench import EXIT_DEADLINE_S, first_step_started, socket_dirs

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")) and shutil.which("pg_config") is None,
                       reason="PostgreSQL's server is not installed ('make test' installs it: scripts/setup.sh tests)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="mounting a file system of its own for the target needs root"),
]

SHORT = ("--scale", "1", "--clients", "1", "--time", "1s")


def reachable_folder(prefix: str) -> Path:
    """In /tmp, open to the server's user (postgres, as the tests run as root): pytest's own folders are private."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o755)
    return folder


@pytest.fixture
def target() -> Iterator[Path]:
    """A 256 MiB tmpfs: a file system other than the one $TMPDIR's folder is on."""
    folder = reachable_folder("disklab-test-tablespace-target-")
    run("mount", "-t", "tmpfs", "-o", "size=256m,mode=0755", "tmpfs", str(folder))
    yield folder
    subprocess.run(["umount", "--lazy", str(folder)], check=False)
    folder.rmdir()


@pytest.fixture
def off_target() -> Iterator[Path]:
    """The folder $TMPDIR names, where the cluster goes; a server a failed test left is never let outlive it."""
    folder = reachable_folder("disklab-test-tablespace-tmpdir-")
    yield folder
    stop_postgres_under(folder)
    shutil.rmtree(folder, ignore_errors=True)


def with_tmpdir(disklab: Disklab, folder: Path) -> dict[str, str]:
    return {**disklab.env, "TMPDIR": str(folder)}


def assert_cleaned_up(target: Path, off_target: Path, sockets_before: set[str]) -> None:
    assert wait_for(lambda: postgres_pids(off_target) == [], seconds=10), "a PostgreSQL process of the run is alive"
    assert list(target.iterdir()) == [] and list(off_target.iterdir()) == []
    assert socket_dirs() - sockets_before == set(), "a socket folder of the run is left in /tmp"


def files_under(folder: Path) -> list[Path]:
    return [Path(top) / name for top, _, names in os.walk(folder) for name in names]


def test_a_run_keeps_only_the_tablespace_on_the_target_and_says_so(disklab: Disklab, target: Path, off_target: Path):
    sockets = socket_dirs()
    result = disklab("run", "pgbench", "--target", str(target), *SHORT, "--tablespace-only",
                     env=with_tmpdir(disklab, off_target))
    assert result.returncode == 0, result.stderr
    assert f".pgcluster, its tablespace {target}/disklab-" in result.stderr
    assert_cleaned_up(target, off_target, sockets)
    (stored,) = disklab.runs()
    assert stored["status"] == "complete" and stored["test_path"].startswith(f"{target}/disklab-")
    assert stored["test_path"].endswith(".pgtablespace")
    assert json.loads(stored["options_json"])["tablespace_only"] is True
    said = f"tablespace on the target; WAL and catalog off it: {off_target}"
    assert said in " ".join(disklab("show", "last").stdout.split())
    placement = json.loads(disklab("show", "last", "--format", "json").stdout)["outcomes"]["pgbench"]["placement"]
    assert placement["tablespace_only"] is True and placement["on_target"] == stored["test_path"]
    assert placement["off_target"].startswith(f"{off_target}/disklab-") and placement["off_target_disks"]
    report = disklab.home / "report.html"
    assert disklab("report", "1", "-o", str(report)).returncode == 0
    assert said in " ".join(report.read_text().split())


def test_tables_lie_on_the_target_the_wal_off_it_and_ctrl_c_removes_both(disklab: Disklab, target: Path,
                                                                         off_target: Path):
    sockets = socket_dirs()
    process = disklab.start("run", "pgbench", "--target", str(target), "--scale", "1", "--clients", "2", "--time",
                            "60s", "--tablespace-only", env=with_tmpdir(disklab, off_target))
    try:
        if not wait_for(lambda: first_step_started(disklab, process), seconds=EXIT_DEADLINE_S):
            pytest.fail(f"the step did not start: {process.communicate(timeout=EXIT_DEADLINE_S)[1]}")
        (tablespace,) = target.iterdir()
        (cluster,) = off_target.glob("*.pgcluster")  # beside temporary files of disklab's, which honours TMPDIR too
        on_target = files_under(target)
        assert tablespace.name.endswith(".pgtablespace") and cluster.name.endswith(".pgcluster")
        assert not any("pg_wal" in path.parts for path in on_target), "WAL on the target"
        assert sum(path.stat().st_size for path in on_target) > 10 * 10**6  # scale 1: 100,000 accounts and indexes
        assert all(path.relative_to(tablespace).parts[0].startswith("PG_") for path in on_target)
        assert any(path.name.startswith("0000") for path in (cluster / "data" / "pg_wal").iterdir())
        links = [os.readlink(link) for link in (cluster / "data" / "pg_tblspc").iterdir()]
        assert links == [str(tablespace)]
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=EXIT_DEADLINE_S)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert_cleaned_up(target, off_target, sockets)
    assert disklab.runs()[0]["status"] == "interrupted"


def test_keep_cluster_keeps_each_part_where_it_lay(disklab: Disklab, target: Path, off_target: Path):
    result = disklab("run", "pgbench", "--target", str(target), *SHORT, "--tablespace-only", "--keep-cluster",
                     env=with_tmpdir(disklab, off_target))
    assert result.returncode == 0, result.stderr
    kept_cluster, kept_tablespace = off_target / "disklab-run1.pgcluster", target / "disklab-run1.pgtablespace"
    assert list(off_target.iterdir()) == [kept_cluster] and list(target.iterdir()) == [kept_tablespace]
    assert (kept_cluster / "data" / "pg_wal").is_dir() and not (kept_cluster / "data" / "postmaster.pid").exists()
    assert [os.readlink(link) for link in (kept_cluster / "data" / "pg_tblspc").iterdir()] == [str(kept_tablespace)]
    assert list(kept_tablespace.glob("PG_*/*/*")) and postgres_pids(off_target) == []
    stderr = " ".join(result.stderr.split())
    assert f"cluster kept (server stopped): {kept_cluster} (data directory, WAL and catalog; off the target)" in stderr
    assert f"its tablespace kept: {kept_tablespace} (tables and indexes; on the target)" in stderr


def kill_during_the_step(disklab: Disklab, target: Path, off_target: Path) -> tuple[Path, Path]:
    """A run killed by SIGKILL while its step runs: its server outlives it. Its cluster and tablespace."""
    process = disklab.start("run", "pgbench", "--target", str(target), "--scale", "1", "--clients", "2", "--time",
                            "60s", "--tablespace-only", env=with_tmpdir(disklab, off_target))
    if not wait_for(lambda: first_step_started(disklab, process), seconds=EXIT_DEADLINE_S):
        process.kill()
        pytest.fail(f"the step did not start: {process.communicate()[1]}")
    process.kill()
    process.communicate()
    (cluster,), (tablespace,) = list(off_target.glob("*.pgcluster")), list(target.iterdir())
    assert postgres_pids(off_target), "the killed run's server should outlive it"
    return cluster, tablespace


def test_a_killed_runs_cluster_and_tablespace_are_removed_by_the_next_run(disklab: Disklab, target: Path,
                                                                          off_target: Path):
    sockets = socket_dirs()
    cluster, tablespace = kill_during_the_step(disklab, target, off_target)
    result = disklab("run", "pgbench", "--target", str(target), *SHORT, "--tablespace-only",
                     env=with_tmpdir(disklab, off_target))
    assert result.returncode == 0, result.stderr
    assert (f"removed a PostgreSQL cluster left by a killed run: {cluster} (its server stopped); its tablespace "
            f"{tablespace}") in " ".join(result.stderr.split())
    assert_cleaned_up(target, off_target, sockets)


def test_doctor_lists_and_removes_a_killed_runs_cluster_and_tablespace(disklab: Disklab, target: Path,
                                                                       off_target: Path):
    cluster, tablespace = kill_during_the_step(disklab, target, off_target)
    result = disklab("doctor", "--target", str(target), env=with_tmpdir(disklab, off_target))
    said = " ".join(result.stdout.split())
    assert f"removed a PostgreSQL cluster left by a killed run (its server stopped first): {cluster}" in said
    assert f"removed a PostgreSQL tablespace left by a killed run: {tablespace}" in said
    assert wait_for(lambda: postgres_pids(off_target) == [], seconds=10)
    assert list(target.iterdir()) == [] and list(off_target.iterdir()) == []


def test_a_cluster_folder_on_the_targets_file_system_is_refused_before_anything_is_made(disklab: Disklab,
                                                                                        target: Path):
    inside = target / "tmp"
    inside.mkdir(mode=0o755)
    result = disklab("run", "pgbench", "--target", str(target), *SHORT, "--tablespace-only",
                     env=with_tmpdir(disklab, inside))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = error_lines(result.stderr)
    assert f"--tablespace-only: {inside} ($TMPDIR, else /var/tmp), where the cluster and its WAL would go, is on the " \
           f"same file system as the target {target}" in line
    assert disklab.runs() == [] and list(target.iterdir()) == [inside] and list(inside.iterdir()) == []


@pytest.fixture
def two_partitions_of_one_disk(attach_loop) -> Iterator[tuple[Path, Path]]:
    """Two ext4 file systems on partitions of one loop device, mounted where the server's user can reach them."""
    device = attach_loop(size_bytes=96 * 1024**2, losetup_options=("--partscan",))
    subprocess.run(["sfdisk", "--quiet", device], input="size=40MiB\nsize=40MiB\n", text=True, check=True,
                   capture_output=True)
    subprocess.run(["partx", "-u", device], capture_output=True, check=False)  # --partscan may have added them
    folders = []
    try:
        for number in (1, 2):
            if not wait_for(lambda number=number: Path(f"{device}p{number}").exists(), seconds=10):
                pytest.skip(f"the partitions of {device} did not appear")
            run("mkfs.ext4", "-q", f"{device}p{number}")
            folder = reachable_folder("disklab-test-tablespace-part-")
            run("mount", f"{device}p{number}", str(folder))
            folders.append(folder)
        yield folders[0], folders[1]
    finally:
        for folder in folders:
            run("umount", str(folder))
            folder.rmdir()


def test_a_cluster_folder_on_another_partition_of_the_targets_disk_is_refused(disklab: Disklab,
                                                                             two_partitions_of_one_disk):
    target, elsewhere = two_partitions_of_one_disk
    result = disklab("run", "pgbench", "--target", str(target), *SHORT, "--tablespace-only",
                     env=with_tmpdir(disklab, elsewhere))
    assert result.returncode == 2
    (line,) = error_lines(result.stderr)
    assert "is on the same disk (loop" in line and f"as the target {target}" in line
    assert disklab.runs() == [] and not [p for p in (*target.iterdir(), *elsewhere.iterdir()) if "disklab" in p.name]
