"""Trace summaries recover the parameters of the fio jobs that made the traces, and the suite synthesized from them."""

import shutil
import tomllib
from pathlib import Path

import pytest

from disklab.errors import UserError
from disklab.suite.loader import load_suite
from disklab.trace.imports import import_trace
from disklab.trace.iolog import TraceMeta, TraceRecord, read_meta, read_trace
from disklab.trace.summary import MAX_EXACT_SIZES, SUMMARY_FORMAT_VERSION, summarize, summary_document
from disklab.trace.synthesize import bssplit, synthesize_suite

TRACE_FIXTURES = Path(__file__).parents[1] / "fixtures" / "trace"
FIO_IOLOG = TRACE_FIXTURES / "iolog-randrw70-4k-qd8.log"
BLKTRACE_QD8 = TRACE_FIXTURES / "blktrace-randrw70-4k-qd8.blktrace.0"
needs_blkparse = pytest.mark.skipif(shutil.which("blkparse") is None, reason="blkparse (Debian's blktrace) missing")
MIB = 1024**2


def summary_of(path: Path):
    return summarize(read_trace(path), read_meta(path))


def test_fio_iolog_recovers_the_job():
    """fio 3.33: randrw, rwmixread=70, bs=4k, 16 MiB file, 2 s, rate_iops=1400,600 (README)."""
    s = summary_of(FIO_IOLOG)
    assert s.read_share_ios == pytest.approx(0.70, abs=0.03)
    assert s.read_share_bytes == pytest.approx(0.70, abs=0.03)
    assert s.sizes == ((4096, 4000),) and s.size_buckets == ((4096, 4000),)
    assert s.verdict == "random" and s.sequential_share["all"] < 0.05
    assert s.queue_depth is None  # an iolog holds no completions
    assert 15 * MIB < s.footprint_bytes <= 16 * MIB and s.distinct_mib == 16
    assert s.duration_s == pytest.approx(2.0, abs=0.05)
    assert s.mean_iops == pytest.approx(2000, rel=0.05)
    assert [r.ios for r in s.rate] == [2000, 2000]
    # Even pacing at 500 µs: the median gap is within its log bucket's width (26 %) of it.
    assert s.gaps_us.mean == pytest.approx(500, rel=0.02)
    assert s.gaps_us.p50 == pytest.approx(500, rel=0.26)


@needs_blkparse
def test_blktrace_recovers_the_job_and_its_queue_depth(tmp_path):
    """randrw 70/30, 4 KiB, iodepth=8 on a loop device, traced by the kernel's blk tracer (README)."""
    import_trace([BLKTRACE_QD8], tmp_path / "q.trace")
    s = summary_of(tmp_path / "q.trace")
    assert s.data_ios == 1024
    assert s.read_share_ios == pytest.approx(0.70, abs=0.03)
    assert s.sizes == ((4096, 1024),)
    assert s.verdict == "random"
    assert s.queue_depth.max == 8 and s.queue_depth.p90 == 8 and 1 < s.queue_depth.mean < 8
    assert s.footprint_bytes <= 64 * MIB
    suite = tomllib.loads(synthesize_suite(s, "q", "q.trace"))["group"][0]
    assert suite["iodepth"] == 8


def test_suite_synthesized_from_fio_iolog_loads_and_keeps_the_parameters(tmp_path):
    text = synthesize_suite(summary_of(FIO_IOLOG), "mix", FIO_IOLOG.name)
    path = tmp_path / "mix.toml"
    path.write_text(text)
    suite = load_suite(str(path))
    group = dict(suite.groups[0].values)
    assert group["pattern"] == "random" and group["direction"] == "mixed"
    assert abs(group["rwmixread"] - 70) <= 3
    assert group["bs"] == 4096 and group["iodepth"] == 1 and group["size"] == 16 * MIB
    assert group["runtime"] == pytest.approx(2.0, abs=0.002) and "rate_iops" not in group  # one rate_iops would break a 70/30 mix
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("queue depth is unknown" in line for line in header)
    assert any("bursts" in line and "locality" in line for line in header)


