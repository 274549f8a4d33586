"""SteadySchedule with fake fio results: preconditioning first, then rounds until steady or enough is written."""

import pytest

from disklab.errors import UserError
from disklab.fio.parse import DirectionMetrics, JobResult
from disklab.plan.build import PRECONDITION_BS, Overrides, build_plan, fit_to_target
from disklab.run.schedule import Finished
from disklab.run.steady import SteadySchedule
from disklab.suite.loader import load_suite, parse_suite
from disklab.targets.purge import purge
from disklab.targets.target import Target

MiB = 1024**2

SUITE = """
name = "s"
mode = "steady"
[steady]
{steady}
[defaults]
size = "64M"
runtime = "1s"
[[group]]
name = "w"
direction = "write"
"""


def suite(steady="", mode="steady"):
    return parse_suite(SUITE.format(steady=steady).replace('"steady"', f'"{mode}"', 1), "test", "test.toml")


def job(iops: float, written: int = 0, runtime_ms: int = 1000) -> JobResult:
    metrics = DirectionMetrics("write", written, int(iops), iops, iops * 4096, runtime_ms, 1e5, 1e5, 1e6, {})
    return JobResult("t", 0, 1.0, 1.0, (metrics,))


def run(schedule: SteadySchedule, values, written: int = 0) -> list[Finished]:
    """Drive the schedule like execute_schedule does, answering each round with the next value."""
    finished, rounds = [], iter(values)
    while (step := schedule.next_step(finished)) is not None:
        if step.test.group == "precondition":
            finished.append(Finished(step, job(1000, step.test.size)))
        else:
            finished.append(Finished(step, job(next(rounds), written)))
    return finished


def test_preconditioning_writes_the_region_twice_with_128k_sequential_writes_before_the_rounds():
    plan = fit_to_target(build_plan(suite()), None, 512, is_directory=True)
    first, second, workload = plan.tests
    for n, test in enumerate((first, second), start=1):
        assert test.label == f"precondition pass {n}"
        assert test.fio_rw == "write" and test.bs == PRECONDITION_BS and not test.time_based and test.runtime == 0
        assert (test.offset, test.size) == (workload.offset, workload.size) == (0, 64 * MiB)
    finished = run(SteadySchedule(plan), [100] * 5)
    assert [(f.step.plan_index, f.step.attempt) for f in finished] == [(0, 1), (1, 1)] + [(2, n) for n in range(1, 6)]


def test_rounds_stop_at_the_first_steady_window():
    plan = build_plan(suite())
    schedule = SteadySchedule(plan)
    values = [300, 200, 150, 130, 100, 101, 99, 100, 102, 100, 50, 50]
    finished = run(schedule, values)
    assert [f.step.attempt for f in finished if f.step.plan_index == 2] == list(range(1, 10))
    outcome = schedule.outcomes(finished)["steady_state"]
    assert outcome["reached"] and outcome["round"] == 9
    assert outcome["summary"].startswith("steady state reached in round 9")


def test_rounds_stop_at_max_rounds_when_never_steady():
    plan = build_plan(suite("max_rounds = 8"))
    schedule = SteadySchedule(plan)
    assert schedule.expected_steps() == 10
    finished = run(schedule, [1000 / n for n in range(1, 50)])
    assert len([f for f in finished if f.step.plan_index == 2]) == 8
    assert schedule.verdict(finished).summary().startswith("not reached after 8 rounds")


def test_without_preconditioning_rounds_start_at_once_and_resume_continues_after_the_last_round():
    plan = build_plan(suite("precondition = false"))
    assert len(plan.tests) == 1
    schedule = SteadySchedule(plan)
    stored = run(schedule, [100, 100, 50, 100, 100, 100, 100, 100])[:3]  # interrupted after round 3
    resumed = SteadySchedule(plan)
    step = resumed.next_step(stored)
    assert (step.plan_index, step.attempt) == (0, 4)
    finished = stored + [Finished(step, job(100))]
    for _ in range(4):
        finished.append(Finished(resumed.next_step(finished), job(100)))
    assert resumed.next_step(finished) is None and resumed.verdict(finished).round == 8


