"""Method charts: marked values (reference lines) read back off the SVG, and pgbench's charts built from steps stored
from real pgbench output (tests/fixtures/pgbench). Saturate and steady runs are charted from real fio runs in
tests/integration/test_method_charts.py."""

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

from hypothesis import example, given, settings, strategies as st

from disklab.report.html.charts import ChartSpec, Reference, SeriesSpec
from disklab.report.html.method_charts import method_charts
from disklab.report.html.model import build_report
from disklab.report.html.render import render_html
from disklab.report.html.svg import render_svg
from disklab.store.repository import Store
from tests.unit.test_pgbench import fixture
from tests.unit.test_pgbench_report import step_result, stored_run
from tests.unit.test_svg import NS, markers, parse, ticks, value


def references(svg: ET.Element, chart_id: str) -> dict[str, tuple[str, float, ET.Element, str]]:
    """id -> (axis, value, its line, its label) of each reference line drawn."""
    found = {}
    for group in svg.iter(f"{{{NS['svg']}}}g"):
        if group.get("class") == "reference":
            assert group.get("id").startswith(f"{chart_id}-reference-")
            found[group.get("id")] = (group.get("data-axis"), float(group.get("data-value")),
                                      group.find("svg:line", NS), group.find("svg:text", NS).text)
    return found


def test_a_reference_line_sits_at_its_value_on_either_axis_with_its_label():
    spec = ChartSpec(id="c", kind="line", title="t", caption="c", x_label="IOPS", y_label="µs",
                     series=(SeriesSpec("p99", ((100.0, 50.0), (300.0, 80.0), (600.0, 400.0))),),
                     y_log=True, references=(Reference("x", 300.0, "knee"), Reference("y", 80.0, "bound")))
    svg = parse(spec)
    drawn = references(svg, "c")
    (x_marker, y_marker) = markers(svg, spec, 0)[1]  # the point at (300, 80): on both lines
    axis, at, line, label = drawn["c-reference-0"]
    assert (axis, at, label) == ("x", 300.0, "knee")
    assert float(line.get("x1")) == float(line.get("x2")) == x_marker and line.get("stroke-dasharray")
    axis, at, line, label = drawn["c-reference-1"]
    assert (axis, at, label) == ("y", 80.0, "bound")
    assert float(line.get("y1")) == float(line.get("y2")) == y_marker


def test_the_axes_reach_a_marked_value_beyond_the_figures_and_one_that_cannot_be_placed_is_left_out():
    spec = ChartSpec(id="c", kind="line", title="t", caption="c", x_label="x", y_label="y",
                     series=(SeriesSpec("s", ((1.0, 10.0), (2.0, 20.0))),),
                     references=(Reference("y", 95.0, "far"), Reference("y", float("nan"), "nowhere")))
    svg = parse(spec)
    assert max(value(label) for _, label in ticks(svg, "y")) >= 95
    assert list(references(svg, "c")) == ["c-reference-0"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("xy"), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20)),
                max_size=4), st.booleans())
@example([("y", 1.7e308, "a")], True).via("a log axis up to a float's limit overflowed its ticks")
@example([("x", 1e308, "a"), ("x", -1e308, "b")], False).via("the span between them overflowed to inf")
@example([("y", 5e-324, "a")], True).via("the log of the smallest float's decade is 0")
def test_any_marked_values_draw_a_chart_that_parses_with_each_placeable_one_on_it(marks, log):
    spec = ChartSpec(id="c", kind="line", title="t", caption="c", x_label="x", y_label="y", y_log=log, x_log2=log,
                     series=(SeriesSpec("s", ((1.0, 10.0), (4.0, 20.0))),),
                     references=tuple(Reference(axis, at, label) for axis, at, label in marks))
    drawn = references(parse(spec), "c")
    # Drawn: a finite value within 1e300 of zero (past any figure a disk gives), on a log axis also above 1e-300.
    placed = [(axis, at) for axis, at, _ in marks
              if math.isfinite(at) and abs(at) <= 1e300 and (at >= 1e-300 or not log)]
    assert [(axis, at) for axis, at, _, _ in drawn.values()] == placed


