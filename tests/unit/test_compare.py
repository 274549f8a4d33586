"""Comparing stored runs: matching (never one job of a group with the whole group), ratios, verdicts the spread
supports (tolerance, Welch's t-test, intervals; inconclusive where it cannot tell), crossovers, formats."""

import csv
import io
import json

import pytest
from click.testing import CliRunner

from disklab.analysis.compare import Refusal, compare_runs, job_parts
from disklab.analysis.stats import summarize
from disklab.analysis.withheld import withheld_reason
from disklab.analysis.verdict import (
    BETTER, IN_PREDICTION, INCONCLUSIVE, INTERVAL, NO_SPREAD, NO_VERDICT, NOT_SIGNIFICANT, REACHES_ZERO, SINGLE_RUNS,
    T_TEST,
    WIDER_THAN_DIFFERENCE, WIDER_THAN_TOLERANCE, WITHIN_NOISE, WORSE, Judgement, judge, welch_significant,
)
from disklab.cli.main import cli
from disklab.fio.parse import DirectionMetrics, JobResult, extract_json, parse_fio_output
from disklab.report.compare import compare_renderables, notes, shown, to_csv, to_json, to_markdown
from disklab.report.rows import summary_rows
from disklab.store.repository import Store
from disklab.suite.params import PARAMS
from tests.conftest import FIO_FIXTURES, fixture_text
from tests.unit.test_store import new_run

DEFAULTS = {name: param.default for name, param in PARAMS.items()}
LAYOUTS = FIO_FIXTURES / "layouts"  # real fio output of every layout (its capture script says how each was made)
KIB = 1024


def job(iops: float, bs: int = 4096, lat_us: float = 100.0, p99_us: float = 200.0, seconds: int = 1) -> JobResult:
    """A pass of `seconds`: a p99 needs 1,000 I/Os of the passes together (analysis/repeats.TAIL_IOS)."""
    read = DirectionMetrics("read", int(iops * bs * seconds), int(iops * seconds), iops, iops * bs, 1000 * seconds,
                            lat_us * 1e3, lat_us * 1e3, 1e6, {"p99": p99_us * 1e3})
    return JobResult("t", 0, 1.0, 2.0, (read,))


def passes(iops: float, **figures) -> list[JobResult]:
    """Three passes 1 % apart around `iops`: a measured spread, far narrower than the tolerance."""
    return [job(iops * f, **figures) for f in (0.99, 1.0, 1.01)]


def fixture_job(name: str) -> JobResult:
    (result,) = parse_fio_output(fixture_text(name)).jobs
    return result


def stored_run(store: Store, tests: list[tuple[str, dict, list[JobResult]]], env: dict | None = None, **changes):
    """A complete run; each test's list holds its repeats (interleaved as --repeat runs them)."""
    repeats = max(len(jobs) for _, _, jobs in tests)
    run_id = store.create_run(new_run(options={"repeat": repeats}, **changes))
    seq = 0
    for attempt in range(1, repeats + 1):
        for plan_index, (label, params, jobs) in enumerate(tests):
            if attempt <= len(jobs):
                store.add_test(run_id, seq, label, {**DEFAULTS, **params}, "", "{}", "", "2026-01-01T00:00:00+00:00",
                               jobs[attempt - 1], plan_index=plan_index, attempt=attempt)
                seq += 1
    store.set_run_values("run_env", run_id, env or {})
    store.finish_run(run_id, "complete")
    return store.get_run(run_id)


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "results.db") as s:
        yield s


def row(comparison, test: str, metric: str, direction: str = "read"):
    (found,) = [r for r in comparison.rows if (r.test, r.metric, r.direction) == (test, metric, direction)]
    return found


def test_tests_match_by_their_parameters_not_labels_and_the_rest_is_named(store):
    randread = fixture_job("randread-4k-q32.jsonplus.json")
    a = stored_run(store, [("RND4K Q32", {"iodepth": 32}, [randread]), ("only in a", {"iodepth": 2}, [randread])])
    b = stored_run(store, [("4k random QD32", {"iodepth": 32, "runtime": 30.0}, [randread]),
                           ("only in b", {"iodepth": 4}, [randread])])
    comparison = compare_runs([a, b])
    assert {r.test for r in comparison.rows} == {"RND4K Q32"}
    assert [r.metric for r in comparison.rows] == ["iops", "mb_per_s", "lat_mean_us", "clat_p99_us"]
    assert comparison.unmatched == (("only in a",), ("only in b",))
    (runtime,) = comparison.conditions
    assert runtime.parameter == "runtime" and runtime.values == ((5.0,), (30.0,))
    iops = row(comparison, "RND4K Q32", "iops")
    assert iops.cells[0].summary.mean == randread.directions[0].iops
    assert (iops.cells[1].ratio, iops.cells[1].verdict, iops.cells[1].basis) == (1.0, NO_VERDICT, SINGLE_RUNS)


