"""Preparing a trace for a replay: its facts, the iolog rewritten for a target (refused or wrapped), the job file fio
gets, the speed, and the fidelity of a replay computed from fio's figures (hand cases)."""

from dataclasses import replace
from pathlib import Path

import pytest

from disklab.analysis.compare import match_params
from disklab.errors import UserError
from disklab.fio.parse import DirectionMetrics, JobResult
from disklab.plan.jobfile import render_jobfile, render_layout_jobfile
from disklab.trace.iolog import TraceMeta, TraceRecord, read_trace, write_meta, write_trace
from disklab.trace.replay import (DEFAULT_REPLAY_IODEPTH, WRAP_ALIGNMENT, check_fits, describe_fidelity, fit_to_fio,
                                  parse_speed, replay_fidelity, replay_test, rewrite_for_target, scan_trace,
                                  time_scale_percent, wrapped)

KiB, MiB = 1024, 1024**2
RECORDS = [
    TraceRecord(0, "/dev/sda", "read", 0, 4 * KiB),
    TraceRecord(1_000, "/dev/sda", "write", 8 * MiB, 8 * KiB),
    TraceRecord(2_000, "/dev/sda", "sync", 0, 0),
    TraceRecord(500_000, "/dev/sda", "read", 12 * MiB, 4 * KiB),
    TraceRecord(1_000_000, "/dev/sda", "write", 4 * KiB, 4 * KiB),
]


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "db.trace"
    write_trace(path, RECORDS, ["/dev/sda"])
    return path


def test_scan_counts_each_direction_and_finds_the_footprint_duration_and_alignment(trace):
    facts = scan_trace(trace)
    assert facts.ios == (("read", 2), ("write", 2))
    assert facts.io_bytes == (("read", 8 * KiB), ("write", 12 * KiB))
    assert facts.footprint == 12 * MiB + 4 * KiB
    assert facts.duration_us == 1_000_000 and facts.max_length == 8 * KiB and facts.alignment == 4 * KiB
    assert facts.files == ("/dev/sda",) and facts.queue_depth is None
    assert facts.identity.startswith("db.trace sha256:") and len(facts.digest) == 12


def test_the_deepest_queue_the_capture_saw_sets_the_replays_queue_depth(trace):
    assert replay_test(scan_trace(trace), "max", MiB).iodepth == DEFAULT_REPLAY_IODEPTH
    write_meta(trace, TraceMeta(method="tracefs", queue_depths={1: 10, 7: 3, 3: 5}))
    assert replay_test(scan_trace(trace), "max", MiB).iodepth == 7


def test_content_not_name_changes_the_identity(trace, tmp_path):
    same = tmp_path / "db.trace.copy"
    same.write_bytes(trace.read_bytes())
    assert scan_trace(same).digest == scan_trace(trace).digest
    write_trace(trace, RECORDS[:-1], ["/dev/sda"])
    assert scan_trace(same).digest != scan_trace(trace).digest


def test_a_trace_without_io_is_refused(tmp_path):
    path = tmp_path / "empty.trace"
    write_trace(path, [TraceRecord(0, "/dev/sda", "sync")], ["/dev/sda"])
    with pytest.raises(UserError, match="nothing to replay"):
        scan_trace(path)


def test_offsets_beyond_the_target_are_refused_in_one_line_naming_footprint_and_size(trace):
    with pytest.raises(UserError) as refused:
        check_fits(scan_trace(trace), 8 * MiB, False, 512, direct=True)
    message = str(refused.value)
    assert "\n" not in message and "12292KiB" in message and "8MiB" in message and "--wrap" in message


def test_wrap_folds_offsets_into_the_target_aligned_and_says_locality_changes(trace):
    notes = check_fits(scan_trace(trace), 8 * MiB, True, 512, direct=True)
    assert any("locality" in note for note in notes)
    folded = wrapped(TraceRecord(0, "f", "read", 12 * MiB + 512, 4 * KiB), 10 * MiB)
    assert folded.offset == 2 * MiB and folded.offset % WRAP_ALIGNMENT == 0
    near_end = wrapped(TraceRecord(0, "f", "read", 10 * MiB + 10 * MiB - 2 * KiB, 8 * KiB), 10 * MiB)
    assert near_end.offset + near_end.length <= 10 * MiB and near_end.offset % WRAP_ALIGNMENT == 0
    inside = TraceRecord(0, "f", "read", 512, 4 * KiB)
    assert wrapped(inside, 10 * MiB) == inside  # in range: untouched, however aligned


