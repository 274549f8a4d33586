"""The axes of a chart: which range each shows, where its ticks go and how they are labelled.

Linear axes step by 1, 2 or 5 times a power of ten; time axes by whole seconds; log axes label the powers of ten
(1, 10, 100, 1k, 10k ...) and, over less than two decades, 2 and 5 between them.
"""

import html
import math
from dataclasses import dataclass

from disklab.report.html.charts import ChartSpec
from disklab.report.terminal import terminal_text

_FONT = 11
_EM = 0.62  # average glyph width in ems of a wide sans-serif (DejaVu Sans): text widths are estimated, not measured
LIMIT = 1e300  # past any figure a disk gives: an axis reaching a float's limit (1.8e308) overflows its ticks


@dataclass(frozen=True)
class Axis:
    """One axis: the range it shows, its ticks, and how values map onto it (plain, log2 or log10)."""

    lo: float  # in scale units (log2 or log10 of the value on log axes)
    hi: float
    ticks: tuple[tuple[float, str], ...]  # (value, label)
    log: int | None = None  # the logarithm's base

    def scaled(self, value: float) -> float:
        if self.log is None:
            return value
        if value <= 0:
            return self.lo  # only the y axis gets here: its bottom edge (see svg.py's docstring)
        return math.log10(value) if self.log == 10 else math.log2(value)

    def fraction(self, value: float) -> float:
        return (self.scaled(value) - self.lo) / (self.hi - self.lo)


@dataclass(frozen=True)
class Plot:
    left: float
    top: float
    width: float
    height: float

    def x(self, axis: Axis, value: float) -> float:
        return self.left + axis.fraction(value) * self.width

    def y(self, axis: Axis, value: float) -> float:
        # Clipped to the plot: a value past the axis' end (a shared range cut by hand) stays on its edge.
        return self.top + (1 - min(max(axis.fraction(value), 0.0), 1.0)) * self.height


def y_axis(spec: ChartSpec, values: list[float], headroom: float) -> Axis:
    """`values`: every figure drawn, error bars' ends included."""
    values = [*values, *(spec.y_range or ())]
    if spec.y_log:
        return log10_axis([v for v in values if v > 0])
    floor = [0.0] if spec.y_from_zero or not values or min(values) == max(values) else []
    low, high = min([*floor, *values]), max([*floor, *values])
    # Nothing but zeros, or nothing at all: an axis from 0 to 1.
    ticks = nice_ticks(low, high + (high - low) * headroom, 5) if high > low else nice_ticks(0.0, 1.0, 5)
    return Axis(ticks[0], ticks[-1], tuple((t, number(t)) for t in ticks))


def log10_axis(values: list[float]) -> Axis:
    """Labels at the powers of ten; over less than two decades also at 2 and 5, the axis cut to the ticks around
    the data."""
    low, high = (min(values), max(values)) if values else (1.0, 10.0)
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
    if math.log10(high / low) >= 2:
        ticks = [10.0 ** k for k in range(lo, hi + 1)]
    else:
        steps = [m * 10.0 ** k for k in range(lo - 1, hi + 2) for m in (1, 2, 5)]
        first = max(i for i, t in enumerate(steps) if t <= low * (1 + 1e-9))
        last = min(i for i, t in enumerate(steps) if t >= high * (1 - 1e-9))
        if first == last:  # one value, on a tick: a tick either side of it
            first, last = first - 1, last + 1
        ticks = steps[first:last + 1]
    return Axis(math.log10(ticks[0]), math.log10(ticks[-1]), tuple((t, short_number(t)) for t in ticks), log=10)


def x_axis(spec: ChartSpec, values: list[float], categories: int) -> Axis:
    if spec.kind == "bars":
        return Axis(-0.5, categories - 0.5, spec.x_ticks)
    ticks = spec.x_ticks
    if spec.x_log2 or spec.x_log10:
        base = 10 if spec.x_log10 else 2
        ticks = tuple((x, label) for x, label in ticks if x > 0)
        scaled = [math.log(v, base) for v in [*values, *(x for x, _ in ticks)]] or [0.0]
        low, high = min(scaled), max(scaled)
        if not ticks:
            ticks = tuple((power, number(power)) for power in _powers(base, math.floor(low), math.ceil(high)))
        margin = (high - low) * 0.05 or 0.5
        return Axis(low - margin, high + margin, ticks, log=base)
    if not ticks:  # a time series in seconds: from the start, in whole, round numbers
        found = nice_ticks(min([0.0, *values]), max(values, default=1.0), 6, whole=True)
        margin = (found[-1] - found[0]) * 0.03  # no marker on the y axis
        return Axis(found[0] - margin, found[-1] + margin, tuple((t, number(t)) for t in found))
    every = [*values, *(x for x, _ in ticks)]
    low, high = min(every), max(every)
    margin = (high - low) * 0.05 or 0.5
    return Axis(low - margin, high + margin, ticks)


def minor_ticks(axis: Axis) -> list[float]:
    """2, 3 ... 9 times each power of ten on a log axis labelled at the powers alone: faint lines to read values by."""
    if axis.log != 10 or len(axis.ticks) < 3 or not all(math.log10(v).is_integer() for v, _ in axis.ticks):
        return []
    return [m * 10.0 ** k for k in range(round(axis.lo), round(axis.hi)) for m in range(2, 10)]


def placeable(value: float, log: bool) -> bool:
    """Whether an axis can show a value: finite, within LIMIT, and on a log axis within 1/LIMIT..LIMIT."""
    return math.isfinite(value) and abs(value) <= LIMIT and (value >= 1 / LIMIT or not log)


def nice_ticks(low: float, high: float, count: int, whole: bool = False) -> list[float]:
    """Ticks at multiples of 1, 2 or 5 times a power of ten, from at or below `low` to at or above `high`."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if raw <= m * power * (1 + 1e-9))
    if whole:
        step = max(step, 1.0)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    last = max(last, first + 1)  # a range within one whole step (0 to 1e-9 s): that step, not a single tick
    decimals = max(0, -math.floor(math.log10(step)))
    return [round(n * step, decimals) + 0.0 for n in range(first, last + 1)]  # + 0.0: never a "-0"


def _powers(base: int, first: int, last: int) -> list[float]:
    """base^first .. base^last as floats, up to the largest a float holds (figures near its limit: a fuzz case)."""
    found = []
    for k in range(first, last + 1):
        try:
            found.append(float(base) ** k)
        except OverflowError:
            break
    return found


def escape(text: str) -> str:
    """Markup escaped, control and bidi characters written out (report/terminal.py): a label shows as stored."""
    return html.escape(terminal_text(text))


def text_width(text: str, size: float = _FONT) -> float:
    return len(text) * _EM * size


def number(value: float) -> str:
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.3g}"


def short_number(value: float) -> str:
    """A log axis' tick: 1, 10, 100, 1k, 20k, 1M, 0.5."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"
