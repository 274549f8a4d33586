"""Which stored tests of a run are one planned test (its repeats, or its rounds towards steady state), and how the
latencies of several directions or repeats pool: weighted by I/O count, and percentiles never averaged."""

from collections.abc import Sequence

from disklab.fio.parse import DirectionMetrics
from disklab.store.records import RunRecord, StoredTest


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


def worst_p99_ns(directions: Sequence[DirectionMetrics]) -> float | None:
    """The largest of the directions' completion-latency p99s: percentiles cannot be averaged. None: none stored."""
    p99s = [m.clat_percentiles_ns["p99"] for m in directions if "p99" in m.clat_percentiles_ns]
    return max(p99s) if p99s else None
