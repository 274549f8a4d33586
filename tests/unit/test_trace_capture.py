"""`disklab capture`'s pure parts on real kernel output (tests/fixtures/trace/capture-*, README there): tracefs's
trace_pipe lines, issue/complete pairing into queue depths, partitions, flushes and discards, --pid's process
tree, lost events, blktrace's refusal."""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.trace.blktrace import _refusal, exited_at_once
from disklab.trace.blockevents import COMPLETE, FORK, ISSUE, LOST, REQUEUE, BlockEvent, seconds_to_ns
from disklab.trace.capture import RecordBuilder, TracedDevice, process_tree
from disklab.trace.tracefs import lost_in_stats
from tests.tracefs_text import parse_tracefs_lines

FIXTURES = Path(__file__).parents[1] / "fixtures" / "trace"
LOOP0 = TracedDevice("/dev/loop0", (7, 0), 0, 131072)  # the 64 MiB loop device of the fixtures
LOOP0P1 = TracedDevice("/dev/loop0p1", (7, 0), 2048, 40960)  # its first partition (20 MiB from sector 2048)


def events(name: str) -> list[BlockEvent]:
    with (FIXTURES / name).open() as lines:
        return list(parse_tracefs_lines(lines))


def records(name: str, device: TracedDevice, pids: set[int] | None = None):
    builder = RecordBuilder(device, pids=pids)
    return list(builder.records(events(name))), builder


def test_tracefs_lines_become_events():
    parsed = events("capture-fio-randrw-qd8.txt")
    assert Counter(e.kind for e in parsed) == {ISSUE: 300, COMPLETE: 300, FORK: 14}
    first = next(e for e in parsed if e.kind == ISSUE)
    assert (first.dev, first.rwbs, first.bytes, first.sector, first.sectors, first.pid) == ((7, 0), "R", 4096, 7904,
                                                                                            8, 15085)
    assert first.time_ns == 23509_136949_000  # tracefs prints microseconds
    fork = next(e for e in parsed if e.kind == FORK and e.pid == 15081)
    assert fork.child_pid == 15082


def test_task_names_with_dashes_and_slashes_keep_their_pid():
    jbd2 = [e for e in events("capture-partition-ext4.txt") if e.pid == 15599]  # `jbd2/loop0p1-8-15599`
    assert jbd2 and all(e.rwbs == "WSM" for e in jbd2 if e.kind == ISSUE)


def test_lost_events_line():
    parsed = events("capture-lost-events.txt")
    assert parsed[0] == BlockEvent(LOST, count=63)
    _, builder = records("capture-lost-events.txt", TracedDevice("/dev/loop1", (7, 1), 0, 131072))
    assert builder.lost_events == 63


def test_per_cpu_stats_count_overruns():
    assert lost_in_stats((FIXTURES / "capture-stats-overrun.cpu0").read_text()) == 67559
    assert lost_in_stats((FIXTURES / "capture-stats-overrun.cpu1").read_text()) == 40517


def test_timestamps_in_either_unit_are_exact_nanoseconds():
    assert seconds_to_ns("23496.605739") == 23_496_605_739_000  # tracefs: microseconds
    assert seconds_to_ns("0.000065423") == 65_423  # blkparse: nanoseconds


def test_fio_job_is_recovered():
    """fio's own counts (its JSON beside the fixture) are the trace's: every issued request once, 4 KiB each."""
    trace, builder = records("capture-fio-randrw-qd8.txt", LOOP0)
    fio = json.loads((FIXTURES / "capture-fio-randrw-qd8.fio.json").read_text())["jobs"][0]
    actions = Counter(r.action for r in trace)
    assert actions == {"read": fio["read"]["total_ios"], "write": fio["write"]["total_ios"]} == {"read": 212,
                                                                                               "write": 88}
    assert {r.length for r in trace} == {4096}
    assert trace[0].time_us == 0 and trace[0].offset == 7904 * 512
    assert all(a.time_us <= b.time_us for a, b in zip(trace, trace[1:]))
    assert sum(builder.queue_depths.values()) == 300
    assert max(builder.queue_depths) == 8  # fio's iodepth: never more in flight
    assert builder.notes() == []


def test_partition_offsets_are_relative_and_the_rest_of_the_disk_is_left_out():
    trace, builder = records("capture-partition-ext4.txt", LOOP0P1)
    data = [r for r in trace if r.action != "sync"]
    assert all(0 <= r.offset and r.offset + r.length <= 40960 * 512 for r in data)
    trims = [r for r in trace if r.action == "trim"]
    assert [(t.offset, t.length) for t in trims] == [(1 << 20, 1 << 20)]  # blkdiscard -o 1M -l 1M on p1
    assert builder.left_out["elsewhere on the disk"] == 26  # p2's discard, and reads of the GPT
    assert any("partition" in note for note in builder.notes())
    whole, _ = records("capture-partition-ext4.txt", LOOP0)
    assert Counter(r.action for r in whole)["trim"] == 2  # the disk saw p2's discard too (sector 43008)


