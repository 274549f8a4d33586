"""The trace format: fio's iolog v3 (and v2) read as a stream, written back, with its metadata beside it."""

from pathlib import Path

import pytest

from disklab.errors import UserError
from disklab.trace.iolog import TraceMeta, TraceRecord, meta_path, read_meta, read_trace, write_meta, write_trace

TRACE_FIXTURES = Path(__file__).parents[1] / "fixtures" / "trace"
FIO_IOLOG = TRACE_FIXTURES / "iolog-randrw70-4k-qd8.log"


def test_reads_the_iolog_fio_wrote():
    records = list(read_trace(FIO_IOLOG))
    assert len(records) == 4000
    assert sum(r.action == "read" for r in records) == 2800
    assert {r.length for r in records} == {4096}
    assert {r.file for r in records} == {"/var/tmp/t17s/data"}
    assert records[0] == TraceRecord(271, "/var/tmp/t17s/data", "read", 1011712, 4096)
    assert all(a.time_us <= b.time_us for a, b in zip(records, records[1:]))
    assert all(r.offset % 4096 == 0 and r.offset + r.length <= 16 * 1024**2 for r in records)


def test_version_2_waits_become_timestamps(tmp_path):
    """v2 has no times: each `wait` (microseconds since the previous one) moves the clock (fio's HOWTO, format v2)."""
    path = tmp_path / "v2.log"
    path.write_text("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n/dev/sdb wait 250 0\n"
                    "/dev/sdb write 8192 8192\n/dev/sdb wait 1000 0\n/dev/sdb sync 0 0\n/dev/sdb close\n")
    assert list(read_trace(path)) == [
        TraceRecord(0, "/dev/sdb", "read", 0, 4096), TraceRecord(250, "/dev/sdb", "write", 8192, 8192),
        TraceRecord(1250, "/dev/sdb", "sync", 0, 0),
    ]


def test_written_trace_reads_back_and_fio_names_each_file(tmp_path):
    records = [TraceRecord(0, "/a", "read", 0, 4096), TraceRecord(10, "/b", "write", 4096, 512),
               TraceRecord(10, "/a", "trim", 1 << 40, 1 << 20)]
    assert write_trace(tmp_path / "t.trace", records, ["/a", "/b"]) == 3
    assert list(read_trace(tmp_path / "t.trace")) == records
    lines = (tmp_path / "t.trace").read_text().splitlines()
    assert lines[:5] == ["fio version 3 iolog", "0 /a add", "0 /a open", "0 /b add", "0 /b open"]
    assert lines[-2:] == ["10 /a close", "10 /b close"]


def test_metadata_round_trip(tmp_path):
    trace = tmp_path / "t.trace"
    meta = TraceMeta(method="blktrace", device="/dev/sdb", device_bytes=10**9, duration_s=1.5, lost_events=3,
                     queue_depths={1: 10, 8: 90}, notes=("a", "b"))
    write_meta(trace, meta)
    assert meta_path(trace).name == "t.trace.json"
    assert read_meta(trace) == meta
    assert read_meta(tmp_path / "other.trace") == TraceMeta(method="fio-iolog")  # an iolog alone


@pytest.mark.parametrize("text, message", [
    ("", "is not a fio iolog"),
    ("fio version 4 iolog\n", "is not a fio iolog"),
    ("fio version 3 iolog\n0 /a read 0\n", "line 2: not an iolog action"),
    ("fio version 3 iolog\n0 /a add\nx /a read 0 4096\n", "line 3"),
    ("fio version 3 iolog\n0 /a erase 0 4096\n", "not an iolog action"),
    ("fio version 3 iolog\n0 /a read -1 4096\n", "not an iolog action"),
    ("fio version 3 iolog\n0 /a read ٣ 4096\n", "not an iolog action"),
    # Python refuses to convert 4,300 digits or more (ValueError): a number that long is a malformed line.
    ("fio version 3 iolog\n0 /a read " + "9" * 5000 + " 4096\n", "not an iolog action"),
    ("fio version 2 iolog\n/a read 0\n", "line 2"),
    ("fio version 2 iolog\n/a wait x 0\n", "not an iolog action"),
])
def test_malformed_iolog_is_one_user_error(tmp_path, text, message):
    path = tmp_path / "bad.log"
    path.write_text(text)
    with pytest.raises(UserError, match=message):
        list(read_trace(path))


def test_unreadable_trace_and_metadata_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="cannot read trace"):
        list(read_trace(tmp_path / "missing.log"))
    trace = tmp_path / "t.trace"
    for text in ("{", "[]", '{"method": "x", "queue_depths": {"one": 1}}', '{"queue_depths": []}'):
        meta_path(trace).write_text(text)
        with pytest.raises(UserError, match="cannot read"):
            read_meta(trace)
    meta_path(trace).write_text('{"method": "blktrace", "format_version": 99}')
    with pytest.raises(UserError, match="newer disklab"):
        read_meta(trace)
