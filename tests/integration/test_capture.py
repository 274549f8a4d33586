"""`disklab capture` of real fio I/O on a loop device: the trace holds what fio did, and the tracing instance goes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from disklab.errors import UserError
from disklab.trace.iolog import read_meta, read_trace
from disklab.trace.tracefs import tracefs_root
from tests.children import Children
from tests.integration.conftest import COMMAND_TIMEOUT_S, NEEDS_FIO, NEEDS_LOOP_DEVICES, Disklab, wait_for



def mounted_tracefs() -> Path:
    """tracefs, mounted the way `disklab capture` mounts it where it is not (as root); its usual place otherwise."""
    try:
        return tracefs_root(lambda _: None) if os.geteuid() == 0 else TRACEFS_DEFAULT
    except UserError:
        return TRACEFS_DEFAULT


TRACEFS_DEFAULT = Path("/sys/kernel/tracing")
TRACEFS = mounted_tracefs()
pytestmark = [
    pytest.mark.integration, *NEEDS_LOOP_DEVICES, NEEDS_FIO,
    pytest.mark.skipif(not (TRACEFS / "events" / "block" / "block_rq_issue").is_dir(),
                       reason="tracefs with block tracepoints is not mounted at /sys/kernel/tracing"),
]


def start_capture(disklab: Disklab, device: str, output: Path, *options: str,
                  under: tuple[str, ...] = ()) -> subprocess.Popen[str]:
    """A capture (tracefs, to see when it traces) running until Ctrl-C, started `under` a command such as nohup;
    returns once the kernel is tracing its block events. A new instance's tracing_on reads 1 before the capture has
    set anything (its spool not made yet): the capture turns it off, enables the events, then turns it on."""
    capture = disklab.start("capture", device, "--method", "tracefs", "--duration", "10m", "-o", str(output), *options,
                            under=under)
    instance = TRACEFS / "instances" / f"disklab-{capture.pid}"

    def tracing() -> bool:
        try:
            return all((instance / name).read_text().strip() == "1"
                       for name in ("events/block/block_rq_issue/enable", "tracing_on"))
        except OSError:
            return False

    if not wait_for(tracing, seconds=60):
        capture.terminate()  # as Ctrl-C: a tracing instance it made is removed
        pytest.fail(f"the capture did not start tracing: {capture.communicate(timeout=COMMAND_TIMEOUT_S)}")
    return capture


def stop(capture: subprocess.Popen[str], how: signal.Signals = signal.SIGINT) -> tuple[int, str]:
    capture.send_signal(how)
    _, stderr = capture.communicate(timeout=COMMAND_TIMEOUT_S)
    assert not (TRACEFS / "instances" / f"disklab-{capture.pid}").exists()  # removed, also after Ctrl-C
    return capture.returncode, stderr


def has_forked(pid: int) -> bool:
    """Whether a process has `pid` for its parent (fio's job process)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        if int(text.rpartition(")")[2].split()[1]) == pid:  # `PID (COMM) STATE PPID ...`, COMM may hold spaces
            return True
    return False


def fio(device: str, *options: str) -> list[str]:
    return ["fio", "--name=job", f"--filename={device}", "--ioengine=libaio", "--direct=1", *options]


def test_capture_of_fio_randrw_at_qd8(disklab: Disklab, attach_loop: Callable[..., str], tmp_path: Path) -> None:
    device, output = attach_loop(), tmp_path / "fio.trace"
    capture = start_capture(disklab, device, output)
    job = subprocess.run(
        fio(device, "--rw=randrw", "--rwmixread=70", "--bs=4k", "--iodepth=8", "--runtime=2", "--time_based",
            "--output-format=json"), capture_output=True, text=True, check=True,
    )
    returncode, stderr = stop(capture)
    assert returncode == 0, stderr
    totals = json.loads(job.stdout)["jobs"][0]
    actions = Counter(record.action for record in read_trace(output))
    lengths = {record.length for record in read_trace(output)}
    for direction in ("read", "write"):
        assert actions[direction] == pytest.approx(totals[direction]["total_ios"], rel=0.03)
    assert lengths == {4096}
    meta = read_meta(output)
    assert (meta.method, meta.device, meta.device_bytes, meta.lost_events) == ("tracefs", device, 64 << 20, 0)
    # The device never holds more than fio's 8; a loop device finishes requests so fast that it often holds fewer
    # (fio counts an I/O in flight until it reaps it, the block layer only until the device completes it).
    assert max(meta.queue_depths) == 8 and meta.queue_depths[8] > 0
    assert sum(meta.queue_depths.values()) == actions["read"] + actions["write"]
    assert any(note.startswith("ended early (Ctrl-C") for note in meta.notes)
    # The summary and the synthetic suite give the job back: 70 % reads within 5 points, 4 KiB, random, and a depth
    # of 6 to 8: the suite takes the depth 90 % of I/Os were issued at or below, and the device holds fio's 8 only
    # while fio has refilled its queue (7 and 8 both seen here), never more.
    suite_file = tmp_path / "fio.toml"
    made = disklab("trace", "suite", str(output), "-o", str(suite_file))
    assert made.returncode == 0, made.stderr
    group = tomllib.loads(suite_file.read_text())["group"][0]
    assert (group["pattern"], group["bs"]) == ("random", "4k") and 6 <= group["iodepth"] <= 8
    assert abs(group["rwmixread"] - 70) <= 5


def test_every_io_of_fio_is_in_the_trace(disklab: Disklab, attach_loop: Callable[..., str], tmp_path: Path) -> None:
    """The raw pages of every CPU, decoded after the capture: not one I/O more or less than fio's, none lost."""
    device, output = attach_loop(), tmp_path / "every.trace"
    capture = start_capture(disklab, device, output)
    job = subprocess.run(
        fio(device, "--rw=randrw", "--rwmixread=60", "--bs=4k", "--iodepth=32", "--rate_iops=3000,2000",
            "--runtime=2", "--time_based", "--output-format=json"), capture_output=True, text=True, check=True,
    )
    returncode, stderr = stop(capture)
    assert returncode == 0, stderr
    totals = json.loads(job.stdout)["jobs"][0]
    actions = Counter(record.action for record in read_trace(output))
    assert actions == {"read": totals["read"]["total_ios"], "write": totals["write"]["total_ios"]}
    assert read_meta(output).lost_events == 0
    assert not list(Path(tempfile.gettempdir()).glob(f"disklab-capture-{capture.pid}-*"))  # the spool is gone


def test_pid_keeps_only_that_process(disklab: Disklab, attach_loop: Callable[..., str], tmp_path: Path,
                                    children: Children) -> None:
    device, output = attach_loop(), tmp_path / "pid.trace"
    reader = children.start(fio(device, "--rw=randread", "--bs=4k", "--runtime=60", "--time_based",
                                "--output=/dev/null"), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # fio reads from a job process it forks. A capture does not follow a fork made while it sets its tracing up
        # (after it read --pid's process tree, before the kernel reports forks): a gap of its own, not this test's,
        # where a busy machine's fio forks often enough, and then none of its reads is kept. So the capture starts
        # once the job runs, as on a running process.
        assert wait_for(lambda: has_forked(reader.pid), seconds=60), "fio did not start its job"
        capture = start_capture(disklab, device, output, "--pid", str(reader.pid))
        subprocess.run(fio(device, "--rw=randwrite", "--bs=8k", "--runtime=1", "--time_based", "--output=/dev/null"),
                       check=True, capture_output=True)
        returncode, stderr = stop(capture)
    finally:
        reader.send_signal(signal.SIGINT)
        reader.wait(timeout=COMMAND_TIMEOUT_S)
    assert returncode == 0, stderr
    assert "is not seen" in stderr  # --pid's limits are said
    records = list(read_trace(output))
    assert records and {(r.action, r.length) for r in records} == {("read", 4096)}
    meta = read_meta(output)
    assert meta.pid == reader.pid and any("other processes" in note for note in meta.notes)


def test_auto_says_which_method(disklab: Disklab, attach_loop: Callable[..., str], tmp_path: Path) -> None:
    output = tmp_path / "idle.trace"
    result = disklab("capture", attach_loop(), "--duration", "1s", "-o", str(output))
    assert result.returncode == 0, result.stderr
    assert "method: blktrace" in result.stderr or "using the kernel's block tracepoints (tracefs)" in result.stderr
    assert read_meta(output).method in ("blktrace", "tracefs")


def test_a_kill_ends_a_capture_as_ctrl_c_does(disklab: Disklab, attach_loop: Callable[..., str], tmp_path: Path) -> None:
    device, output = attach_loop(), tmp_path / "killed.trace"
    capture = start_capture(disklab, device, output)
    subprocess.run(fio(device, "--rw=randread", "--bs=4k", "--size=1m", "--output=/dev/null"), check=True)
    returncode, stderr = stop(capture, signal.SIGTERM)  # the tracing instance is gone (checked in stop)
    assert returncode == 0, stderr
    assert {record.action for record in read_trace(output)} == {"read"}
    assert any(note.startswith("ended early (Ctrl-C or a termination signal)") for note in read_meta(output).notes)


def test_after_kill_9_the_next_capture_removes_what_the_dead_one_left(
        disklab: Disklab, attach_loop: Callable[..., str], tmp_path: Path) -> None:
    device = attach_loop()
    capture = start_capture(disklab, device, tmp_path / "killed.trace")
    instance = TRACEFS / "instances" / f"disklab-{capture.pid}"
    capture.kill()  # SIGKILL: nothing of disklab's runs, the kernel goes on tracing
    capture.communicate(timeout=COMMAND_TIMEOUT_S)
    spools = sorted(Path(tempfile.gettempdir()).glob(f"disklab-capture-{capture.pid}-*"))
    assert (instance / "tracing_on").read_text().strip() == "1", "the kernel stopped tracing by itself"
    assert spools, os.listdir(tempfile.gettempdir())
    result = disklab("capture", device, "--method", "tracefs", "--duration", "1s", "-o", str(tmp_path / "next.trace"))
    assert result.returncode == 0, result.stderr
    assert f"removed a killed capture's tracing instance, still tracing: {instance}" in result.stderr
    assert not instance.exists() and not any(spool.exists() for spool in spools)
    assert not (tmp_path / "killed.trace").exists()


def test_doctor_removes_a_killed_captures_instance(disklab: Disklab, attach_loop: Callable[..., str],
                                                   tmp_path: Path) -> None:
    capture = start_capture(disklab, attach_loop(), tmp_path / "killed.trace")
    instance = TRACEFS / "instances" / f"disklab-{capture.pid}"
    capture.kill()
    capture.communicate(timeout=COMMAND_TIMEOUT_S)
    result = disklab("doctor")
    assert "removed a killed capture's tracing instance" in result.stdout
    assert not instance.exists()
    assert "nothing left by killed disklab processes" in disklab("doctor").stdout


def test_an_output_that_is_a_fifo_is_refused_and_left_a_fifo(disklab: Disklab, attach_loop: Callable[..., str],
                                                             tmp_path: Path) -> None:
    fifo = tmp_path / "out.trace"
    os.mkfifo(fifo)
    result = disklab("capture", attach_loop(), "--method", "tracefs", "--duration", "1s", "-o", str(fifo))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"disklab: error: trace {fifo} exists and is not a regular file")
    assert fifo.is_fifo() and not list(TRACEFS.glob("instances/disklab-*"))


def test_a_capture_started_under_nohup_goes_on_through_sighup(disklab: Disklab, attach_loop: Callable[..., str],
                                                               tmp_path: Path) -> None:
    device, output = attach_loop(), tmp_path / "nohup.trace"
    capture = start_capture(disklab, device, output, under=("nohup",))
    capture.send_signal(signal.SIGHUP)  # ignored, as nohup asked: the I/O after it is traced
    subprocess.run(fio(device, "--rw=randwrite", "--bs=4k", "--size=1m", "--output=/dev/null"), check=True)
    returncode, stderr = stop(capture)
    assert returncode == 0, stderr
    assert {record.action for record in read_trace(output)} == {"write"}
