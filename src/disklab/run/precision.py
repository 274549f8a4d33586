"""--precision: repeat each test until the 95 % interval of its headline figure is narrow enough, or time runs out."""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from disklab.analysis.repeats import pooled_lat_mean_ns
from disklab.analysis.stats import Summary, summarize
from disklab.fio.parse import DIRECTIONS, DirectionMetrics, JobResult
from disklab.plan.build import Plan
from disklab.run.schedule import Finished, Step

MIN_RUNS = 3  # an interval needs two values; three keep one outlier from settling a test by luck
DEFAULT_MAX_PASSES = 10  # without --max-time the budget is this many passes of the plan's estimated time

STOPPED_PRECISION = "precision"
STOPPED_TIME = "time budget"


def default_max_seconds(plan: Plan) -> float:
    return DEFAULT_MAX_PASSES * plan.estimated_seconds()


def headline_figure(metric: str) -> str:
    """The figure a test is judged on: its own metric when that is a mean over I/Os, else IOPS.

    Percentiles and counts of late frames are not averaged across runs, so their precision is not defined.
    """
    return metric if metric in _FIGURES else "iops"


def headline_value(figure: str, job: JobResult) -> float:
    return _FIGURES[figure]([m for m in job.directions if m.direction in DIRECTIONS])


def _lat_mean_us(directions: Sequence[DirectionMetrics]) -> float:
    lat_ns = pooled_lat_mean_ns(directions)
    return 0.0 if lat_ns is None else lat_ns / 1e3


# Mixed tests count read + write, as suite views do (disklab.report.metrics).
_FIGURES: dict[str, Callable[[Sequence[DirectionMetrics]], float]] = {
    "iops": lambda ds: sum(m.iops for m in ds),
    "mb_per_s": lambda ds: sum(m.bw_bytes_per_s for m in ds) / 1e6,
    "lat_mean_us": _lat_mean_us,
}


@dataclass(frozen=True)
class TestOutcome:
    plan_index: int
    label: str
    figure: str
    summary: Summary | None  # None: the budget ran out before the test's first run
    stopped: str  # STOPPED_PRECISION or STOPPED_TIME

    def describe(self, target_percent: float) -> str:
        if self.summary is None:
            return "not run: the time budget ran out before its first run"
        if self.stopped == STOPPED_PRECISION:
            return (f"stopped: precision reached after {self.summary.n} runs "
                    f"({self.figure} +/- {self.summary.ci95_percent:.1f} % <= {target_percent:g} %)")
        spread = "no interval (fewer than 2 runs)" if self.summary.ci95_percent is None \
            else f"+/- {self.summary.ci95_percent:.1f} %"
        return f"stopped: time budget ran out at {spread} after {self.summary.n} runs ({self.figure})"


class PrecisionSchedule:
    """Rounds over the tests still unsettled (interleaved, so drift does not line up with one test).

    A test is settled after `min_runs` runs once its 95 % interval is within `target_percent` of its mean. The time
    budget is checked before each step, so the test in flight finishes; a resumed run's budget starts afresh.
    """

    def __init__(self, plan: Plan, target_percent: float, max_seconds: float, min_runs: int = MIN_RUNS,
                 clock: Callable[[], float] = time.monotonic):
        self.tests = plan.tests
        self.target_percent = target_percent
        self.max_seconds = max_seconds
        self.min_runs = max(min_runs, MIN_RUNS)
        self.clock = clock
        self.started: float | None = None

    def next_step(self, finished: Sequence[Finished]) -> Step | None:
        if self.started is None:
            self.started = self.clock()
        runs = self._runs(finished)
        open_tests = [i for i in range(len(self.tests)) if not self._settled(runs[i])]
        if not open_tests:
            return None
        if self.clock() - self.started >= self.max_seconds:
            return None
        index = min(open_tests, key=lambda i: (len(runs[i]), i))
        return Step(index, len(runs[index]) + 1, self.tests[index])

    def expected_steps(self, finished: Sequence[Finished] = ()) -> int:
        """The least it can be: every test `min_runs` times."""
        return len(self.tests) * self.min_runs

    def test_outcomes(self, finished: Sequence[Finished]) -> list[TestOutcome]:
        runs = self._runs(finished)
        return [
            TestOutcome(i, test.label, headline_figure(test.metric), summarize(runs[i]) if runs[i] else None,
                        STOPPED_PRECISION if self._settled(runs[i]) else STOPPED_TIME)
            for i, test in enumerate(self.tests)
        ]

    def outcomes(self, finished: Sequence[Finished]) -> dict:
        """What the run stores in run_outcomes and prints: the target, the budget, and why each test stopped."""
        tests = self.test_outcomes(finished)
        return {"precision": {
            "target_percent": self.target_percent, "max_seconds": self.max_seconds, "min_runs": self.min_runs,
            "tests": [
                {"plan_index": o.plan_index, "label": o.label, "figure": o.figure, "runs": o.summary.n if o.summary else 0,
                 "ci95_percent": o.summary.ci95_percent if o.summary else None, "stopped": o.stopped}
                for o in tests
            ],
            "summary": "\n".join(f"{o.label}: {o.describe(self.target_percent)}" for o in tests),
        }}

    def _runs(self, finished: Sequence[Finished]) -> list[list[float]]:
        runs: list[list[float]] = [[] for _ in self.tests]
        for f in finished:
            runs[f.step.plan_index].append(headline_value(headline_figure(self.tests[f.step.plan_index].metric), f.job))
        return runs

    def _settled(self, values: list[float]) -> bool:
        if len(values) < self.min_runs:
            return False
        percent = summarize(values).ci95_percent
        return percent is not None and percent <= self.target_percent
