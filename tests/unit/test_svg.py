"""The chart renderer: the SVG it writes is parsed back, and what it draws is read off the drawing itself."""

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest

from disklab.analysis.stats import Summary, summarize
from disklab.report.html.charts import ChartSpec, SeriesSpec
from disklab.report.html.svg import PALETTE, render_svg

NS = {"svg": "http://www.w3.org/2000/svg"}
BLOCK_SIZES = tuple((2.0 ** k, f"{2 ** (k - 10)}KiB") for k in range(12, 21))  # 4KiB .. 1024KiB


def chart(kind="line", series=(), **options) -> ChartSpec:
    return ChartSpec(id=options.pop("id", "c"), kind=kind, title="t", caption="c", x_label=options.pop("x_label", "x"),
                     y_label=options.pop("y_label", "IOPS"), series=tuple(series), **options)


def parse(spec: ChartSpec) -> ET.Element:
    return ET.fromstring(render_svg(spec))


def ticks(svg: ET.Element, axis: str) -> list[tuple[float, str]]:
    """(position along the axis, label) of each tick label: y for the y axis, x for the x axis."""
    group = svg.find(f"svg:g[@class='{axis}-ticks']", NS)
    coordinate = "y" if axis == "y" else "x"
    return [(float(text.get(coordinate)), text.text) for text in group.findall("svg:text", NS)]


def markers(svg: ET.Element, spec: ChartSpec, i: int) -> list[tuple[float, float]]:
    group = svg.find(f".//svg:g[@id='{spec.id}-series-{i}']", NS)
    return [(float(use.get("x")), float(use.get("y"))) for use in group.findall("svg:use", NS)]


def value(label: str) -> float:
    """A tick label's number: 1,234 and the short forms of log axes, 2k, 10M."""
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}.get(label[-1], 1)
    return float(label.rstrip("kMG").replace(",", "")) * scale


def position_of(y_ticks: list[tuple[float, str]], v: float, log: bool = False) -> float:
    """Where v belongs between the two ticks around it, from the ticks' own positions (the axis' transform inverted)."""
    scale = math.log10 if log else float
    for (p0, l0), (p1, l1) in zip(y_ticks, y_ticks[1:]):
        if value(l0) <= v <= value(l1):
            return p0 + (p1 - p0) * (scale(v) - scale(value(l0))) / (scale(value(l1)) - scale(value(l0)))
    raise AssertionError(f"{v} is outside the axis {y_ticks}")


def is_nice(step: float) -> bool:
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m) for m in (1, 2, 5))


def is_power_of_ten(v: float) -> bool:
    return math.isclose(10 ** round(math.log10(v)), v)


def test_every_series_point_and_bar_is_drawn_once_with_its_id():
    lines = chart(series=[SeriesSpec("a", ((1, 10), (2, 20), (3, 15))), SeriesSpec("b", ((1, 5),))])
    svg = parse(lines)
    assert [len(markers(svg, lines, i)) for i in range(2)] == [3, 1]
    assert all(use.get("href") == "#c-marker" for use in svg.iter("{http://www.w3.org/2000/svg}use"))
    bars = chart("bars", [SeriesSpec(f"run {i}", tuple((float(j), 100.0 * j) for j in range(4))) for i in range(3)],
                 x_ticks=tuple(enumerate("ABCD")))
    svg = parse(bars)
    for i in range(3):
        drawn = svg.findall(f".//svg:g[@id='c-series-{i}']/svg:rect", NS)
        assert [r.get("id") for r in drawn] == [f"c-series-{i}-bar-{j}" for j in range(4)]
    assert len(svg.findall(".//svg:g[@class='bar-labels']/svg:text", NS)) == 12  # a value over each bar


def test_series_take_matplotlibs_ten_colours_in_order():
    svg = parse(chart(series=[SeriesSpec(str(i), ((1, i),)) for i in range(10)]))
    assert [svg.find(f".//svg:g[@id='c-series-{i}']", NS).get("fill") for i in range(10)] == list(PALETTE)
    assert PALETTE[:3] == ("#1f77b4", "#ff7f0e", "#2ca02c")


