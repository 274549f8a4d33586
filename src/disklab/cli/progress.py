"""Progress while a run goes on: a live bar with an ETA on a terminal, one line per test elsewhere."""

import time

from rich.console import Console

from disklab.fio.parse import JobResult
from disklab.plan.build import Plan, estimate_test_seconds
from disklab.suite.model import TestSpec
from disklab.units import format_duration


class RunProgress:
    """ETA from the plan: fio's runtimes are known, only start-up and file layout are guessed."""

    def __init__(self, plan: Plan, console: Console, layout_bytes: int, steps: int | None = None, done_steps: int = 0):
        self.plan = plan
        self.console = console
        self.steps = steps or len(plan.tests)
        per_step = plan.estimated_seconds() / max(len(plan.tests), 1)
        self.layout_s = plan.estimated_seconds(layout_bytes) - plan.estimated_seconds()
        self.total = per_step * (self.steps - done_steps) + self.layout_s
        self.first_seq = done_steps  # a resumed run lays its test file out again in its first new step
        self.done_s = 0.0  # estimated seconds of the finished tests
        self.done_actual_s = 0.0  # what they really took
        self.current_estimate = 0.0
        self.test_started_at = time.monotonic()
        self.live = console.is_terminal
        self.bar = self._bar(console) if self.live else None

    def _bar(self, console: Console):
        """A terminal's live bar; rich's progress machinery loads only for one."""
        from rich.progress import BarColumn, Progress, TextColumn

        bar = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
            TextColumn("ETA {task.fields[eta]}"), console=console, transient=True,
        )
        self.task = bar.add_task("starting", total=self.total, count="", eta=format_duration(self.total))
        return bar

    def __enter__(self) -> "RunProgress":
        if self.live:
            self.bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.live:
            self.bar.stop()

    def test_started(self, seq: int, test: TestSpec) -> None:
        self.current_estimate = estimate_test_seconds(test) + (self.layout_s if seq == self.first_seq else 0.0)
        self.test_started_at = time.monotonic()
        self.steps = max(self.steps, seq + 1)  # adaptive schedules may run more steps than they expected
        if self.live:
            self.bar.update(self.task, description=test.label, count=f"{seq + 1}/{self.steps}")
        else:
            self.console.print(f"[{seq + 1}/{self.steps}] {test.label} (ETA {format_duration(self.remaining())})")
        self.tick()

    def tick(self) -> None:
        if self.live:
            elapsed = min(time.monotonic() - self.test_started_at, self.current_estimate)
            self.bar.update(self.task, completed=self.done_s + elapsed, eta=format_duration(self.remaining()))

    def test_finished(self, seq: int, test: TestSpec, job: JobResult) -> None:
        self.done_s += self.current_estimate
        self.done_actual_s += time.monotonic() - self.test_started_at
        self.current_estimate = 0.0
        summary = ", ".join(f"{m.direction} {m.iops:,.0f} IOPS {m.bw_bytes_per_s / 1e6:,.1f} MB/s" for m in job.directions)
        self.console.print(f"  done: {test.label}: {summary}")

    def remaining(self) -> float:
        """The plan's estimate for what is left, scaled by how far the finished tests over- or undershot theirs."""
        elapsed = min(time.monotonic() - self.test_started_at, self.current_estimate)
        pace = self.done_actual_s / self.done_s if self.done_s else 1.0
        return max(self.total - self.done_s - elapsed, 0.0) * pace
