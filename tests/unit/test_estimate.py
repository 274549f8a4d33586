"""The estimate models what a run does: a saturate search's steps (a range, and the count the bar ends at), rounds as an
upper bound said as such, the pauses and passes the options set. (Against real runs: tests/integration/test_estimates.)"""

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.plan.build import Overrides, build_plan
from disklab.plan.estimate import STEP_START_S, search_steps, step_seconds
from disklab.run.saturate import SaturateSchedule
from disklab.suite.loader import load_suite, parse_suite
from disklab.suite.settings import SaturationSettings
from tests.unit.test_saturation import SUITE, drive


def dry_run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["run", *args, "--dry-run"])
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("estimated duration: ")]
    return line


def test_a_search_is_estimated_at_its_typical_steps_within_its_range():
    # least: depth 1 and 4, 2 jobs gain nothing, QD1 measured to 3 passes; most: depth 1 .. 256 and jobs 2 .. 16, each
    # measured 3 times; expected: the least and 3 more steps; + 10 load levels
    assert search_steps(SaturationSettings()) == (15, 18, 49)
    plan = build_plan(load_suite("saturate"), Overrides(runtime=1.0, ramp=0.0))
    estimate = plan.estimate()
    assert estimate.seconds > 18 * (1.0 + STEP_START_S)  # the "2 s" for 18 steps of 1 s
    assert (estimate.low_steps, estimate.steps, estimate.high_steps) == (15, 18, 49)
    line = dry_run("saturate", "--runtime", "1", "--ramp", "0")
    assert line.startswith("estimated duration: about ") and "18 steps expected" in line and "15 to 49" in line


def test_the_count_a_search_expects_becomes_the_steps_it_took_once_it_ends():
    """test_saturation's simulated device: 8 search steps, then 10 load levels."""
    plan = build_plan(parse_suite(SUITE, "t", "t.toml"))
    schedule = SaturateSchedule(plan, SaturationSettings())
    finished = drive(schedule)
    searched = sum(1 for f in finished if f.step.test.rate_iops is None)
    assert schedule.expected_steps() == 18  # before any step: the typical search
    assert schedule.expected_steps(finished[:searched]) == len(finished) == searched + 10
    assert all(schedule.expected_steps(finished[:n]) >= n + 1 for n in range(len(finished)))


def test_rounds_are_an_upper_bound_said_as_such():
    line = dry_run("steady", "--size", "256M", "--runtime", "1")
    assert line.startswith("estimated duration: at most ") and "(an upper bound: 25 rounds)" in line
    assert "at least " in line and "(5 rounds)" in line


def test_pauses_and_passes_are_in_the_estimate_as_the_options_set_them():
    plan = build_plan(load_suite("matrix"), Overrides(runtime=1.0, size=256 * 1024**2))
    paused = plan.estimate().seconds
    unpaused = build_plan(load_suite("matrix"), Overrides(runtime=1.0, size=256 * 1024**2, pause=0.0)).estimate()
    assert paused - unpaused.seconds == pytest.approx(60 * 30)  # matrix's 30 s before each of its 60 tests, unless --pause 0
    passes = plan.estimate(passes=5).seconds - plan.estimate().seconds
    assert passes == pytest.approx(4 * sum(step_seconds(t) for t in plan.tests))