def test_mixed_tests_match_on_read_share_and_compare_each_direction(store):
    mixed = fixture_job("randrw-70-4k-4jobs.jsonplus.json")
    params = {"direction": "mixed", "rwmixread": 70, "jobs": 4}
    a = stored_run(store, [("mix 70", params, [mixed])])
    b = stored_run(store, [("mix 70", params, [mixed]), ("mix 50", {**params, "rwmixread": 50}, [mixed])])
    comparison = compare_runs([a, b])
    assert {(r.test, r.direction) for r in comparison.rows} == {("mix 70", "read"), ("mix 70", "write")}
    assert comparison.unmatched == ((), ("mix 50",))


def test_the_tolerance_decides_narrow_repeats_and_latency_is_better_lower(store):
    def run(iops, lat_us):
        return stored_run(store, [("t", {}, passes(iops, lat_us=lat_us))])

    base, near, far = run(1000, 100), run(1080, 125), run(850, 80)
    comparison = compare_runs([base, near, far], tolerance_percent=10)
    iops, lat = row(comparison, "t", "iops"), row(comparison, "t", "lat_mean_us")
    assert [c.verdict for c in iops.cells] == [None, WITHIN_NOISE, WORSE]
    assert [c.ratio for c in iops.cells[1:]] == [pytest.approx(1.08), pytest.approx(0.85)]
    assert [c.verdict for c in lat.cells] == [None, WORSE, BETTER], "higher latency is worse"
    assert compare_runs([base, near], tolerance_percent=5).rows[0].cells[1].verdict == BETTER


# Welch's example 1 from Wikipedia ("Welch's t-test"): t = -2.46, df = 24.9, p = 0.021.
WELCH_A1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
WELCH_A2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
BASE = [100, 104, 98, 102]
SHIFTED_4 = [104, 109, 102, 107]  # scipy.stats.ttest_ind(BASE, this, equal_var=False): p = 0.069, df = 5.80
SHIFTED_5 = [105, 110, 103, 108]  # p = 0.036


def test_welch_agrees_with_published_and_scipy_results():
    assert welch_significant(summarize(WELCH_A1), summarize(WELCH_A2))
    assert not welch_significant(summarize(BASE), summarize(SHIFTED_4))
    assert welch_significant(summarize(BASE), summarize(SHIFTED_5))


def test_welchs_test_reads_figures_of_any_scale_alike():
    """Its degrees of freedom from each side's share of the variance: squared as they were, variances of figures of
    1e-160 underflowed to 0 / 0 and of 1e150 overflowed."""
    a, b = [100, 104, 98, 102], [80, 81, 79, 80]
    for scale in (1e-160, 1, 1e150):
        assert welch_significant(summarize([v * scale for v in a]), summarize([v * scale for v in b]))
        assert not welch_significant(summarize([v * scale for v in a]), summarize([v * scale for v in BASE]))


def test_with_repeats_a_difference_must_pass_the_t_test_and_the_tolerance(store):
    def run(values):
        return stored_run(store, [("t", {}, [job(v) for v in values])])

    base, not_significant, significant = run(BASE), run(SHIFTED_4), run(SHIFTED_5)
    strict = compare_runs([base, not_significant, significant], tolerance_percent=0)
    cells = row(strict, "t", "iops").cells
    # 4.5 % apart, not significant, with intervals of +/- 4 %: whether they differ at all cannot be told.
    assert [(c.verdict, c.basis) for c in cells[1:]] == [(INCONCLUSIVE, "t-test"), (BETTER, "t-test")]
    assert cells[1].reason == NOT_SIGNIFICANT
    assert cells[0].summary.n == 4 and strict.repeated
    # 5.4 % apart and significantly apart, but not significantly more than 1 % apart: the test is of the tolerance.
    beyond_one = row(compare_runs([base, significant], tolerance_percent=1), "t", "iops").cells[1]
    assert (beyond_one.verdict, beyond_one.reason) == (INCONCLUSIVE, NOT_SIGNIFICANT)
    default = compare_runs([base, significant])
    assert row(default, "t", "iops").cells[1].verdict == WITHIN_NOISE, "significant, but only 5.4 %: under 10 %"


