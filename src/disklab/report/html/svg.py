"""Chart specs -> inline SVG, drawn in plain Python: text stays <text>, nothing is referenced outside the SVG.

Each series carries a stable id (`{chart}-series-{i}`, bars `{chart}-series-{i}-bar-{j}`), so that what a
browser shows can be counted from the SVG itself: a line's points are the <use> markers inside its group.
Every id starts with the chart's id, so that charts share a page. Every string is escaped here. A point that
is not a finite number (or not positive, on a log x axis) has no place on the chart and is left out, never
drawn as some other value; a value at or below zero on a log y axis sits on the axis' bottom edge.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from disklab.report.html.charts import ChartSpec

# matplotlib's tab10 palette: ten colours, so at most ten lines in one chart (charts.MAX_LINES).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_WIDTH, _PLOT_HEIGHT = 720, 250  # viewBox units; the page scales the whole (CSS width 100%)
_FONT, _SMALL = 11, 9
_EM = 0.62  # average glyph width in ems of a wide sans-serif (DejaVu Sans): text widths are estimated, not measured
_TICK, _GAP = 4, 4
_SLANT = 35  # degrees: x tick labels too wide for their room turn this much
_LEGEND_SWATCH, _LEGEND_ROW = 24, 17
_RIGHT_LEGEND_MAX = 210  # a wider legend goes below the plot, where it may wrap
_INK, _AXIS, _GRID = "#222", "#555", "#e4e4e4"


@dataclass(frozen=True)
class _Axis:
    """One axis: the range it shows, its ticks, and how values map onto it (plain, log2 or log10)."""

    lo: float  # in scale units (log2 or log10 of the value on log axes)
    hi: float
    ticks: tuple[tuple[float, str], ...]  # (value, label)
    log: int | None = None  # the logarithm's base

    def scaled(self, value: float) -> float:
        if self.log is None:
            return value
        if value <= 0:
            return self.lo  # only the y axis gets here: its bottom edge (see the module's docstring)
        return math.log10(value) if self.log == 10 else math.log2(value)

    def fraction(self, value: float) -> float:
        return (self.scaled(value) - self.lo) / (self.hi - self.lo)


@dataclass(frozen=True)
class _Plot:
    left: float
    top: float
    width: float
    height: float

    def x(self, axis: _Axis, value: float) -> float:
        return self.left + axis.fraction(value) * self.width

    def y(self, axis: _Axis, value: float) -> float:
        return self.top + (1 - axis.fraction(value)) * self.height


def render_svg(spec: ChartSpec) -> str:
    """One chart as an <svg> element to inline in the report."""
    points = [_drawable(spec, series.points) for series in spec.series]
    legend_right = _legend_fits_right(spec)
    right = 14 + _LEGEND_SWATCH + 6 + max((_text_width(s.name) for s in spec.series), default=0) if legend_right else 12
    bars = spec.kind == "bars"
    categories = max([1, len(spec.x_ticks), *(int(x) + 1 for series in points for _, x, _ in series)]) if bars else 0
    bar_labels, upright, headroom = _bar_labels(spec, points, (_WIDTH - right - 70) / max(categories, 1))
    y_axis = _y_axis(spec, [y for series in points for _, _, y in series], headroom)
    x_axis = _x_axis(spec, [x for series in points for _, x, _ in series], categories)
    left = 8 + _FONT + 8 + max((_text_width(label) for _, label in y_axis.ticks), default=0) + _TICK + _GAP
    plot = _Plot(left, 12, _WIDTH - right - left, _PLOT_HEIGHT)
    x_positions = [plot.x(x_axis, value) for value, _ in x_axis.ticks]
    room = min((b - a for a, b in zip(x_positions, x_positions[1:])), default=plot.width)
    longest = max((_text_width(label) for _, label in x_axis.ticks), default=0)
    slanted = longest > room - 2  # labels that would touch their neighbours turn
    if slanted and x_axis.ticks:  # and the first one, hanging left of its tick, must stay inside the chart
        first = x_axis.fraction(x_axis.ticks[0][0])
        hangs = _text_width(x_axis.ticks[0][1]) * math.cos(math.radians(_SLANT)) + 4
        left = max(left, (hangs - first * (_WIDTH - right)) / (1 - first)) if first < 1 else left
        plot = _Plot(left, plot.top, _WIDTH - right - left, plot.height)
    x_label_y = plot.top + plot.height + _TICK + _GAP + (longest * 0.5 + _FONT if slanted else _FONT) + _GAP + _FONT
    legend_rows = [[entry] for entry in enumerate(spec.series)] if legend_right else _legend_rows(spec)
    height = x_label_y + 8 + (0 if legend_right else len(legend_rows) * _LEGEND_ROW + 6 * bool(legend_rows))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_f(height)}" width="{_WIDTH}" '
           f'height="{_f(height)}" font-family="sans-serif" font-size="{_FONT}" fill="{_INK}">']
    if not bars:
        out.append(f'<defs><circle id="{escape(spec.id)}-marker" r="3.2"/></defs>')
    out += _grid_and_axes(spec, plot, x_axis, y_axis, slanted, x_label_y)
    for i, series in enumerate(points):
        if bars:
            out += _bar_group(spec, i, series, plot, x_axis, y_axis, bar_labels, upright)
        else:
            out += _line_group(spec, i, series, plot, x_axis, y_axis)
    if legend_right:
        out += _legend(legend_rows, spec, plot.left + plot.width + 14, plot.top + 6)
    else:
        out += _legend(legend_rows, spec, plot.left, x_label_y + 8 + _LEGEND_ROW / 2)
    out.append("</svg>")
    return "".join(out)


def _bar_labels(spec: ChartSpec, points, category_width: float) -> tuple[bool, bool, float]:
    """Whether bars carry their values, whether those stand upright (too wide for a bar), and the headroom
    (a fraction of the plot's height) the y axis keeps above the data for them or for the markers."""
    labelled = spec.kind == "bars" and 0 < len(spec.series) <= 3
    widest = max((_text_width(_number(y), _SMALL) for series in points for _, _, y in series), default=0)
    upright = labelled and widest > category_width * 0.8 / len(spec.series)
    return labelled, upright, (widest + 6 if upright else _SMALL + 8 if labelled else 6) / _PLOT_HEIGHT


def _drawable(spec: ChartSpec, points) -> list[tuple[int, float, float]]:
    """(index, x, y) of the points that have a place on the chart; the index keeps bar ids stable."""
    return [(j, float(x), float(y)) for j, (x, y) in enumerate(points)
            if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)
            and (x > 0 or not spec.x_log2)]


