"""The charts of measured data: time series with their moving average, latency percentiles fitted and split,
exceedance from json+ bins, and queue depth x jobs heat maps; from runs replayed from real captured fio output
(tests/fixtures/capture_fio_output.py), read back off the SVG drawn."""

import math
import xml.etree.ElementTree as ET
from dataclasses import replace

from hypothesis import given, settings, strategies as st

from disklab.fio.parse import latency_bins
from disklab.plan.build import build_plan, resolve_engines
from disklab.report.html.charts import MAX_LINES, ChartSpec, SeriesSpec
from disklab.report.html.latency_charts import EXCEEDANCE_STEP
from disklab.report.html.series_charts import moving_average, moving_average_window
from disklab.report.html.svg import render_svg
from disklab.report.metrics import REGISTRY
from disklab.run.execute import Execution, execute_schedule
from disklab.run.schedule import FixedSchedule
from disklab.store.repository import Store
from disklab.suite.loader import parse_suite
from tests.conftest import FIO_FIXTURES, fixture_text
from tests.unit.test_execute import Recorder, ReplayExecutor
from tests.unit.test_store import new_run
from tests.unit.test_html_report import select_charts
from tests.unit.test_svg import NS, ticks, value

LOGGED = "randread-4k-q4-log1s"  # 8 s of random reads logged every second: 7 intervals
READS = ("randread-4k-q32.jsonplus.json", "randrw-70-4k-4jobs.jsonplus.json", "seqread-1m-q8.jsonplus.json",
         f"{LOGGED}.jsonplus.json")

LOGGED_SUITE = """
name = "logged"

[[group]]
name = "logged"
label = "RND4K read logged"
direction = "read"
iodepth = 4
log_interval = "1s"
"""

GRID = """
name = "grid"

[[group]]
name = "grid"
label = "RND4K read QD{iodepth} {jobs}j"
direction = "read"
iodepth = [1, 4]
jobs = [1, 2, 4]
"""

DEPTHS = """
name = "depths"

[[group]]
name = "depths"
label = "RND4K read QD{iodepth}"
direction = "read"
iodepth = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
"""


def stored(tmp_path, suite_text: str, outputs, logs=None, keep=lambda test: True):
    """The suite's plan replayed into a store: test i gets outputs[i % len(outputs)] (real captures)."""
    suite = parse_suite(suite_text, source="test", where="test suite")
    plan = resolve_engines(build_plan(suite), lambda wanted: "io_uring")
    plan = replace(plan, tests=tuple(t for t in plan.tests if keep(t)))
    replayed = [fixture_text(outputs[i % len(outputs)]) for i in range(len(plan.tests))]
    with Store(tmp_path / f"{suite.name}.db") as store:
        run_id = store.create_run(new_run(suite_name=suite.name, suite_text=suite_text, planned_tests=len(plan.tests)))
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan),
                         ReplayExecutor(replayed, logs=logs), store, Recorder())
        store.finish_run(run_id, "complete")
        return store.get_run(run_id)


def logged_logs() -> dict[str, str]:
    return {path.name: path.read_text() for path in (FIO_FIXTURES / f"{LOGGED}.logs").iterdir()}


def charts_of(runs, prefix: str):
    return [chart for chart in select_charts(runs) if chart.id.startswith(prefix)]


def svg_of(chart) -> ET.Element:
    svg = ET.fromstring(render_svg(chart))
    assert svg.find("svg:title", NS).text == chart.title, "the SVG's title names what is drawn"
    return svg


def drawn_points(svg: ET.Element, chart, i: int) -> int:
    return len(svg.find(f".//svg:g[@id='{chart.id}-series-{i}']", NS).findall("svg:use", NS))


