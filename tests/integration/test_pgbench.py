"""`disklab run pgbench`: a real PostgreSQL and its real pgbench at scale 1, stored, shown, compared, and always
cleaned up: no server process, socket folder or cluster left, also after SIGINT, SIGKILL and failures."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Disklab, error_lines, run, table_rows, wait_for
from tests.pgserver import postgres_pids, stop_postgres_under
from tests.integration.test_report_browser import chart_titles

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")) and shutil.which("pg_config") is None,
                       reason="PostgreSQL's server is not installed ('make test' installs it: scripts/setup.sh tests)"),
]

SWEEP = ("--scale", "1", "--clients", "1,4", "--time", "2s")
# Deadlines bound a hang; none of them is a performance expectation.
EXIT_DEADLINE_S = 120
EXIT_DATABASE = 6


@pytest.fixture
def target() -> Iterator[Path]:
    """A directory the server user (postgres, as the tests run as root) can reach: pytest's own are private."""
    folder = Path(tempfile.mkdtemp(prefix="disklab-test-pgbench-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    for kept in folder.glob("*.pgcluster"):  # a failed test may leave a server; never let it outlive the test
        stop_postgres_under(kept)
    shutil.rmtree(folder, ignore_errors=True)


def socket_dirs() -> set[str]:
    """The private folders of servers (socket, pgbench's logs) in /tmp."""
    return {p.name for p in Path("/tmp").glob("disklab-pg-*")}


def assert_cleaned_up(target: Path, sockets_before: set[str]) -> None:
    assert wait_for(lambda: postgres_pids(target) == [], seconds=10), "a PostgreSQL process of the run is still alive"
    assert list(target.iterdir()) == []
    assert socket_dirs() - sockets_before == set(), "a socket folder of the run is left in /tmp"


def test_a_client_sweep_is_stored_shown_and_cleaned_up(disklab: Disklab, target: Path):
    sockets = socket_dirs()
    result = disklab("run", "pgbench", "--target", str(target), *SWEEP, "--pg-set", "synchronous_commit=on")
    assert result.returncode == 0, result.stderr
    assert_cleaned_up(target, sockets)
    (stored,) = disklab.runs()
    assert stored["status"] == "complete" and stored["fio_engine"] == "pgbench"
    tests = disklab.tests(stored["id"])
    assert [json.loads(t["params_json"])["clients"] for t in tests] == [1, 4]
    for test in tests:
        (metrics,) = disklab.metrics(test["id"])
        assert metrics["direction"] == "transaction" and metrics["iops"] > 0 and metrics["total_ios"] > 0
        assert 0 < metrics["clat_p50_ns"] <= metrics["clat_p99_ns"] <= metrics["clat_max_ns"]
        assert metrics["lat_mean_ns"] > 0 and test["usr_cpu_percent"] + test["sys_cpu_percent"] > 0
        progress = [line for line in test["fio_stderr"].splitlines() if line]
        assert progress and all(line.startswith("progress: ") for line in progress), "pgbench ran without --debug"
        assert " -c " in test["jobfile"] and test["jobfile"].endswith(" postgres")

    shown = disklab("show", "last")
    rows = table_rows(shown.stdout)
    assert [row[0] for row in rows] == ["1", "4"] and all(float(row[1].replace(",", "")) > 0 for row in rows)
    assert "page-cache" in shown.stdout and "PostgreSQL" in shown.stdout
    assert shown.stdout.count("the page cache can hold it") == 1, "the data set's warning once, not once per step"
    assert "· pgbench / PostgreSQL " in shown.stdout, "the title names the tool that ran"
    document = json.loads(disklab("show", "last", "--format", "json").stdout)
    sweep = document["sweep"]
    assert [row["clients"] for row in sweep] == [1, 4]
    for row in sweep:
        assert 0 < row["tps_including_connections"] <= row["tps"] and row["failed"] == 0
        assert row["latency_p50_ms"] > 0 and row["transactions"] > 0
    outcome = document["outcomes"]["pgbench"]
    assert outcome["server_settings"]["synchronous_commit"] == "on" and outcome["data_set"]["bytes"] > 0
    (cached,) = [finding for finding in document["findings"] if finding["kind"] == "cache"]
    assert cached["figures"][0] == {"name": "data set", "value": outcome["data_set"]["bytes"], "unit": "B"}
    assert document["run"]["tool"] == f"pgbench / PostgreSQL {outcome['postgresql_version']}"
    series = disklab("show", "last", "--series")
    assert series.returncode == 0 and "transaction" in series.stdout

    again = disklab("run", "pgbench", "--target", str(target), *SWEEP)
    assert again.returncode == 0, again.stderr
    compared = disklab("compare", "1", "2")
    assert compared.returncode == 0, compared.stderr
    compared_rows = table_rows(compared.stdout)
    assert {(row[0], row[2]) for row in compared_rows} >= {("pgbench 1 client", "TPS"), ("pgbench 4 clients", "TPS")}
    report = disklab.home / "report.html"
    assert disklab("report", "1", "2", "-o", str(report)).returncode == 0
    assert "run 1 · client sweep" in report.read_text() and "TPS incl. conn." in report.read_text()
    # The options as given, with units (the tests' environment adds DISKLAB_REPEAT=1: 'repeat 1').
    said = report.read_text().replace("<wbr>", "")  # a long word may break after its separators (<wbr>)
    assert "clients 1, 4; pg-set synchronous_commit=on; repeat 1; scale 1; time 2 s" in said
    assert "<th>Tool</th>" in report.read_text() and "time_s" not in report.read_text()
    titles = re.findall(r"<svg [^>]*><title>([^<]*)</title>", report.read_text())
    assert titles[:4] == ["pgbench: TPS over clients", "pgbench: latency over clients",
                          "pgbench: TPS over time · run 1", "pgbench: TPS over time · run 2"]
    assert chart_titles(report) == titles, "every chart drawn in Chromium"


def start_a_long_step(disklab: Disklab, target: Path) -> subprocess.Popen:
    """A run whose one step lasts a minute, returned once that step is running."""
    process = disklab.start("run", "pgbench", "--target", str(target), "--scale", "1", "--clients", "2",
                            "--time", "60s")
    if not wait_for(lambda: first_step_started(disklab, process), seconds=EXIT_DEADLINE_S):
        process.kill()
        pytest.fail(f"the step did not start: {process.communicate()[1]}")
    return process


def test_sigint_during_pgbench_stops_the_server_and_removes_the_cluster(disklab: Disklab, target: Path):
    sockets = socket_dirs()
    process = start_a_long_step(disklab, target)
    try:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=EXIT_DEADLINE_S)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert_cleaned_up(target, sockets)
    assert disklab.runs()[0]["status"] == "interrupted"


def pgbench_running(parent: int) -> bool:
    """Whether the disklab process `parent` has a pgbench child (pgbench -i included)."""
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, fields = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if name == "pgbench" and int(fields[1]) == parent and fields[0] != "Z":
            return True
    return False


def first_step_started(disklab: Disklab, process: subprocess.Popen) -> bool:
    """The data set is loaded (the run's pgbench outcome is stored) and pgbench runs the first step."""
    try:
        loaded = disklab.query("SELECT 1 FROM run_outcomes WHERE key = 'pgbench'")
    except sqlite3.Error:  # the store or its tables are not made yet
        return False
    return bool(loaded) and pgbench_running(process.pid)


def test_a_killed_runs_cluster_is_removed_by_the_next_run(disklab: Disklab, target: Path):
    sockets = socket_dirs()
    process = start_a_long_step(disklab, target)
    process.kill()
    process.communicate()
    left = list(target.glob("disklab-*.pgcluster"))
    assert len(left) == 1 and postgres_pids(target), "the killed run's server should outlive it"

    result = disklab("run", "pgbench", "--target", str(target), "--scale", "1", "--clients", "1", "--time", "1s")
    assert result.returncode == 0, result.stderr
    assert f"removed a PostgreSQL cluster left by a killed run: {left[0]} (its server stopped)" in result.stderr
    assert_cleaned_up(target, sockets)


def test_keep_cluster_keeps_the_stopped_cluster(disklab: Disklab, target: Path):
    result = disklab("run", "pgbench", "--target", str(target), "--scale", "1", "--clients", "1", "--time", "1s",
                     "--keep-cluster")
    assert result.returncode == 0, result.stderr
    kept = target / "disklab-run1.pgcluster"
    assert (kept / "data" / "PG_VERSION").is_file() and (kept / "server.log").is_file()
    assert not (kept / "data" / "postmaster.pid").exists() and postgres_pids(target) == []
    assert f"cluster kept (server stopped): {kept}" in result.stderr


def test_a_setting_the_server_rejects_is_one_line_and_nothing_is_left(disklab: Disklab, target: Path):
    sockets = socket_dirs()
    result = disklab("run", "pgbench", "--target", str(target), "--scale", "1", "--clients", "1", "--time", "1s",
                     "--pg-set", "shared_buffers=lots")
    assert result.returncode == EXIT_DATABASE and "Traceback" not in result.stderr
    (line,) = error_lines(result.stderr)
    assert 'the PostgreSQL server did not start: invalid value for parameter "shared_buffers": "lots"' in line
    assert_cleaned_up(target, sockets)
    assert disklab.runs()[0]["status"] == "failed"


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
@pytest.mark.parametrize("size, phrase", [
    ("8m", "the target is full: initdb ran out of space"),  # a cluster needs about 40 MB before any data
    ("48m", "the target is full: loading pgbench's data set at scale 1 ran out of space"),  # scale 1: 16 MB + WAL
])
def test_a_full_disk_is_one_line(disklab: Disklab, target: Path, request: pytest.FixtureRequest, size, phrase):
    sockets = socket_dirs()
    run("mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(target))
    request.addfinalizer(lambda: run("umount", str(target)))
    result = disklab("run", "pgbench", "--target", str(target), "--scale", "1", "--clients", "1", "--time", "1s")
    assert result.returncode == EXIT_DATABASE and "Traceback" not in result.stderr
    (line,) = error_lines(result.stderr)
    assert phrase in line
    assert_cleaned_up(target, sockets)


def test_missing_server_binaries_say_how_to_install_them(disklab: Disklab, target: Path):
    env = {**disklab.env, "DISKLAB_PG_BINDIR": str(target / "nowhere")}
    result = disklab("run", "pgbench", "--target", str(target), "--scale", "1", env=env)
    assert result.returncode == EXIT_DATABASE
    (line,) = error_lines(result.stderr)
    assert "server binaries" in line and "apt-get install postgresql" in line
    assert disklab.runs() == []


def test_a_port_taken_before_the_server_binds_it_is_given_up_for_another(target: Path, monkeypatch):
    from disklab.database import postgres
    from disklab.database.pgbench import query
    from disklab.database.placement import Placement

    sockets = socket_dirs()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        taken_port = taken.getsockname()[1]
        offered = iter([taken_port])
        free_port = postgres.free_port
        monkeypatch.setattr(postgres, "free_port", lambda: next(offered, None) or free_port())
        with postgres.private_server(Placement(target), (), max_clients=1) as server:
            assert server.port != taken_port and query(server, "SHOW port") == [[str(server.port)]]
    assert_cleaned_up(target, sockets)


@pytest.mark.skipif(os.geteuid() != 0, reason="the server runs as another user only when disklab runs as root")
def test_a_target_the_server_user_cannot_reach_is_refused_before_anything_is_stored(disklab: Disklab, target: Path):
    private = target / "private"
    (private / "inner").mkdir(parents=True)
    private.chmod(0o700)
    result = disklab("run", "pgbench", "--target", str(private / "inner"), "--scale", "1")
    assert result.returncode == 2
    (line,) = error_lines(result.stderr)
    assert f"which cannot enter {private} (mode 700)" in line and f"chmod o+x {private}" in line
    assert disklab.runs() == [] and list((private / "inner").iterdir()) == []


@pytest.fixture
def tmpfs_target() -> Iterator[Path]:
    """A 512 MiB tmpfs the postgres user can reach: PostgreSQL whose data and WAL live in RAM."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    folder = Path(tempfile.mkdtemp(prefix="disklab-test-pgbench-tmpfs-", dir="/tmp"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512m,mode=0755", "tmpfs", str(folder)], check=True)
    yield folder
    for kept in folder.glob("*.pgcluster"):
        stop_postgres_under(kept)
    subprocess.run(["umount", "--lazy", str(folder)], check=False)
    folder.rmdir()


def test_pgbench_on_a_file_system_in_ram_is_flagged_as_memory(disklab: Disklab, tmpfs_target: Path):
    result = disklab("run", "pgbench", "--target", str(tmpfs_target), "--scale", "1", "--clients", "2", "--time", "1s")
    assert result.returncode == 0, result.stderr
    (stored,) = disklab.runs()
    (test,) = disklab.tests(stored["id"])
    flags = {row["flag"]: row["message"] for row in disklab.query("SELECT flag, message FROM test_flags WHERE test_id = ?", (test["id"],))}
    assert flags["memory-target"].startswith("the file system is tmpfs, which keeps its files in RAM")
    assert "direct I/O" not in flags["memory-target"]  # PostgreSQL's I/O is buffered; the remark is for direct tests
    assert "memory-target" in disklab("show", "last").stdout