def bs_sweep(store, mb_per_s):
    """Random reads at 4 KiB .. 64 KiB; mb_per_s(bs) gives each point's bandwidth."""
    sizes = [4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB, 64 * KIB]
    return stored_run(store, [(f"RND{bs // KIB}K", {"bs": bs}, passes(mb_per_s(bs) * 1e6 / bs, bs=bs))
                              for bs in sizes])


def test_the_crossover_is_where_the_leader_changes(store):
    iops_capped = bs_sweep(store, lambda bs: 100 * bs / 1e6)  # 100 IOPS: MB/s grows with the block
    bandwidth_capped = bs_sweep(store, lambda bs: 2.4576)  # 2400 KiB/s at every block size
    comparison = compare_runs([iops_capped, bandwidth_capped])
    by_metric = {x.metric: x for x in comparison.crossovers}
    assert set(by_metric) == {"iops", "mb_per_s"}, "latency is equal: no leader, no crossover"
    mb = by_metric["mb_per_s"]
    assert (mb.parameter, mb.value, mb.below, mb.leader, mb.previous_leader) == ("bs", 32 * KIB, 16 * KIB, 0, 1)
    text = json.loads(to_json(shown(comparison, False)))["crossovers"][1]["text"]
    assert "from 32KiB on, run 1 delivers more MB/s (run 2 leads below, up to 16KiB)" in text


def test_differences_within_noise_make_no_crossover(store):
    a = bs_sweep(store, lambda bs: 100.0)
    b = bs_sweep(store, lambda bs: {4 * KIB: 103.0, 16 * KIB: 96.0}.get(bs, 100.0))
    assert compare_runs([a, b]).crossovers == ()
    c = bs_sweep(store, lambda bs: 120.0 if bs == 64 * KIB else 100.0)
    assert compare_runs([a, c]).crossovers == (), "one run leading at one point and tied elsewhere is no crossover"


def test_only_changed_keeps_rows_beyond_noise_and_counts_the_rest(store):
    a = stored_run(store, [("same", {"bs": 4096}, passes(1000)), ("faster", {"bs": 8192}, passes(1000, bs=8192))])
    b = stored_run(store, [("same", {"bs": 4096}, passes(1010)), ("faster", {"bs": 8192}, passes(2000, bs=8192))])
    view = shown(compare_runs([a, b]), only_changed=True)
    assert {(r.test, r.metric) for r in view.rows} == {("faster", "iops"), ("faster", "mb_per_s")}
    assert view.hidden == 6
    assert "6 of 8 rows within noise not shown (--only-changed)" in to_markdown(view)
    iops = shown(compare_runs([a, b]), only_changed=True, metrics=("iops",))
    assert [(r.test, r.metric) for r in iops.rows] == [("faster", "iops")] and iops.hidden == 1


def test_cli_metrics_keep_only_their_rows(store):
    stored_run(store, [("t", {}, passes(1000))])
    stored_run(store, [("t", {}, passes(2000))])
    document = json.loads(invoke(store.path, "1", "2", "--metrics", "iops,clat_p99_us", "-f", "json").stdout)
    assert {r["metric"] for r in document["rows"]} == {"iops", "clat_p99_us"}
    refused = invoke(store.path, "1", "2", "--metrics", "speed")
    assert refused.exit_code == 2 and "'speed' is not a metric: choose among iops" in refused.output


def test_environment_differences_are_warned_about(store):
    randread = fixture_job("randread-4k-q32.json.json")
    a = stored_run(store, [("t", {}, [randread])], env={"kernel": "6.1", "fs_type": "ext4", "cpu_count": 2})
    b = stored_run(store, [("t", {}, [randread])], env={"kernel": "6.5", "fs_type": "xfs", "cpu_count": 4},
                   fio_engine="libaio")
    comparison = compare_runs([a, b])
    assert comparison.env_differences == (
        (), ("kernel: 6.1 -> 6.5", "file system: ext4 -> xfs", "fio engine used: io_uring -> libaio"))
    lines = [item.plain for item in compare_renderables(shown(comparison, False))[1:]]
    assert any(line.startswith("warning: run 2 (libaio) ran in another environment than run 1 (io_uring)")
               and "ext4 -> xfs" in line
               for line in lines)


