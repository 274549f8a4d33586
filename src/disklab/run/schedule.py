"""What runs next: a schedule hands out steps one at a time, seeing every result that came before.

A fixed plan is the simplest schedule; repeats, precision targets, steady-state rounds and saturation
searches decide their next step from the results so far. Resuming a run is giving a fresh schedule the
steps that already finished: it continues from the first one still missing.
"""

from dataclasses import dataclass
from typing import Protocol, Sequence

from disklab.fio.parse import JobResult
from disklab.plan.build import Plan
from disklab.suite.model import TestSpec


@dataclass(frozen=True)
class Step:
    plan_index: int  # which planned test this is (the same across its repeats and rounds)
    attempt: int  # 1, 2, ...: the repeat or round of that test
    test: TestSpec  # what fio runs; adaptive schedules may change it from the planned test


@dataclass(frozen=True)
class Finished:
    step: Step
    job: JobResult


class Schedule(Protocol):
    def next_step(self, finished: Sequence[Finished]) -> Step | None:
        """The step to run now, or None when the schedule is done."""

    def expected_steps(self, finished: Sequence[Finished] = ()) -> int:
        """How many steps the schedule expects to run in all, knowing the steps finished so far (for progress:
        adaptive ones may run fewer or more than they expected at first)."""


class FixedSchedule:
    """Every planned test `repeat` times, interleaved (1, 2, 3, 1, 2, 3, ...) so that drift does not line up with one test."""

    def __init__(self, plan: Plan, repeat: int = 1):
        self.steps = [Step(i, n, t) for n in range(1, repeat + 1) for i, t in enumerate(plan.tests)]

    def next_step(self, finished: Sequence[Finished]) -> Step | None:
        done = {(f.step.plan_index, f.step.attempt) for f in finished}
        return next((s for s in self.steps if (s.plan_index, s.attempt) not in done), None)

    def expected_steps(self, finished: Sequence[Finished] = ()) -> int:
        return len(self.steps)