def _y_axis(spec: ChartSpec, values: list[float], headroom: float) -> _Axis:
    if spec.y_log:
        return _log10_axis([v for v in values if v > 0])
    low, high = min([0.0, *values]), max([0.0, *values])
    # Nothing but zeros, or nothing at all: an axis from 0 to 1.
    ticks = _nice_ticks(low, high + (high - low) * headroom, 5) if high > low else _nice_ticks(0.0, 1.0, 5)
    return _Axis(ticks[0], ticks[-1], tuple((t, _number(t)) for t in ticks))


def _log10_axis(values: list[float]) -> _Axis:
    """Labels at the powers of ten; over less than two decades also at 2 and 5, the axis cut to the ticks around
    the data."""
    low, high = (min(values), max(values)) if values else (1.0, 10.0)
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
    if math.log10(high / low) >= 2:
        ticks = [10.0 ** k for k in range(lo, hi + 1)]
    else:
        steps = [m * 10.0 ** k for k in range(lo - 1, hi + 2) for m in (1, 2, 5)]
        first = max(i for i, t in enumerate(steps) if t <= low)
        last = min(i for i, t in enumerate(steps) if t >= high)
        if first == last:  # one value, on a tick: a tick either side of it
            first, last = first - 1, last + 1
        ticks = steps[first:last + 1]
    return _Axis(math.log10(ticks[0]), math.log10(ticks[-1]), tuple((t, _number(t)) for t in ticks), log=10)


def _x_axis(spec: ChartSpec, values: list[float], categories: int) -> _Axis:
    if spec.kind == "bars":
        return _Axis(-0.5, categories - 0.5, spec.x_ticks)
    ticks = spec.x_ticks
    if spec.x_log2:
        ticks = tuple((x, label) for x, label in ticks if x > 0)
        scaled = [math.log2(v) for v in [*values, *(x for x, _ in ticks)]] or [0.0]
        low, high = min(scaled), max(scaled)
        if not ticks:
            ticks = tuple((2.0 ** k, _number(2.0 ** k)) for k in range(math.floor(low), math.ceil(high) + 1))
        margin = (high - low) * 0.05 or 0.5
        return _Axis(low - margin, high + margin, ticks, log=2)
    if not ticks:  # a time series in seconds: from the start, in whole, round numbers
        found = _nice_ticks(min([0.0, *values]), max(values, default=1.0), 6, whole=True)
        margin = (found[-1] - found[0]) * 0.03  # no marker on the y axis
        return _Axis(found[0] - margin, found[-1] + margin, tuple((t, _number(t)) for t in found))
    every = [*values, *(x for x, _ in ticks)]
    low, high = min(every), max(every)
    margin = (high - low) * 0.05 or 0.5
    return _Axis(low - margin, high + margin, ticks)


