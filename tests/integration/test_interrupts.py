"""A real `disklab run` stopped by SIGINT, SIGTERM and SIGKILL while fio is running a test.

Each run gets a private TMPDIR, so the fio processes of this test (their job files live in
TMPDIR/disklab-fio-*) are told apart from any other fio on the machine by their command line.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, Disklab, table_rows, wait_for

pytestmark = [pytest.mark.integration, NEEDS_FIO]

QUICK_TESTS = 8
# Deadlines bound a hang; none of them is a performance expectation.
TWO_TESTS_DEADLINE_S = 180
EXIT_DEADLINE_S = 60
FIO_DEATH_DEADLINE_S = 20


@dataclass(frozen=True)
class FioProcess:
    pid: int
    ppid: int
    start_ticks: int  # with the pid, identifies the process even if the pid is reused
    cmdline: str


def fio_processes(marker: str) -> list[FioProcess]:
    """Live fio processes whose command line names a job folder under `marker`; zombies have no command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        cmdline = b" ".join(argv).decode(errors="replace")
        is_fio = Path(argv[0].decode(errors="replace")).name == "fio"
        if not (is_fio and "disklab-fio-" in cmdline and marker in cmdline):
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # the command name in parentheses may contain spaces
        if fields[0] == "Z":
            continue
        found.append(FioProcess(int(entry.name), int(fields[1]), int(fields[19]), cmdline))
    return found


def still_alive(process: FioProcess) -> bool:
    try:
        stat = Path(f"/proc/{process.pid}/stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rindex(")") + 2 :].split()
    return fields[0] != "Z" and int(fields[19]) == process.start_ticks


def left_test_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("disklab-*.testfile"))


@dataclass
class Benchmark:
    process: subprocess.Popen[str]
    target: Path
    tmpdir: Path  # private TMPDIR of the run: marks its fio processes
    env: dict[str, str]

    def fio(self) -> list[FioProcess]:
        return fio_processes(str(self.tmpdir) + "/")


@pytest.fixture
def start_benchmark(disklab: Disklab, tmp_path: Path) -> Iterator[Callable[..., Benchmark]]:
    """Start a real run and return once at least two tests are stored and fio is running a later one.

    Afterwards the run is killed if it still goes on, and any fio process it left behind is
    killed by pid, so that a failing test never leaves I/O running on the machine.
    """
    started: list[Benchmark] = []

    def start(*run_args: str) -> Benchmark:
        target = tmp_path / "target"
        tmpdir = tmp_path / "tmp"
        target.mkdir(exist_ok=True)
        tmpdir.mkdir(exist_ok=True)
        env = {**disklab.env, "TMPDIR": str(tmpdir)}
        args = run_args or ("run", "quick", "--target", str(target), "--runtime", "2", "--size", "64M")
        bench = Benchmark(disklab.start(*args, env=env), target, tmpdir, env)
        started.append(bench)

        def fio_runs_a_later_test() -> bool:
            if bench.process.poll() is not None:
                return True
            # fio of test n exits before test n is stored: a live fio seen after that runs test n+1 or later.
            return disklab.count_tests() >= 2 and bool(bench.fio())

        assert wait_for(fio_runs_a_later_test, TWO_TESTS_DEADLINE_S, interval=0.1), "the run made no progress"
        if bench.process.poll() is not None:
            out, err = bench.process.communicate()
            pytest.fail(f"disklab ended (exit {bench.process.returncode}) before it could be stopped:\n{out}\n{err}")
        return bench

    yield start

    for bench in started:
        if bench.process.poll() is None:
            bench.process.kill()
        bench.process.communicate()
        for stray in bench.fio():
            os.kill(stray.pid, signal.SIGKILL)


def assert_finished_tests_kept(disklab: Disklab, run_id: int, at_least: int) -> None:
    tests = disklab.tests(run_id)
    assert at_least <= len(tests) < QUICK_TESTS
    assert [t["seq"] for t in tests] == list(range(len(tests)))
    for test in tests:
        metrics = disklab.metrics(test["id"])
        assert metrics, f"test {test['label']} is stored without metrics"
        assert all(m["iops"] > 0 and m["total_ios"] > 0 for m in metrics)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_the_run_and_cleans_up(
    signum: signal.Signals, start_benchmark: Callable[..., Benchmark], disklab: Disklab
) -> None:
    bench = start_benchmark()
    stored_before = disklab.count_tests()
    assert bench.fio(), "fio should be running when the signal arrives"

    bench.process.send_signal(signum)
    _, stderr = bench.process.communicate(timeout=EXIT_DEADLINE_S)

    assert bench.process.returncode == 130, stderr
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert [line for line in lines if "interrupted" in line] == [lines[-1]], stderr
    (run,) = disklab.runs()
    assert run["status"] == "interrupted"
    assert run["finished_at"] is not None
    assert_finished_tests_kept(disklab, run["id"], at_least=max(2, stored_before))
    assert lines[-1] == (f"disklab: interrupted: run {run['id']} stopped after {disklab.count_tests(run['id'])} of "
                         f"{run['planned_tests']} tests; continue with 'disklab resume {run['id']}'")
    assert left_test_files(bench.target) == []
    # disklab waits for fio before it exits: nothing of this run may be left, not even briefly.
    assert bench.fio() == []
    assert list(bench.tmpdir.glob("disklab-fio-*")) == [], "fio's job folder was not removed"