@pytest.mark.parametrize("top", [0.7, 9, 37, 1234, 87_654, 2_500_000])
def test_a_linear_y_axis_starts_at_zero_and_steps_by_nice_numbers_past_the_data(top):
    spec = chart(series=[SeriesSpec("a", ((0, top / 3), (1, top)))])
    labels = [value(label) for _, label in ticks(parse(spec), "y")]
    steps = {round(b - a, 9) for a, b in zip(labels, labels[1:])}
    assert labels[0] == 0 and labels[-1] >= top and len(steps) == 1 and is_nice(steps.pop())
    assert 3 <= len(labels) <= 9


def test_tick_labels_have_thousands_separators():
    labels = [label for _, label in ticks(parse(chart(series=[SeriesSpec("a", ((0, 45_000),))])), "y")]
    assert "10,000" in labels and "40,000" in labels


def test_a_point_lies_where_its_value_is_on_a_linear_axis():
    spec = chart(series=[SeriesSpec("a", ((0, 1234.0), (5, 3777.0), (10, 0.0)))])
    svg = parse(spec)
    y_ticks = sorted(ticks(svg, "y"), key=lambda t: value(t[1]))
    x_ticks = sorted(ticks(svg, "x"), key=lambda t: value(t[1]))
    for (px, py), (x, y) in zip(markers(svg, spec, 0), spec.series[0].points):
        assert py == pytest.approx(position_of(y_ticks, y), abs=0.2)
        assert px == pytest.approx(position_of(x_ticks, x), abs=0.2)


def test_a_log_y_axis_labels_powers_of_ten_and_places_points_by_their_logarithm():
    spec = chart(series=[SeriesSpec("a", ((0, 95.0), (1, 1800.0), (2, 64_000.0)))], y_log=True,
                 x_ticks=((0, "p50"), (1, "p99"), (2, "p99.99")))
    svg = parse(spec)
    y_ticks = ticks(svg, "y")
    values = [value(label) for _, label in y_ticks]
    assert all(is_power_of_ten(v) for v in values) and values[0] <= 95 and values[-1] >= 64_000
    positions = [p for p, _ in y_ticks]
    assert positions == sorted(positions, reverse=True)  # up the page as the values grow
    for (_, py), (_, y) in zip(markers(svg, spec, 0), spec.series[0].points):
        assert py == pytest.approx(position_of(y_ticks, y, log=True), abs=0.2)


def test_a_log_axis_over_less_than_two_decades_also_labels_2_and_5():
    y_ticks = ticks(parse(chart(series=[SeriesSpec("a", ((0, 80.0), (1, 450.0)))], y_log=True)), "y")
    values = [value(label) for _, label in y_ticks]
    assert values == [50, 100, 200, 500]  # the axis cut to the ticks around the data


def test_block_sizes_sit_on_a_log2_axis_at_their_ticks():
    spec = chart(series=[SeriesSpec("a", tuple((size, 1000.0) for size, _ in BLOCK_SIZES))],
                 x_ticks=BLOCK_SIZES, x_log2=True)
    svg = parse(spec)
    x_ticks = ticks(svg, "x")
    assert [label for _, label in x_ticks] == [label for _, label in BLOCK_SIZES]
    gaps = [b - a for (a, _), (b, _) in zip(x_ticks, x_ticks[1:])]
    assert all(gap > 0 for gap in gaps) and max(gaps) - min(gaps) < 0.2  # doubling is one equal step
    assert [px for px, _ in markers(svg, spec, 0)] == pytest.approx([p for p, _ in x_ticks], abs=0.1)