def _nice_ticks(low: float, high: float, count: int, whole: bool = False) -> list[float]:
    """Ticks at multiples of 1, 2 or 5 times a power of ten, from at or below `low` to at or above `high`."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if raw <= m * power * (1 + 1e-9))
    if whole:
        step = max(step, 1.0)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    decimals = max(0, -math.floor(math.log10(step)))
    return [round(n * step, decimals) + 0.0 for n in range(first, last + 1)]  # + 0.0: never a "-0"


def _grid_and_axes(spec: ChartSpec, plot: _Plot, x_axis: _Axis, y_axis: _Axis, slanted: bool,
                   x_label_y: float) -> list[str]:
    bottom, right = plot.top + plot.height, plot.left + plot.width
    out = [f'<g stroke="{_GRID}" stroke-width="1">']
    for value, _ in y_axis.ticks:
        y = plot.y(y_axis, value)
        out.append(f'<line x1="{_f(plot.left)}" y1="{_f(y)}" x2="{_f(right)}" y2="{_f(y)}"/>')
    if spec.kind != "bars":
        for value, _ in x_axis.ticks:
            x = plot.x(x_axis, value)
            out.append(f'<line x1="{_f(x)}" y1="{_f(plot.top)}" x2="{_f(x)}" y2="{_f(bottom)}"/>')
    out.append(f'</g><g stroke="{_AXIS}" stroke-width="1">'
               f'<line x1="{_f(plot.left)}" y1="{_f(plot.top)}" x2="{_f(plot.left)}" y2="{_f(bottom)}"/>'
               f'<line x1="{_f(plot.left)}" y1="{_f(bottom)}" x2="{_f(right)}" y2="{_f(bottom)}"/>')
    for value, _ in y_axis.ticks:
        y = plot.y(y_axis, value)
        out.append(f'<line x1="{_f(plot.left - _TICK)}" y1="{_f(y)}" x2="{_f(plot.left)}" y2="{_f(y)}"/>')
    for value, _ in x_axis.ticks:
        x = plot.x(x_axis, value)
        out.append(f'<line x1="{_f(x)}" y1="{_f(bottom)}" x2="{_f(x)}" y2="{_f(bottom + _TICK)}"/>')
    out.append('</g><g class="y-ticks" text-anchor="end">')
    for value, label in y_axis.ticks:
        out.append(f'<text x="{_f(plot.left - _TICK - _GAP)}" y="{_f(plot.y(y_axis, value))}" '
                   f'dy="0.35em">{escape(label)}</text>')
    out.append("</g>")
    out.append(f'<g class="x-ticks" text-anchor="{"end" if slanted else "middle"}">')
    y = bottom + _TICK + _GAP
    for value, label in x_axis.ticks:
        x = plot.x(x_axis, value)
        turn = f' transform="rotate(-{_SLANT} {_f(x)} {_f(y)})"' if slanted else ""
        out.append(f'<text x="{_f(x)}" y="{_f(y)}" dy="0.8em"{turn}>{escape(label)}</text>')
    # The y axis' label stands beside its tick labels (the baseline of the turned text is its right edge).
    x, y = plot.left - _TICK - _GAP - max((_text_width(label) for _, label in y_axis.ticks), default=0) - 8, \
        plot.top + plot.height / 2
    out.append(f'</g><text class="x-label" x="{_f(plot.left + plot.width / 2)}" y="{_f(x_label_y)}" '
               f'text-anchor="middle">{escape(spec.x_label)}</text>'
               f'<text class="y-label" x="{_f(x)}" y="{_f(y)}" text-anchor="middle" '
               f'transform="rotate(-90 {_f(x)} {_f(y)})">{escape(spec.y_label)}</text>')
    return out


def _line_group(spec, i, points, plot, x_axis, y_axis) -> list[str]:
    colour = PALETTE[i % len(PALETTE)]
    name = spec.series[i].name
    xy = [(plot.x(x_axis, x), plot.y(y_axis, y)) for _, x, y in points]
    out = [f'<g id="{escape(spec.id)}-series-{i}" fill="{colour}">']
    if len(xy) > 1:
        path = " L".join(f"{_f(x)},{_f(y)}" for x, y in xy)
        out.append(f'<path d="M{path}" fill="none" stroke="{colour}" stroke-width="1.6" stroke-linejoin="round"/>')
    for (x, y), (_, value_x, value_y) in zip(xy, points):
        out.append(f'<use href="#{escape(spec.id)}-marker" x="{_f(x)}" y="{_f(y)}">'
                   f'<title>{escape(name)} · {escape(_x_text(spec, value_x))}: {_number(value_y)}</title></use>')
    out.append("</g>")
    return out


def _bar_group(spec, i, points, plot, x_axis, y_axis, labelled: bool, upright: bool) -> list[str]:
    colour = PALETTE[i % len(PALETTE)]
    count = max(len(spec.series), 1)
    width = 0.8 / count
    pixels = width * plot.width / (x_axis.hi - x_axis.lo)
    zero = plot.y(y_axis, min(max(0.0, y_axis.lo), y_axis.hi))
    name = spec.series[i].name
    out, labels = [f'<g id="{escape(spec.id)}-series-{i}" fill="{colour}">'], []
    for j, x, y in points:
        centre = plot.x(x_axis, x + (i - (count - 1) / 2) * width)
        top = plot.y(y_axis, y)
        out.append(f'<rect id="{escape(spec.id)}-series-{i}-bar-{j}" x="{_f(centre - pixels / 2)}" '
                   f'y="{_f(min(top, zero))}" width="{_f(pixels)}" height="{_f(abs(zero - top))}">'
                   f'<title>{escape(name)} · {escape(_x_text(spec, x))}: {_number(y)}</title></rect>')
        if labelled:
            above = min(top, zero) - 3
            turn = f' text-anchor="start" transform="rotate(-90 {_f(centre)} {_f(above)})" dy="0.35em"' if upright \
                else ' text-anchor="middle"'
            labels.append(f'<text x="{_f(centre)}" y="{_f(above)}"{turn}>{_number(y)}</text>')
    out.append("</g>")
    if labels:
        out.append(f'<g class="bar-labels" font-size="{_SMALL}">{"".join(labels)}</g>')
    return out


def _legend_fits_right(spec: ChartSpec) -> bool:
    widest = max((_text_width(s.name) for s in spec.series), default=0)
    return _LEGEND_SWATCH + widest <= _RIGHT_LEGEND_MAX and len(spec.series) * _LEGEND_ROW <= _PLOT_HEIGHT


def _legend_rows(spec: ChartSpec) -> list[list[tuple[int, object]]]:
    """The legend below the plot: as many columns as the widest entry allows, filled row by row."""
    columns = max(1, int((_WIDTH - 80) // _legend_column(spec)))
    entries = list(enumerate(spec.series))
    return [entries[n:n + columns] for n in range(0, len(entries), columns)]


def _legend_column(spec: ChartSpec) -> float:
    return _LEGEND_SWATCH + max((_text_width(s.name) for s in spec.series), default=0) + 18


def _legend(rows: Sequence[Sequence[tuple[int, object]]], spec: ChartSpec, left: float, top: float) -> list[str]:
    out = ['<g class="legend">']
    for r, row in enumerate(rows):
        y = top + r * _LEGEND_ROW
        for c, (i, series) in enumerate(row):
            x = left + c * _legend_column(spec)
            colour = PALETTE[i % len(PALETTE)]
            if spec.kind == "bars":
                out.append(f'<rect x="{_f(x)}" y="{_f(y - 5)}" width="16" height="10" fill="{colour}"/>')
            else:
                out.append(f'<line x1="{_f(x)}" y1="{_f(y)}" x2="{_f(x + 18)}" y2="{_f(y)}" stroke="{colour}" '
                           f'stroke-width="1.6"/><circle cx="{_f(x + 9)}" cy="{_f(y)}" r="3.2" fill="{colour}"/>')
            # A name too long for the chart's width is cut, with the whole of it as the entry's tooltip.
            room = int((_WIDTH - 4 - x - _LEGEND_SWATCH) / (_EM * _FONT))
            shown = series.name if len(series.name) <= room else series.name[:max(room - 1, 1)] + "…"
            out.append(f'<text x="{_f(x + _LEGEND_SWATCH)}" y="{_f(y)}" dy="0.35em">{escape(shown)}'
                       f'<title>{escape(series.name)}</title></text>')
    out.append("</g>")
    return out


def _x_text(spec: ChartSpec, x: float) -> str:
    """A point's x as its axis names it: the tick's label (a block size, a category), else the number."""
    return dict(spec.x_ticks).get(x, _number(x))


def _text_width(text: str, size: float = _FONT) -> float:
    return len(text) * _EM * size


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _number(value: float) -> str:
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.3g}"