def test_runs_made_by_other_versions_of_disklab_or_fio_say_so_in_one_line_each(store):
    """The versions are said once, each with the runs it made, not again among the environment's differences."""
    randread = fixture_job("randread-4k-q32.json.json")
    made = [stored_run(store, [("t", {}, [randread])], env={"fio_version": fio, "kernel": "6.1"},
                       disklab_version=version, fio_version=fio)
            for version, fio in (("0.1.dev130+g9c0d2e1", "fio-3.33"), ("0.1.dev137+g9f4c50f", "fio-3.36"),
                                 ("0.1.dev137+g9f4c50f", "fio-3.33"))]
    a, b, c = (record.info.id for record in made)
    lines = notes(shown(compare_runs(made[:2]), False))
    assert [line for line in lines if "version" in line] == [
        f"made by different disklab versions: 0.1.dev130+g9c0d2e1 (run {a}) -> 0.1.dev137+g9f4c50f (run {b})",
        f"made by different fio versions: fio-3.33 (run {a}) -> fio-3.36 (run {b})",
    ]
    assert not any("another environment" in line for line in lines)
    lines = notes(shown(compare_runs(made), False))
    assert f"made by different fio versions: fio-3.33 (runs {a}, {c}) -> fio-3.36 (run {b})" in lines
    assert not any("version" in line for line in notes(shown(compare_runs(made[1:2] * 2), False)))
    document = json.loads(to_json(shown(compare_runs(made[:2]), False)))
    assert [run["disklab_version"] for run in document["runs"]] == ["0.1.dev130+g9c0d2e1", "0.1.dev137+g9f4c50f"]
    assert document["environment_differences"] == {str(b): []}


def test_every_format_parses(store):
    a = bs_sweep(store, lambda bs: 100 * bs / 1e6)
    b = bs_sweep(store, lambda bs: 2.4576)
    view = shown(compare_runs([a, b]), False)
    document = json.loads(to_json(view))
    assert document["format"] == "disklab-compare" and document["baseline"] == a.info.id
    # 5 tests x IOPS, MB/s and mean latency; no p99: 3 passes of 100 I/Os cannot support one (1,000 needed)
    assert len(document["rows"]) == 15 and document["rows"][0]["values"][1]["verdict"] == BETTER
    rows = list(csv.DictReader(io.StringIO(to_csv(view))))
    assert len(rows) == 15
    assert (rows[0]["test"], rows[0]["metric"], rows[0]["run 2 verdict"]) == ("RND4K", "iops", "better")
    assert float(rows[0]["run 2 ratio"]) == pytest.approx(6.0)
    markdown = to_markdown(view)
    assert "| Test | Dir | Metric | run 1 | run 2 | ratio | verdict |" in markdown
    assert "| RND4K | read | MB/s | 0.4 ±2.5 % | 2.5 ±2.5 % | 6.00x | better |" in markdown
    (table, *_) = compare_renderables(view)
    assert [c.header for c in table.columns] == ["Test", "Dir", "Metric", "run 1", "run 2", "ratio", "verdict"]


def test_repeated_figures_show_their_interval(store):
    a = stored_run(store, [("t", {}, [job(v) for v in BASE])])
    b = stored_run(store, [("t", {}, [job(v) for v in SHIFTED_5])])
    markdown = to_markdown(shown(compare_runs([a, b]), False))
    assert "| t | read | IOPS | 101 ±4.1 % | 106 ±4.6 % | 1.05x | within noise |" in markdown


def invoke(db, *args):
    return CliRunner().invoke(cli, ["--db", str(db), "compare", *args])


def test_cli_errors_are_one_line(tmp_path, store):
    stored_run(store, [("t", {"bs": 4096}, [job(1000)])])
    stored_run(store, [("u", {"bs": 8192}, [job(1000, bs=8192)])])
    for args, message in [
        (("1",), "compare needs at least two runs"),
        (("1", "last~1"), "a run is named twice"),
        (("1", "2"), "have no test in common"),
        (("1", "9"), "there is no run 9"),
    ]:
        result = invoke(store.path, *args)
        assert result.exit_code == 2 and result.output.startswith("disklab: error: ") and message in result.output
        assert len(result.output.strip().splitlines()) == 1
    bad = invoke(store.path, "1", "2", "--tolerance", "lots")
    assert bad.exit_code == 2 and "'lots' is not a tolerance: a percentage above 0 and below 100" in bad.output


