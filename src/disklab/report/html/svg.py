"""Chart specs -> inline SVG, drawn in plain Python: text stays <text>, nothing is referenced outside the SVG.

A chart's SVG stands alone: its title, axis names with their units and which way is better, legend, the note on
its error bars and its provenance footer are inside it, so a chart copied or downloaded out of the report still
says what it shows.
Each series carries a stable id (`{chart}-series-{i}`, bars `{chart}-series-{i}-bar-{j}`), so that what a
browser shows can be counted from the SVG itself: a line's points are the <use> markers inside its group; the
95 % intervals of means of repeats are the `error-bar` lines (or `error-band` paths) of `error-bars` groups;
a marked value (ChartSpec.references) is a `reference` group `{chart}-reference-{k}` holding its value in data-value.
Every id starts with the chart's id, so that charts share a page. Every string is escaped here. A point that
is not a finite number (or not positive, on a log x axis) has no place on the chart and is left out, never
drawn as some other value; a value at or below zero on a log y axis sits on the axis' bottom edge.
"""

import math
from collections.abc import Sequence

from disklab.analysis.stats import Summary
from disklab.report.html import flag_marks, range_bands
from disklab.report.html.axes import (
    Axis, Plot, escape, minor_ticks, number, placeable, text_width, x_axis, y_axis,
)
from disklab.report.html.charts import ChartSpec, Reference


# matplotlib's tab10 palette: ten colours, so at most ten lines in one chart (charts.MAX_LINES).
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_WIDTH, _PLOT_HEIGHT = 720, 250  # viewBox units; the page scales the whole (CSS width 100%)
_FONT, _SMALL, _TITLE = 11, 9, 13
_TITLE_EM = 0.68 / 0.62  # bold glyphs are wider than text_width's estimate
_TICK, _GAP = 4, 4
_SLANT = 35  # degrees: x tick labels too wide for their room turn this much
_LEGEND_SWATCH, _LEGEND_ROW = 24, 17
_RIGHT_LEGEND_MAX = 210  # a wider legend goes below the plot, where it may wrap
_CAP = 4  # half the width of an error bar's caps
_INK, _AXIS, _GRID, _MINOR, _MUTED = "#222", "#555", "#e4e4e4", "#f3f3f3", "#555"

Point = tuple[int, float, float, Summary | None]  # index in the series, x, y, the repeats' summary (n > 1) or None


