"""The saturation search and load levels, driven by a fake device instead of fio."""

import pytest

from disklab.analysis.saturation import (
    Level, Probe, best_under, knee, level_rate_per_job, next_probe,
)
from disklab.errors import UserError
from disklab.fio.parse import DirectionMetrics, JobResult
from disklab.plan.build import build_plan
from disklab.run.saturate import SaturateSchedule
from disklab.run.schedule import Finished
from disklab.suite.loader import load_suite, parse_suite
from disklab.suite.settings import SaturationSettings

SUITE = """
name = "sat"
[defaults]
size = "64M"
runtime = "1s"
[[group]]
name = "RND4K read"
"""


def result(iops: float, p99_ns: float) -> JobResult:
    percentiles = {"p50": p99_ns / 3, "p99": p99_ns, "p99_9": p99_ns * 2}
    metrics = DirectionMetrics("read", int(iops) * 4096, int(iops), iops, iops * 4096, 1000, p99_ns / 3, p99_ns / 3,
                               p99_ns * 3, percentiles)
    return JobResult("t", 0, 1.0, 1.0, (metrics,))


def fake_device(test) -> JobResult:
    """Scales with outstanding I/O up to 100k IOPS; latency by Little's law, plus queueing as it nears the cap."""
    outstanding = test.iodepth * test.jobs
    capacity = min(10_000 * outstanding, 100_000) if test.jobs == 1 else min(10_000 * outstanding, 130_000)
    iops = min(capacity, test.rate_iops * test.jobs) if test.rate_iops else capacity
    load = iops / capacity
    p99 = 100_000 * (1 + 8 * load**6)  # 100 us idle, up to 900 us at full load
    return result(iops, p99)


def drive(schedule, device=fake_device, stop_after=None):
    finished = []
    while (step := schedule.next_step(finished)) is not None:
        finished.append(Finished(step, device(step.test)))
        if stop_after is not None and len(finished) == stop_after:
            break
    return finished


def probe(iodepth, jobs, iops, p99=100_000):
    return Probe(iodepth, jobs, iops, p99 / 3, p99, p99 * 2)


def test_queue_depth_doubles_until_two_steps_gain_too_little_then_jobs_double():
    settings = SaturationSettings()
    probes = [probe(1, 1, 10_000)]
    assert next_probe([], settings) == (1, 1)
    assert next_probe(probes, settings) == (2, 1)
    probes += [probe(2, 1, 20_000), probe(4, 1, 40_000), probe(8, 1, 80_000), probe(16, 1, 82_000)]
    assert next_probe(probes, settings) == (32, 1)  # +2.5 % at QD16: one step short of the gain may be noise
    probes.append(probe(32, 1, 81_000))
    assert next_probe(probes, settings) == (16, 2)  # two in a row: jobs go up at the peak's depth
    probes.append(probe(16, 2, 120_000))
    assert next_probe(probes, settings) == (16, 4)
    probes.append(probe(16, 4, 121_000))
    assert next_probe(probes, settings) == (16, 8)
    probes.append(probe(16, 8, 119_000))
    assert next_probe(probes, settings) is None
    assert next_probe(probes[:5], SaturationSettings(patience=1)) == (16, 2)


def test_exploding_p99_stops_the_depth_search_even_while_iops_grow():
    settings = SaturationSettings(max_jobs=1)
    probes = [probe(1, 1, 10_000, 100_000), probe(2, 1, 20_000, 120_000), probe(4, 1, 25_000, 900_000)]
    assert next_probe(probes, settings) is None


def test_the_limits_of_depth_and_jobs_end_the_search():
    settings = SaturationSettings(max_iodepth=4, max_jobs=2)
    probes = [probe(1, 1, 1), probe(2, 1, 2), probe(4, 1, 4)]
    assert next_probe(probes, settings) == (4, 2)
    assert next_probe(probes + [probe(4, 2, 8)], settings) is None


def test_rate_per_job_splits_the_target_over_the_jobs():
    assert level_rate_per_job(probe(8, 4, 100_000), 30) == 7500
    assert level_rate_per_job(probe(1, 1, 3), 10) == 1


def test_knee_is_the_last_level_before_p99_doubles_and_best_under_the_bound():
    levels = [Level(p, p * 1000, probe(8, 1, p * 1000, p99)) for p, p99 in
              [(10, 100_000), (20, 110_000), (30, 150_000), (40, 250_000), (50, 900_000)]]
    assert knee(levels).percent == 30
    assert best_under(levels, 200_000).percent == 30
    assert best_under(levels, 50_000) is None
    assert knee(levels[:3]) is None