def test_cli_baseline_and_output_file(tmp_path, store):
    stored_run(store, [("t", {}, passes(1000))])
    stored_run(store, [("t", {}, passes(2000))])
    out = tmp_path / "c.json"
    result = invoke(store.path, "1", "--baseline", "2", "-f", "json", "-o", str(out))
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    assert document["baseline"] == 2 and document["rows"][0]["values"][1]["verdict"] == WORSE
    table = invoke(store.path, "1", "2", "--only-changed")
    assert table.exit_code == 0 and "better" in table.output and "2 of 4 rows within noise" in table.output


def test_rounds_towards_steady_state_compare_by_their_last_round(store):
    run_id = store.create_run(new_run(options={}))
    for attempt, iops in enumerate([9000, 5000, 4000], start=1):  # fresh flash, then settling: not repeats
        store.add_test(run_id, attempt - 1, "steady", DEFAULTS, "", "{}", "", "2026-01-01T00:00:00+00:00", job(iops),
                       plan_index=0, attempt=attempt)
    steady = store.get_run(run_id)
    other = stored_run(store, [("steady", {}, [job(4100)])])
    iops = row(compare_runs([steady, other]), "steady", "iops")
    assert iops.cells[0].summary.n == 1 and iops.cells[0].summary.mean == 4000


def test_parameters_a_run_did_not_store_match_their_defaults(store):
    randread = fixture_job("randread-4k-q32.json.json")
    imported_params = {k: DEFAULTS[k] for k in ("pattern", "direction", "rwmixread", "bs", "iodepth", "jobs")}
    native = stored_run(store, [("native", {}, [randread])])
    run_id = store.create_run(new_run(suite_name="import"))
    store.add_test(run_id, 0, "fio job", imported_params, "", "{}", "", "2026-01-01T00:00:00+00:00", randread)
    comparison = compare_runs([native, store.get_run(run_id)])
    assert {r.test for r in comparison.rows} == {"native"} and comparison.unmatched == ((), ())


# Two repeats whose 95 % interval is +/- 534 % of their mean (t = 12.7 at one degree of freedom), the case of the
# issue: such a run was called worse than a single run 20 % below it, on the 10 % tolerance alone.
WIDE_PAIR = [580, 1420]


def one(value: float):
    return summarize([value])


def test_an_interval_that_reaches_zero_supports_no_verdict_whatever_the_difference():
    wide = summarize(WIDE_PAIR)
    assert wide.ci95_percent == pytest.approx(534, abs=0.5)
    for single in (800, 1000, 10_000):  # 20 % below, equal, ten times above
        for base, other in ((one(single), wide), (wide, one(single))):
            assert judge(base, other, True, 10) == Judgement(INCONCLUSIVE, INTERVAL, REACHES_ZERO), single
    precise = summarize([9900, 10_100])  # +/- 12.7 %
    assert judge(wide, precise, True, 10) == Judgement(INCONCLUSIVE, T_TEST, REACHES_ZERO)


def test_both_repeated_a_verdict_needs_each_mean_outside_the_others_interval():
    base, other = summarize([100, 110]), summarize([150, 160])  # +/- 61 % and +/- 41 %, 48 % apart
    assert welch_significant(base, other), "t = 7.1 at 2 degrees of freedom"
    assert judge(base, other, True, 10) == Judgement(INCONCLUSIVE, T_TEST, WIDER_THAN_DIFFERENCE)
    four, four_more = summarize([100, 110, 105, 105]), summarize([150, 160, 155, 155])  # +/- 6 % and +/- 4 %
    assert judge(four, four_more, True, 10) == Judgement(BETTER, T_TEST)
    assert judge(four, four_more, False, 10) == Judgement(WORSE, T_TEST), "a higher latency is worse"


def test_within_noise_means_measured_within_the_tolerance_not_too_noisy_to_tell():
    precise, precise_too, noisy = summarize([99, 100, 101]), summarize([100, 101, 102]), summarize([90, 110, 100])
    assert judge(precise, precise_too, True, 10) == Judgement(WITHIN_NOISE, T_TEST)
    assert noisy.mean == precise.mean and noisy.ci95_percent > 10
    assert judge(precise, noisy, True, 10) == Judgement(INCONCLUSIVE, T_TEST, WIDER_THAN_TOLERANCE)
    assert judge(noisy, one(100), True, 10) == Judgement(INCONCLUSIVE, INTERVAL, WIDER_THAN_TOLERANCE)
    assert judge(one(104), precise, True, 10) == Judgement(WITHIN_NOISE, INTERVAL)


