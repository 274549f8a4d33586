"""Percentiles of fio's latency histograms (json+ 'bins'), read as fio reads its own: the first bin that reaches each
share. Shared by the live line (the bins of one status interval), by hosts/ (bins merged across hosts) and by the
analysis (passes pooled); and the I/Os slower than a deadline, which reports count."""

from bisect import bisect_left
from collections.abc import Mapping
from itertools import accumulate, chain

from disklab.fio.parse import PERCENTILES


def histogram_percentile(bins: dict[float, int], share: float) -> float | None:
    """The latency of the first bin, in order, whose running count reaches `share` (0.99) of the I/Os; None when
    the histogram is empty."""
    wanted, seen = share * sum(bins.values()), 0
    for value, count in sorted(bins.items()):
        seen += count
        if seen >= wanted:
            return value
    return None


def histogram_percentiles(*histograms: Mapping[float, int]) -> dict[str, float]:
    """fio's percentiles (keys as disklab stores them) of a latency histogram, or of several pooled (the passes of a
    test): histogram_percentile of each share, from one sort of their bins (a value in several is counted at once,
    its bins side by side) and a running count, searched by bisection (a device's history page takes hundreds)."""
    pooled = sorted(chain.from_iterable(histogram.items() for histogram in histograms))
    if not pooled:
        return {}
    values, counts = zip(*pooled)
    running = list(accumulate(counts))
    return {ours: values[bisect_left(running, float(theirs) / 100 * running[-1])]
            for theirs, ours in PERCENTILES.items()}


def count_slower_than(bins: Mapping[float, int] | None, threshold_ns: float) -> int | None:
    """I/Os whose completion took longer than a deadline, from json+ latency bins (None without bins)."""
    if bins is None:
        return None
    return sum(count for value, count in bins.items() if value > threshold_ns)