def render_svg(spec: ChartSpec) -> str:
    """One chart as an <svg> element to inline in the report."""
    if spec.kind in ("heatmap", "grid"):  # not plots: heatmap.py and grid.py draw them with this module's parts
        from disklab.report.html import grid, heatmap
        return (heatmap.render_heatmap if spec.kind == "heatmap" else grid.grid_svg)(spec)
    points = [_drawable(spec, series) for series in spec.series]
    legend_right = _legend_fits_right(spec)
    right = 14 + _LEGEND_SWATCH + 6 + max((text_width(s.name) for s in spec.series), default=0) if legend_right else 12
    bars = spec.kind == "bars"
    categories = max([1, len(spec.x_ticks), *(int(x) + 1 for series in points for _, x, _, _ in series)]) if bars else 0
    bar_labels, upright, headroom = _bar_labels(spec, points, (_WIDTH - right - 70) / max(categories, 1))
    heading = _heading(spec, points)
    vertical = y_axis(spec, [v for series in points for p in series for v in _extent(p)] + _marked(spec, "y")
                      + range_bands.extents(spec), headroom)
    horizontal = x_axis(spec, [x for series in points for _, x, _, _ in series] + _marked(spec, "x"), categories)
    left = 8 + _FONT + 8 + max((text_width(label) for _, label in vertical.ticks), default=0) + _TICK + _GAP
    top = 12 + len(heading) * (_TITLE + 5) + 4 + (_SMALL + 6) * bool(spec.y_better)
    plot = Plot(left, top, _WIDTH - right - left, _PLOT_HEIGHT)
    x_positions = [plot.x(horizontal, value) for value, _ in horizontal.ticks]
    room = min((b - a for a, b in zip(x_positions, x_positions[1:])), default=plot.width)
    longest = max((text_width(label) for _, label in horizontal.ticks), default=0)
    slanted = longest > room - 2  # labels that would touch their neighbours turn
    if slanted and horizontal.ticks:  # and the first one, hanging left of its tick, must stay inside the chart
        first = horizontal.fraction(horizontal.ticks[0][0])
        hangs = text_width(horizontal.ticks[0][1]) * math.cos(math.radians(_SLANT)) + 4
        left = max(left, (hangs - first * (_WIDTH - right)) / (1 - first)) if first < 1 else left
        plot = Plot(left, plot.top, _WIDTH - right - left, plot.height)
    x_label_y = plot.top + plot.height + _TICK + _GAP + (longest * 0.5 + _FONT if slanted else _FONT) + _GAP + _FONT
    legend_rows = [[entry] for entry in enumerate(spec.series)] if legend_right else _legend_rows(spec)
    height = x_label_y + 8 + (0 if legend_right else len(legend_rows) * _LEGEND_ROW + 6 * bool(legend_rows))
    notes_y, height = height, height + flag_marks.notes_height(spec)
    footer = wrap(spec.footer, _SMALL)
    footer_y, height = height + _SMALL, height + len(footer) * (_SMALL + 3) + 4 * bool(footer)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_f(height)}" width="{_WIDTH}" '
           f'height="{_f(height)}" font-family="sans-serif" font-size="{_FONT}" fill="{_INK}" role="img">'
           f'<title>{escape(spec.title)}</title>']
    if not bars:
        out.append(f'<defs><circle id="{escape(spec.id)}-marker" r="3.2"/></defs>')
    out.append(flag_marks.defs(spec))
    out += _heading_texts(heading)
    out += _grid_and_axes(spec, plot, horizontal, vertical, slanted, x_label_y)
    for i, series in enumerate(points):
        if bars:
            out += _bar_group(spec, i, series, plot, horizontal, vertical, bar_labels, upright)
        else:
            out += _line_group(spec, i, series, plot, horizontal, vertical)
    out += _references(spec, plot, horizontal, vertical)
    if legend_right:
        out += _legend(legend_rows, spec, plot.left + plot.width + 14, plot.top + 6)
    else:
        out += _legend(legend_rows, spec, plot.left, x_label_y + 8 + _LEGEND_ROW / 2)
    out += flag_marks.notes(spec, 8, notes_y, _WIDTH - 12, hatched=bars)
    if spec.y_better:  # above the y axis, as OpenBenchmarking prints it
        arrow = "▲" if spec.y_better.startswith("higher") else "▼"
        out.append(f'<text class="axis-direction" x="{_f(plot.left)}" y="{_f(plot.top - 6)}" font-size="{_SMALL}" '
                   f'fill="{_MUTED}">{arrow} {escape(spec.y_better)}</text>')
    out += footer_texts(footer, footer_y)
    out.append("</svg>")
    return "".join(out)


def _drawable(spec: ChartSpec, series) -> list[Point]:
    """The points that have a place on the chart; the index keeps bar ids stable."""
    spreads = series.spreads or (None,) * len(series.points)
    return [(j, float(x), float(y), _interval(spread)) for j, ((x, y), spread) in enumerate(zip(series.points, spreads))
            if x is not None and y is not None and placeable(x, spec.x_log2 or spec.x_log10) and placeable(y, False)]


def _marked(spec: ChartSpec, axis: str) -> list[float]:
    """The reference values on one axis that have a place on it."""
    return [r.value for r in spec.references if r.axis == axis and _placed(spec, r)]


def _placed(spec: ChartSpec, ref: Reference) -> bool:
    """As _drawable's points: a value the axis can show (axes.placeable)."""
    return placeable(ref.value, spec.x_log2 if ref.axis == "x" else spec.y_log)