def test_write_saturation_stops_once_the_multiple_of_the_region_is_written():
    plan = build_plan(suite("written_multiple = 2\nmax_rounds = 100\nprecondition = false", mode="write-saturation"))
    schedule = SteadySchedule(plan)
    finished = run(schedule, [100] * 100, written=30 * MiB)  # 64 MiB region: 2x is 128 MiB, reached in round 5
    assert len(finished) == 5
    outcomes = schedule.outcomes(finished)
    assert outcomes["write_saturation"]["written_bytes"] == 150 * MiB
    assert "2.34 x the region written" in outcomes["write_saturation"]["summary"]
    assert outcomes["steady_state"]["reached"]  # reported, not used to stop


def test_write_saturation_stops_at_its_time_limit():
    plan = build_plan(suite('time_limit = "3s"\nmax_rounds = 100\nprecondition = false', mode="write-saturation"))
    schedule = SteadySchedule(plan)
    finished = run(schedule, [100] * 100)  # each fake round ran 1 s
    assert len(finished) == 3
    assert "time limit" in schedule.outcomes(finished)["write_saturation"]["summary"]


@pytest.mark.parametrize("steady, message", [
    ("window = 1", "window: 1 is not a whole number from 2"),
    ("max_rounds = 3", "max_rounds (3) is smaller than the window (5)"),
    ('excursion_percent = "a lot"', "excursion_percent: 'a lot' is not a number"),
    ("precondition = 1", "precondition: 1 is not true or false"),
    ("written_multiple = 4", "written_multiple and time_limit belong to mode = \"write-saturation\""),
    ("windows = 5", "unknown field 'windows'"),
])
def test_steady_table_errors_name_the_field(steady, message):
    with pytest.raises(UserError, match="test.toml: steady: ") as caught:
        suite(steady)
    assert message in str(caught.value)


def test_mode_must_be_known_and_a_steady_table_needs_a_rounds_mode():
    with pytest.raises(UserError, match="mode: 'steddy' is not one of fixed, steady, write-saturation"):
        suite(mode="steddy")
    with pytest.raises(UserError, match=r"a \[steady\] table needs mode"):
        parse_suite('name = "x"\n[steady]\nwindow = 5\n[[group]]\nname = "g"\n', "t", "t.toml")


def test_a_rounds_suite_runs_exactly_one_test():
    text = SUITE.format(steady="").replace('direction = "write"', 'direction = ["read", "write"]')
    with pytest.raises(UserError, match="runs one test in steps; the suite expands to 2"):
        build_plan(parse_suite(text, "t", "t.toml"))


def test_builtin_steady_and_write_saturation_follow_snia():
    steady = build_plan(load_suite("steady"), Overrides(size=64 * MiB))
    assert steady.suite.rounds.criteria.window == 5 and steady.suite.rounds.criteria.max_rounds == 25
    assert [t.group for t in steady.tests] == ["precondition", "precondition", "RND4K write"]
    assert steady.tests[2].fio_rw == "randwrite" and steady.tests[2].bs == 4096 and steady.tests[2].runtime == 60
    saturation = build_plan(load_suite("write-saturation"))
    assert saturation.suite.rounds.written_multiple == 4 and saturation.suite.rounds.time_limit == 24 * 3600
    assert len(saturation.tests) == 1 and saturation.tests[0].fio_rw == "randwrite"


def test_purge_is_skipped_with_a_note_unless_a_device_and_destroy_data():
    file_target = Target("directory", "/mnt/x", "/mnt/x/f", True, None, None)
    assert purge(file_target, destroy_data=True, force=False).startswith("purge skipped: /mnt/x is a directory")
    device = Target("device", "/dev/sdz", "/dev/sdz", False, 10**9, None)
    assert purge(device, destroy_data=False, force=False) == "purge skipped: discarding the device needs --destroy-data"