def test_a_file_of_the_footprints_size_needs_no_check(trace):
    assert check_fits(scan_trace(trace), None, False, 512, direct=True) == []


def test_several_files_are_replayed_onto_the_one_target_and_said_so(tmp_path):
    path = tmp_path / "two.trace"
    write_trace(path, [TraceRecord(0, "/dev/sda", "read", 0, 4096), TraceRecord(5, "/dev/sdb", "read", 0, 4096)],
                ["/dev/sda", "/dev/sdb"])
    (note,) = check_fits(scan_trace(path), None, False, 512, direct=True)
    assert "2 files or devices" in note and "one target" in note


def test_direct_io_needs_offsets_aligned_to_the_targets_blocks(tmp_path):
    path = tmp_path / "odd.trace"
    write_trace(path, [TraceRecord(0, "f", "read", 512, 512)], ["f"])
    with pytest.raises(UserError, match="512 bytes"):
        check_fits(scan_trace(path), None, False, 4096, direct=True)


def test_the_rewrite_names_the_target_as_the_only_file_and_streams_every_record(trace, tmp_path):
    out = tmp_path / "replay.iolog"
    assert rewrite_for_target(scan_trace(trace), out, "/mnt/new/disklab.testfile", 8 * MiB, True) == len(RECORDS)
    lines = out.read_text().splitlines()
    assert lines[0] == "fio version 3 iolog"
    assert lines[1:3] == ["0 /mnt/new/disklab.testfile add", "0 /mnt/new/disklab.testfile open"]
    assert lines[-1] == "1000000 /mnt/new/disklab.testfile close"
    back = list(read_trace(out))
    assert {r.file for r in back} == {"/mnt/new/disklab.testfile"}
    assert [(r.time_us, r.action, r.length) for r in back] == [(r.time_us, r.action, r.length) for r in RECORDS]
    assert all(r.offset + r.length <= 8 * MiB for r in back)
    assert [r.offset for r in back][:2] == [0, 0]  # 8 MiB folds to 0 in an 8 MiB target


def test_a_target_path_fio_cannot_name_in_an_iolog_is_refused(trace, tmp_path):
    with pytest.raises(UserError, match="white space"):
        rewrite_for_target(scan_trace(trace), tmp_path / "x", "/mnt/my disk/f", None, False)


@pytest.mark.parametrize("text, speed, percent", [("1x", "1x", 100), ("2X", "2x", 200), ("0.5x", "0.5x", 50),
                                                  ("max", "max", None)])
def test_speed_is_a_factor_of_the_traces_rate_in_fios_percent(text, speed, percent):
    assert parse_speed(text) == speed and time_scale_percent(speed) == percent


@pytest.mark.parametrize("text", ["2", "fast", "0x", "-1x", "x", "infx", "nanx", "1e309x"])  # finite only
def test_a_speed_that_is_not_a_factor_is_refused(text):
    with pytest.raises(UserError, match="--speed"):
        parse_speed(text)


def test_the_job_file_reads_the_rewritten_log_in_chunks_at_the_asked_speed(trace):
    facts = scan_trace(trace)
    test = replace(replay_test(facts, "2x", facts.footprint), iolog="/var/tmp/x/replay.iolog", engine="libaio")
    text = render_jobfile(test, "/mnt/new/disklab.testfile", "/mnt/new/files", "replay")
    lines = text.splitlines()
    for line in ("read_iolog=/var/tmp/x/replay.iolog", "read_iolog_chunked=1", "replay_time_scale=200",
                 "iodepth=32", "direct=1", "ioengine=libaio", "filename=/mnt/new/disklab.testfile", "rw=randrw"):
        assert line in lines
    assert not any(line.startswith(("runtime=", "time_based", "bs=")) for line in lines)
    fastest = render_jobfile(replace(test, speed="max"), "/dev/sdb", "", "replay").splitlines()
    assert "replay_no_stall=1" in fastest and not any(line.startswith("replay_time_scale") for line in fastest)


