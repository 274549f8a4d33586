"""Error bands that are promises about data the model never saw.

A band is built from the model's misses on published tables: for each figure the ratio published / predicted.
Errors of a model are multiplicative (a drive twice as slow as its stand-in halves every figure), so a band is an
interval of that ratio, not a symmetric percentage: '-45/+120 %' says the published figure may lie from 0.55 to
2.2 times the prediction.

How wide: cross-validated across studies. Each study (one source's table) is left out in turn, a band is built
from the others, and the left-out study's figures are checked against it. The band's width is the narrowest
candidate (central intervals of the other studies' ratios at 80-100 % coverage, then the full range widened)
whose left-out figures lie inside it at least TARGET_COVERAGE of the time, pooled over every study; the band
printed is that candidate built from all studies. With fewer than MIN_BAND_STUDIES studies nothing can be left
out, so there is no band. Each study weighs the same, however many figures it has: a 30-point sweep of one array
would otherwise decide the band for every array.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

TARGET_COVERAGE = 0.90
MIN_BAND_POINTS = 10  # below this an interval is just the extremes of a handful
MIN_BAND_STUDIES = 2  # leave one out and one is left to build the band from
NOT_VALIDATED = "not validated"
# Candidate widths, narrowest first: a central interval covering this share of the weighted ratios ...
_LEVELS = tuple(round(0.80 + 0.01 * i, 2) for i in range(21))
# ... then the full range of the ratios, widened by these factors at both ends.
_WIDENINGS = (1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0)


@dataclass(frozen=True)
class Evidence:
    """One published figure against the model's prediction of it."""

    study: str  # the source table: the unit left out in cross-validation
    kind: str  # the drive kind (hdd, ssd)
    ratio: float  # published / predicted
    features: frozenset[str] = frozenset()  # settings beyond a local array under random I/O (caveats.features)


@dataclass(frozen=True)
class Band:
    """Where the published figure may lie around a prediction: from `low` to `high` times it."""

    kind: str
    low: float | None  # None: not validated (why says why)
    high: float | None
    points: int
    studies: int
    why: str
    coverage: float | None = None  # the cross-validated share of left-out figures inside

    @property
    def validated(self) -> bool:
        return self.low is not None

    def text(self) -> str:
        """What stands beside a figure: '-45/+120 %' or '(not validated)'."""
        if not self.validated:
            return f"({NOT_VALIDATED})"
        return f"-{_percent_up(1 - self.low)}/+{_percent_up(self.high - 1)} %"

    def range(self, predicted: float) -> tuple[float, float] | None:
        return None if not self.validated else (predicted * self.low, predicted * self.high)

    def holds(self, published: float, predicted: float) -> bool | None:
        """Whether the published figure lies inside the band around the prediction; None: no band."""
        if not self.validated:
            return None
        return self.low * predicted <= published <= self.high * predicted

    def described(self) -> str:
        return self.why if not self.validated else f"{self.text()}, {self.why}"


def _percent_up(share: float) -> int:
    """A share in whole percent, rounded up (a band printed narrower than it is would promise too much), after
    rounding off the float's last digits (0.72 is 28 %, not 29)."""
    return math.ceil(round(share * 100, 6))


def not_validated(kind: str, reason: str, points: int = 0, studies: int = 0) -> Band:
    return Band(kind, None, None, points, studies, f"{NOT_VALIDATED}: {reason}")


def build_band(kind: str, evidence: Sequence[Evidence]) -> Band:
    """The cross-validated band of one drive kind from its evidence (see the module's docstring)."""
    by_study = _by_study(evidence)
    points, studies = len(evidence), len(by_study)
    if points < MIN_BAND_POINTS or studies < MIN_BAND_STUDIES:
        return not_validated(kind, f"{points} published point{'s' * (points != 1)} from {studies} "
                                   f"stud{'ies' if studies != 1 else 'y'} (a band needs {MIN_BAND_POINTS} points "
                                   f"from {MIN_BAND_STUDIES} studies, so that leaving one out still leaves a band)",
                             points, studies)
    for name, candidate in _candidates():
        coverage = left_out_coverage(by_study, candidate)
        if coverage >= TARGET_COVERAGE:
            low, high = candidate(by_study)
            return Band(kind, low, high, points, studies,
                        f"{name} of the published/predicted ratios of {points} {kind} points from {studies} "
                        f"studies, the narrowest interval that held {coverage:.0%} of each study's figures when "
                        f"built from the other studies alone", coverage)
    return not_validated(kind, f"the {studies} studies disagree beyond {_WIDENINGS[-1]:g}x their range", points,
                         studies)


def left_out_coverage(by_study: dict[str, list[float]], candidate) -> float:
    """Pooled over every study: the share of its ratios inside the candidate built from the other studies."""
    inside = total = 0
    for name, ratios in by_study.items():
        low, high = candidate({other: r for other, r in by_study.items() if other != name})
        inside += sum(low <= r <= high for r in ratios)
        total += len(ratios)
    return inside / total


def study_bands(kind: str, evidence: Sequence[Evidence], study: str) -> tuple[Band, Band]:
    """(the band built with the study, the band built without it): its in-sample and its cross-validated band."""
    return build_band(kind, evidence), build_band(kind, [e for e in evidence if e.study != study])


def _by_study(evidence: Sequence[Evidence]) -> dict[str, list[float]]:
    grouped: dict[str, list[float]] = {}
    for e in evidence:
        grouped.setdefault(e.study, []).append(e.ratio)
    return grouped


def _candidates() -> list[tuple[str, Callable]]:
    central = [(f"the central {level:.0%} (each study weighing the same)",
                lambda by_study, level=level: _central(by_study, level)) for level in _LEVELS]
    widened = [(f"the full range widened {factor:g}x",
                lambda by_study, factor=factor: _widened(by_study, factor)) for factor in _WIDENINGS]
    return central + widened


def _central(by_study: dict[str, list[float]], level: float) -> tuple[float, float]:
    """The weighted quantiles (1 - level) / 2 and (1 + level) / 2 of the ratios, each study's points sharing a
    weight of 1; never excluding the prediction itself."""
    weighted = sorted((ratio, 1 / len(ratios)) for ratios in by_study.values() for ratio in ratios)
    total = len(by_study)
    return min(1.0, _quantile(weighted, total, (1 - level) / 2)), max(1.0, _quantile(weighted, total, (1 + level) / 2))


def _quantile(weighted: list[tuple[float, float]], total: float, share: float) -> float:
    """Nearest rank on the cumulative weight: the smallest ratio with at least `share` of the weight at or below."""
    cumulative = 0.0
    for ratio, weight in weighted:
        cumulative += weight
        if cumulative >= share * total - 1e-9:
            return ratio
    return weighted[-1][0]


def _widened(by_study: dict[str, list[float]], factor: float) -> tuple[float, float]:
    ratios = [ratio for values in by_study.values() for ratio in values]
    return min(1.0, min(ratios)) / factor, max(1.0, max(ratios)) * factor