def test_a_single_run_against_repeats_must_fall_beyond_the_tolerance_from_where_one_more_run_would():
    repeats = summarize([95, 100, 105])  # mean 100 +/- 12.4; one more run: 100 +/- 24.8, and the tolerance: 10
    assert repeats.ci95_half_width == pytest.approx(12.42, abs=0.01)
    for single, verdict in ((120, INCONCLUSIVE), (80, INCONCLUSIVE), (130, INCONCLUSIVE), (140, BETTER), (60, WORSE)):
        assert judge(repeats, one(single), True, 10).verdict == verdict, single
    assert judge(repeats, one(130), True, 10).reason == IN_PREDICTION, "30 apart: 20 beyond the tolerance, < 24.8"
    assert judge(repeats, one(130), True, 0).verdict == BETTER, "with no tolerance, outside the prediction is enough"
    assert judge(one(140), repeats, True, 10) == Judgement(WORSE, INTERVAL), "the single run as the baseline"


def test_single_runs_get_no_verdict_however_far_apart_with_the_ratio_and_the_fix(store):
    """Two single runs of one configuration differ by 2x on a busy machine: without a measured spread on either side
    neither 0.8x nor 2.4x is a verdict, and every format says why and how to get one."""
    base = stored_run(store, [("t", {}, [job(1000)])])
    for other_iops in (800, 2380, 1010):
        other = stored_run(store, [("t", {}, [job(other_iops)])])
        view = shown(compare_runs([base, other]), False)
        cell = view.rows[0].cells[1]
        assert (cell.verdict, cell.basis, cell.reason) == (NO_VERDICT, SINGLE_RUNS, NO_SPREAD)
        assert cell.ratio == pytest.approx(other_iops / 1000)
    document = json.loads(to_json(view))
    assert document["format_version"] == 7
    assert {(v["verdict"], v["basis"]) for r in document["rows"] for v in r["values"][1:]} == {
        ("no verdict", "single runs")}
    (line,) = [n for n in document["notes"] if n.startswith("no verdict (single runs)")]
    assert "4 figures" in line and "--repeat 3" in line and "default passes" in line
    markdown = to_markdown(view)
    assert "| t | read | IOPS | 1,000 | 1,010 | 1.01x | no verdict (single runs) |" in markdown
    assert f"run {other.info.id} basis" in to_csv(view).splitlines()[0]
    assert shown(compare_runs([base, other]), True).rows, "--only-changed keeps figures without a verdict"


def test_the_wide_repeated_run_of_the_issue_is_inconclusive_and_the_output_says_what_to_do(store):
    single = stored_run(store, [("t", {}, [job(1000, seconds=10)])])
    wide = stored_run(store, [("t", {}, [job(v, seconds=10) for v in WIDE_PAIR])])
    lower = stored_run(store, [("t", {}, [job(800, seconds=10)])])
    comparison = compare_runs([lower, wide, single])
    iops = row(comparison, "t", "iops")
    assert [(c.verdict, c.basis) for c in iops.cells[1:]] == [(INCONCLUSIVE, INTERVAL), (NO_VERDICT, SINGLE_RUNS)]
    view = shown(comparison, only_changed=True)
    assert iops in view.rows, "--only-changed keeps what cannot be told: it may hide a change"
    markdown = to_markdown(view)
    assert "| t | read | IOPS | 800 | 1,000 ±533.7 % ! | 1.25x | inconclusive |" in markdown
    assert f"inconclusive (2 of 8 figures): {REACHES_ZERO}" in markdown
    assert "--precision 2%" in markdown and "--repeat" in markdown
    value = json.loads(to_json(view))["rows"][0]["values"][1]
    assert (value["verdict"], value["basis"], value["reason"]) == ("inconclusive", "interval", REACHES_ZERO)


def test_a_point_the_figures_cannot_tell_leads_nobody(store):
    sizes = [4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB]

    def sweep(mb_per_s):
        """Each point's repeats of MB/s."""
        return stored_run(store, [(f"RND{bs // KIB}K", {"bs": bs}, [job(v * 1e6 / bs, bs=bs) for v in mb_per_s(bs)])
                                  for bs in sizes])

    single = sweep(lambda bs: [50.0] if bs < 16 * KIB else [200.0])
    precise = sweep(lambda bs: [99.0, 100.0, 101.0])
    (crossover,) = [x for x in compare_runs([precise, single]).crossovers if x.metric == "mb_per_s"]
    assert (crossover.value, crossover.below, crossover.leader) == (16 * KIB, 8 * KIB, 1)
    noisy_above = sweep(lambda bs: [99.0, 100.0, 101.0] if bs < 16 * KIB else [30.0, 170.0, 100.0])
    comparison = compare_runs([noisy_above, single])
    assert row(comparison, "RND16K", "mb_per_s").cells[1].verdict == INCONCLUSIVE
    assert [x for x in comparison.crossovers if x.metric == "mb_per_s"] == []