def records(*items):
    return [TraceRecord(*item) for item in items]


def test_sequential_streams_are_per_file_and_direction():
    s = summarize(records((0, "/a", "read", 0, 4096), (1, "/b", "read", 0, 4096), (2, "/a", "write", 4096, 4096),
                          (3, "/a", "read", 4096, 4096), (4, "/b", "read", 4096, 4096),
                          (5, "/a", "read", 8192, 8192)), TraceMeta(method="fio-iolog"))
    assert s.sequential_share == {"read": 3 / 5, "write": 0.0, "all": 3 / 6}
    assert s.verdict == "sequential"


def test_sizes_exact_and_in_power_of_two_buckets():
    s = summarize(records(*((i, "/a", "read", 0, size) for i, size in enumerate([512, 4096, 4096, 6144, 1 << 20]))),
                  TraceMeta(method="fio-iolog"))
    assert s.sizes == ((4096, 2), (512, 1), (6144, 1), (1 << 20, 1))
    assert s.size_buckets == ((512, 1), (4096, 2), (8192, 1), (1 << 20, 1))
    many = summarize(records(*((i, "/a", "read", 0, 512 * (i + 1)) for i in range(MAX_EXACT_SIZES + 5))),
                     TraceMeta(method="fio-iolog"))
    assert len(many.sizes) == MAX_EXACT_SIZES and many.sizes_other == 5
    assert sum(n for _, n in many.size_buckets) == MAX_EXACT_SIZES + 5


def test_bssplit_top_sizes_add_up_to_100():
    s = summarize(records(*((i, "/a", "write", 0, size) for i, size in
                            enumerate([4096] * 3 + [65536] * 3 + [131072] * 3))), TraceMeta(method="fio-iolog"))
    assert bssplit(s) == "4k/34:64k/33:128k/33"
    text = synthesize_suite(s, "w", "w.trace")
    group = tomllib.loads(text)["group"][0]
    assert group["direction"] == "write" and group["bssplit"] == "4k/34:64k/33:128k/33"
    assert group["rate_iops"] >= 1  # one direction: the mean rate is kept


def test_footprint_bitmap_is_capped_and_long_traces_fold_their_rate_rows():
    s = summarize(records((0, "/a", "read", 0, 4096), (10**12, "/a", "read", 1 << 58, 4096)),
                  TraceMeta(method="fio-iolog"))
    assert s.footprint_bytes == (1 << 58) + 4096 and s.distinct_mib is None
    assert 1 <= len(s.rate) <= 20 and sum(r.ios for r in s.rate) == 2
    big = summarize(records((0, "/a", "trim", 0, 1 << 40)), TraceMeta(method="fio-iolog"))
    assert big.distinct_mib == 1 << 20 and big.actions["trim"] == (1, 1 << 40)


def test_queue_depth_from_the_metadata_and_times_going_back():
    meta = TraceMeta(method="tracefs", queue_depths={1: 10, 4: 80, 32: 10})
    s = summarize(records((5, "/a", "read", 0, 4096), (3, "/a", "read", 0, 4096)), meta)
    assert (s.queue_depth.mean, s.queue_depth.p50, s.queue_depth.p99, s.queue_depth.max) == (6.5, 4, 32, 32)
    assert s.out_of_order == 1 and s.gaps_us.max == 0
    assert summary_document(s)["format_version"] == SUMMARY_FORMAT_VERSION


def test_nothing_to_approximate_is_refused():
    s = summarize(records((0, "/a", "sync", 0, 0)), TraceMeta(method="fio-iolog"))
    assert s.read_share_ios is None and s.verdict is None and s.gaps_us is None
    with pytest.raises(UserError, match="no reads or writes"):
        synthesize_suite(s, "x", "x.trace")
