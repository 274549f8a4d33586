"""The HTML report: its model and charts from runs replayed from real captured fio output, and the page itself."""

import math
import re
from dataclasses import replace

import pytest
from click.testing import CliRunner

from disklab.analysis.compare import compare_runs
from disklab.cli.main import cli
from disklab.report.compare import compare_renderables, shown
from disklab.run.execute import Execution, execute_schedule
from disklab.plan.build import build_plan, resolve_engines
from disklab.report.html.charts import LOG_RATIO, SeriesSpec, chart_functions, log_scale
from disklab.report.html.model import build_report
from disklab.report.html.render import render_html
from disklab.report.html.svg import render_svg
from disklab.run.schedule import FixedSchedule
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from disklab.suite.loader import load_suite, parse_suite
from tests.conftest import fixture_json, fixture_text
from tests.unit.test_execute import Recorder, ReplayExecutor
from tests.unit.test_logs import fixture_logs
from tests.unit.test_precision import job
from tests.unit.test_store import new_run
from tests.unit.test_views import BLOCKSIZE, FIXTURE_FOR, MIXED

QUICK = load_suite("quick").text

DATABASE = """
name = "database"

[[group]]
name = "oltp"
bs = "8k"
rwmixread = [0, 50, 100]
iodepth = [1, 16]
"""

LOGGED = """
name = "logged"

[[group]]
name = "logged"
label = "RND4K mixed logged"
rwmixread = 70
jobs = 4
log_interval = "1s"
"""


def select_charts(runs):
    """Every chart of the registry's functions, as the report draws them."""
    return tuple(chart for make in chart_functions() for chart in make(runs))


def store_run(store: Store, suite_text: str, logs: dict[str, str] | None = None) -> int:
    """The suite's plan replayed into the store, each test from a real capture of its direction."""
    suite = parse_suite(suite_text, source="test", where="test suite")
    plan = resolve_engines(build_plan(suite), lambda wanted: "io_uring")
    outputs = [fixture_text(FIXTURE_FOR[t.direction]) for t in plan.tests]
    if logs:
        outputs = [fixture_text("randrw-70-4k-4jobs-log1s.jsonplus.json")] * len(plan.tests)
    run_id = store.create_run(new_run(suite_name=suite.name, suite_text=suite_text, planned_tests=len(plan.tests)))
    execution = Execution(plan, "/f", "/files", run_id)
    execute_schedule(execution, FixedSchedule(plan), ReplayExecutor(outputs, logs=logs), store, Recorder())
    store.finish_run(run_id, "complete")
    return run_id


def records(tmp_path, *suites: str, logs=None):
    with Store(tmp_path / "r.db") as store:
        return [store.get_run(store_run(store, text, logs)) for text in suites]


def charts_by_id(runs):
    return {chart.id: chart for chart in select_charts(runs)}


def captured_total(name: str, field: str) -> float:
    job_output = fixture_json(name)["jobs"][0]
    return sum(job_output[d][field] for d in ("read", "write") if job_output[d]["total_ios"])


def test_two_quick_runs_share_grouped_bars_one_series_per_run(tmp_path):
    runs = records(tmp_path, QUICK, QUICK)
    charts = charts_by_id(runs)
    sequential, random = charts["quick-sequential"], charts["quick-random"]
    assert sequential.kind == random.kind == "bars"
    assert [s.name for s in sequential.series] == ["run 1", "run 2"]
    assert [label for _, label in random.x_ticks] == ["RND4K Q32T1 read", "RND4K Q32T1 write", "RND4K Q1T1 read",
                                                      "RND4K Q1T1 write"]
    read_iops = captured_total(FIXTURE_FOR["read"], "iops")
    write_mb = captured_total(FIXTURE_FOR["write"], "bw_bytes") / 1e6
    assert random.series[0].points[0] == (0.0, read_iops)
    assert sequential.series[1].points[1] == (1.0, write_mb)
    assert "MB/s = 10^6" in sequential.caption and sequential.y_label == "MB/s (10^6 bytes/s)"
    # Each test's percentiles: the two runs overlaid on one chart, every chart on one latency range.
    latency = [chart for chart in charts.values() if chart.id.startswith(("latency", "exceedance"))]
    assert len(latency) == 16 and all([s.name for s in chart.series] == ["run 1", "run 2"] for chart in latency)
    assert not any(chart_id.startswith(("blocksize", "read-share", "series", "grid")) for chart_id in charts)


