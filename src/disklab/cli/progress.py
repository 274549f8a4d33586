"""Progress while a run goes on: on a terminal a live bar with an ETA and, under it, the phase and fio's figures of
the second just past; one line per test elsewhere."""

import time

from rich.console import Console

from disklab.fio.parse import JobResult
from disklab.fio.status import LiveFigures
from disklab.plan.build import Plan
from disklab.plan.estimate import layout_seconds, step_seconds
from disklab.suite.model import TestSpec
from disklab.units import format_duration


class RunProgress:
    """ETA from the plan: fio's runtimes are known, only start-up and file layout are guessed."""

    def __init__(self, plan: Plan, console: Console, layout_bytes: int, steps: int | None = None, done_steps: int = 0):
        self.plan = plan
        self.console = console
        self.steps = steps or len(plan.tests)
        self.per_step = sum(step_seconds(t) for t in plan.tests) / max(len(plan.tests), 1)
        self.layout_s = layout_seconds(layout_bytes)
        self.total = self.per_step * (self.steps - done_steps) + self.layout_s
        self.first_seq = done_steps  # a resumed run lays its test file out again in its first new step
        self.done_s = 0.0  # estimated seconds of the finished tests
        self.done_actual_s = 0.0  # what they really took
        self.current_estimate = 0.0
        self.test_started_at = time.monotonic()
        self.on_terminal = console.is_terminal
        self.wants_live = self.on_terminal  # the figures line sits under the bar; elsewhere one line per test
        self.figures_line = ""
        self.bar = self._bar(console) if self.on_terminal else None

    def _bar(self, console: Console):
        """A terminal's live bar, with the line of live figures under it; rich's progress machinery loads only for
        one."""
        from rich.progress import BarColumn, Progress, TextColumn
        from rich.text import Text

        display = self

        class BarAndFigures(Progress):
            def get_renderables(self):
                yield self.make_tasks_table(self.tasks)
                yield Text(display.figures_line, style="cyan")

        bar = BarAndFigures(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[count]}"),
            TextColumn("ETA {task.fields[eta]}"), console=console, transient=True,
        )
        self.task = bar.add_task("starting", total=self.total, count="", eta=format_duration(self.total))
        return bar

    def __enter__(self) -> "RunProgress":
        if self.on_terminal:
            self.bar.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.on_terminal:
            self.bar.stop()

    def test_started(self, seq: int, test: TestSpec, stage: str = "", steps: int | None = None) -> None:
        self.current_estimate = step_seconds(test) + (self.layout_s if seq == self.first_seq else 0.0)
        self.test_started_at = time.monotonic()
        # adaptive schedules learn how many steps they take as they go: the bar counts to what they now expect
        steps = max(steps or self.steps, seq + 1)
        self.total += (steps - self.steps) * self.per_step
        self.steps = steps
        title = f"{test.label} · {stage}" if stage else test.label
        if self.on_terminal:
            self.figures_line = "  starting fio"
            self.bar.update(self.task, description=title, count=f"{seq + 1}/{self.steps}", total=self.total)
        else:
            self.console.print(f"[{seq + 1}/{self.steps}] {title} (ETA {format_duration(self.remaining())})",
                               markup=False, highlight=False)
        self.tick()

    def live(self, figures: LiveFigures) -> None:
        """fio's figures of the second just past, under the bar; not printed elsewhere (one line per test)."""
        self.figures_line = figures_line(figures)
        self.tick()

    def tick(self) -> None:
        if self.on_terminal:
            elapsed = min(time.monotonic() - self.test_started_at, self.current_estimate)
            self.bar.update(self.task, completed=self.done_s + elapsed, eta=format_duration(self.remaining()))

    def test_finished(self, seq: int, test: TestSpec, job: JobResult) -> None:
        self.done_s += self.current_estimate
        self.done_actual_s += time.monotonic() - self.test_started_at
        self.current_estimate = 0.0
        self.figures_line = ""
        summary = ", ".join(f"{m.direction} {m.iops:,.0f} IOPS {m.bw_bytes_per_s / 1e6:,.1f} MB/s" for m in job.directions)
        self.console.print(f"  done: {test.label}: {summary}")

    def remaining(self) -> float:
        """The plan's estimate for what is left, scaled by how far the finished tests over- or undershot theirs."""
        elapsed = min(time.monotonic() - self.test_started_at, self.current_estimate)
        pace = self.done_actual_s / self.done_s if self.done_s else 1.0
        return max(self.total - self.done_s - elapsed, 0.0) * pace


_PHASES = {"pause": "pause (idle before the test)", "starting": "starting (fio sets up; lays out files)",
           "ramp": "ramp (not measured)", "measuring": "measuring"}


def figures_line(figures: LiveFigures) -> str:
    """'  measuring: 5,606 IOPS · 23.0 MB/s · lat 177.4 µs · p99 312.0 µs' (MB/s of 10^6 bytes, fio's mean total
    latency and the p99 of its completion latency, as the tables show them)."""
    line = f"  {_PHASES.get(figures.phase, figures.phase)}"
    if figures.iops is None:
        return line
    line += f": {figures.iops:,.0f} IOPS · {figures.bw_bytes_per_s / 1e6:,.1f} MB/s"
    if figures.lat_mean_ns is not None:
        line += f" · lat {format_latency(figures.lat_mean_ns)}"
    if figures.clat_p99_ns is not None:
        line += f" · p99 {format_latency(figures.clat_p99_ns)}"
    return line


def format_latency(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:,.2f} ms"
    return f"{ns / 1e3:,.1f} µs" if ns >= 1e3 else f"{ns:,.0f} ns"


class QuietProgress:
    """run --quiet: a listener that shows nothing."""

    wants_live = False

    def __enter__(self) -> "QuietProgress":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def test_started(self, seq: int, test: TestSpec, stage: str = "", steps: int | None = None) -> None:
        pass

    def tick(self) -> None:
        pass

    def live(self, figures: LiveFigures) -> None:
        pass

    def test_finished(self, seq: int, test: TestSpec, job: JobResult) -> None:
        pass


def quiet_progress(plan: Plan, layout_bytes: int, steps: int, done_steps: int) -> QuietProgress:
    return QuietProgress()