# (1e-9,): a series within its first whole second's first nanosecond had a single tick, an axis of no length.
@pytest.mark.parametrize("seconds", [(0.25, 0.5, 0.75), (1, 2, 3, 4), tuple(range(1, 61)), (0.24,), (1e-9,)])
def test_time_axes_get_whole_seconds(seconds):
    labels = [label for _, label in ticks(parse(chart(series=[SeriesSpec("r", tuple((t, 5.0) for t in seconds))])),
                                          "x")]
    assert all(re.fullmatch(r"\d+", label) for label in labels), labels
    assert value(labels[0]) <= min(seconds) and value(labels[-1]) >= max(seconds)


def test_text_from_the_store_is_escaped_and_reads_back_unchanged():
    hostile = 'run <b>"1"</b> & co'
    spec = chart("bars", [SeriesSpec(hostile, ((0, 5),))], x_ticks=((0, hostile),), x_label=hostile,
                 y_label=hostile, id="c")
    text = render_svg(spec)
    assert "<b>" not in text and '"1"</b>' not in text and "& co" not in text
    svg = ET.fromstring(text)
    strings = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert strings.count(hostile) == 4  # the x tick, both axis labels and the legend


def test_two_charts_share_a_page_without_a_common_id():
    page = render_svg(chart(series=[SeriesSpec("a", ((1, 2),))], id="latency-run-1")) + render_svg(
        chart(series=[SeriesSpec("a", ((1, 2),))], id="latency-run-2"))
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)) and all(i.startswith(("latency-run-1-", "latency-run-2-")) for i in ids)
    for svg in re.findall(r"<svg.*?</svg>", page):
        targets = set(re.findall(r'href="#([^"]+)"', svg))
        assert targets and targets <= set(re.findall(r' id="([^"]+)"', svg))  # a marker from its own chart


def test_the_svg_is_self_contained_and_scales():
    text = render_svg(chart(series=[SeriesSpec("a", ((1, 2), (2, 3)))]))
    svg = ET.fromstring(text)
    assert re.fullmatch(r"0 0 \d+ [\d.]+", svg.get("viewBox"))
    assert "<script" not in text and "<image" not in text and "<style" not in text
    assert re.findall(r"https?://[^\"]*", text) == ["http://www.w3.org/2000/svg"]  # the namespace, not a fetch


@pytest.mark.parametrize("series", ids=["one point", "all zero", "empty", "no series", "not a number"], argvalues=[
    [SeriesSpec("a", ((3, 42.0),))],
    [SeriesSpec("a", ((0, 0.0), (1, 0.0))), SeriesSpec("b", ((0, 0.0),))],
    [SeriesSpec("a", ())],
    [],
    [SeriesSpec("a", ((0, 1.0), (1, math.nan), (2, math.inf), (3, None), (4, 2.0)))],
])
@pytest.mark.parametrize("kind, options", [("line", {}), ("line", {"y_log": True}), ("line", {"x_log2": True}),
                                            ("bars", {"x_ticks": tuple(enumerate("ABCDE"))})])
def test_odd_data_still_draws_a_sensible_axis(series, kind, options):
    spec = chart(kind, series, **options)
    text = render_svg(spec)
    svg = ET.fromstring(text)
    assert not re.search(r"nan|inf", text, re.IGNORECASE)
    y_labels = [value(label) for _, label in ticks(svg, "y")]
    assert len(y_labels) >= 2 and y_labels == sorted(y_labels)
    finite = [[p for p in s.points if p[1] is not None and math.isfinite(p[1]) and (p[0] > 0 or not spec.x_log2)]
              for s in spec.series]
    drawn = "rect" if kind == "bars" else "use"
    for i, points in enumerate(finite):
        assert len(svg.findall(f".//svg:g[@id='c-series-{i}']/svg:{drawn}", NS)) == len(points)


def repeats(*values: float) -> Summary:
    return summarize(values)