def _references(spec: ChartSpec, plot: Plot, horizontal: Axis, vertical: Axis) -> list[str]:
    """Marked values (a knee, a bound, a band's edges): dashed lines across the plot, each labelled at its end, the
    value it marks kept in data-value."""
    out = []
    bottom, right = plot.top + plot.height, plot.left + plot.width
    for k, ref in enumerate(spec.references):
        if not _placed(spec, ref):
            continue
        if ref.axis == "x":
            x = plot.x(horizontal, ref.value)
            line = f'x1="{_f(x)}" y1="{_f(plot.top)}" x2="{_f(x)}" y2="{_f(bottom)}"'
            anchor = "end" if horizontal.fraction(ref.value) > 0.6 else "start"
            place = f'x="{_f(x - 3 if anchor == "end" else x + 3)}" y="{_f(plot.top + _SMALL)}" text-anchor="{anchor}"'
        else:
            y = plot.y(vertical, ref.value)
            line = f'x1="{_f(plot.left)}" y1="{_f(y)}" x2="{_f(right)}" y2="{_f(y)}"'
            place = f'x="{_f(right - 3)}" y="{_f(y - 3)}" text-anchor="end"'
        out.append(f'<g class="reference" id="{escape(spec.id)}-reference-{k}" data-axis="{ref.axis}" '
                   f'data-value="{ref.value!r}"><line {line} stroke="{_INK}" stroke-width="1" stroke-dasharray="5 3"/>'
                   f'<text {place} font-size="{_SMALL}" stroke="#fff" stroke-width="3" paint-order="stroke">'
                   f'{escape(ref.label)}</text></g>')
    return out


def _interval(spread: Summary | None) -> Summary | None:
    """Only a mean of n > 1 repeats with a finite interval gets an error bar."""
    if spread is None or spread.n < 2 or spread.ci95_half_width is None or not math.isfinite(spread.ci95_half_width):
        return None
    return spread


def _extent(point: Point) -> tuple[float, ...]:
    """What the y axis must reach for a point: the point, and its error bar's ends."""
    _, _, y, spread = point
    return (y,) if spread is None else (y, *_ends(y, spread))


def _ends(y: float, spread: Summary) -> tuple[float, float]:
    """The interval's ends as drawn: a figure at or above zero (IOPS, MB/s, µs) cannot be negative, so an interval
    wider than its mean stops at zero; the tooltip keeps its true width."""
    low = y - spread.ci95_half_width
    return (low if y < 0 else max(low, 0.0)), y + spread.ci95_half_width


def _heading(spec: ChartSpec, points: list[list[Point]]) -> list[tuple[str, bool]]:
    """The title's lines, then the notes' (the chart's own, and the error bars'), wrapped to the chart's width:
    (text, is the title)."""
    notes = [spec.note] if spec.note else []
    ns = sorted({p[3].n for series in points for p in series if p[3] is not None})
    if ns:
        n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
        shape = "shaded band" if spec.bands and spec.kind == "line" else "error bars"
        single = any(p[3] is None for series in points for p in series)  # a run that did not repeat the test
        notes.append(f"mean of n = {n} {spec.sample} · {shape}: 95 % confidence interval of the mean"
                     + (" · without: a single run" if single else ""))
    return [(line, True) for line in wrap(spec.title, _TITLE * _TITLE_EM)] + [
        (line, False) for note in notes for line in wrap(note, _FONT)]


def footer_texts(lines: Sequence[str], top: float) -> list[str]:
    """The provenance footer (provenance.py), small and muted under everything else."""
    return [f'<text class="chart-provenance" x="8" y="{_f(top + k * (_SMALL + 3))}" font-size="{_SMALL}" '
            f'fill="{_MUTED}">{escape(line)}</text>' for k, line in enumerate(lines)]


def wrap(text: str, size: float) -> list[str]:
    lines, line = [], ""
    for word in text.split(" "):
        if line and text_width(f"{line} {word}", size) > _WIDTH - 20:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


def _heading_texts(heading: list[tuple[str, bool]]) -> list[str]:
    out = []
    for k, (text, title) in enumerate(heading):
        y = 12 + k * (_TITLE + 5) + _TITLE * 0.8
        style = f'class="chart-title" font-size="{_TITLE}" font-weight="bold"' if title else \
            f'class="chart-note" font-size="{_FONT}" fill="{_MUTED}"'
        out.append(f'<text {style} x="8" y="{_f(y)}">{escape(text)}</text>')
    return out


