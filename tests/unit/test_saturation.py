"""The saturation search's decisions fed with figures (when a setting is measured again, when climbing stops, what the
peak is), and the schedule with its load levels driven by a fake device instead of fio (real fio:
tests/integration/test_saturate.py)."""

from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from disklab.analysis.peak_search import PeakSearch
from disklab.analysis.saturation import Level, Probe, best_under, knee, level_rate_per_job
from disklab.errors import UserError
from disklab.fio.parse import DirectionMetrics, JobResult
from disklab.plan.build import build_plan
from disklab.plan.estimate import search_steps
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


def search_of(figures, limits=SaturationSettings()):
    """A search fed each figure (IOPS, or (IOPS, p99 ns)) as the pass of the setting it wants next."""
    search = PeakSearch(limits)
    for figure in figures:
        iops, p99 = figure if isinstance(figure, tuple) else (figure, 100_000)
        search.record(probe(*search.wanted, iops, p99))
    return search


def wanted_after(figures, limits=SaturationSettings()):
    return search_of(figures, limits).wanted


def test_depth_rises_fourfold_while_iops_keep_pace_then_doubles_and_a_clear_gain_is_not_repeated():
    assert wanted_after([]) == (1, 1)
    assert wanted_after([10_000]) == (4, 1)  # QD1 tells little: depth jumps
    assert wanted_after([10_000, 38_000]) == (16, 1)  # 3.8x for 4x the depth: still scaling
    assert wanted_after([10_000, 25_000]) == (8, 1)  # 2.5x for 4x: near the top, depth doubles
    assert wanted_after([10_000, 38_000, 60_000]) == (32, 1)  # +58 %: a clear gain, measured once, climbing goes on


def test_a_gain_inside_the_gain_band_is_measured_again_alternately_and_noise_stops_the_climb():
    # QD16 100k, QD32 103k: a gain, but under 5 % beyond QD16's pass: it might be the peak
    search = search_of([10_000, 38_000, 100_000, 103_000])
    assert search.wanted == (16, 1)
    order = []
    for iops in (92_000, 101_000, 106_000):  # QD16, QD32, QD16: the third pass makes the ranges overlap
        order.append(search.wanted)
        search.record(probe(*search.wanted, iops))
    assert order == [(16, 1), (32, 1), (16, 1)]
    # QD16: 100, 92, 106 (mean 99.3k); QD32: 103, 101 (mean 102k): the gain is inside the spread, depth stops and
    # jobs go up at the higher mean's depth
    assert search.wanted == (32, 2)
    assert "QD32 x 1's gain over QD16 x 1 lay inside their spread" in search.reasons[0]
    search.record(probe(32, 2, 101_500))  # inside QD32's measured 101k-103k: no gain, and not measured again
    assert search.wanted == (32, 1)  # the winner gets its third pass
    search.record(probe(32, 1, 96_000))
    peak = search.peak
    assert search.wanted is None and (peak.probe.iodepth, peak.probe.jobs) == (32, 1)
    assert peak.probe.iops == pytest.approx(100_000) and peak.passes == (103_000, 101_000, 96_000)
    assert peak.as_dict()["iops_min"] == 96_000 and peak.as_dict()["iops_max"] == 103_000
    assert search.steps == 9


def test_a_gain_the_repeats_confirm_goes_on_climbing():
    search = search_of([10_000, 38_000, 100_000, 104_000, 99_000, 110_000, 101_000, 111_000])
    # QD16: 100, 99, 101; QD32: 104, 110, 111: means 7 % apart, ranges apart: a real gain
    assert search.wanted == (64, 1) and not search.reasons
    search.record(probe(64, 1, 112_000))  # inside QD32's 104k-111k .. +5 %: might be the peak; QD32 has its passes
    assert search.wanted == (64, 1)  # only QD64 is measured again