def test_schedule_searches_then_measures_every_load_level_with_fio_rate_limits():
    plan = build_plan(parse_suite(SUITE, "t", "t.toml"))
    schedule = SaturateSchedule(plan, SaturationSettings(p99_bound_ns=500_000))
    finished = drive(schedule)
    tests = [f.step.test for f in finished]
    assert [f.step.plan_index for f in finished] == list(range(len(finished)))
    search = [(t.iodepth, t.jobs) for t in tests if t.rate_iops is None]
    # QD32 and QD64 added nothing; 4 and 8 jobs nothing over 2
    assert search == [(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (32, 1), (64, 1), (16, 2), (16, 4), (16, 8)]
    levels = [t for t in tests if t.rate_iops is not None]
    assert [t.rate_iops for t in levels] == [6500 * n for n in range(1, 11)]  # 130,000 x n/10 over 2 jobs
    assert all((t.iodepth, t.jobs) == (16, 2) for t in levels)
    assert levels[2].label == "RND4K read Q16T2 at 30 %"
    outcome = schedule.outcomes(finished)["saturation"]
    assert outcome["peak"]["iops"] == 130_000 and (outcome["peak"]["iodepth"], outcome["peak"]["jobs"]) == (16, 2)
    # p99 = 100 us x (1 + 8 x load^6): 194 us at 70 %, 310 us at 80 % (over twice the 100 us at 10 %), 525 us at 90 %
    assert outcome["knee"]["percent"] == 70
    assert outcome["best_under_p99"]["percent"] == 80
    assert outcome["summary"].startswith("saturation: peak 130,000 IOPS at queue depth 16 x 2 jobs")
    assert "highest load with p99 <= 500 us: 104,000 IOPS (80 % of the peak" in outcome["summary"]


def test_a_resumed_search_continues_with_the_first_missing_step():
    plan = build_plan(parse_suite(SUITE, "t", "t.toml"))
    complete = drive(SaturateSchedule(plan, SaturationSettings()))
    for cut in (3, 9):
        resumed = SaturateSchedule(plan, SaturationSettings())
        assert resumed.next_step(complete[:cut]) == complete[cut].step
    assert SaturateSchedule(plan, SaturationSettings()).next_step(complete) is None


def test_one_disturbed_light_level_does_not_hide_the_knee_and_short_levels_are_marked():
    levels = [Level(p, p * 1000, probe(8, 1, iops, p99)) for p, iops, p99 in
              [(10, 10_000, 900_000), (20, 20_000, 100_000), (30, 30_000, 120_000), (40, 20_000, 300_000)]]
    assert knee(levels).percent == 30
    assert [lv.held for lv in levels] == [True, True, True, False]


@pytest.mark.parametrize("table, message", [
    ("gain_percent = 0", "gain_percent: 0 is not a number above 0"),
    ("max_jobs = 0", "max_jobs: 0 is not a whole number from 1"),
    ('p99 = "1"', "p99: '1' is not a latency such as 1ms"),
    ("p95 = 1", "unknown field 'p95'"),
])
def test_saturate_table_errors_name_the_field(table, message):
    text = 'name = "s"\nmode = "saturate"\n[saturate]\n' + table + '\n[[group]]\nname = "g"\n'
    with pytest.raises(UserError, match="t.toml: saturate: ") as caught:
        parse_suite(text, "t", "t.toml")
    assert message in str(caught.value)


def test_builtin_saturate_reads_4k_at_random_and_takes_its_bound_from_the_table():
    suite = load_suite("saturate")
    plan = build_plan(suite)
    assert suite.saturation.gain_percent == 5 and suite.saturation.p99_bound_ns is None
    assert len(plan.tests) == 1 and plan.tests[0].fio_rw == "randread" and plan.tests[0].bs == 4096
    bounded = parse_suite('name = "s"\nmode = "saturate"\n[saturate]\np99 = "500us"\n[[group]]\nname = "g"\n', "t", "t")
    assert bounded.saturation.p99_bound_ns == 500_000


def test_p99_belongs_to_saturate_suites_and_repeats_do_not():
    from disklab.run.prepare import schedule_for

    assert isinstance(schedule_for(build_plan(load_suite("saturate")), 1, p99=1e6), SaturateSchedule)
    with pytest.raises(UserError, match="--p99 is the latency bound of a saturate suite"):
        schedule_for(build_plan(load_suite("quick")), 1, p99=1e6)
    with pytest.raises(UserError, match="do not apply to suite 'saturate'"):
        schedule_for(build_plan(load_suite("saturate")), 3)