def test_a_block_size_sweep_is_one_line_per_run_over_a_log2_axis(tmp_path):
    runs = records(tmp_path, BLOCKSIZE, BLOCKSIZE, QUICK)
    charts = charts_by_id(runs)
    iops, mb = charts["blocksize-iops-1"], charts["blocksize-mb-per-s-1"]
    assert iops.x_log2 and [label for _, label in iops.x_ticks] == ["4KiB", "64KiB", "1MiB"]
    assert [s.name for s in iops.series] == ["run 1", "run 2"], "the quick run sweeps no block size"
    total_iops = captured_total(MIXED, "iops")
    assert iops.series[0].points == ((4096, total_iops), (65536, total_iops), (1048576, total_iops))
    assert mb.series[1].points[2] == (1048576, captured_total(MIXED, "bw_bytes") / 1e6)
    assert "read + write" in iops.caption and iops.y_label == "IOPS" and mb.y_label == "MB/s (10^6 bytes/s)"
    assert not iops.y_log, "equal figures need no log axis"
    assert all(spread is None for s in iops.series for spread in s.spreads), "single runs: no error bars"


def test_a_read_share_sweep_is_one_line_per_queue_depth(tmp_path):
    (run,) = records(tmp_path, DATABASE)
    (chart,) = [c for c in select_charts([run]) if c.id.startswith("read-share")]
    assert [s.name for s in chart.series] == ["QD1", "QD16"]
    assert all([x for x, _ in s.points] == [0, 50, 100] for s in chart.series)
    assert chart.x_label == "read share (%)"


def test_logged_iops_become_a_time_series_per_direction(tmp_path):
    (run,) = records(tmp_path, LOGGED, logs=fixture_logs())
    chart = next(c for c in select_charts([run]) if c.id.startswith("series"))
    assert chart.title == "IOPS over time · RND4K mixed logged"
    (test,) = run.tests
    stored = {s.direction: s for s in test.series if s.kind == "iops"}
    assert [s.name for s in chart.series] == list(stored)
    for series in chart.series:
        assert series.points == tuple((p.t_ms / 1000, p.value) for p in stored[series.name].points)


def test_repeated_tests_are_plotted_as_their_mean(tmp_path):
    plan = build_plan(load_suite("quick"))
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(options={"repeat": 2}))
        for attempt, iops in ((1, 1000.0), (2, 3000.0)):
            for plan_index, test in enumerate(plan.tests):
                store.add_test(run_id, (attempt - 1) * len(plan.tests) + plan_index, test.label, test.params(), "",
                               "{}", "", "2026-01-01T00:00:00+00:00", job(iops), plan_index=plan_index, attempt=attempt)
        record = store.get_run(run_id)
    charts = charts_by_id([record])
    assert [y for _, y in charts["quick-random"].series[0].points] == [2000.0] * 4
    # The interval the tables print: mean 2000, n = 2, t(1) = 12.706 times the standard error of 1000.
    assert {(s.n, s.mean, round(s.ci95_half_width)) for s in charts["quick-random"].series[0].spreads} == {
        (2, 2000.0, 12706)}
    assert "the repeats' json+ histograms merged" in charts["latency-1"].caption
    assert "the percentiles of every I/O of n = 2 repeats" in charts["latency-1"].note, "said inside the chart, which has no error bars"
    html = render_html(build_report([record], "2026-01-01T00:00:00+00:00"))
    assert "every planned test" in html and "+/-" in html and "635.3 %" in html  # the table's interval ...
    assert "± 12,706 (635.3 %, 95 % interval, mean of n = 2)" in html  # ... is the error bar's
    assert html.count('class="error-bar"') == 8 and "mean of n = 2 repeats" in html


def test_the_page_is_self_contained_with_a_figure_per_chart_and_countable_series(tmp_path):
    runs = records(tmp_path, QUICK, BLOCKSIZE)
    model = build_report(runs, "2026-01-01T00:00:00+00:00")
    html = render_html(model)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html), "nothing loaded from the network"
    assert "<link" not in html and html.count("<script>") == 1, "one inline script: the downloads"
    figures = re.findall(r'<figure class="chart" id="([^"]+)"', html)
    # quick's grid (grid.py) first, 4, and 2 latency charts of each run
    assert figures == [chart.id for chart in model.charts] and len(figures) == 9
    for figure in figures:
        assert re.findall(rf'data-download="(\w+)" data-chart="{figure}"', html) == ["svg", "png"]
    for chart in model.charts:
        for i, series in enumerate(chart.series):
            group = f'id="{chart.id}-series-{i}"'
            if chart.kind == "bars":
                assert len(re.findall(rf'id="{chart.id}-series-{i}-bar-\d+"', html)) == len(series.points)
            elif chart.kind == "grid":  # a cell per row of each column
                assert len(re.findall(rf'id="{chart.id}-cell-\d+-{i}"', html)) == len(chart.x_ticks)
            else:
                body = html[html.index(group):]
                assert body[:body.index("</g>")].count("<use") == len(series.points)
    ids = re.findall(r' id="([^"]+)"', html)
    assert len(ids) == len(set(ids)), "ids unique across the inline SVGs"
    assert "Block size" in html and "What was tested" in html and "@media print" in html