def test_the_reported_peak_is_the_mean_of_its_passes_not_the_luckiest_one():
    limits = SaturationSettings(max_jobs=1)
    # QD16's first pass is lucky (130k, 3.4x QD4: depth jumps to 64); QD64 gains nothing; QD16 gets 3 passes
    search = search_of([10_000, 38_000, 130_000, 120_000], limits)
    assert search.wanted == (16, 1) and "QD64 x 1 gave 120,000 IOPS, no gain" in search.reasons[0]
    search = search_of([10_000, 38_000, 130_000, 120_000, 100_000, 104_000], limits)
    assert search.wanted is None
    assert search.peak.probe.iops == pytest.approx(111_333, abs=1) and search.peak.passes == (130_000, 100_000, 104_000)


def test_jobs_start_from_the_depth_phase_s_winner_unrepeated_and_a_step_within_the_gain_band_is_repeated():
    figures = [10_000, 38_000, 100_000, 90_000]  # QD32 no gain: depth stops at QD16, which jobs may still beat
    assert wanted_after(figures) == (16, 2)
    assert wanted_after(figures + [109_000]) == (16, 4)  # +9 %: a clear gain, jobs double again; QD16 never repeated
    assert wanted_after(figures + [103_000]) == (16, 1)  # +3 %: might be the peak: QD16 and QD16 x 2 alternately
    done = search_of(figures + [103_000, 99_000, 104_000, 101_000, 102_000])
    # QD16: 100, 99, 101; QD16 x 2: 103, 104, 102: 3 % apart, inside the gain: the higher mean, and the search ends
    assert done.wanted is None and (done.peak.probe.iodepth, done.peak.probe.jobs) == (16, 2)
    assert done.peak.passes == (103_000, 104_000, 102_000)
    assert "jobs: QD16 x 2's gain over QD16 x 1 lay inside their spread" in done.reasons[1]
    search = search_of(figures + [80_000])  # no gain from jobs: the depth phase's winner gets its 3 passes
    assert search.wanted == (16, 1)
    assert search_of(figures + [80_000, 98_000, 97_000]).peak.probe.iops == pytest.approx(98_333.33)


def test_exploding_p99_stops_the_depth_search_while_iops_grow_less_than_the_gain():
    limits = SaturationSettings(max_jobs=1)
    # QD4 -> QD16: 4x the I/O in flight allows p99 up to 2 x 4 x 120 us = 960 us; a clear gain goes on regardless
    queued = search_of([(10_000, 100_000), (38_000, 120_000), (39_000, 900_000)], limits)
    assert queued.pending == [(4, 1), (16, 1), (4, 1), (16, 1)] and not queued.reasons  # might be the peak
    assert wanted_after([(10_000, 100_000), (38_000, 120_000), (60_000, 1_200_000)], limits) == (32, 1)
    search = search_of([(10_000, 100_000), (38_000, 120_000), (39_000, 1_200_000)], limits)
    assert search.pending == [(4, 1), (4, 1)]  # QD16 is out; QD4, the winner, gets its passes
    assert "p99 at QD16 x 1 grew more than 2x as much as the I/O in flight over QD4 x 1's" in search.reasons[0]


def test_the_limits_of_depth_and_jobs_end_the_search():
    limits = SaturationSettings(max_iodepth=4, max_jobs=2)
    search = search_of([1_000, 4_000], limits)
    assert search.wanted == (4, 2) and search.reasons == ["queue depth: reached max_iodepth (4)"]
    search.record(probe(4, 2, 8_000))  # a clear gain, but jobs may not double again: QD4 x 2 gets its passes
    assert search.wanted == (4, 2) and search.reasons[1] == "jobs: reached max_jobs (2)"
    assert search_of([1_000, 4_000, 8_000, 8_000, 8_000], limits).peak.probe.jobs == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(1, 1e6)), min_size=60, max_size=60), st.integers(1, 5),
       st.sampled_from([1, 2, 16, 256]),
       st.sampled_from([1, 2, 4, 16]))
