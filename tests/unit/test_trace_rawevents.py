"""The decoder of the kernel's raw ring-buffer pages on real pages of this machine's kernel (tests/fixtures/trace/
capture-raw-*, README there): it gives the events the kernel's own text gives for the same buffer, and damaged
input is one UserError."""

import json
import shutil
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from disklab.errors import UserError
from disklab.trace.blockevents import FORK, ISSUE, LOST
from disklab.trace.capture import RecordBuilder, TracedDevice
from disklab.trace.rawevents import read_layout, read_spool
from tests.tracefs_text import parse_tracefs_lines

FIXTURES = Path(__file__).parents[1] / "fixtures" / "trace"
RANDRW = FIXTURES / "capture-raw-randrw"
LOOP1 = TracedDevice("/dev/loop1", (7, 1), 0, 32768)  # the 16 MiB loop device of the raw fixtures


def test_raw_pages_give_what_the_kernels_text_gives():
    with (FIXTURES / "capture-raw-randrw.txt").open() as lines:
        text = list(parse_tracefs_lines(lines))
    raw = list(read_spool(RANDRW))
    # The text prints microseconds, rounded (the kernel's ns2usecs); the pages hold nanoseconds.
    assert [replace(event, time_ns=(event.time_ns + 500) // 1000 * 1000) for event in raw] == text
    assert Counter(event.kind for event in raw) == {"issue": 104, "complete": 104, "fork": 14}
    assert len({event.time_ns % 1000 for event in raw}) > 1  # nanoseconds, not microseconds times 1000


def test_records_of_raw_pages_are_fios_ios():
    fio = json.loads((FIXTURES / "capture-raw-randrw.fio.json").read_text())["jobs"][0]
    builder = RecordBuilder(LOOP1)
    records = list(builder.records(read_spool(RANDRW)))
    sizes = Counter((record.action, record.length) for record in records)
    # fio's randrw job (its total_ios), then a second fio's four 64 KiB writes
    assert sizes == {("read", 4096): fio["read"]["total_ios"], ("write", 4096): fio["write"]["total_ios"],
                     ("write", 65536): 4}
    assert builder.lost_events == 0 and max(builder.queue_depths) == 8


def test_forks_name_parent_and_child():
    forks = [event for event in read_spool(RANDRW) if event.kind == FORK]
    assert all(event.pid > 0 and event.child_pid > event.pid for event in forks)


def test_lost_events_are_the_kernels_overrun():
    events = list(read_spool(FIXTURES / "capture-raw-lost"))
    assert [event.count for event in events if event.kind == LOST] == [1890]  # per_cpu/cpu0/stats: overrun 1890
    assert sum(event.kind == ISSUE for event in events) == 78  # of fio's 1,000: the rest was overwritten


def test_a_layout_the_decoder_does_not_know_is_refused(tmp_path):
    spool = shutil.copytree(RANDRW, tmp_path / "spool")
    (spool / "header_event").write_text((spool / "header_event").read_text().replace("5 bits", "6 bits"))
    with pytest.raises(UserError, match="header_event"):
        read_layout(spool)


def test_a_spool_without_formats_is_refused(tmp_path):
    spool = shutil.copytree(RANDRW, tmp_path / "spool")
    (spool / "header_page").unlink()
    with pytest.raises(UserError, match="cannot read the raw events' formats"):
        list(read_spool(spool))


def decoded_or_refused(spool: Path) -> None:
    try:
        list(read_spool(spool))
    except UserError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cpu=st.sampled_from(["cpu0.raw", "cpu1.raw"]), cut=st.none() | st.integers(0, 8192),
       flips=st.lists(st.tuples(st.integers(0, 8191), st.integers(0, 255)), max_size=12))
def test_damaged_or_truncated_pages_are_a_user_error(cpu, cut, flips):
    with tempfile.TemporaryDirectory() as folder:
        spool = shutil.copytree(RANDRW, Path(folder) / "spool")
        data = bytearray((spool / cpu).read_bytes())
        for position, value in flips:
            if position < len(data):
                data[position] = value
        (spool / cpu).write_bytes(bytes(data[:cut]))
        decoded_or_refused(spool)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["header_page", "header_event", "block_rq_issue.format", "sched_process_fork.format"]),
       start=st.integers(0, 1300), length=st.integers(0, 60), junk=st.text(max_size=20))
def test_damaged_formats_are_a_user_error(name, start, length, junk):
    with tempfile.TemporaryDirectory() as folder:
        spool = shutil.copytree(RANDRW, Path(folder) / "spool")
        text = (spool / name).read_text()
        (spool / name).write_text(text[:start] + junk + text[start + length:])
        decoded_or_refused(spool)


def test_a_field_offset_beyond_reason_is_refused(tmp_path):
    spool = shutil.copytree(RANDRW, tmp_path / "spool")
    issue = spool / "block_rq_issue.format"
    issue.write_text(issue.read_text().replace("offset:16;", "offset:99999999999999999999;"))
    with pytest.raises(UserError, match="cannot read the raw events' formats"):
        list(read_spool(spool))
