"""The ETA follows the plan, then the pace the finished tests actually ran at (fake clock, no real timing)."""

import io

import pytest

from rich.console import Console

from disklab.cli import progress as progress_module
from disklab.cli.progress import RunProgress
from disklab.plan.build import build_plan
from disklab.plan.estimate import step_seconds
from disklab.suite.loader import parse_suite

SUITE = 'name = "p"\n[defaults]\nruntime = 4\n[[group]]\nname = "g"\niodepth = [1, 2, 4, 8]\n'


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_eta_starts_from_the_plan_and_learns_the_pace(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", clock)
    plan = build_plan(parse_suite(SUITE, "p.toml", "p.toml"))
    per_test = step_seconds(plan.tests[0])
    output = io.StringIO()
    progress = RunProgress(plan, Console(file=output, width=200), layout_bytes=0)
    assert progress.remaining() == 4 * per_test
    progress.test_started(0, plan.tests[0])
    clock.now += 2 * per_test  # the first test takes twice its estimate
    progress.test_finished(0, plan.tests[0], job=type("Job", (), {"directions": ()})())
    progress.test_started(1, plan.tests[1])
    assert progress.remaining() == pytest.approx(3 * per_test * 2)
    assert "[2/4] g iodepth=2" in output.getvalue()  # not a terminal: one line per test


def test_the_count_follows_the_steps_the_schedule_now_expects():
    """A search that ends early (saturate: 17 steps where 19 were expected) counts to the steps it runs."""
    plan = build_plan(parse_suite(SUITE, "p.toml", "p.toml"))
    output = io.StringIO()
    progress = RunProgress(plan, Console(file=output, width=200), layout_bytes=0, steps=6)
    progress.test_started(0, plan.tests[0], "", 6)
    progress.test_started(1, plan.tests[1], "", 3)
    assert progress.steps == 3 and progress.total == 3 * progress.per_step
    progress.test_started(2, plan.tests[2], "")  # no news: the count stays
    assert "[2/3] g iodepth=2" in output.getvalue() and "[3/3] g iodepth=4" in output.getvalue()


def test_a_terminal_shows_the_phase_and_fio_s_figures_under_the_bar():
    from disklab.fio.status import LiveFigures

    plan = build_plan(parse_suite(SUITE, "p.toml", "p.toml"))
    output = io.StringIO()
    with RunProgress(plan, Console(file=output, width=120, force_terminal=True), layout_bytes=0) as progress:
        progress.test_started(0, plan.tests[0], "repeat 2")
        progress.live(LiveFigures("ramp", 1234.4, 5.06e6, None))
        assert progress.figures_line == "  ramp (not measured): 1,234 IOPS · 5.1 MB/s"
        progress.live(LiveFigures("measuring", 19203.2, 78.6e6, 207819.7, 1_236_992.0))
        assert progress.figures_line == "  measuring: 19,203 IOPS · 78.6 MB/s · lat 207.8 µs · p99 1.24 ms"
        progress.live(LiveFigures("measuring", 19203.2, 78.6e6, 207819.7, 305_152.0))
        assert progress.figures_line.endswith("lat 207.8 µs · p99 305.2 µs")  # µs, as the tables write it
        progress.bar.refresh()
    assert "g iodepth=1 · repeat 2" in output.getvalue()
    assert "measuring: 19,203 IOPS" in output.getvalue()


def test_elsewhere_live_figures_print_nothing():
    from disklab.fio.status import LiveFigures

    plan = build_plan(parse_suite(SUITE, "p.toml", "p.toml"))
    output = io.StringIO()
    progress = RunProgress(plan, Console(file=output, width=200), layout_bytes=0)
    progress.test_started(0, plan.tests[0])
    before = output.getvalue()
    progress.live(LiveFigures("measuring", 19203.2, 78.6e6, 207819.7))
    assert output.getvalue() == before  # one line per test when stderr is not a terminal