def test_any_figures_end_in_a_peak_that_is_the_mean_of_its_passes_within_the_estimated_steps(
        figures, repeats, max_iodepth, max_jobs):
    limits = SaturationSettings(repeats=repeats, max_iodepth=max_iodepth, max_jobs=max_jobs)
    search = PeakSearch(limits)
    for iops in figures:
        if search.wanted is None:
            break
        assert 1 <= search.wanted[0] <= max_iodepth and 1 <= search.wanted[1] <= max_jobs
        search.record(probe(*search.wanted, iops))
    least, _, most = search_steps(limits)
    assert least - len(limits.levels) <= search.steps <= most - len(limits.levels)
    assert search.wanted is None
    peak = search.peak
    assert len(peak.passes) == repeats and peak.probe.iops == pytest.approx(sum(peak.passes) / repeats)


def test_a_pass_of_no_iops_is_beaten_by_any_and_the_depth_jumps():
    """fio reports 0 IOPS for a pass it timed under a millisecond; the next setting's figures are not divided by it."""
    assert wanted_after([0.0, 500]) == (16, 1)


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
    # each setting is a planned test of its own; the passes of one measured again are its attempts
    steps = [(f.step.plan_index, f.step.attempt, t.iodepth, t.jobs) for f, t in zip(finished, tests) if not t.rate_iops]
    # QD1 -> QD4 -> QD16 (4x while IOPS keep pace), QD32 no gain; 2 jobs gain, 4 do not: QD16 x 2 gets 3 passes
    assert steps == [(0, 1, 1, 1), (1, 1, 4, 1), (2, 1, 16, 1), (3, 1, 32, 1), (4, 1, 16, 2), (5, 1, 16, 4),
                     (4, 2, 16, 2), (4, 3, 16, 2)]
    assert [f.step.plan_index for f in finished[len(steps):]] == list(range(6, 16))
    levels = [t for t in tests if t.rate_iops is not None]
    assert [t.rate_iops for t in levels] == [6500 * n for n in range(1, 11)]  # 130,000 x n/10 over 2 jobs
    assert all((t.iodepth, t.jobs) == (16, 2) for t in levels)
    assert levels[2].label == "RND4K read Q16T2 at 30 %"
    outcome = schedule.outcomes(finished)["saturation"]
    assert outcome["peak"]["iops"] == 130_000 and (outcome["peak"]["iodepth"], outcome["peak"]["jobs"]) == (16, 2)
    # p99 = 100 us x (1 + 8 x load^6): 194 us at 70 %, 310 us at 80 % (over twice the 100 us at 10 %), 525 us at 90 %
    assert outcome["knee"]["percent"] == 70
    assert outcome["best_under_p99"]["percent"] == 80
    assert outcome["summary"].startswith("saturation: peak 130,000 IOPS at queue depth 16 x 2 jobs, the mean of 3 "
                                         "passes (130,000-130,000); 8 search steps, stopped: queue depth: QD32 x 1")
    assert outcome["peak"]["passes"] == 3 and len(outcome["search"]) == 8 and len(outcome["stopped"]) == 2
    assert "highest load with p99 <= 500 us: 104,000 IOPS (80 % of the peak" in outcome["summary"]


def test_a_resumed_search_continues_with_the_first_missing_step():
    plan = build_plan(parse_suite(SUITE, "t", "t.toml"))
    complete = drive(SaturateSchedule(plan, SaturationSettings()))
    for cut in (3, 6, 9):  # within the depths, at the winner's second pass, within the load levels
        resumed = SaturateSchedule(plan, SaturationSettings())
        assert resumed.next_step(complete[:cut]) == complete[cut].step
    assert complete[6].step.attempt == 2
    assert SaturateSchedule(plan, SaturationSettings()).next_step(complete) is None
    # an older disklab's search (QD1, 2, 4 ...) is not replayed as if it were this one's
    older = [complete[0], Finished(replace(complete[1].step, test=replace(complete[1].step.test, iodepth=2)),
                                   complete[1].job)]
    with pytest.raises(UserError, match="step 2 of this saturation search ran QD2 x 1 where the search now asks for "
                                        "QD4 x 1"):
        SaturateSchedule(plan, SaturationSettings()).next_step(older)


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