def error_bars(svg: ET.Element) -> list[tuple[float, float]]:
    """(top, bottom) page y of each error bar: the ends of its vertical stroke."""
    ends = []
    for bar in svg.findall(".//svg:g[@class='error-bars']/svg:path[@class='error-bar']", NS):
        ys = [float(y) for y in re.findall(r"[MH ](?:[\d.]+),([\d.]+)", bar.get("d"))]
        ends.append((min(ys), max(ys)))
    return ends


def test_the_title_axis_names_and_units_are_inside_the_svg():
    spec = chart(series=[SeriesSpec("run 1", ((1, 2.0),))], y_label="MB/s (10^6 bytes/s)", x_label="block size")
    spec = replace(spec, title="IOPS over block size · random read · QD1 · 1 job")
    svg = parse(spec)
    assert svg.find("svg:title", NS).text == spec.title  # the accessible name, and a copied chart's tooltip
    assert [t.text for t in svg.findall("svg:text[@class='chart-title']", NS)] == [spec.title]
    assert svg.find("svg:text[@class='y-label']", NS).text == "MB/s (10^6 bytes/s)"
    assert svg.find("svg:text[@class='x-label']", NS).text == "block size"
    assert [t.text for t in svg.findall(".//svg:g[@class='legend']/svg:text", NS)] == ["run 1"]
    title_y = float(svg.find("svg:text[@class='chart-title']", NS).get("y"))
    assert all(title_y < y for y, _ in ticks(svg, "y")), "the title sits above the plot"


def test_a_long_title_wraps_inside_the_chart():
    title = " · ".join(["Completion latency percentiles", *(f"long test label number {i}" for i in range(8))])
    svg = parse(replace(chart(series=[SeriesSpec("a", ((1, 2.0),))]), title=title))
    lines = [t.text for t in svg.findall("svg:text[@class='chart-title']", NS)]
    assert len(lines) > 1 and " ".join(lines) == title
    width = float(svg.get("viewBox").split()[2])
    assert all(len(line) * 0.68 * 13 <= width - 16 for line in lines)


def test_means_of_repeats_get_their_95_percent_interval_as_error_bars_and_n_is_stated():
    spreads = (repeats(90, 100, 110), None, repeats(280, 300, 320))
    spec = chart(series=[SeriesSpec("a", ((0, 100.0), (1, 200.0), (2, 300.0)), spreads)])
    svg = parse(spec)
    bars = error_bars(svg)
    assert len(bars) == 2, "a bar for each mean of n > 1, none for the single figure"
    y_ticks = sorted(ticks(svg, "y"), key=lambda t: value(t[1]))
    for (top, bottom), spread in zip(bars, (spreads[0], spreads[2])):
        assert top == pytest.approx(position_of(y_ticks, spread.mean + spread.ci95_half_width), abs=0.2)
        assert bottom == pytest.approx(position_of(y_ticks, spread.mean - spread.ci95_half_width), abs=0.2)
    notes = " ".join(t.text for t in svg.findall("svg:text[@class='chart-note']", NS))
    assert "n = 3" in notes and "95 % confidence interval" in notes
    assert "without: a single run" in notes, "the point without a bar is said to be a single run, not a sure figure"
    tooltips = [t.text for t in svg.findall(".//svg:g[@id='c-series-0']/svg:use/svg:title", NS)]
    assert "a · 0: 100 ± 24.8 (24.8 %, 95 % interval, mean of n = 3)" == tooltips[0] and "±" not in tooltips[1]


@pytest.mark.parametrize("kind, options", [("line", {}), ("line", {"y_log": True}), ("line", {"bands": True}),
                                            ("bars", {"x_ticks": ((0, "A"), (1, "B"))})])
def test_single_figures_have_no_error_bars_and_no_note(kind, options):
    single = (repeats(100.0), None)  # n = 1: no interval to draw
    svg = parse(chart(kind, [SeriesSpec("a", ((0, 100.0), (1, 50.0)), single)], **options))
    assert svg.findall(".//svg:g[@class='error-bars']", NS) == []
    assert svg.findall("svg:text[@class='chart-note']", NS) == []


