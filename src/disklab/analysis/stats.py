"""Mean, spread and 95 % confidence interval of repeated measurements, without a statistics dependency."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

# A 95 % interval wider than this share of the mean is too wide to trust: the one source of this default.
TOO_WIDE_PERCENT = 10.0

# Student's t, two-sided 95 % (the 0.975 quantile), for df = 1..30; beyond, the Cornish-Fisher expansion below
# is accurate to about 1e-6.
_T_975 = (
    12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
    2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
    2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
)
_Z_975 = 1.959963985


def t_975(df: float) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom (math.inf: the normal's 1.96)."""
    if df < 1:
        raise ValueError(f"Student's t needs at least 1 degree of freedom, not {df}")
    if df <= len(_T_975) and df == int(df):
        return _T_975[int(df) - 1]
    if math.isinf(df):
        return _Z_975
    z, v = _Z_975, df
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4)
    )


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    stdev: float | None  # sample standard deviation (n - 1); None for a single value
    ci95_half_width: float | None  # the mean is within +/- this with 95 % confidence; None for a single value
    ci95_percent: float | None  # that half-width as a percentage of the mean; None also when the mean is 0

    def as_dict(self) -> dict:
        return {"n": self.n, "mean": self.mean, "stdev": self.stdev, "ci95_half_width": self.ci95_half_width,
                "ci95_percent": self.ci95_percent}


def summarize(values: Sequence[float]) -> Summary:
    n = len(values)
    if n == 0:
        raise ValueError("no values to summarise")
    mean = math.fsum(values) / n
    if n == 1:
        return Summary(1, mean, None, None, None)
    stdev = math.sqrt(math.fsum((x - mean) ** 2 for x in values) / (n - 1))
    half = t_975(n - 1) * stdev / math.sqrt(n)
    return Summary(n, mean, stdev, half, abs(half / mean) * 100 if mean else None)


def weighted_summarize(values: Sequence[float], weights: Sequence[float]) -> Summary:
    """The weighted mean (a latency mean over every I/O: each pass's mean weighted by its I/O count), and the passes'
    spread around it as n passes (reliability weights: equal weights give summarize's figures)."""
    total = math.fsum(weights)
    if not values or total <= 0:
        return summarize(values)
    n = len(values)
    mean = math.fsum(w * x for x, w in zip(values, weights)) / total
    if n == 1:
        return Summary(1, mean, None, None, None)
    stdev = math.sqrt(math.fsum(w * (x - mean) ** 2 for x, w in zip(values, weights)) / total * n / (n - 1))
    half = t_975(n - 1) * stdev / math.sqrt(n)
    return Summary(n, mean, stdev, half, abs(half / mean) * 100 if mean else None)


def centred_on(summary: Summary, centre: float) -> Summary:
    """The passes' spread around a figure pooled from all their I/O (a percentile of the merged histograms)."""
    percent = abs(summary.ci95_half_width / centre) * 100 if summary.ci95_half_width is not None and centre else None
    return Summary(summary.n, centre, summary.stdev, summary.ci95_half_width, percent)


def too_wide(summary: Summary, threshold_percent: float = TOO_WIDE_PERCENT) -> bool:
    """True when the interval is known and wider than the threshold; a single value has no interval to judge."""
    return summary.ci95_percent is not None and summary.ci95_percent > threshold_percent
