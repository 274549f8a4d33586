"""Ranges drawn around a line that are not a mean's interval: a model's error band (capacity's predictions), where
the measured figure may lie. Shaded along the line in its colour, each point's range in its tooltip; the chart's
note says what the range is, since no n or confidence level goes with it (svg.py draws the intervals of means)."""

from disklab.report.html.axes import Axis, Plot, number
from disklab.report.html.charts import ChartSpec

Range = tuple[float, float]


def range_at(spec: ChartSpec, i: int, j: int) -> Range | None:
    ranges = spec.series[i].ranges
    return ranges[j] if j < len(ranges) else None


def extents(spec: ChartSpec) -> list[float]:
    """What the y axis must reach: every range's ends."""
    return [end for series in spec.series for found in series.ranges if found for end in found]


def shaded(spec: ChartSpec, i: int, placed: list[tuple[int, float]], plot: Plot, horizontal: Axis, vertical: Axis,
           colour: str) -> list[str]:
    """The band of series i along its drawn points (`placed`: each one's index and x), broken where a point has no
    range (a prediction out of the model's reach has no band, and none is drawn there)."""
    out, stretch = [], []
    for j, x in [*placed, (-1, 0.0)]:  # the sentinel closes the last stretch
        found = range_at(spec, i, j) if j >= 0 else None
        if found:
            stretch.append((plot.x(horizontal, x), plot.y(vertical, found[0]), plot.y(vertical, found[1])))
            continue
        if stretch:
            edge = [(x, high) for x, _, high in stretch] + [(x, low) for x, low, _ in reversed(stretch)]
            outline = " L".join(f"{px:.1f},{py:.1f}" for px, py in edge)
            out.append(f'<path class="range-band" data-series="{i}" d="M{outline} Z" fill="{colour}" '
                       'fill-opacity="0.18" stroke="none"/>' if len(stretch) > 1 else
                       f'<path class="range-band" data-series="{i}" d="M{outline}" stroke="{colour}" '
                       'stroke-opacity="0.5" stroke-width="6"/>')  # a lone point's range: a short thick bar
        stretch = []
    return out


def tooltip(spec: ChartSpec, i: int, j: int) -> str:
    found = range_at(spec, i, j)
    return f" (band {number(found[0])}-{number(found[1])})" if found else ""

