"""Steady state as the SNIA solid-state performance test specification defines it: a window of rounds that is flat."""

from dataclasses import dataclass
from typing import Sequence

from disklab.fio.parse import JobResult
from disklab.plan.build import PRECONDITION_GROUP
from disklab.store.records import RunRecord, StoredTest
from disklab.suite.settings import SteadyCriteria


def round_value(job: JobResult, metric: str) -> float:
    """The figure steady state is judged on: IOPS (read + write), or MB/s for throughput tests."""
    if metric == "mb_per_s":
        return sum(d.bw_bytes_per_s for d in job.directions) / 1e6
    return sum(d.iops for d in job.directions)


@dataclass(frozen=True)
class SteadyVerdict:
    reached: bool
    round: int | None  # the round (1-based) that completed the first steady window
    rounds: int  # rounds judged
    window: tuple[float, ...]  # the steady window, or the last window when not reached
    excursion_percent: float | None  # of that window; None while the window is not full
    slope_percent: float | None

    @property
    def window_average(self) -> float | None:
        return sum(self.window) / len(self.window) if self.window else None

    def summary(self, unit: str = "") -> str:
        if self.round is None and self.excursion_percent is None:
            return f"not reached: {self.rounds} round{'s' if self.rounds != 1 else ''}, fewer than a full window"
        figures = f"excursion {self.excursion_percent:.1f} %, slope {self.slope_percent:.1f} %"
        if self.reached:
            average = f"{self.window_average:,.0f} {unit}".strip()
            first = self.round - len(self.window) + 1
            return f"steady state reached in round {self.round}: {average} over rounds {first}-{self.round} ({figures})"
        return f"not reached after {self.rounds} rounds (last window: {figures})"

    def as_dict(self, unit: str = "") -> dict:
        return {
            "reached": self.reached, "round": self.round, "rounds": self.rounds, "window": list(self.window),
            "excursion_percent": self.excursion_percent, "slope_percent": self.slope_percent,
            "window_average": self.window_average, "unit": unit,
            "summary": self.summary(unit),
        }


@dataclass(frozen=True)
class StoredRounds:
    """A steady or write-saturation run's workload rounds as stored, in order, and the figure each was judged on."""

    metric: str  # "iops" or "mb_per_s"
    tests: tuple[StoredTest, ...]
    values: tuple[float, ...]


def stored_rounds(record: RunRecord) -> StoredRounds:
    """The rounds after preconditioning; the metric is the one the run's steady_state outcome names."""
    steady = record.outcomes.get("steady_state")
    metric = "mb_per_s" if isinstance(steady, dict) and steady.get("unit") == "MB/s" else "iops"
    tests = sorted((t for t in record.tests if t.params.get("group") != PRECONDITION_GROUP), key=lambda t: t.attempt)
    return StoredRounds(metric, tuple(tests), tuple(round_value(t.as_job(), metric) for t in tests))


def fitted_line(window: Sequence[float]) -> tuple[float, float]:
    """The least-squares line through a window's rounds (x = 0 .. n-1): (its value at the first round, its change per
    round). SNIA's verification plot draws it beside the window's average."""
    n = len(window)
    average, mean_x = sum(window) / n, (n - 1) / 2
    sxx = sum((x - mean_x) ** 2 for x in range(n))
    slope = sum((x - mean_x) * (y - average) for x, y in enumerate(window)) / sxx if sxx else 0.0
    return average - slope * mean_x, slope


def window_figures(window: Sequence[float]) -> tuple[float, float]:
    """(excursion, slope) of a window in percent of its average; slope is the fitted change across the window."""
    n = len(window)
    average = sum(window) / n
    if average == 0:
        return (0.0, 0.0) if max(window) == min(window) else (float("inf"), float("inf"))
    _, slope = fitted_line(window)
    excursion = (max(window) - min(window)) / abs(average) * 100
    return excursion, abs(slope) * (n - 1) / abs(average) * 100


def is_steady(window: Sequence[float], criteria: SteadyCriteria) -> bool:
    excursion, slope = window_figures(window)
    return excursion <= criteria.excursion_percent and slope <= criteria.slope_percent


def steady_verdict(values: Sequence[float], criteria: SteadyCriteria = SteadyCriteria()) -> SteadyVerdict:
    """The first window (of the first max_rounds rounds) that meets both criteria decides."""
    values = list(values)[: criteria.max_rounds]
    n = criteria.window
    if len(values) < n:
        return SteadyVerdict(False, None, len(values), tuple(values), None, None)
    for end in range(n, len(values) + 1):
        window = values[end - n: end]
        if is_steady(window, criteria):
            excursion, slope = window_figures(window)
            return SteadyVerdict(True, end, end, tuple(window), excursion, slope)
    window = values[-n:]
    excursion, slope = window_figures(window)
    return SteadyVerdict(False, None, len(values), tuple(window), excursion, slope)
