"""The default passes: without --repeat every test runs in interleaved passes that share its runtime, and the plan,
its estimate and the header say so; --repeat 1 says what a single pass gives up."""

from dataclasses import replace

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.plan.build import build_plan
from disklab.plan.passes import DEFAULT_PASSES, pass_of, share_runtime
from disklab.suite.loader import load_suite


def quick_test(**changes):
    return replace(build_plan(load_suite("quick")).tests[0], **changes)


@pytest.mark.parametrize("runtime, passes, share", [
    (5.0, 5, 1.0), (30.0, 5, 6.0), (10.0, 3, 3.4), (2.0, 5, 1.0), (0.5, 5, 0.5), (60.0, 1, 60.0),
])
def test_a_time_based_test_shares_its_runtime_at_least_a_second_a_pass(runtime, passes, share):
    assert pass_of(quick_test(runtime=runtime), passes).runtime == share


def test_a_test_once_over_its_data_is_repeated_whole():
    """Its runtime is a cap: a third of the cap would cover a third of the region, another test."""
    once = quick_test(time_based=False, runtime=60.0)
    assert pass_of(once, DEFAULT_PASSES) == once


def test_sharing_changes_only_the_runtime():
    plan = build_plan(load_suite("quick"))
    shared = share_runtime(plan, DEFAULT_PASSES)
    assert [replace(t, runtime=5.0) for t in shared.tests] == list(plan.tests)


def invoke(*args):
    return CliRunner().invoke(cli, ["run", *args], env={"DISKLAB_REPEAT": None})


def test_a_default_dry_run_shows_the_passes_and_an_estimate_within_twice_a_single_pass(tmp_path):
    default = invoke("quick", "--dry-run")
    assert default.exit_code == 0, default.output
    assert "5 interleaved passes per test, sharing its runtime (1 s measured per pass)" in default.output
    assert "(every test 5 times)" in default.output
    single = invoke("quick", "--dry-run", "--repeat", "1")
    assert "one pass per test (--repeat 1): its figures have no measured spread" in single.output

    def estimate(output: str) -> int:
        (line,) = [line for line in output.splitlines() if line.startswith("estimated duration: ")]
        minutes, _, seconds = line.split()[2].rstrip("s").partition("m")
        return int(minutes) * 60 + int(seconds) if seconds else int(minutes)

    assert estimate(single.output) < estimate(default.output) <= 2 * estimate(single.output)


def test_an_explicit_repeat_runs_the_whole_runtime_each_time_and_best_of_keeps_its_own_passes():
    repeated = invoke("quick", "--dry-run", "--repeat", "3")
    assert "every test 3 times, interleaved" in repeated.output and "5s" in repeated.output
    best = invoke("quick", "--dry-run", "--best-of", "5")
    assert best.exit_code == 0 and "interleaved passes" not in best.output


def test_suites_that_decide_their_own_steps_run_them_once():
    for suite in ("steady", "saturate"):
        result = invoke(suite, "--dry-run")
        assert result.exit_code == 0, result.output
        assert "passes" not in result.output and "times)" not in result.output