def imported_run(store: Store, fixture: str):
    """Real fio output stored as import stored it before jobs of one group were combined: a test per job entry."""
    data = json.loads((LAYOUTS / fixture).read_text())
    run_id = store.create_run(new_run(suite_name="import", options={"imported_from": fixture}))
    params = {**DEFAULTS, "pattern": "random", "direction": "read", "jobs": 4}
    for seq, entry in enumerate(data["jobs"]):
        output = json.dumps({"fio version": data["fio version"], "jobs": [entry]})
        (result,) = parse_fio_output(output).jobs
        store.add_test(run_id, seq, entry["jobname"], params, "", output, "", "2026-01-01T00:00:00+00:00", result)
    store.finish_run(run_id, "complete")
    return store.get_run(run_id)


def test_one_job_of_a_group_is_never_compared_with_the_whole_group(store):
    grouped = imported_run(store, "numjobs4-grouped.json")
    ungrouped = imported_run(store, "numjobs4-ungrouped.json")
    assert job_parts(grouped) == {} and sorted(job_parts(ungrouped).values()) == [4, 4, 4, 4]
    comparison = compare_runs([grouped, ungrouped])
    assert comparison.rows == () and comparison.unmatched == ((), ())
    assert comparison.refused == (Refusal(0, "numjobs4-grouped", None, (1,)), Refusal(1, "numjobs4-ungrouped", 4, (0,)))
    notes = json.loads(to_json(shown(comparison, False)))["not_compared"]
    assert notes[1]["one_job_of"] == 4 and notes[1]["text"].startswith(
        "not compared, run 2: numjobs4-ungrouped: the figures of one of its 4 jobs (fio output without "
        "group_reporting, imported a test per job), while run 1 holds the whole group's")
    # jobs of the same shape on both sides do match, job by job
    assert len(compare_runs([ungrouped, imported_run(store, "numjobs4-ungrouped.json")]).rows) == 4 * 4
    result = invoke(store.path, str(grouped.info.id), str(ungrouped.info.id))
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "the figures of one of its 4 jobs" in result.output


def test_jobs_of_different_groups_in_one_imported_file_are_whole_groups(store):
    run_id = store.create_run(new_run(suite_name="import", options={"imported_from": "import-two-jobs.json.json"}))
    data = extract_json(fixture_text("import-two-jobs.json.json"))
    for seq, entry in enumerate(data["jobs"]):
        output = json.dumps({"jobs": [entry]})
        (result,) = parse_fio_output(output).jobs
        store.add_test(run_id, seq, entry["jobname"], DEFAULTS, "", output, "", "2026-01-01T00:00:00+00:00", result)
    assert job_parts(store.get_run(run_id)) == {}


def test_a_flag_that_withholds_a_verdict_makes_a_difference_inconclusive_with_its_reason(store):
    """Other work beside one pass of the slower run: half the baseline's IOPS, and yet no 'worse'."""
    base = stored_run(store, [("t", {}, passes(1000))])
    busy = stored_run(store, [("t", {}, passes(500))])
    quiet = stored_run(store, [("t", {}, passes(500))])
    store.add_flag(busy.tests[1].id, "busy-machine", "other work ran beside this test: ...")
    busy = store.get_run(busy.info.id)
    withheld = row(compare_runs([base, busy, quiet]), "t", "iops").cells
    assert (withheld[1].verdict, withheld[2].verdict) == (INCONCLUSIVE, WORSE)
    assert withheld[1].reason.startswith("other work ran beside this test (busy-machine)")
    assert row(compare_runs([busy, base]), "t", "iops").cells[1].verdict == INCONCLUSIVE, "as the baseline too"
    markdown = to_markdown(shown(compare_runs([base, busy]), False))
    assert "- inconclusive (2 of 4 figures): other work ran beside this test (busy-machine): the difference may be " \
        "the other work's; run both on a quiet machine" in markdown
    assert "--precision" not in markdown, "more repeats would not help: the machine was busy"