def _bar_labels(spec: ChartSpec, points, category_width: float) -> tuple[bool, bool, float]:
    """Whether bars carry their values, whether those stand upright (too wide for a bar), and the headroom
    (a fraction of the plot's height) the y axis keeps above the data for them or for the markers."""
    labelled = spec.kind == "bars" and 0 < len(spec.series) <= 3
    widest = max((text_width(number(y), _SMALL) for series in points for _, _, y, _ in series), default=0)
    upright = labelled and widest > category_width * 0.8 / len(spec.series)
    return labelled, upright, (widest + 6 if upright else _SMALL + 8 if labelled else 6) / _PLOT_HEIGHT


def _grid_and_axes(spec: ChartSpec, plot: Plot, horizontal: Axis, vertical: Axis, slanted: bool,
                   x_label_y: float) -> list[str]:
    bottom, right = plot.top + plot.height, plot.left + plot.width
    out = [f'<g stroke="{_MINOR}" stroke-width="1">']
    for value in minor_ticks(vertical):
        y = plot.y(vertical, value)
        out.append(f'<line x1="{_f(plot.left)}" y1="{_f(y)}" x2="{_f(right)}" y2="{_f(y)}"/>')
    out.append(f'</g><g stroke="{_GRID}" stroke-width="1">')
    for value, _ in vertical.ticks:
        y = plot.y(vertical, value)
        out.append(f'<line x1="{_f(plot.left)}" y1="{_f(y)}" x2="{_f(right)}" y2="{_f(y)}"/>')
    if spec.kind != "bars":
        for value, _ in horizontal.ticks:
            x = plot.x(horizontal, value)
            out.append(f'<line x1="{_f(x)}" y1="{_f(plot.top)}" x2="{_f(x)}" y2="{_f(bottom)}"/>')
    out.append(f'</g><g stroke="{_AXIS}" stroke-width="1">'
               f'<line x1="{_f(plot.left)}" y1="{_f(plot.top)}" x2="{_f(plot.left)}" y2="{_f(bottom)}"/>'
               f'<line x1="{_f(plot.left)}" y1="{_f(bottom)}" x2="{_f(right)}" y2="{_f(bottom)}"/>')
    for value, _ in vertical.ticks:
        y = plot.y(vertical, value)
        out.append(f'<line x1="{_f(plot.left - _TICK)}" y1="{_f(y)}" x2="{_f(plot.left)}" y2="{_f(y)}"/>')
    for value, _ in horizontal.ticks:
        x = plot.x(horizontal, value)
        out.append(f'<line x1="{_f(x)}" y1="{_f(bottom)}" x2="{_f(x)}" y2="{_f(bottom + _TICK)}"/>')
    out.append('</g><g class="y-ticks" text-anchor="end">')
    for value, label in vertical.ticks:
        out.append(f'<text x="{_f(plot.left - _TICK - _GAP)}" y="{_f(plot.y(vertical, value))}" '
                   f'dy="0.35em">{escape(label)}</text>')
    out.append("</g>")
    out.append(f'<g class="x-ticks" text-anchor="{"end" if slanted else "middle"}">')
    y = bottom + _TICK + _GAP
    for value, label in horizontal.ticks:
        x = plot.x(horizontal, value)
        turn = f' transform="rotate(-{_SLANT} {_f(x)} {_f(y)})"' if slanted else ""
        out.append(f'<text x="{_f(x)}" y="{_f(y)}" dy="0.8em"{turn}>{escape(label)}</text>')
    # The y axis' label stands beside its tick labels (the baseline of the turned text is its right edge).
    x, y = plot.left - _TICK - _GAP - max((text_width(label) for _, label in vertical.ticks), default=0) - 8, \
        plot.top + plot.height / 2
    out.append(f'</g><text class="x-label" x="{_f(plot.left + plot.width / 2)}" y="{_f(x_label_y)}" '
               f'text-anchor="middle">{escape(spec.x_label)}</text>'
               f'<text class="y-label" x="{_f(x)}" y="{_f(y)}" text-anchor="middle" '
               f'transform="rotate(-90 {_f(x)} {_f(y)})">{escape(spec.y_label)}</text>')
    return out