def test_user_text_is_escaped(tmp_path):
    hostile = QUICK.replace('name = "quick"', 'name = "<script>alert(1)</script>"').replace(
        'label = "RND4K Q1T1 {direction}"', 'label = "<b>bold</b> & {direction}"')
    with Store(tmp_path / "r.db") as store:
        run_id = store_run(store, hostile)
        record = store.get_run(run_id)
    record = replace(record, info=replace(record.info, target='/mnt/"x"<y>'))
    html = render_html(build_report([record], "now"))
    assert "<script>alert" not in html and "<b>bold</b>" not in html and '/mnt/"x"<y>' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; read" in html  # in the tables and in the latency chart's legend
    assert "/mnt/&#34;x&#34;&lt;y&gt;" in html


def test_the_command_writes_one_file_named_after_the_runs(tmp_path, monkeypatch):
    with Store(default_store_path()) as store:
        for suite in (QUICK, BLOCKSIZE):
            store_run(store, suite)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["report", "1", "last"])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "disklab-report-run1-2.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and 'id="blocksize-iops-1"' in html
    result = CliRunner().invoke(cli, ["report", "last", "-o", "-"])
    assert result.exit_code == 0 and result.stdout.startswith("<!DOCTYPE html>")


def test_bad_input_is_one_error_line(tmp_path, monkeypatch):
    with Store(default_store_path()) as store:
        store_run(store, QUICK)
    for args, message in (
        (["report", "7"], "disklab: error: there is no run 7"),
        (["report", "x"], "disklab: error: 'x' is not a run"),
        (["report", "1", "-o", str(tmp_path / "no" / "r.html")], "disklab: error: cannot write"),
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith(message) and len(result.stderr.splitlines()) == 1


def test_several_runs_get_the_compare_table_and_one_run_none(tmp_path):
    runs = records(tmp_path, QUICK, QUICK)
    comparison = build_report(runs, generated_at="now").comparison
    assert comparison.headings[:4] == ("Test", "Dir", "Metric", "run 1")
    # Both runs replayed the same single-pass captures: every figure is equal, yet neither has a measured spread.
    assert {row[-1] for row in comparison.rows} == {"no verdict (single runs)"}
    assert {row[-2] for row in comparison.rows} == {"1.00x"}
    assert len(comparison.rows) == 8 * 4, "8 tests of quick, one direction each, 4 figures"
    assert any(note.startswith("no verdict (single runs), 32 figures") for note in comparison.notes)
    assert build_report(runs[:1], generated_at="now").comparison is None
    assert 'id="comparison"' in render_html(build_report(runs, generated_at="now"))


def test_runs_without_a_test_in_common_stay_out_of_the_compare_table(tmp_path):
    runs = records(tmp_path, QUICK, BLOCKSIZE, QUICK)
    comparison = build_report(runs, generated_at="now").comparison
    assert comparison.headings == ("Test", "Dir", "Metric", "run 1", "run 3", "ratio", "verdict")
    assert build_report(runs[:2], generated_at="now").comparison is None


def test_percentiles_sit_on_a_log_scale_of_one_minus_p_with_each_run_a_line(tmp_path):
    runs = records(tmp_path, QUICK, BLOCKSIZE, QUICK)
    latency = [chart for chart in select_charts(runs) if chart.id.startswith("latency")]
    chart = latency[0]
    assert [label for _, label in chart.x_ticks] == ["50", "90", "99", "99.9", "99.99"]
    assert [x for x, _ in chart.x_ticks] == pytest.approx([-math.log10(0.5), 1, 2, 3, 4])
    assert chart.y_log and "µs" in chart.y_label and "percentile (%)" in chart.x_label
    assert [s.name for s in chart.series] == ["run 1", "run 3"] and chart.title.endswith(runs[0].tests[0].label)
    # the block size run's tests, which no other run has, share a chart of that run
    (own,) = [c for c in latency if c.title.endswith("run 2")]
    assert len(own.series) == 6 and {s.name.split(" · ")[1] for s in own.series} == {"read", "write"}
    assert {c.y_range for c in latency} == {None}, "each chart's axis fitted to its own figures"


def test_figures_spanning_more_than_a_decade_get_a_log_axis():
    assert not log_scale([SeriesSpec("a", ((0, 100.0), (1, 100.0 * LOG_RATIO * 0.99)))])
    assert log_scale([SeriesSpec("a", ((0, 100.0),)), SeriesSpec("b", ((0, 100.0 * LOG_RATIO),))])
    assert not log_scale([SeriesSpec("a", ((0, 0.0), (1, 5.0)))]), "zero has no place on a log axis"


def test_comparison_verdicts_are_coloured_and_still_written(tmp_path):
    plan = build_plan(load_suite("quick"))
    with Store(tmp_path / "r.db") as store:
        ids = []
        for figures in ((1000.0, 1000.0), (3000.0, 300.0)):  # the second run: the first test better, the other worse
            run_id = store.create_run(new_run(options={"repeat": 3}))
            for attempt, spread in enumerate((0.99, 1.0, 1.01), start=1):  # three passes: a measured spread
                for plan_index, (test, iops) in enumerate(zip(plan.tests, figures)):
                    store.add_test(run_id, plan_index * 3 + attempt, test.label, test.params(), "", "{}", "",
                                   "2026-01-01T00:00:00+00:00", job(iops * spread), plan_index=plan_index,
                                   attempt=attempt)
            ids.append(run_id)
        runs = [store.get_run(run_id) for run_id in ids]
    html = render_html(build_report(runs, "now"))
    cells = re.findall(r'<td class="figure verdict-([\w-]+)">([^<]*)</td>', html)
    assert {("better", "better"), ("better", "3.00x"), ("worse", "worse"), ("worse", "0.30x")} <= set(cells)
    # the class only repeats what the cell's own words, or its row's verdict, say
    verdicts = [(style, text) for style, text in cells if not text.endswith("x")]
    assert verdicts and all(style == text.replace(" ", "-") for style, text in verdicts)
    assert "td.verdict-better" in html and "td.verdict-worse" in html
    # the terminal's compare table colours the same cells: a run's ratio and its verdict
    table = compare_renderables(shown(compare_runs(runs), only_changed=False))[0]
    ratio, verdict = (table.columns[i]._cells for i in (5, 6))
    styles = {(v.plain, r.style, v.style) for r, v in zip(ratio, verdict)}
    assert {("better", "green", "green"), ("worse", "red", "red")} <= styles


def test_the_overview_comes_first_with_one_relative_figure_per_run(tmp_path):
    runs = records(tmp_path, QUICK, QUICK, BLOCKSIZE)
    report = build_report(runs, generated_at="now")
    assert report.overview.headings == ("Run", "Relative", "95 % interval", "Tests", "Note")
    # the same captures replayed: 1.00x over quick's 8 tests, single passes so no interval; the block-size run
    # shares no test with the first and has no figure
    assert report.overview.rows == (
        ("run 1", "1.00x", "-", "8", "baseline"),
        ("run 2", "1.00x", "-", "8", "8 of 8 figures are single runs (--repeat 3 or more gives an interval)"))
    assert report.overview.notes[0].startswith("relative = geometric mean of each shared test's throughput ratio")
    page = render_html(report)
    assert page.index('id="overview"') < page.index('id="tested"') < page.index('id="comparison"')
    assert build_report(runs[:1], generated_at="now").overview is None


def test_a_run_named_with_braces_is_reported_whole(tmp_path):
    """Each part of a run's section is named after the run; the name was used as a format string, and a '}' in it
    took the whole report down (before any part was drawn)."""
    (run,) = records(tmp_path, QUICK)
    run = replace(run, info=replace(run.info, name="{size} }{"))
    report = build_report([run], generated_at="now")
    assert report.undrawn == () and report.runs[0].title.startswith("{size} }{ (run 1)")
    assert len(report.runs[0].tables) == 2  # the suite's view and every test


def test_bars_stand_on_a_linear_axis_from_zero_whatever_their_span(tmp_path):
    """Issue 42: quick's IOPS bars were drawn on a log axis starting at 1k, where a 100x ratio looks like 2x."""
    plan = build_plan(load_suite("quick"))
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(options={"repeat": 1}))
        for index, test in enumerate(plan.tests):
            iops = 100_000.0 if "Q32" in test.label else 1_000.0  # two decades apart
            store.add_test(run_id, index, test.label, test.params(), "", "{}", "", "2026-01-01T00:00:00+00:00",
                           job(iops), plan_index=index)
        record = store.get_run(run_id)
    bars = charts_by_id([record])["quick-random"]
    assert bars.kind == "bars" and not bars.y_log and bars.y_from_zero and bars.y_label == "IOPS"
    svg = render_svg(bars)
    assert "log scale" not in svg and ">0<" in svg  # the axis' first tick is zero
