"""Method charts: marked values (reference lines) read back off the SVG, and pgbench's charts built from steps stored
from real pgbench output (tests/fixtures/pgbench). Saturate and steady runs are charted from real fio runs in
tests/integration/test_method_charts.py."""

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

from hypothesis import example, given, settings, strategies as st

from disklab.analysis.steady import steady_verdict
from disklab.report.html.charts import ChartSpec, Reference, SeriesSpec
from disklab.report.html.method_charts import method_charts, saturate_charts
from disklab.report.html.model import build_report
from disklab.report.html.render import render_html
from disklab.report.html.svg import render_svg
from disklab.report.rows import result_rows
from disklab.store.repository import Store
from tests.unit.test_compare import DEFAULTS
from tests.unit.test_pgbench import fixture
from tests.unit.test_precision import job
from tests.unit.test_pgbench_report import step_result, stored_run
from tests.unit.test_store import new_run
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


# The load levels of a real saturation search on a busy machine (the run-kinds zoo's saturate run): from 30 % on,
# most levels did not hold their rate, so the IOPS they achieved fall and rise again: (percent, offered IOPS,
# achieved IOPS, held, p50, p99, p99.9 ns).
BUSY_LEVELS = ((10, 2289, 2282, True, 40704, 95744, 399360), (20, 4578, 4565, True, 49408, 98816, 238592),
               (30, 6867, 3169, False, 651264, 1548288, 2736128), (40, 9156, 2741, False, 667648, 2801664, 4112384),
               (50, 11445, 6488, False, 44288, 995328, 1204224), (60, 13734, 2269, False, 782336, 2899968, 4489216),
               (70, 16022, 13233, False, 57600, 757760, 1028096), (80, 18311, 2017, False, 765952, 1957888, 2277376),
               (90, 20600, 18761, True, 72192, 823296, 2670592), (100, 22889, 2040, False, 831488, 2932736, 4620288))


def saturate_record(tmp_path, flags: dict[int, tuple[str, str]]):
    """A saturate run's load levels as stored tests ('... at 30 %') with the outcome of BUSY_LEVELS."""
    levels = [{"percent": p, "target_iops": offered, "iops": got, "held": held, "iodepth": 2, "jobs": 1,
               "p50_ns": p50, "p99_ns": p99, "p99_9_ns": p999} for p, offered, got, held, p50, p99, p999 in BUSY_LEVELS]
    with Store(tmp_path / "s.db") as store:
        run_id = store.create_run(new_run(suite_name="saturate"))
        for seq, level in enumerate(levels):
            test_id = store.add_test(run_id, seq, f"RND4K read Q2T1 at {level['percent']} %", DEFAULTS, "", "{}", "",
                                     "2026-01-01T00:00:00+00:00", job(level["iops"]), plan_index=seq, attempt=1)
            if level["percent"] in flags:
                store.add_flag(test_id, *flags[level["percent"]])
        store.set_run_values("run_outcomes", run_id, {"saturation": {
            "levels": levels, "knee": levels[1], "peak": {"iops": 22889.3, "iodepth": 2, "jobs": 1}}})
        return store.get_run(run_id)


def test_saturate_draws_its_levels_in_order_of_offered_load_and_rings_those_that_did_not_hold_their_rate(tmp_path):
    record = saturate_record(tmp_path, {90: ("busy-machine", "other work ran beside this test")})
    (spec,) = saturate_charts([record])
    for line in spec.series:  # never a line running back in x, where achieved IOPS fell
        assert [x for x, _ in line.points] == [offered for _, offered, *_ in BUSY_LEVELS]
    assert [label for _, label in spec.x_ticks] == [f"{p} %" for p, *_ in BUSY_LEVELS]
    assert [r.value for r in spec.references if r.axis == "x"] == [4578]  # the knee at its offered load
    svg = parse(spec)
    rings = [g for g in svg.iter(f"{{{NS['svg']}}}g") if g.get("class") == "flagged"]
    not_held = [p for p, _, _, held, *_ in BUSY_LEVELS if not held]
    assert len(rings) == 3 * (len(not_held) + 1)  # three percentiles; the 90 % level carries busy-machine
    assert sorted({g.get("data-flags") for g in rings}) == ["busy-machine", "rate-not-held"]
    notes = [g.find("svg:text", NS).text for g in svg.iter(f"{{{NS['svg']}}}g") if g.get("class") == "flag-note"]
    assert notes == ["⚑1 ringed: rate-not-held: the level delivered under 90 % of the load offered by fio's rate "
                     "limit", "⚑2 ringed: busy-machine: other processes used CPU or disk I/O during the test: its "
                     "figures are partly theirs"]
    p99 = svg.findall(".//svg:g[@id='saturate-1-series-1']/svg:use", NS)
    tips = [use.find("svg:title", NS).text for use in p99]
    assert tips[2] == "p99 · 30 %: 1,548 · ⚑ rate-not-held: 3,169 IOPS delivered of 6,867 offered"


def steady_record(tmp_path, values, flagged_round: int | None = None):
    """A steady run's rounds stored as the steady schedule stores them (one planned test, a round per attempt)."""
    with Store(tmp_path / "steady.db") as store:
        run_id = store.create_run(new_run(suite_name="steady", options={}))
        for n, iops in enumerate(values, start=1):
            test_id = store.add_test(run_id, n - 1, "RND4K write", {**DEFAULTS, "direction": "write"}, "", "{}", "",
                                     "2026-01-01T00:00:00+00:00", job(iops), plan_index=0, attempt=n)
            if n == flagged_round:
                store.add_flag(test_id, "busy-machine", "other work ran beside this test")
        store.set_run_values("run_outcomes", run_id, {"steady_state": steady_verdict(values).as_dict("IOPS")})
        return store.get_run(run_id)


def test_steady_convergence_is_on_a_linear_axis_from_zero_with_its_window_marked_and_rounds_named(tmp_path):
    values = [200_000, 90_000, 20_000, 10_000, 10_100, 9_900, 10_000, 10_200]  # over a decade: still linear
    record = steady_record(tmp_path, values, flagged_round=5)
    convergence, window = method_charts([record])
    assert not convergence.y_log and convergence.y_from_zero and "log" not in convergence.y_label
    assert min(value(label) for _, label in ticks(parse(convergence), "y")) == 0
    assert [(r.axis, r.value) for r in convergence.references] == [("x", 4), ("x", 8)]  # rounds 4-8
    assert convergence.series[0].flags[4] and not any(convergence.series[0].flags[:4])
    assert window.series[0].flags[1] == convergence.series[0].flags[4]  # the window's second round is round 5
    assert not window.y_log and {r.label for r in window.references} >= {"+10 %", "-10 %", "+20 %", "-20 %"}
    assert [row.test for row in result_rows(record)] == [f"RND4K write · round {n}" for n in range(1, 9)]