def _line_group(spec, i, points: list[Point], plot, horizontal, vertical) -> list[str]:
    colour = PALETTE[i % len(PALETTE)]
    xy = [(plot.x(horizontal, x), plot.y(vertical, y)) for _, x, y, _ in points]
    out = range_bands.shaded(spec, i, [(j, x) for j, x, _, _ in points], plot, horizontal, vertical, colour)
    out += _line_errors(spec, i, points, plot, horizontal, vertical)
    out.append(f'<g id="{escape(spec.id)}-series-{i}" fill="{colour}">')
    if len(xy) > 1:
        path = " L".join(f"{_f(x)},{_f(y)}" for x, y in xy)
        out.append(f'<path d="M{path}" fill="none" stroke="{colour}" stroke-width="1.6" stroke-linejoin="round"'
                   f'{flag_marks.dashed(spec, i)}/>')
    for k, ((x, y), point) in enumerate(zip(xy, points)):
        out.append(f'<use href="#{escape(spec.id)}-marker" x="{_f(x)}" y="{_f(y)}">'
                   f'<title>{escape(_tooltip(spec, i, point))}</title></use>')
    out.append("</g>")
    out += flag_marks.rings(spec, i, [(j, x, y) for (x, y), (j, _, _, _) in zip(xy, points)])
    return out


def _line_errors(spec, i, points: list[Point], plot, horizontal, vertical) -> list[str]:
    """The 95 % intervals of a line's means: a bar with caps at each point, or a band along many points."""
    shown = [p for p in points if p[3] is not None]
    if not shown:
        return []
    colour = PALETTE[i % len(PALETTE)]
    out = [f'<g class="error-bars" data-series="{i}" stroke="{colour}" fill="{colour}">']
    if spec.bands:
        ends = [_ends(y, s) if s else (y, y) for _, _, y, s in points]  # a single figure: no width there
        upper = [(plot.x(horizontal, x), plot.y(vertical, high)) for (_, x, _, _), (_, high) in zip(points, ends)]
        lower = [(plot.x(horizontal, x), plot.y(vertical, low)) for (_, x, _, _), (low, _) in zip(points, ends)]
        outline = " L".join(f"{_f(x)},{_f(y)}" for x, y in [*upper, *reversed(lower)])
        out.append(f'<path class="error-band" d="M{outline} Z" fill-opacity="0.18" stroke="none"/>')
    else:
        for _, x, y, spread in shown:
            low, high = _ends(y, spread)
            out.append(_error_bar(plot.x(horizontal, x), plot.y(vertical, low), plot.y(vertical, high)))
    out.append("</g>")
    return out


def _error_bar(x: float, low: float, high: float) -> str:
    """An I from `low` to `high` (page y), as one path so that it counts as one element."""
    return (f'<path class="error-bar" d="M{_f(x - _CAP)},{_f(high)} H{_f(x + _CAP)} M{_f(x)},{_f(high)} '
            f'V{_f(low)} M{_f(x - _CAP)},{_f(low)} H{_f(x + _CAP)}" fill="none" stroke-width="1.2"/>')