def test_a_logged_test_gets_iops_mb_s_and_latency_over_time_each_with_its_moving_average(tmp_path):
    run = stored(tmp_path, LOGGED_SUITE, [f"{LOGGED}.jsonplus.json"], logs=logged_logs())
    charts = {chart.id: chart for chart in charts_of([run], "series")}
    assert [chart.title for chart in charts.values()] == [
        "IOPS over time · RND4K read logged", "MB/s over time · RND4K read logged",
        "Mean latency over time · RND4K read logged"]
    (test,) = run.tests
    for chart, kind, scale in zip(charts.values(), ("iops", "bw_bytes_per_s", "lat_mean_ns"), (1, 1e6, 1e3)):
        (logged,) = [s for s in test.series if s.kind == kind]
        raw, average = chart.series
        assert raw.name == "read" and average.name == "read · moving average"
        assert raw.points == tuple((p.t_ms / 1000, p.value / scale) for p in logged.points)
        assert len(raw.points) == 7 and moving_average_window(7) == 3
        # centred over 3 intervals: the mean of each point and its neighbours, none where the window is not full
        assert average.points == tuple((raw.points[i][0], sum(y for _, y in raw.points[i - 1:i + 2]) / 3)
                                       for i in range(1, 6))
        assert "moving average: centred, over 3 logged intervals (3 s)" in chart.caption
        svg = svg_of(chart)
        assert (drawn_points(svg, chart, 0), drawn_points(svg, chart, 1)) == (7, 5)
    assert charts["series-mb-per-s-1"].y_label == "MB/s (10^6 bytes/s)" and charts["series-latency-1"].y_label == "µs"


def test_the_moving_average_window_grows_with_the_series_and_needs_enough_points():
    assert [moving_average_window(n) for n in (4, 5, 29, 60, 600)] == [0, 3, 3, 7, 61]
    assert moving_average([(0, 1.0), (1, 2.0), (2, 6.0), (3, 1.0)], 3) == ((1, 3.0), (2, 3.0))


def test_exceedance_is_the_share_of_ios_slower_than_each_bin_of_fios_json_plus_histogram(tmp_path):
    run = stored(tmp_path, LOGGED_SUITE.replace('log_interval = "1s"', ""), [READS[0]])
    (chart,) = charts_of([run], "exceedance")
    (line,) = chart.series
    bins = sorted(latency_bins(run.tests[0].fio_output, "read").items())
    total = sum(count for _, count in bins)
    assert chart.title == "Latency exceedance (1 - CDF) · run 1" and chart.x_log10 and chart.y_log
    assert line.points[0] == (bins[0][0] / 1e3, 100 * (total - bins[0][1]) / total)
    assert line.points[-1] == (bins[-2][0] / 1e3, 100 * bins[-1][1] / total), "on to the slowest I/O but one"
    xs, ys = [x for x, _ in line.points], [y for _, y in line.points]
    assert ys == sorted(ys, reverse=True) and all(y > 0 for y in ys)
    steps = [math.log10(b / a) for a, b in zip(xs, xs[1:-1])]
    assert all(step >= EXCEEDANCE_STEP - 1e-9 for step in steps), "at most 20 points a decade"
    svg = svg_of(chart)
    assert drawn_points(svg, chart, 0) == len(line.points)
    decades = [value(label) for _, label in ticks(svg, "x")]
    assert decades[0] <= min(xs) < decades[0] * 10 and decades[-1] / 10 < max(xs) <= decades[-1]


