"""A heat map spec (kind "heatmap") -> inline SVG: a cell per row and column, coloured by its value, the value
written in it, and the colour scale beside the grid.

A spec's series are its rows (top to bottom), each point (column index, value); x_ticks name the columns; y_label
is the rows' name (heading their labels), then after " · " the figures' unit (heading the colour scale). Each
cell is a `rect.cell` in its row's group (`{chart}-series-{i}`, the cell `...-cell-{j}`) carrying its figure in
data-value, so that what is drawn can be read back; a pair without a figure is an empty cell. The colours are
viridis' (matplotlib's default), legible in grey and to colour-blind readers; on a log scale (spec.y_log) the
colour follows the value's logarithm.
"""

import math

from disklab.report.html import flag_marks
from disklab.report.html.axes import number, text_width
from disklab.report.html.charts import ChartSpec
from disklab.report.html.svg import (
    _FONT, _SMALL, _TITLE, _TITLE_EM, _WIDTH, _f, _heading_texts, escape, footer_texts, wrap,
)

_VIRIDIS = ((0x44, 0x01, 0x54), (0x3b, 0x52, 0x8b), (0x21, 0x91, 0x8c), (0x5e, 0xc9, 0x62), (0xfd, 0xe7, 0x25))
_DARK_TEXT_FROM = 0.6  # cells above this share of the scale are light: their figure is written in dark ink
_CELL_HEIGHT, _MAX_GRID_HEIGHT, _SCALE_WIDTH = 30, 300, 14
_EMPTY = "#f3f3f3"


def render_heatmap(spec: ChartSpec) -> str:
    columns = len(spec.x_ticks)
    values = [y for series in spec.series for _, y in series.points if _shown(y, spec)]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    heading = [(line, True) for line in wrap(spec.title, _TITLE * _TITLE_EM)] + [
        (line, False) for line in (wrap(spec.note, _FONT) if spec.note else [])]
    rows_name, _, unit = spec.y_label.rpartition(" · ")
    row_labels = max(text_width(name) for name in (rows_name, *(s.name for s in spec.series)))
    scale_labels = max((text_width(number(v)) for v in (low, high)), default=0)
    left = 8 + row_labels + 6
    top = 12 + len(heading) * (_TITLE + 5) + 8 + _FONT  # the colour scale's unit above the grid's top
    room = _WIDTH - left - 20 - _SCALE_WIDTH - 6 - scale_labels - 12
    width = room / max(columns, 1)
    height = min(_CELL_HEIGHT, _MAX_GRID_HEIGHT / max(len(spec.series), 1))
    grid_height = height * len(spec.series)
    footer = wrap(spec.footer, _SMALL)
    notes_y = top + grid_height + 6 + _FONT + 8 + _FONT + 10
    bottom = notes_y + flag_marks.notes_height(spec)
    total = bottom + len(footer) * (_SMALL + 3) + 4 * bool(footer)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_f(total)}" width="{_WIDTH}" '
           f'height="{_f(total)}" font-family="sans-serif" font-size="{_FONT}" fill="#222" role="img">'
           f'<title>{escape(spec.title)}</title>', _gradient(spec.id), flag_marks.defs(spec)]
    out += _heading_texts(heading)
    for i, series in enumerate(spec.series):
        by_column = dict(series.points)
        spreads = dict(zip((x for x, _ in series.points), series.spreads or (None,) * len(series.points)))
        index = {x: k for k, (x, _) in enumerate(series.points)}  # a cell's point, for its flags
        y = top + i * height
        out.append(f'<g id="{escape(spec.id)}-series-{i}">')
        for j in range(columns):
            x, value = left + j * width, by_column.get(float(j))
            cell = f'{escape(spec.id)}-series-{i}-cell-{j}'
            place = f'x="{_f(x)}" y="{_f(y)}" width="{_f(width)}" height="{_f(height)}"'
            box = f'{place} stroke="#fff"'
            if not _shown(value, spec):
                out.append(f'<rect class="cell empty" id="{cell}" {box} fill="{_EMPTY}"><title>'
                           f'{escape(series.name)} · {escape(spec.x_ticks[j][1])}: not measured</title></rect>')
                continue
            share = _share(value, low, high, spec.y_log)
            tip = f"{series.name} · {spec.x_ticks[j][1]}: {number(value)}" + _interval(spreads.get(float(j))) \
                + flag_marks.tooltip(spec, i, index[float(j)])
            flags = flag_marks.flags_at(spec, i, index[float(j)])
            out.append(f'<rect class="cell" id="{cell}" {box} fill="{_colour(share)}" data-value="{value!r}">'
                       f'<title>{escape(tip)}</title></rect>' + flag_marks.hatch(spec, i, index[float(j)], place)
                       + f'<text class="cell-value" x="{_f(x + width / 2)}" y="{_f(y + height / 2)}" dy="0.35em" '
                       f'text-anchor="middle" fill="{"#222" if share >= _DARK_TEXT_FROM else "#fff"}"'
                       + (f' stroke="{_colour(share)}" stroke-width="3" paint-order="stroke"' if flags else "")
                       + f'>{number(value)}{" " * bool(flags)}{flag_marks.mark(spec, flags)}</text>')
        out.append("</g>")
    out += _axes(spec, rows_name, left, top, width, height)
    out += _scale(spec, unit, left + columns * width + 20, top, grid_height, low, high)
    out += flag_marks.notes(spec, 8, notes_y, _WIDTH - 12, hatched=True)
    out += footer_texts(footer, bottom + _SMALL)
    out.append("</svg>")
    return "".join(out)


