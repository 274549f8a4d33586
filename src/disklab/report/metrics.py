"""The figures a suite view can show (disklab.suite.model.METRICS): heading, unit, and how each comes from stored tests.

A view's cell usually holds one test; several tests land in one cell when a group repeats or when a parameter
the view does not show varies. Each figure says how it combines them, without averaging what cannot be averaged.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from disklab.analysis.repeats import TAIL_IOS, pooled_lat_mean_ns, pooled_percentiles
from disklab.fio.histogram import count_slower_than
from disklab.fio.parse import DIRECTIONS, DirectionMetrics
from disklab.report.table import format_us
from disklab.store.records import StoredTest


@dataclass(frozen=True)
class Metric:
    name: str
    heading: str  # a column heading, unit included
    unit: str  # written after the number where a cell shows its test's own metric
    compute: Callable[[Sequence[StoredTest]], float | None]  # the tests of one cell -> the figure, None: none
    format: Callable[[float], str]
    note: str  # how the figure is made, for the view's notes
    best: Callable = max  # which of several passes is the best (run --best-of): max, or min where less is better


def _data_directions(tests: Sequence[StoredTest]) -> list[DirectionMetrics]:
    """read, write and trim: the 'sync' pseudo-direction counts flush calls, not I/O."""
    return [m for t in tests for m in t.metrics if m.direction in DIRECTIONS]


def _iops(tests: Sequence[StoredTest]) -> float:
    return sum(m.iops for m in _data_directions(tests)) / len(tests)


def _mb_per_s(tests: Sequence[StoredTest]) -> float:
    return sum(m.bw_bytes_per_s for m in _data_directions(tests)) / 1e6 / len(tests)


def _elapsed_s(tests: Sequence[StoredTest]) -> float | None:
    """fio's runtime of each test's I/O (a write's closing flush, end_fsync, included): the time a pass took."""
    seconds = [max((m.runtime_ms for m in _data_directions([t])), default=0) / 1000 for t in tests]
    return sum(seconds) / len(seconds) if any(seconds) else None


def _lat_mean_us(tests: Sequence[StoredTest]) -> float | None:
    lat_ns = pooled_lat_mean_ns(_data_directions(tests))
    return None if lat_ns is None else lat_ns / 1e3


def _p99_us(tests: Sequence[StoredTest], directions: Sequence[str]) -> float | None:
    pooled = pooled_percentiles(tests, directions)
    p99_ns = pooled.ns.get("p99") if pooled else None
    return None if p99_ns is None else p99_ns / 1e3


def _clat_p99_us(tests: Sequence[StoredTest]) -> float | None:
    return _p99_us(tests, DIRECTIONS)


def _sync_p99_us(tests: Sequence[StoredTest]) -> float | None:
    return _p99_us(tests, ("sync",))


def _tps(tests: Sequence[StoredTest]) -> float | None:
    """pgbench steps store their transactions as a direction of their own (database/benchmark.py)."""
    tps = [m.iops for t in tests for m in t.metrics if m.direction == "transaction"]
    return sum(tps) / len(tps) if tps else None


def _frames_missed(tests: Sequence[StoredTest]) -> float | None:
    counts = [_test_frames_missed(t) for t in tests]
    return None if None in counts else sum(counts) / len(counts)


def _test_frames_missed(test: StoredTest) -> int | None:
    """One request per frame: a frame is missed when its request completes after 1/fps."""
    if test.params.get("frame_size") is None:
        return None
    deadline_ns = 1e9 / test.params["fps"]
    counts = [count_slower_than(test.latency_bins(m.direction), deadline_ns) for m in _data_directions([test])]
    return None if None in counts else sum(counts)


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _mb(value: float) -> str:
    return f"{value:,.1f}"


def _seconds(value: float) -> str:
    """fio's runtimes are whole milliseconds: three significant digits for short tests, tenths for long ones."""
    return f"{value:,.1f}" if value >= 100 else f"{value:.3g}"


REGISTRY: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("iops", "IOPS", "IOPS", _iops, _count, ""),
        Metric("mb_per_s", "MB/s", "MB/s", _mb_per_s, _mb, "MB/s = 10^6 bytes/s"),
        Metric("lat_mean_us", "mean lat µs", "µs mean", _lat_mean_us, format_us,
               "mean lat: total latency, weighted by each direction's I/O count", min),
        Metric("clat_p99_us", "p99 µs", "µs p99", _clat_p99_us, format_us,
               f"p99: completion-latency p99 of every I/O of the passes and directions (fio's json+ histograms "
               f"merged); none from fewer than {TAIL_IOS * 100:,} I/Os", min),
        Metric("sync_p99_us", "sync p99 µs", "µs sync p99", _sync_p99_us, format_us,
               "sync p99: latency p99 of the fsync/fdatasync calls, the passes' histograms merged", min),
        Metric("frames_missed", "frames missed", "frames missed", _frames_missed, _count,
               "frames missed: frame requests that completed later than 1/fps", min),
        Metric("tps", "TPS", "TPS", _tps, _mb,
               "TPS: pgbench's transactions per second, excluding connection set-up"),
        Metric("elapsed_s", "elapsed s", "s elapsed", _elapsed_s, _seconds,
               "elapsed: fio's runtime of a test's I/O, its closing flush included; the mean of the passes", min),
    )
}


# Units of axes that are no figure of REGISTRY's: the CrystalDiskMark grid's GB/s, latencies in other units.
_BETTER_UNITS = {"GB/s": max, "ms": min, "latency": min}


def better(axis_label: str) -> str:
    """'higher is better' or 'lower is better' for an axis named by a metric's unit ('MB/s (log scale)',
    'latency (µs, log scale)'), as REGISTRY's best pass is chosen; "" for an axis that is no metric (a share)."""
    units = {**{m.unit.split()[0]: m.best for m in REGISTRY.values()}, **_BETTER_UNITS}
    for word in re.findall(r"[^\s(),·]+", axis_label):
        if word in units:
            return "higher is better" if units[word] is max else "lower is better"
    return ""