def test_percentile_charts_fit_their_axis_to_their_data_and_split_rather_than_drop_many_lines(tmp_path):
    run = stored(tmp_path, DEPTHS, [name for name in READS if "randrw" not in name])  # a line per test
    latency = charts_of([run], "latency-")
    assert len(run.tests) == 12 > MAX_LINES
    assert [len(chart.series) for chart in latency] == [10, 2], "every test drawn, 10 lines a chart at most"
    assert [chart.title for chart in latency] == ["Completion latency percentiles · run 1 · part 1 of 2",
                                                 "Completion latency percentiles · run 1 · part 2 of 2"]
    assert [s.name for chart in latency for s in chart.series] == [t.label for t in run.tests]
    assert len(charts_of([run], "exceedance")) == 2
    for chart in latency:
        assert chart.y_range is None
        values = [y for s in chart.series for _, y in s.points]
        labels = [value(label) for _, label in ticks(svg_of(chart), "y")]
        # the axis ends at the ticks around the data, within the decades its lowest and highest figures are in
        assert labels[0] <= min(values) and labels[-1] >= max(values)
        assert labels[0] >= 10 ** math.floor(math.log10(min(values))) - 1e-9
        assert labels[-1] <= 10 ** math.ceil(math.log10(max(values))) + 1e-9


def test_a_queue_depth_by_jobs_grid_is_a_heat_map_of_the_stored_figures(tmp_path):
    run = stored(tmp_path, GRID, READS)
    (chart,) = charts_of([run], "grid")
    assert chart.kind == "heatmap" and chart.title == "IOPS by queue depth and jobs · random read · 4KiB"
    assert [s.name for s in chart.series] == ["QD1", "QD4"]
    assert [label for _, label in chart.x_ticks] == ["1 job", "2 jobs", "4 jobs"]
    svg = svg_of(chart)
    cells = svg.findall(".//svg:rect[@class='cell']", NS)
    assert len(cells) == 2 * 3
    stored_iops = {(t.params["iodepth"], t.params["jobs"]): REGISTRY["iops"].compute([t]) for t in run.tests}
    for i, depth in enumerate((1, 4)):
        for j, jobs in enumerate((1, 2, 4)):
            (cell,) = [c for c in cells if c.get("id") == f"{chart.id}-series-{i}-cell-{j}"]
            assert float(cell.get("data-value")) == stored_iops[depth, jobs]
    written = [text.text for text in svg.findall(".//svg:text[@class='cell-value']", NS)]
    assert len(written) == 6 and len({cell.get("fill") for cell in cells}) > 1, "coloured by value"
    assert svg.find(".//svg:g[@class='colour-scale']", NS) is not None


def test_a_pair_the_run_did_not_measure_is_an_empty_cell_and_one_value_per_axis_is_no_grid(tmp_path):
    run = stored(tmp_path, GRID, READS, keep=lambda t: (t.iodepth, t.jobs) != (4, 2))
    (chart,) = charts_of([run], "grid")
    svg = svg_of(chart)
    assert len(svg.findall(".//svg:rect[@class='cell']", NS)) == 5
    (empty,) = svg.findall(".//svg:rect[@class='cell empty']", NS)
    assert empty.get("id") == f"{chart.id}-series-1-cell-1"
    single = stored(tmp_path, GRID.replace("iodepth = [1, 4]", "iodepth = 1"), READS)
    assert charts_of([single], "grid") == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True)), min_size=1,
                         max_size=4), min_size=1, max_size=4),
       st.booleans())
def test_a_heat_map_draws_a_cell_for_every_row_and_column_whatever_the_figures(rows, log):
    columns = max(len(row) for row in rows)
    spec = ChartSpec(
        id="h", kind="heatmap", title="IOPS by queue depth and jobs", caption="", x_label="jobs",
        y_label="queue depth · IOPS", x_ticks=tuple((float(j), f"{j + 1} jobs") for j in range(columns)),
        series=tuple(SeriesSpec(f"QD{i}", tuple((float(j), y) for j, y in enumerate(row) if y is not None))
                     for i, row in enumerate(rows)), y_log=log)
    svg = svg_of(spec)
    cells = svg.findall(".//svg:rect", NS)
    drawn = [c for c in cells if c.get("class") in ("cell", "cell empty")]
    assert len(drawn) == len(rows) * columns
    for cell in drawn:
        if cell.get("class") == "cell":
            figure = float(cell.get("data-value"))
            assert math.isfinite(figure) and (figure > 0 or not log)
