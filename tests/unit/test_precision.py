"""PrecisionSchedule fed with made-up results: when it stops, in what order it runs, and what it says."""

from dataclasses import replace

import pytest

from disklab.run.precision import (
    DEFAULT_MAX_PASSES, STOPPED_PRECISION, STOPPED_TIME, PrecisionSchedule, headline_value,
)
from disklab.run.prepare import schedule_for
from disklab.units import parse_percent
from disklab.errors import UserError
from disklab.fio.parse import DirectionMetrics, JobResult
from disklab.plan.build import build_plan
from disklab.run.schedule import Finished, FixedSchedule
from disklab.suite.loader import load_suite


def job(iops: float, write_iops: float = 0.0) -> JobResult:
    def direction(name, value):
        return DirectionMetrics(name, int(value * 4096), int(value), value, value * 4096, 1000, 100_000.0,
                                90_000.0, 1e6, {"p99": 200_000.0})

    directions = (direction("read", iops),) + ((direction("write", write_iops),) if write_iops else ())
    return JobResult("t", 0, 1.0, 2.0, directions)


def two_test_plan():
    plan = build_plan(load_suite("quick"))
    return replace(plan, tests=plan.tests[:2])


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def drive(schedule, series: dict[int, list[float]], clock: Clock | None = None, step_seconds: float = 1.0):
    """Runs the schedule to its end, answering step n of test i with series[i][n - 1]."""
    finished = []
    while (step := schedule.next_step(finished)) is not None:
        finished.append(Finished(step, job(series[step.plan_index][step.attempt - 1])))
        if clock:
            clock.now += step_seconds
    return finished


STABLE = [50_000, 50_400, 49_800, 50_100, 49_900, 50_200, 50_000, 49_950] * 5
NOISY = [46_000, 54_000] * 20  # +/- 8 % around 50,000: needs about a dozen runs for +/- 5 %


def test_a_stable_series_stops_at_the_minimum_of_three_runs_interleaved():
    finished = drive(PrecisionSchedule(two_test_plan(), 2.0, 3600), {0: STABLE, 1: STABLE})
    assert [(f.step.plan_index, f.step.attempt) for f in finished] == [(0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]


def test_a_noisy_test_keeps_going_while_a_stable_one_has_stopped():
    schedule = PrecisionSchedule(two_test_plan(), 5.0, 3600)
    finished = drive(schedule, {0: STABLE, 1: NOISY})
    runs = [sum(f.step.plan_index == i for f in finished) for i in (0, 1)]
    assert runs[0] == 3 and runs[1] > 3
    outcomes = {o.plan_index: o for o in schedule.test_outcomes(finished)}
    assert outcomes[0].stopped == STOPPED_PRECISION and outcomes[1].stopped == STOPPED_PRECISION
    assert outcomes[1].summary.ci95_percent <= 5.0
    assert outcomes[1].describe(5.0).startswith(f"stopped: precision reached after {runs[1]} runs")


def test_the_time_budget_ends_a_test_that_does_not_settle_and_says_so():
    clock = Clock()
    schedule = PrecisionSchedule(two_test_plan(), 1.0, max_seconds=10, clock=clock)
    finished = drive(schedule, {0: STABLE, 1: NOISY}, clock)
    assert len(finished) == 10, "checked before each step; ten 1-second steps fill a 10 s budget"
    record = schedule.outcomes(finished)["precision"]
    noisy = record["tests"][1]
    assert noisy["stopped"] == STOPPED_TIME and noisy["runs"] == 6 and noisy["ci95_percent"] > 1.0
    assert f"time budget ran out at +/- {noisy['ci95_percent']:.1f} % after 6 runs" in record["summary"]
    # the stable test: +/- 1.5 % after 3 runs, 0.8 % after 4
    assert record["tests"][0]["stopped"] == STOPPED_PRECISION and record["tests"][0]["runs"] == 4


def test_a_budget_spent_before_a_tests_first_run_says_it_did_not_run():
    clock = Clock()
    schedule = PrecisionSchedule(two_test_plan(), 1.0, max_seconds=1, clock=clock)
    finished = drive(schedule, {0: NOISY, 1: NOISY}, clock)
    assert len(finished) == 1
    assert "not run: the time budget ran out" in schedule.outcomes(finished)["precision"]["summary"]


def test_repeat_raises_the_minimum_number_of_runs():
    finished = drive(PrecisionSchedule(two_test_plan(), 2.0, 3600, min_runs=5), {0: STABLE, 1: STABLE})
    assert len(finished) == 10


def test_a_resumed_schedule_continues_from_the_stored_steps():
    plan = two_test_plan()
    first = drive(PrecisionSchedule(plan, 5.0, 3600), {0: STABLE, 1: NOISY})
    fresh = PrecisionSchedule(plan, 5.0, 3600)
    assert fresh.next_step(first[:4]) == first[4].step
    assert fresh.next_step(first) is None


def test_the_headline_counts_read_and_write():
    assert headline_value("iops", job(1000, 500)) == 1500
    assert headline_value("mb_per_s", job(1000, 500)) == pytest.approx(1500 * 4096 / 1e6)


@pytest.mark.parametrize("text, value", [("2%", 2.0), ("0.5 %", 0.5), (" 5% ", 5.0)])
def test_precision_is_read_as_a_percentage(text, value):
    assert parse_percent(text) == value


@pytest.mark.parametrize("text", ["0%", "100%", "two", "-1%", "5", "nan%", "1e1%"])
def test_a_precision_out_of_range_is_refused(text):
    with pytest.raises(ValueError):
        parse_percent(text)


def test_run_and_resume_build_the_schedule_from_the_same_options():
    plan = two_test_plan()
    stored = {"repeat": 4, "precision": 2.0, "max_time": 600.0}
    schedule = schedule_for(plan, stored["repeat"], stored.get("precision"), stored.get("max_time"))
    assert isinstance(schedule, PrecisionSchedule)
    assert (schedule.min_runs, schedule.target_percent, schedule.max_seconds) == (4, 2.0, 600.0)
    assert schedule_for(plan, 1, 2.0).max_seconds == DEFAULT_MAX_PASSES * plan.estimated_seconds()
    assert isinstance(schedule_for(plan, 2), FixedSchedule)
    with pytest.raises(UserError, match="give --precision too"):
        schedule_for(plan, 1, None, 60.0)