def test_bars_carry_error_bars_with_their_value_above_them():
    spread = repeats(900, 1000, 1100)
    spec = chart("bars", [SeriesSpec("a", ((0, 1000.0), (1, 400.0)), (spread, None))], x_ticks=((0, "A"), (1, "B")))
    svg = parse(spec)
    ((top, _),) = error_bars(svg)
    labels = svg.findall(".//svg:g[@class='bar-labels']/svg:text", NS)
    assert float(labels[0].get("y")) < top, "the value is written above the error bar, not through it"
    y_ticks = sorted(ticks(svg, "y"), key=lambda t: value(t[1]))
    assert value(y_ticks[-1][1]) >= spread.mean + spread.ci95_half_width


def test_a_time_series_of_repeats_draws_its_interval_as_a_band():
    points = tuple((t, 100.0 + t) for t in range(1, 31))
    spreads = tuple(repeats(95 + t, 100 + t, 105 + t) for t in range(1, 31))
    svg = parse(chart(series=[SeriesSpec("read", points, spreads)], bands=True))
    (band,) = svg.findall(".//svg:g[@class='error-bars']/svg:path[@class='error-band']", NS)
    assert band.get("d").startswith("M") and band.get("d").endswith("Z") and error_bars(svg) == []
    assert "shaded band" in svg.find("svg:text[@class='chart-note']", NS).text


def test_a_log_axis_spanning_decades_is_labelled_1_10_100_1k_10k():
    spec = chart(series=[SeriesSpec("a", ((0, 3.0), (1, 250_000.0)))], y_log=True)
    assert [label for _, label in ticks(parse(spec), "y")] == ["1", "10", "100", "1k", "10k", "100k", "1M"]
    minor = parse(spec).findall("svg:g[@stroke='#f3f3f3']/svg:line", NS)
    assert len(minor) == 6 * 8, "faint lines at 2 .. 9 times each of the six decades' powers"
    narrow = chart(series=[SeriesSpec("a", ((0, 800.0), (1, 4500.0)))], y_log=True)
    assert [label for _, label in ticks(parse(narrow), "y")] == ["500", "1k", "2k", "5k"]
    assert parse(narrow).findall("svg:g[@stroke='#f3f3f3']/svg:line", NS) == [], "2 and 5 are labelled already"


def test_charts_given_one_range_share_their_y_axis():
    low = chart(series=[SeriesSpec("a", ((0, 20.0), (1, 80.0)))], y_log=True, y_range=(5.0, 40_000.0))
    high = chart(series=[SeriesSpec("a", ((0, 900.0), (1, 40_000.0)))], y_log=True, y_range=(5.0, 40_000.0))
    assert ticks(parse(low), "y") == ticks(parse(high), "y")


@pytest.mark.parametrize("end", [7, 37, 95, 600, 3600])
def test_time_ticks_step_by_1_2_or_5_times_a_power_of_ten(end):
    labels = [value(label) for _, label in ticks(parse(chart(series=[SeriesSpec("r", ((1, 5.0), (end, 6.0)))])), "x")]
    steps = {b - a for a, b in zip(labels, labels[1:])}
    assert len(steps) == 1 and is_nice(steps.pop()) and labels[0] == 0 and 3 <= len(labels) <= 9


def test_an_interval_wider_than_its_mean_stops_at_zero():
    wide = repeats(100, 5000, 900)  # IOPS cannot be negative, though mean - interval is
    assert wide.mean - wide.ci95_half_width < 0
    for kind, options in (("line", {}), ("bars", {"x_ticks": ((0, "A"),)})):
        svg = parse(chart(kind, [SeriesSpec("a", ((0, wide.mean),), (wide,))], **options))
        y_ticks = sorted(ticks(svg, "y"), key=lambda t: value(t[1]))
        assert value(y_ticks[0][1]) == 0, "the axis starts at zero"
        ((_, bottom),) = error_bars(svg)
        assert bottom == pytest.approx(y_ticks[0][0])