def _shown(value: float | None, spec: ChartSpec) -> bool:
    return value is not None and math.isfinite(value) and (value > 0 or not spec.y_log)


def _share(value: float, low: float, high: float, log: bool) -> float:
    """Where a value sits on the colour scale, 0 to 1."""
    if log:
        value, low, high = math.log10(value), math.log10(low), math.log10(high)
    # Halved first: the span of figures near a float's limits (1e308 and -1e308) would overflow to inf.
    return (value / 2 - low / 2) / (high / 2 - low / 2) if high > low else 0.5


def _colour(share: float) -> str:
    position = min(max(share, 0.0), 1.0) * (len(_VIRIDIS) - 1)
    k = min(int(position), len(_VIRIDIS) - 2)
    a, b, t = _VIRIDIS[k], _VIRIDIS[k + 1], position - k
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


def _interval(spread) -> str:
    if spread is None or spread.n < 2 or spread.ci95_half_width is None:
        return ""
    return f" ± {number(spread.ci95_half_width)} (95 % interval, mean of n = {spread.n})"


def _gradient(chart_id: str) -> str:
    stops = "".join(f'<stop offset="{k / (len(_VIRIDIS) - 1):g}" stop-color="{_colour(k / (len(_VIRIDIS) - 1))}"/>'
                    for k in range(len(_VIRIDIS)))
    return f'<defs><linearGradient id="{escape(chart_id)}-scale" x1="0" y1="1" x2="0" y2="0">{stops}' \
           '</linearGradient></defs>'


def _axes(spec: ChartSpec, rows_name: str, left: float, top: float, width: float, height: float) -> list[str]:
    """The rows' and the columns' labels; the rows' name heads their labels (a turned one would not fit two rows)."""
    bottom = top + height * len(spec.series)
    out = ['<g class="y-ticks" text-anchor="end">']
    out += [f'<text x="{_f(left - 6)}" y="{_f(top + (i + 0.5) * height)}" dy="0.35em">{escape(s.name)}</text>'
            for i, s in enumerate(spec.series)]
    out.append('</g><g class="x-ticks" text-anchor="middle">')
    out += [f'<text x="{_f(left + (j + 0.5) * width)}" y="{_f(bottom + 6)}" dy="0.8em">{escape(label)}</text>'
            for j, (_, label) in enumerate(spec.x_ticks)]
    out.append(f'</g><text class="x-label" x="{_f(left + width * len(spec.x_ticks) / 2)}" '
               f'y="{_f(bottom + 6 + _FONT + 8 + _FONT)}" text-anchor="middle">{escape(spec.x_label)}</text>'
               f'<text class="y-label" x="{_f(left - 6)}" y="{_f(top - 6)}" text-anchor="end">{escape(rows_name)}</text>')
    return out


def _scale(spec: ChartSpec, unit: str, x: float, top: float, height: float, low: float, high: float) -> list[str]:
    """The colour legend: the gradient from the lowest figure (bottom) to the highest (top), both written."""
    middle = math.sqrt(low * high) if spec.y_log and low > 0 else (low + high) / 2
    labels = [(top + height, low), (top + height / 2, middle), (top, high)] if high > low else [(top + height / 2, low)]
    out = [f'<g class="colour-scale"><text x="{_f(x)}" y="{_f(top - 6)}">{escape(unit)}</text><rect x="{_f(x)}" y="{_f(top)}" width="{_SCALE_WIDTH}" height="{_f(height)}" '
           f'fill="url(#{escape(spec.id)}-scale)"/>']
    out += [f'<text x="{_f(x + _SCALE_WIDTH + 4)}" y="{_f(y)}" dy="0.35em">{number(v)}</text>' for y, v in labels]
    out.append("</g>")
    return out