def test_a_read_only_trace_is_a_read_only_test(tmp_path):
    path = tmp_path / "reads.trace"
    write_trace(path, [TraceRecord(0, "f", "read", 0, 4096)], ["f"])
    test = replay_test(scan_trace(path), "1x", 4096)
    assert not test.writes
    assert "rw=randread" in render_jobfile(replace(test, iolog="l", engine="libaio"), "/dev/sdb", "", "replay")
    assert replay_test(scan_trace(tmp_path / "reads.trace"), "1x", 4096).direction == "read"


def test_the_layout_job_writes_the_whole_test_file(trace):
    test = replace(replay_test(scan_trace(trace), "1x", 12 * MiB + 4 * KiB), engine="libaio")
    lines = render_layout_jobfile(test, "/mnt/new/t").splitlines()
    assert "rw=write" in lines and f"size={12 * MiB + 4 * KiB}" in lines and "bs=4k" in lines


def test_a_timed_replay_on_an_old_fio_runs_at_queue_depth_1_and_says_why(trace):
    test = replay_test(scan_trace(trace), "1x", MiB)
    cut, note = fit_to_fio(test, (3, 33))
    assert cut.iodepth == 1 and "3.36" in note
    assert fit_to_fio(test, (3, 36)) == (test, None)
    fastest = replace(test, speed="max")
    assert fit_to_fio(fastest, (3, 33)) == (fastest, None)


def metrics(direction: str, ios: int, io_bytes: int, runtime_ms: int) -> DirectionMetrics:
    return DirectionMetrics(direction, io_bytes, ios, ios / runtime_ms * 1e3, io_bytes / runtime_ms * 1e3, runtime_ms,
                            100e3, 90e3, 1e6, {"p99": 200e3})


def job(*directions: DirectionMetrics) -> JobResult:
    return JobResult("replay", 0, 1.0, 1.0, directions)


def test_a_faithful_replay_has_no_warning(trace):
    facts = scan_trace(trace)
    fidelity = replay_fidelity(facts, "1x", job(metrics("read", 2, 8 * KiB, 1_020), metrics("write", 2, 12 * KiB, 1_030)))
    assert fidelity["warnings"] == []
    assert fidelity["original_duration_s"] == 1.0 and fidelity["achieved_duration_s"] == 1.03
    assert fidelity["original_iops"] == 4.0 and fidelity["achieved_iops"] == pytest.approx(4 / 1.03)
    assert fidelity["ios_replayed"] == fidelity["ios_in_trace"] == {"read": 2, "write": 2}
    assert "1.03 s vs 1.00 s" in describe_fidelity(fidelity)


def test_a_replay_slower_than_the_margin_warns_at_a_set_speed_only(trace):
    facts = scan_trace(trace)
    slow = job(metrics("read", 2, 8 * KiB, 600), metrics("write", 2, 12 * KiB, 600))
    (warning,) = replay_fidelity(facts, "2x", slow)["warnings"]  # 2x: 0.5 s expected, 0.6 s taken
    assert "20 % slower" in warning
    assert replay_fidelity(facts, "max", slow)["warnings"] == []


def test_io_counts_that_differ_from_the_trace_warn_per_direction(trace):
    fidelity = replay_fidelity(scan_trace(trace), "max", job(metrics("read", 1, 4 * KiB, 10),
                                                              metrics("write", 2, 12 * KiB, 10)))
    assert fidelity["warnings"] == ["read: 1 I/Os replayed of 2 in the trace"]


def test_bytes_fio_miscounts_in_as_many_ios_are_said_to_understate_mb_per_s(trace):
    fidelity = replay_fidelity(scan_trace(trace), "max", job(metrics("read", 2, 8 * KiB, 10),
                                                              metrics("write", 2, 8 * KiB, 10)))
    (warning,) = fidelity["warnings"]
    assert warning.startswith("write: fio counted 8,192 bytes") and "understated" in warning


def test_two_replays_of_one_trace_at_one_speed_are_the_same_test_in_a_comparison(trace, tmp_path):
    facts = scan_trace(trace)
    one = replay_test(facts, "1x", MiB)
    other_target = replace(one, size=64 * MiB, iodepth=1, iolog="/elsewhere")
    assert match_params(one.params()) == match_params(other_target.params())
    assert match_params(one.params()) != match_params(replay_test(facts, "max", MiB).params())
    changed = tmp_path / "other.trace"
    write_trace(changed, RECORDS[:2], ["/dev/sda"])
    assert match_params(one.params()) != match_params(replay_test(scan_trace(changed), "1x", MiB).params())
