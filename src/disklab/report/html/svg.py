"""Chart specs -> inline SVG with matplotlib: text stays text, nothing is referenced outside the SVG.

Each series carries a stable id (`{chart}-series-{i}`, bars `{chart}-series-{i}-bar-{j}`), so that what a
browser shows can be counted from the SVG itself: a line's points are the <use> markers inside its group.
"""

import io
import re

from disklab.report.html.charts import ChartSpec

_WIDTH_IN, _HEIGHT_IN = 7.5, 3.4
_RC = {
    "svg.fonttype": "none",  # text as <text>, selectable and searchable, not paths
    "font.family": "sans-serif",
    "font.size": 8.5,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def render_svg(spec: ChartSpec) -> str:
    # matplotlib (and numpy under it) takes about a second to import: only the commands that draw pay for it.
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, NullFormatter

    matplotlib.use("Agg")  # no display; the figures are only ever written as SVG
    # The chart's id salts matplotlib's element ids: stable output, and no clash between charts on one page.
    with matplotlib.rc_context({**_RC, "svg.hashsalt": spec.id}):
        figure = Figure(figsize=(_WIDTH_IN, _HEIGHT_IN))
        axes = figure.add_subplot()
        if spec.kind == "bars":
            _bars(axes, spec)
        else:
            _lines(axes, spec)
        axes.set_xlabel(spec.x_label)
        axes.set_ylabel(spec.y_label)
        axes.yaxis.set_major_formatter(FuncFormatter(_number))
        axes.yaxis.set_minor_formatter(NullFormatter())  # log axes label only the powers of ten
        if not spec.y_log:
            tallest = max((y for series in spec.series for _, y in series.points), default=0)
            axes.set_ylim(0, tallest * 1.12 or 1)  # from zero, with room for the top marker or bar label
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]  # inline in HTML: no XML declaration or DOCTYPE
    # matplotlib names unnamed artists figure_1, line2d_3, ... in every SVG; on one page ids must be unique.
    return _GENERIC_ID.sub(lambda m: f' id="{spec.id}-{m[1]}"', text)


_GENERIC_ID = re.compile(r' id="((?:[a-z]+\.)?[a-z0-9]+_\d+)"')


def _lines(axes, spec: ChartSpec) -> None:
    from matplotlib.ticker import MaxNLocator, NullLocator

    for i, series in enumerate(spec.series):
        xs = [x for x, _ in series.points]
        ys = [y for _, y in series.points]
        (line,) = axes.plot(xs, ys, marker="o", markersize=4, linewidth=1.5, label=series.name)
        line.set_gid(f"{spec.id}-series-{i}")
    if spec.x_log2:
        axes.set_xscale("log", base=2)
        axes.xaxis.set_minor_locator(NullLocator())
    if spec.y_log:
        axes.set_yscale("log")
    if not spec.x_ticks:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        axes.set_xticks([x for x, _ in spec.x_ticks], [label for _, label in spec.x_ticks],
                        rotation=45 if len(spec.x_ticks) > 8 else 0, ha="right" if len(spec.x_ticks) > 8 else "center")


def _bars(axes, spec: ChartSpec) -> None:
    width = 0.8 / max(len(spec.series), 1)
    for i, series in enumerate(spec.series):
        offset = (i - (len(spec.series) - 1) / 2) * width
        bars = axes.bar([x + offset for x, _ in series.points], [y for _, y in series.points], width, label=series.name)
        for j, bar in enumerate(bars):
            bar.set_gid(f"{spec.id}-series-{i}-bar-{j}")
        if len(spec.series) <= 3:
            axes.bar_label(bars, labels=[_number(y) for _, y in series.points], fontsize=7, padding=2)
    axes.set_xticks([x for x, _ in spec.x_ticks], [label for _, label in spec.x_ticks])
    axes.grid(axis="x", visible=False)


def _number(value: float, _position=None) -> str:
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.3g}"