def _bar_group(spec, i, points: list[Point], plot, horizontal, vertical, labelled: bool, upright: bool) -> list[str]:
    colour = PALETTE[i % len(PALETTE)]
    count = max(len(spec.series), 1)
    width = 0.8 / count
    pixels = width * plot.width / (horizontal.hi - horizontal.lo)
    # Bars grow from zero; on a log axis, which has no zero, from its bottom edge.
    zero = plot.top + plot.height if vertical.log else plot.y(vertical, min(max(0.0, vertical.lo), vertical.hi))
    out, errors, labels, hatches = [f'<g id="{escape(spec.id)}-series-{i}" fill="{colour}">'], [], [], []
    for point in points:
        j, x, y, spread = point
        centre = plot.x(horizontal, x + (i - (count - 1) / 2) * width)
        top = plot.y(vertical, y)
        box = f'x="{_f(centre - pixels / 2)}" y="{_f(min(top, zero))}" width="{_f(pixels)}" ' \
              f'height="{_f(abs(zero - top))}"'
        out.append(f'<rect id="{escape(spec.id)}-series-{i}-bar-{j}" {box}>'
                   f'<title>{escape(_tooltip(spec, i, point))}</title></rect>')
        hatches.append(flag_marks.hatch(spec, i, j, box))
        above = min(top, zero) - 3
        if spread is not None:
            low, high = (plot.y(vertical, end) for end in _ends(y, spread))
            errors.append(_error_bar(centre, low, high))
            above = min(above, high - 3)
        if labelled:
            turn = f' text-anchor="start" transform="rotate(-90 {_f(centre)} {_f(above)})" dy="0.35em"' if upright \
                else ' text-anchor="middle"'
            mark = flag_marks.mark(spec, flag_marks.flags_at(spec, i, j))
            labels.append(f'<text x="{_f(centre)}" y="{_f(above)}"{turn}>{number(y)}{" " * bool(mark)}{mark}</text>')
    out += ["</g>", *hatches]
    if errors:  # dark on the bar, so that the part inside it shows
        out.append(f'<g class="error-bars" data-series="{i}" stroke="{_INK}">{"".join(errors)}</g>')
    if labels:
        out.append(f'<g class="bar-labels" font-size="{_SMALL}">{"".join(labels)}</g>')
    return out


def _tooltip(spec: ChartSpec, i: int, point: Point) -> str:
    j, x, y, spread = point
    text = f"{spec.series[i].name} · {_x_text(spec, x)}: {number(y)}"
    if spread is not None:
        share = "" if spread.ci95_percent is None else f"{spread.ci95_percent:.1f} %, "  # as the tables' +/-
        text += f" ± {number(spread.ci95_half_width)} ({share}95 % interval, mean of n = {spread.n})"
    return text + range_bands.tooltip(spec, i, j) + flag_marks.tooltip(spec, i, j)


def _legend_fits_right(spec: ChartSpec) -> bool:
    widest = max((text_width(s.name) for s in spec.series), default=0)
    return _LEGEND_SWATCH + widest <= _RIGHT_LEGEND_MAX and len(spec.series) * _LEGEND_ROW <= _PLOT_HEIGHT


def _legend_rows(spec: ChartSpec) -> list[list[tuple[int, object]]]:
    """The legend below the plot: as many columns as the widest entry allows, filled row by row."""
    columns = max(1, int((_WIDTH - 80) // _legend_column(spec)))
    entries = list(enumerate(spec.series))
    return [entries[n:n + columns] for n in range(0, len(entries), columns)]


def _legend_column(spec: ChartSpec) -> float:
    return _LEGEND_SWATCH + max((text_width(s.name) for s in spec.series), default=0) + 18


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
                           f'stroke-width="1.6"{flag_marks.dashed(spec, i)}/>'
                           f'<circle cx="{_f(x + 9)}" cy="{_f(y)}" r="3.2" fill="{colour}"/>')
            # A name too long for the chart's width is cut, with the whole of it as the entry's tooltip.
            room = int((_WIDTH - 4 - x - _LEGEND_SWATCH) / text_width("x"))
            shown = series.name if len(series.name) <= room else series.name[:max(room - 1, 1)] + "…"
            out.append(f'<text x="{_f(x + _LEGEND_SWATCH)}" y="{_f(y)}" dy="0.35em">{escape(shown)}'
                       f'<title>{escape(series.name)}</title></text>')
    out.append("</g>")
    return out


def _x_text(spec: ChartSpec, x: float) -> str:
    """A point's x as its axis names it: the tick's label (a block size, a category), else the number."""
    return dict(spec.x_ticks).get(x, number(x))


def _f(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")
