"""Percentiles of fio's latency histograms (json+ 'bins'), read as fio reads its own: the first bin that reaches each
share. Shared by the live line (the bins of one status interval), by hosts/ (bins merged across hosts) and by the
analysis (passes pooled); and the I/Os slower than a deadline, which reports count."""

from disklab.fio.parse import PERCENTILES, latency_bins


def histogram_percentile(bins: dict[float, int], share: float) -> float | None:
    """The latency of the first bin, in order, whose running count reaches `share` (0.99) of the I/Os; None when
    the histogram is empty."""
    wanted, seen = share * sum(bins.values()), 0
    for value, count in sorted(bins.items()):
        seen += count
        if seen >= wanted:
            return value
    return None


def histogram_percentiles(bins: dict[float, int]) -> dict[str, float]:
    """fio's percentiles (keys as disklab stores them) of a latency histogram: histogram_percentile of each share,
    in one pass over the sorted bins (a device's history page takes thousands)."""
    total = sum(bins.values())
    wanted = sorted((float(theirs) / 100 * total, ours) for theirs, ours in PERCENTILES.items())
    found, seen, next_wanted = {}, 0, 0
    for value, count in sorted(bins.items()):
        seen += count
        while next_wanted < len(wanted) and seen >= wanted[next_wanted][0]:
            found[wanted[next_wanted][1]] = value
            next_wanted += 1
        if next_wanted == len(wanted):
            break
    return {ours: found[ours] for ours in PERCENTILES.values() if ours in found}


def count_slower_than(output: str, direction: str, threshold_ns: float) -> int | None:
    """I/Os whose completion took longer than a deadline, from json+ latency bins (None without bins)."""
    bins = latency_bins(output, direction)
    if bins is None:
        return None
    return sum(count for value, count in bins.items() if value > threshold_ns)