def test_sigkill_keeps_finished_tests_and_the_next_run_removes_the_left_file(
    start_benchmark: Callable[..., Benchmark], disklab: Disklab
) -> None:
    bench = start_benchmark()
    stored_before = disklab.count_tests()
    children = [p for p in bench.fio() if p.ppid == bench.process.pid]
    assert children, "disklab should have a fio child when it is killed"

    bench.process.kill()
    bench.process.communicate(timeout=EXIT_DEADLINE_S)

    assert bench.process.returncode == -signal.SIGKILL
    # PR_SET_PDEATHSIG: the kernel kills disklab's fio child when disklab dies.
    assert wait_for(lambda: not any(still_alive(p) for p in children), FIO_DEATH_DEADLINE_S), children
    (run,) = disklab.runs()
    assert run["status"] == "running", "nothing can record the end of a killed run"
    assert_finished_tests_kept(disklab, run["id"], at_least=max(2, stored_before))
    left = left_test_files(bench.target)
    assert [f.name for f in left] == [f"disklab-{socket.gethostname()}-{bench.process.pid}.testfile"]
    (fio_folder,) = bench.tmpdir.glob("disklab-fio-*")
    assert fio_folder.name.startswith(f"disklab-fio-{bench.process.pid}-"), "fio's folder names its disklab"

    listing = disklab("runs")
    assert listing.returncode == 0, listing.stderr
    rows = [row for row in table_rows(listing.stdout) if row and row[0] == str(run["id"])]
    assert len(rows) == 1 and "interrupted" in rows[0], listing.stdout
    assert disklab.runs()[0]["status"] == "interrupted"

    again = disklab(
        "run", "quick", "--target", str(bench.target), "--runtime", "1", "--size", "64M", "--read-only", env=bench.env
    )
    assert again.returncode == 0, again.stderr
    assert f"removed files left by a killed run: {left[0]}" in again.stderr
    assert left_test_files(bench.target) == []
    assert list(bench.tmpdir.glob("disklab-fio-*")) == [], "the killed run's fio folder was not swept"
    second = disklab.runs()[1]
    assert second["status"] == "complete"
    assert disklab.count_tests(second["id"]) == QUICK_TESTS // 2


LONG_THIRD_TEST_SUITE = """
name = "long-third"
description = "Two short tests, then one long enough that a surviving fio would still be busy long after the kill"

[defaults]
size = "64MiB"
ramp = "0s"
direct = true

[[group]]
name = "short"
pattern = "random"
direction = "read"
runtime = "1s"
iodepth = [1, 4]

[[group]]
name = "long"
pattern = "sequential"
direction = "read"
bs = "1M"
runtime = "120s"
"""
# Reads that only the long test's I/O can add up to: fio's start-up reads far less.
LONG_TEST_READ_BYTES = 256 * 1024**2


def read_bytes(process: FioProcess) -> int:
    try:
        lines = Path(f"/proc/{process.pid}/io").read_text().splitlines()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in lines if line.startswith("read_bytes:")), 0)


def test_sigkill_takes_every_fio_process_of_the_run_down(
    start_benchmark: Callable[..., Benchmark], disklab: Disklab, tmp_path: Path
) -> None:
    suite = tmp_path / "long-third.toml"
    suite.write_text(LONG_THIRD_TEST_SUITE)
    bench = start_benchmark("run", str(suite), "--target", str(tmp_path / "target"))
    # Kill while fio is doing the long test's I/O, whatever its process layout (processes or threads).
    assert wait_for(lambda: sum(read_bytes(p) for p in bench.fio()) >= LONG_TEST_READ_BYTES, TWO_TESTS_DEADLINE_S)
    running = bench.fio()

    bench.process.kill()
    bench.process.communicate(timeout=EXIT_DEADLINE_S)

    assert wait_for(lambda: not any(still_alive(p) for p in running), FIO_DEATH_DEADLINE_S), [
        p for p in running if still_alive(p)
    ]
    assert bench.fio() == []