def test_other_work_on_both_sides_is_named_before_what_the_spread_could_not_tell(store):
    """Both runs busy, the baseline's passes scattered by it: the spread alone would leave the difference
    inconclusive (Welch's test), but the reader learns first that other work ran, then what the spread did."""
    scattered = [job(1000 * f) for f in (0.4, 1.0, 1.6)]
    base = stored_run(store, [("t", {}, scattered)])
    busy = stored_run(store, [("t", {}, passes(500))])
    for run in (base, busy):
        store.add_flag(run.tests[0].id, "busy-machine", "other work ran beside this test: ...")
    base, busy = store.get_run(base.info.id), store.get_run(busy.info.id)
    quiet = [stored_run(store, [("t", {}, jobs)]) for jobs in (scattered, passes(500))]
    unflagged = row(compare_runs(quiet), "t", "iops").cells[1]
    assert unflagged.verdict == INCONCLUSIVE and unflagged.reason, "the spread alone cannot tell"
    cell = row(compare_runs([base, busy]), "t", "iops").cells[1]
    assert cell.verdict == INCONCLUSIVE
    assert cell.reason == f"{withheld_reason(['busy-machine'])}; and {unflagged.reason}"


def test_a_steady_run_is_judged_by_the_rounds_of_its_steady_window(store):
    """SNIA's measurement window is the steady state's spread: 5 rounds within +/-10 % are the sample."""
    run_id = store.create_run(new_run(options={}))
    rounds = [9000, 6000, 4100, 4000, 3950, 4050, 4000]
    for attempt, iops in enumerate(rounds, start=1):
        store.add_test(run_id, attempt - 1, "steady", DEFAULTS, "", "{}", "", "2026-01-01T00:00:00+00:00", job(iops),
                       plan_index=0, attempt=attempt)
    store.set_run_values("run_outcomes", run_id, {"steady_state": {"reached": True, "round": 7, "window": rounds[2:]}})
    steady = store.get_run(run_id)
    faster = stored_run(store, [("steady", {}, passes(8000))])
    cells = row(compare_runs([steady, faster]), "steady", "iops").cells
    assert (cells[0].summary.n, cells[0].summary.mean) == (5, pytest.approx(4020))
    assert (cells[1].verdict, cells[1].basis) == (BETTER, T_TEST)


def test_a_withheld_figure_makes_no_crossover(store):
    """The crossover of two capped sweeps, then the same with other work beside one pass of the slower run."""
    iops_capped = bs_sweep(store, lambda bs: 100 * bs / 1e6)
    bandwidth_capped = bs_sweep(store, lambda bs: 2.4576)
    assert compare_runs([iops_capped, bandwidth_capped]).crossovers
    for test in bandwidth_capped.tests:
        store.add_flag(test.id, "busy-machine", "other work ran beside this test: ...")
    busy = store.get_run(bandwidth_capped.info.id)
    assert compare_runs([iops_capped, busy]).crossovers == ()
    assert compare_runs([busy, iops_capped]).crossovers == (), "nor with the flagged run as the baseline"


def test_compare_shows_the_mean_latency_show_shows_a_bad_pass_weighing_by_its_ios(store):
    """The reviewer's run (issue 42): four passes of a QD1 write at 100 µs and one that waited 35 ms an I/O. The
    mean over every I/O is about 124 µs in show; a mean of the passes' means (7,080 µs) made compare print 29x."""
    passes_ = [job(10_000, lat_us=100.0)] * 2 + [job(28, lat_us=35_000.0)] + [job(10_000, lat_us=100.0)] * 2
    ordinary = [job(10_000, lat_us=100.0)] * 5
    bad, good = stored_run(store, [("t", {}, passes_)]), stored_run(store, [("t", {}, ordinary)])
    (shown_row,) = [r for r in summary_rows(bad) if r.direction == "read"]
    expected = (4 * 10_000 * 100.0 + 28 * 35_000.0) / (4 * 10_000 + 28)
    assert shown_row.lat_mean_us == pytest.approx(expected)
    lat = row(compare_runs([good, bad]), "t", "lat_mean_us")
    assert lat.cells[1].summary.mean == pytest.approx(shown_row.lat_mean_us)
    assert lat.cells[1].ratio == pytest.approx(expected / 100.0) and lat.cells[1].ratio < 1.3
    assert lat.cells[1].summary.n == 5 and lat.cells[1].summary.ci95_half_width > 0  # the passes' spread kept