def test_flushes_become_syncs():
    trace, _ = records("capture-partition-ext4.txt", LOOP0)
    syncs = [r for r in trace if r.action == "sync"]
    assert len(syncs) == 12 and {(s.offset, s.length) for s in syncs} == {(0, 0)}  # the 12 `FF 0 () 0 + 0`


@pytest.mark.parametrize("rwbs, actions", [
    ("FWS", ["sync", "write"]),  # a cache flush before the data
    ("WFS", ["write"]),  # FUA: the data itself is written through; fio's iolog has no FUA
    ("RA", ["read"]),
    ("DS", ["trim"]),
    ("F", ["sync"]),
    ("N", []),  # write-zeroes, zone and driver commands: fio cannot replay them
])
def test_request_flags(rwbs, actions):
    builder = RecordBuilder(LOOP0)
    issue = BlockEvent(ISSUE, 1000, (7, 0), 64, 0 if rwbs == "F" else 8, 0 if rwbs == "F" else 4096, rwbs)
    assert [r.action for r in builder.records([issue])] == actions


def test_requeued_request_is_one_record():
    issue = BlockEvent(ISSUE, 1000, (7, 0), 64, 8, 4096, "W")
    stream = [issue, BlockEvent(REQUEUE, 2000, (7, 0), 64, 8, 0, "W"),
              BlockEvent(ISSUE, 3000, (7, 0), 64, 8, 4096, "W"), BlockEvent(COMPLETE, 4000, (7, 0), 64, 8, 0, "W")]
    builder = RecordBuilder(LOOP0)
    assert len(list(builder.records(stream))) == 1 and builder.queue_depths == {1: 1}


def test_other_devices_are_left_out():
    other = BlockEvent(ISSUE, 1000, (8, 0), 64, 8, 4096, "R")
    builder = RecordBuilder(LOOP0)
    assert list(builder.records([other])) == [] and builder.left_out == {"other device": 1}


def test_pid_follows_forks():
    """fio (15081) forked its job (15085), which issued every request; the shell that started fio did not."""
    kept, _ = records("capture-fio-randrw-qd8.txt", LOOP0, pids={15081})
    assert len(kept) == 300
    none, builder = records("capture-fio-randrw-qd8.txt", LOOP0, pids={15080})
    assert none == [] and builder.left_out["other processes"] == 300
    assert max(builder.queue_depths, default=0) == 0


def test_process_tree_holds_children_and_threads():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        tree = process_tree(os.getpid())
        assert {os.getpid(), child.pid} <= tree
        assert {int(t) for t in os.listdir(f"/proc/{os.getpid()}/task")} <= tree
    finally:
        child.kill()
        child.wait()


def test_blktrace_refusal_is_named():
    text = (FIXTURES / "capture-blktrace-refused.stderr").read_text()
    assert _refusal(text) == "relay files refused (Operation not permitted)"


def test_a_blktrace_that_exits_at_once_never_gives_an_empty_reason():
    """It said 'blktrace exited at once ()'."""
    silent = subprocess.run(["sh", "-c", "exit 1"], capture_output=True, text=True)
    reason = exited_at_once(silent.returncode, silent.stderr)
    assert "()" not in reason and "exit status 1" in reason and "debugfs" in reason
    killed = subprocess.run(["sh", "-c", "kill -9 $$"], capture_output=True, text=True)
    assert "killed by signal 9" in exited_at_once(killed.returncode, killed.stderr)
    said = exited_at_once(2, "blktrace: no such device\n\n")
    assert said == "blktrace exited at once (exit status 2): blktrace: no such device"


@pytest.mark.parametrize("args, message", [
    (["/etc/passwd"], "is not a block device"),
    (["/dev/null", "--pid", "1", "--method", "blktrace"], "--pid needs --method tracefs"),
    (["/dev/null", "--duration", "0"], "no time to trace"),
])
def test_refusals_are_one_line_and_exit_2(tmp_path, args, message):
    result = CliRunner().invoke(cli, ["capture", *args, "-o", str(tmp_path / "x.trace")])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("disklab: error:")
    if os.geteuid() == 0:
        assert message in lines[0]
    else:
        assert "capture needs root" in lines[0] or message in lines[0]
