"""The verdict on one sample of a figure against another: better, worse, within noise, inconclusive, or none.

A difference counts (better / worse) only when the figures' spread supports a difference larger than the tolerance:
when both samples are repeats, Welch's t-test finds the difference beyond the tolerance significant at 95 % (asv's
rule, a factor and a significance test, with the factor inside the test: a difference merely non-zero is not
enough, since runs of one configuration differ by more than their passes do) and neither 95 % interval is wider than
the difference; when one is, the other's single figure lies beyond the tolerance from the range the repeats predict
for one more run. Where the spread cannot tell, the verdict says so (inconclusive) instead
of guessing. Where neither side measured a spread (one pass each), there is no verdict at all: two single runs of
the same configuration on a busy machine differ by 2x, so a tolerance alone calls noise a change.
"""

import math
from dataclasses import dataclass

from disklab.analysis.stats import Summary, t_975

# Run-to-run spread of one disk is 5 % on a good day and far more on a busy one; asv's default factor is 1.1.
DEFAULT_TOLERANCE_PERCENT = 10.0
# within noise: we measured no difference beyond the tolerance; inconclusive: the figures cannot tell; no verdict:
# nothing was measured to tell by (neither side has a spread).
BETTER, WORSE, WITHIN_NOISE, INCONCLUSIVE, NO_VERDICT = "better", "worse", "within noise", "inconclusive", "no verdict"
# What a verdict rests on: both runs repeated the test, one did, or neither (single runs: no verdict).
T_TEST, INTERVAL, SINGLE_RUNS = "t-test", "interval", "single runs"
# Why a verdict is inconclusive.
REACHES_ZERO = "a 95 % interval reaches zero (wider than ±100 % of its mean): the repeats do not pin the figure down"
WIDER_THAN_TOLERANCE = ("the difference is within the tolerance, but a 95 % interval is wider than the tolerance: "
                        "a larger difference could hide in it")
NOT_SIGNIFICANT = "Welch's t-test does not find the difference beyond the tolerance significant at 95 %"
WIDER_THAN_DIFFERENCE = "a 95 % interval is wider than the difference"
IN_PREDICTION = ("the single run's figure lies within the tolerance of the range the repeats predict for one more "
                 "run")
NO_SPREAD = ("neither run measured the figure's spread (a single pass each): run both with the default passes or "
             "--repeat 3 to judge it")


@dataclass(frozen=True)
class Judgement:
    verdict: str
    basis: str
    reason: str | None = None  # why the verdict is INCONCLUSIVE or NO_VERDICT


def ratio(base: Summary, other: Summary) -> float | None:
    if base.mean == 0:
        return 1.0 if other.mean == 0 else None
    return other.mean / base.mean


def judge(base: Summary, other: Summary, higher_is_better: bool, tolerance_percent: float) -> Judgement:
    """The verdict on `other` against `base`, what it rests on, and why the figures cannot tell if they cannot."""
    r = ratio(base, other)
    repeats = [s for s in (base, other) if s.n > 1]
    basis = (SINGLE_RUNS, INTERVAL, T_TEST)[len(repeats)]
    if not repeats:
        return Judgement(NO_VERDICT, basis, NO_SPREAD)
    beyond_tolerance = r is None or abs(r - 1) * 100 > tolerance_percent
    reason = _unsupported(base, other, repeats, beyond_tolerance, tolerance_percent)
    if reason:
        return Judgement(INCONCLUSIVE, basis, reason)
    if not beyond_tolerance:
        return Judgement(WITHIN_NOISE, basis)
    return Judgement(BETTER if (other.mean > base.mean) == higher_is_better else WORSE, basis)


def _unsupported(base: Summary, other: Summary, repeats: list[Summary], beyond_tolerance: bool,
                 tolerance_percent: float) -> str | None:
    """Why the spread of the repeated figures cannot support a verdict; None when it can.

    Within noise needs each 95 % interval within the tolerance; better or worse needs, with both runs repeated,
    Welch's t-test and each mean outside the other's interval, with one repeated, the single figure outside the
    range the repeats predict for one more run.
    """
    difference = abs(other.mean - base.mean)
    beyond = difference - tolerance_percent / 100 * abs(base.mean)  # the difference the spread must support
    if any(s.ci95_half_width >= abs(s.mean) and s.ci95_half_width > 0 for s in repeats):
        return REACHES_ZERO  # it admits a figure of zero, or below: the repeats settled nothing
    if not beyond_tolerance:
        wide = any(s.ci95_half_width > tolerance_percent / 100 * abs(s.mean) for s in repeats)
        return WIDER_THAN_TOLERANCE if wide else None
    if len(repeats) == 2:
        if not welch_significant(base, other, beyond):
            return NOT_SIGNIFICANT
        return WIDER_THAN_DIFFERENCE if max(base.ci95_half_width, other.ci95_half_width) > difference else None
    if len(repeats) == 1 and beyond <= _prediction_half_width(repeats[0]):
        return IN_PREDICTION
    return None


def _prediction_half_width(sample: Summary) -> float:
    """Half the 95 % prediction interval of one more run: t * s * sqrt(1 + 1/n).

    A single run carries its own run-to-run noise, which the interval of the repeats' mean leaves out; the repeats'
    spread is the best estimate of it, which widens the interval by sqrt(n + 1).
    """
    return sample.ci95_half_width * math.sqrt(sample.n + 1)


def welch_significant(a: Summary, b: Summary, beyond: float | None = None) -> bool:
    """Welch's t-test at 95 % (two-sided): means of samples whose variances may differ. With `beyond`, whether they
    differ by more than the tolerance: the part of their difference beyond it (tested against zero without)."""
    va, vb = a.stdev**2 / a.n, b.stdev**2 / b.n
    excess = abs(a.mean - b.mean) if beyond is None else beyond
    if va + vb == 0:
        return excess > 0
    t = excess / math.sqrt(va + vb)
    # Welch-Satterthwaite's (va + vb)^2 / (va^2 / (na - 1) + vb^2 / (nb - 1)), from each side's share of the
    # variance: squared as they are, figures of 1e-160 underflow to 0 / 0.
    share_a, share_b = va / (va + vb), vb / (va + vb)
    df = 1 / ((share_a**2 / (a.n - 1) if va else 0) + (share_b**2 / (b.n - 1) if vb else 0))
    return t > t_975(df)