def test_a_fitted_y_axis_starts_near_its_figures_not_at_zero():
    series = (SeriesSpec("s", ((1.0, 900.0), (2.0, 1000.0), (3.0, 1100.0))),)
    base = ChartSpec(id="c", kind="line", title="t", caption="c", x_label="x", y_label="y", series=series)
    assert min(value(label) for _, label in ticks(parse(base), "y")) == 0
    fitted = [value(label) for _, label in ticks(parse(replace(base, y_from_zero=False)), "y")]
    assert 800 <= min(fitted) <= 900 and 1100 <= max(fitted) <= 1200


def pgbench_records(tmp_path):
    """Run 1: 2 clients (50 transactions each, no progress line) and 4 clients (3 s, a progress line a second)."""
    with Store(tmp_path / "r.db") as store:
        run_id = stored_run(store, [step_result(2, fixture("transactions-2-clients.stdout")),
                                    step_result(4, fixture("time-4-clients.stdout"), fixture("time-4-clients.stderr"))])
        return [store.get_run(run_id)]


def test_a_pgbench_sweep_gets_tps_and_latency_over_clients_and_tps_over_time(tmp_path):
    (record,) = pgbench_records(tmp_path)
    charts = {chart.id: chart for chart in method_charts([record])}
    assert list(charts) == ["pgbench-tps-clients", "pgbench-latency-clients", "pgbench-time-1"]
    tps = charts["pgbench-tps-clients"]
    assert tps.title == "pgbench: TPS over clients" and [s.name for s in tps.series] == ["run 1"]
    steps = {t.params["clients"]: t.metrics[0] for t in record.tests}
    assert tps.series[0].points == ((2, steps[2].iops), (4, 1322.213622))  # pgbench's 'tps = ' of each step
    assert tps.x_ticks == ((2.0, "2"), (4.0, "4"))
    latency = charts["pgbench-latency-clients"]
    assert [s.name for s in latency.series] == ["mean", "p50", "p99"]
    assert latency.series[0].points[1] == (4, 3.014)  # ms: pgbench's 'latency average = 3.014 ms'
    assert latency.series[2].points[1] == (4, steps[4].clat_percentiles_ns["p99"] / 1e6)
    over_time = charts["pgbench-time-1"]
    assert over_time.title == "pgbench: TPS over time · run 1"
    (line,) = over_time.series  # the 2-client step ran under a second: no progress line, no line
    assert line.name == "pgbench 4 clients" and line.points == ((1.0, 1128.8), (2.0, 1287.1), (3.0, 1545.6))


def test_the_report_page_of_a_pgbench_run_shows_its_charts(tmp_path):
    html = render_html(build_report(pgbench_records(tmp_path), "2026-01-01T00:00:00+00:00"))
    svgs = [ET.fromstring(svg) for svg in re.findall(r"<svg .*?</svg>", html, re.S)]
    titles = [svg.find("svg:title", NS).text for svg in svgs]
    assert titles == ["pgbench: TPS over clients", "pgbench: latency over clients", "pgbench: TPS over time · run 1"]
    assert len(svgs[0].find(".//svg:g[@id='pgbench-tps-clients-series-0']", NS).findall("svg:use", NS)) == 2


def test_a_single_client_count_has_no_sweep_chart(tmp_path):
    with Store(tmp_path / "r.db") as store:
        record = store.get_run(stored_run(store, [step_result(4, fixture("time-4-clients.stdout"),
                                                              fixture("time-4-clients.stderr"))]))
    assert [chart.title for chart in method_charts([record])] == ["pgbench: TPS over time · run 1"]
    assert render_svg(method_charts([record])[0]).count("<use") == 3
