"""CrystalDiskMark's grid as a picture, to paste beside a CrystalDiskMark screenshot: the run's view (views.py, the
grid `run` prints) in MB/s, GB/s, IOPS or µs, each cell the best pass of a `--best-of` run, else the mean.

The figures are the view's own (views.pivot, with the view's value swapped for the unit's metric), never
recomputed here. The grid is a ChartSpec of kind "grid": a series per column, a point per row, so that the report
stamps its provenance footer and offers its downloads as for any chart.
"""

from collections.abc import Sequence
from dataclasses import replace

from disklab.report.html.charts import ChartSpec, SeriesSpec
from disklab.report.labels import record_labels
from disklab.report.metrics import REGISTRY
from disklab.report.views import pivot, stored_suite
from disklab.store.records import RunRecord

PUBLISHED_BY = "CrystalDiskMark"  # the views whose grid this draws (quick, desktop-mix)
# A unit: its metric in REGISTRY, the factor from that metric's figure, the format CrystalDiskMark shows it in.
GRID_UNITS = {
    "MB/s": ("mb_per_s", 1.0, "{:,.2f}"), "GB/s": ("mb_per_s", 1e-3, "{:,.3f}"),
    "IOPS": ("iops", 1.0, "{:,.2f}"), "us": ("lat_mean_us", 1.0, "{:,.2f}"),
}
DEFAULT_GRID_UNIT = "MB/s"
_LABEL_WIDTH, _CELL_WIDTH, _MIN_WIDTH, _ROW, _HEAD, _GAP = 150, 150, 720, 44, 26, 4
_LABEL_FILL, _CELL_FILL, _CELL_STROKE = "#2f6f3e", "#f7f7f2", "#9aa58f"


def grid_charts(records: Sequence[RunRecord], unit: str = DEFAULT_GRID_UNIT) -> list[ChartSpec]:
    """A grid per run whose suite's view reproduces CrystalDiskMark's."""
    metric, scale, _ = GRID_UNITS[unit]
    charts = []
    for record, label in zip(records, record_labels(records)):
        suite = stored_suite(record)
        if suite is None or suite.view is None or suite.view.published_by != PUBLISHED_BY:
            continue
        best_of = record.info.options.get("best_of")
        view = pivot(replace(suite, view=replace(suite.view, values=(metric,))), record.tests, "", best_of)
        trailer = f" {REGISTRY[metric].heading}" + (f" (best of {best_of})" if best_of else "")
        series = tuple(
            SeriesSpec(column.heading.removesuffix(trailer),
                       tuple((float(i), row[j].value * scale) for i, row in enumerate(view.cells)
                             if row[j].value is not None))
            for j, column in enumerate(view.columns))
        shown_unit = "µs" if unit == "us" else unit
        basis = f"best of {best_of} passes" if best_of else _mean(record)
        charts.append(ChartSpec(
            id=f"grid-run-{record.info.id}", kind="grid", title=f"{label} · {suite.name} · {basis} · {shown_unit}",
            caption=f"{PUBLISHED_BY}'s grid of the run in {shown_unit} ({basis})"
            + (" · MB/s = 10^6 bytes/s" if unit in ("MB/s", "GB/s") else "")
            + (" · mean latency of each test's I/O" if metric == "lat_mean_us" else ""),
            x_label="", y_label=shown_unit, series=series, x_ticks=tuple(enumerate(view.rows)),
            note=" · ".join(view.notes), metric=metric, runs=(record.info.id,),
        ))
    return charts


def _mean(record: RunRecord) -> str:
    passes = record.info.options.get("repeat", 1)
    return f"mean of {passes} passes" if passes > 1 else "one pass"


def grid_svg(spec: ChartSpec) -> str:
    """The grid as CrystalDiskMark lays it out: a row per test, a column per direction, the figure large in each
    cell; a cell's `data-value` holds its figure unrounded. Title, notes, direction and footer as every chart's."""
    from disklab.report.html.svg import escape, footer_texts, wrap

    columns, rows = len(spec.series), len(spec.x_ticks)
    cell = max(_CELL_WIDTH, (_MIN_WIDTH - 16 - _LABEL_WIDTH) / max(columns, 1) - _GAP)
    width = 16 + _LABEL_WIDTH + columns * (cell + _GAP)
    heading = [(line, True) for line in wrap(spec.title, 13 * 1.1)] + [(line, False) for line in wrap(spec.note, 11)]
    top = 12 + len(heading) * 18 + 6
    grid_bottom = top + _HEAD + rows * (_ROW + _GAP)
    footer = wrap(spec.footer, 9)
    height = grid_bottom + 8 + len(footer) * 12 + 6
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" '
           f'height="{height:.0f}" font-family="sans-serif" font-size="11" fill="#222" role="img">'
           f'<title>{escape(spec.title)}</title><rect width="100%" height="100%" fill="#fff"/>']
    for k, (text, title) in enumerate(heading):
        style = 'class="chart-title" font-size="13" font-weight="bold"' if title else \
            'class="chart-note" fill="#555"'
        out.append(f'<text {style} x="8" y="{12 + k * 18 + 11}">{escape(text)}</text>')
    direction = f" · {spec.y_better}" if spec.y_better else ""
    out.append(f'<text class="axis-direction" x="{8 + _LABEL_WIDTH / 2:.0f}" y="{top + _HEAD / 2:.0f}" dy="0.35em" '
               f'text-anchor="middle" font-size="9" fill="#555">{escape(spec.y_label + direction)}</text>')
    for j, series in enumerate(spec.series):
        x = 8 + _LABEL_WIDTH + _GAP + j * (cell + _GAP)
        out.append(f'<text class="grid-column" x="{x + cell / 2:.0f}" y="{top + _HEAD / 2:.0f}" dy="0.35em" '
                   f'text-anchor="middle" font-weight="bold">{escape(series.name)} ({escape(spec.y_label)})</text>')
    _, _, form = GRID_UNITS["us" if spec.y_label == "µs" else spec.y_label]
    for i, row in spec.x_ticks:
        y = top + _HEAD + i * (_ROW + _GAP)
        out.append(f'<rect x="8" y="{y:.0f}" width="{_LABEL_WIDTH}" height="{_ROW}" rx="3" fill="{_LABEL_FILL}"/>'
                   f'<text class="grid-row" x="{8 + _LABEL_WIDTH / 2:.0f}" y="{y + _ROW / 2:.0f}" dy="0.35em" '
                   f'text-anchor="middle" font-size="13" font-weight="bold" fill="#fff">{escape(row)}</text>')
        for j, series in enumerate(spec.series):
            x = 8 + _LABEL_WIDTH + _GAP + j * (cell + _GAP)
            value = dict(series.points).get(float(i))
            text = "n/a" if value is None else form.format(value)
            out.append(f'<rect x="{x:.0f}" y="{y:.0f}" width="{cell:.0f}" height="{_ROW}" rx="3" '
                       f'fill="{_CELL_FILL}" stroke="{_CELL_STROKE}"/>'
                       f'<text id="{escape(spec.id)}-cell-{i}-{j}" class="grid-value" '
                       f'data-value="{"" if value is None else repr(value)}" x="{x + cell - 10:.0f}" '
                       f'y="{y + _ROW / 2:.0f}" dy="0.35em" text-anchor="end" font-size="20">{text}</text>')
    out += footer_texts(footer, grid_bottom + 8 + 9)
    out.append("</svg>")
    return "".join(out)
