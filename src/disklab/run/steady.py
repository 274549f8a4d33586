"""Rounds of one workload test after preconditioning: until steady state (SNIA), or until enough has been written.

Preconditioning passes are steps of their own (attempt 1 each); the workload's rounds share its plan_index and
count up in `attempt`.
"""

from dataclasses import dataclass
from typing import Sequence

from disklab.analysis.steady import SteadyVerdict, round_value, steady_verdict
from disklab.plan.build import PRECONDITION_GROUP, Plan
from disklab.run.schedule import Finished, Step
from disklab.suite.model import TestSpec


@dataclass(frozen=True)
class RoundsProgress:
    """What the rounds so far add up to."""

    values: tuple[float, ...]
    written_bytes: int
    seconds: float


class SteadySchedule:
    """Mode steady: stop at the first steady window or after max_rounds.

    Mode write-saturation: stop once `written_multiple` x the region is written, after `time_limit`, or after
    max_rounds; steady state is only reported.
    """

    def __init__(self, plan: Plan):
        if plan.suite.rounds is None:
            raise ValueError(f"suite {plan.suite.name!r} does not run in rounds")
        self.plan = plan
        self.settings = plan.suite.rounds
        self.mode = plan.suite.mode
        self.preconditioning = [i for i, t in enumerate(plan.tests) if t.group == PRECONDITION_GROUP]
        self.workload = next(i for i, t in enumerate(plan.tests) if t.group != PRECONDITION_GROUP)

    @property
    def workload_test(self) -> TestSpec:
        return self.plan.tests[self.workload]

    def next_step(self, finished: Sequence[Finished]) -> Step | None:
        done = {(f.step.plan_index, f.step.attempt) for f in finished}
        for index in self.preconditioning:
            if (index, 1) not in done:
                return Step(index, 1, self.plan.tests[index])
        progress = self.progress(finished)
        if self._done(progress):
            return None
        return Step(self.workload, len(progress.values) + 1, self.workload_test)

    def expected_steps(self, finished: Sequence[Finished] = ()) -> int:
        return len(self.preconditioning) + self.settings.criteria.max_rounds

    def progress(self, finished: Sequence[Finished]) -> RoundsProgress:
        rounds = sorted((f for f in finished if f.step.plan_index == self.workload), key=lambda f: f.step.attempt)
        metric = self.workload_test.metric
        return RoundsProgress(
            values=tuple(round_value(f.job, metric) for f in rounds),
            written_bytes=sum(d.io_bytes for f in rounds for d in f.job.directions if d.direction == "write"),
            seconds=sum(max((d.runtime_ms for d in f.job.directions), default=0) for f in rounds) / 1000,
        )

    def _done(self, progress: RoundsProgress) -> bool:
        if len(progress.values) >= self.settings.criteria.max_rounds:
            return True
        if self.mode == "steady":
            return steady_verdict(progress.values, self.settings.criteria).reached
        return self._saturated(progress) is not None

    def _saturated(self, progress: RoundsProgress) -> str | None:
        """Why a write-saturation run has ended, or None while it goes on."""
        region = self.workload_test.size
        multiple = self.settings.written_multiple
        if multiple and region and progress.written_bytes >= multiple * region:
            return f"{progress.written_bytes / region:.2f} x the region written"
        if self.settings.time_limit and progress.seconds >= self.settings.time_limit:
            return f"time limit of {progress.seconds:.0f} s reached"
        return None

    def verdict(self, finished: Sequence[Finished]) -> SteadyVerdict:
        return steady_verdict(self.progress(finished).values, self.settings.criteria)

    def outcomes(self, finished: Sequence[Finished]) -> dict:
        """What the run concluded, for the store's run_outcomes (each value carries a one-line summary)."""
        progress = self.progress(finished)
        verdict = steady_verdict(progress.values, self.settings.criteria)
        unit = "MB/s" if self.workload_test.metric == "mb_per_s" else "IOPS"
        outcomes = {"steady_state": verdict.as_dict(unit)}
        if self.mode == "write-saturation":
            region = self.workload_test.size or 0
            why = self._saturated(progress) or f"round limit of {self.settings.criteria.max_rounds} reached"
            outcomes["write_saturation"] = {
                "rounds": len(progress.values), "values": list(progress.values), "metric": self.workload_test.metric,
                "written_bytes": progress.written_bytes, "region_bytes": region, "seconds": progress.seconds,
                "summary": f"write saturation: {len(progress.values)} rounds, "
                           f"{progress.written_bytes / region if region else 0:.2f} x the region written; "
                           f"stopped: {why}",
            }
        return outcomes
