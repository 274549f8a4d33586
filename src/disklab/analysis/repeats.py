"""Which stored tests of a run are one planned test (its repeats, or its rounds towards steady state), and how the
latencies of several directions or repeats pool: the mean over every I/O (fio's total latency over its I/O count),
and percentiles of the passes' json+ histograms merged (fio's bins add exactly), never averaged."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from disklab.analysis.stats import Summary, centred_on, summarize, weighted_summarize
from disklab.fio.histogram import histogram_percentiles
from disklab.fio.parse import PERCENTILES, DirectionMetrics
from disklab.store.records import RunRecord, StoredTest

# A percentile p is read from a sample of at least this many / (1 - p) I/Os (p99 from 1,000, p99.99 from 100,000):
# fewer leave fewer than ten I/Os beyond it, and the figure is one I/O's chance.
TAIL_IOS = 10
PERCENTILE_SHARES = {ours: float(theirs) / 100 for theirs, ours in PERCENTILES.items()}


def repeated(record: RunRecord) -> bool:
    """Whether the run repeated its tests to measure their spread: then results are shown per planned test.

    Rounds towards steady state also share a planned test, but they are a series, not repeats of one measurement.
    """
    options = record.info.options
    return options.get("repeat", 1) > 1 or options.get("precision") is not None


def planned_tests(record: RunRecord) -> dict[int, list[StoredTest]]:
    """The stored tests of each planned test (its repeats or rounds), in plan order."""
    by_plan: dict[int, list[StoredTest]] = {}
    for test in sorted(record.tests, key=lambda t: (t.plan_index, t.attempt)):
        by_plan.setdefault(test.plan_index, []).append(test)
    return by_plan


def pooled_lat_mean_ns(directions: Sequence[DirectionMetrics]) -> float | None:
    """The mean latency over every I/O of the directions: each one's mean weighted by its I/O count, so a short
    run does not weigh as much as a long one. None when they did no I/O."""
    ios = sum(m.total_ios for m in directions)
    return sum(m.lat_mean_ns * m.total_ios for m in directions) / ios if ios else None


def supported(percentile: str, ios: int) -> bool:
    """Whether `ios` I/Os are enough to read the percentile ('p99') from (TAIL_IOS)."""
    return ios * (1 - PERCENTILE_SHARES[percentile]) >= TAIL_IOS - 1e-9


@dataclass(frozen=True)
class PooledPercentiles:
    """Completion-latency percentiles of the I/O of several passes (and directions): those the sample supports, ns,
    from the merged histograms (for output without json+ bins the largest of the passes' own figures: an upper
    bound, percentiles cannot be averaged); and how many I/Os they rest on."""

    ns: dict[str, float]
    ios: int


def latency_histograms(tests: Sequence[StoredTest], directions: Sequence[str]) -> list[Mapping[float, int]] | None:
    """fio's json+ completion-latency histogram (ns -> I/O count) of each of the tests' directions; None where one
    has no bins (json output, imported output without them, pgbench's)."""
    histograms = []
    for test in tests:
        for direction in directions:
            if not any(m.direction == direction for m in test.metrics):
                continue
            bins = test.latency_bins(direction)
            if bins is None:
                return None
            histograms.append(bins)
    return histograms


def merged_latency_bins(tests: Sequence[StoredTest], directions: Sequence[str]) -> dict[float, int] | None:
    """The tests' histograms (latency_histograms) added into one."""
    histograms = latency_histograms(tests, directions)
    if histograms is None:
        return None
    merged: dict[float, int] = {}
    for bins in histograms:
        for value, count in bins.items():
            merged[value] = merged.get(value, 0) + count
    return merged


def pooled_percentiles(tests: Sequence[StoredTest], directions: Sequence[str]) -> PooledPercentiles | None:
    """The percentiles of every I/O of `tests` in `directions`; None where they did no I/O."""
    histograms = latency_histograms(tests, directions)
    if histograms is None:
        return _largest_of_passes(tests, directions)
    ios = sum(sum(bins.values()) for bins in histograms)
    if not ios:
        return None
    found = histogram_percentiles(*histograms)
    return PooledPercentiles({k: v for k, v in found.items() if supported(k, ios)}, ios)


def pooled_sample(tests: Sequence[StoredTest], direction: str, figure: str,
                  measured: Sequence[tuple[float, int]]) -> Summary | None:
    """The passes' figures of one direction (each with its I/O count) as one sample: a latency centred on the figure
    of all their I/O, as show has it (the mean over every I/O, the p99 of the merged histograms), with the passes'
    spread; None for a p99 too few I/Os support."""
    values = [value for value, _ in measured]
    if figure == "lat_mean_us":
        return weighted_summarize(values, [ios for _, ios in measured])
    if figure == "clat_p99_us":
        pooled = pooled_percentiles(tests, (direction,))
        p99_ns = pooled.ns.get("p99") if pooled else None
        return None if p99_ns is None else centred_on(summarize(values), p99_ns / 1e3)
    return summarize(values)


def _largest_of_passes(tests: Sequence[StoredTest], directions: Sequence[str]) -> PooledPercentiles | None:
    metrics = [m for t in tests for m in t.metrics if m.direction in directions]
    ios = sum(m.total_ios for m in metrics)
    if not metrics or not ios:
        return None
    found = {key: max(values) for key in PERCENTILE_SHARES
             if (values := [m.clat_percentiles_ns[key] for m in metrics if key in m.clat_percentiles_ns])}
    return PooledPercentiles({k: v for k, v in found.items() if supported(k, ios)}, ios)
