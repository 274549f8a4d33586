"""Flagged figures on a chart: a bar or a heat map's cell drawn hatched and outlined, a point ringed or a line flagged
all along dashed, with a footnote mark, and a note under the legend for each flag saying which and why
(report/flag_reasons.py). The mark is ⚑ where the chart carries one flag, ⚑1, ⚑2 ... where it carries
several. What the tests saw (the flag's own message, over their passes) is in the point's tooltip. A chart without
flags is drawn as it was.

Each mark is a `flagged` element naming its flags in data-flags, each note a `flag-note` text, so that a test can
count them off the SVG.
"""

from disklab.report.flag_reasons import flag_reason
from disklab.report.html.axes import escape, text_width
from disklab.report.html.charts import ChartSpec

Flags = tuple[tuple[str, str], ...]  # (flag, what its tests saw)

NOTE_ROW = 14
_SIZE, _INK, _RING = 9, "#222", 6.5


def flags_at(spec: ChartSpec, i: int, j: int) -> Flags:
    """The flags of series i's point j (none where the chart's functions gave none)."""
    flags = spec.series[i].flags
    return flags[j] if j < len(flags) else ()


def numbered(spec: ChartSpec) -> dict[str, int]:
    """Each flag on the chart, numbered in the order first met."""
    found = dict.fromkeys(flag for series in spec.series for point in series.flags for flag, _ in point)
    return {flag: n for n, flag in enumerate(found, start=1)}


def mark(spec: ChartSpec, flags: Flags) -> str:
    numbers = numbered(spec)
    if not flags:
        return ""
    return "⚑" if len(numbers) == 1 else "⚑" + ",".join(str(numbers[flag]) for flag, _ in flags)


def defs(spec: ChartSpec) -> str:
    """The hatching flagged bars and cells are drawn over with; '' on a chart without flags."""
    if not numbered(spec):
        return ""
    return (f'<defs><pattern id="{escape(spec.id)}-flag-hatch" width="5" height="5" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="5" stroke="{_INK}" stroke-width="1.4"'
            ' stroke-opacity="0.6"/></pattern></defs>')


def hatch(spec: ChartSpec, i: int, j: int, box: str) -> str:
    """A flagged bar or cell hatched and outlined over its own colour (`box`: its x, y, width and height)."""
    flags = flags_at(spec, i, j)
    if not flags:
        return ""
    return (f'<rect class="flagged" data-flags="{_names(flags)}" {box} fill="url(#{escape(spec.id)}-flag-hatch)" '
            f'stroke="{_INK}" stroke-width="1.2" pointer-events="none"/>')


def rings(spec: ChartSpec, i: int, placed: list[tuple[int, float, float]]) -> list[str]:
    """The marks of a line's flagged points (`placed`: each drawn point's index and page position). A line flagged
    all along is drawn dashed (`dashed`) with one mark at its end; else each flagged point is ringed, the mark beside
    the first of each stretch of points with the same flags."""
    if along(spec, i):
        j, x, y = placed[-1]
        return [f'<g class="flagged" data-flags="{_names(flags_at(spec, i, j))}">{_mark_text(spec, i, j, x, y)}</g>']
    out, before = [], ()
    for j, x, y in placed:
        flags = flags_at(spec, i, j)
        if flags:
            out.append(f'<g class="flagged" data-flags="{_names(flags)}" pointer-events="none"><circle cx="{x:.1f}" '
                       f'cy="{y:.1f}" r="{_RING}" fill="none" stroke="{_INK}" stroke-width="1.3"/>'
                       + (_mark_text(spec, i, j, x, y) if _names(flags) != _names(before) else "") + "</g>")
        before = flags
    return out


def along(spec: ChartSpec, i: int) -> bool:
    """Whether every point of series i carries the same flags (one test's line, or each of its tests flagged alike)."""
    series = spec.series[i]
    names = {_names(flags) for flags in series.flags}
    return len(series.points) > 1 and len(series.flags) == len(series.points) and len(names) == 1 and "" not in names


def dashed(spec: ChartSpec, i: int) -> str:
    """The stroke of a line flagged all along (its path and its legend swatch): dashed."""
    return ' stroke-dasharray="6 3"' if along(spec, i) else ""


def _mark_text(spec: ChartSpec, i: int, j: int, x: float, y: float) -> str:
    return (f'<text x="{x + _RING + 1:.1f}" y="{y - _RING:.1f}" font-size="{_SIZE}" fill="{_INK}">'
            f'{escape(mark(spec, flags_at(spec, i, j)))}</text>')


def tooltip(spec: ChartSpec, i: int, j: int) -> str:
    """What the flagged point's tests saw, to end its tooltip."""
    return "".join(f" · ⚑ {flag}{said}" for flag, said in flags_at(spec, i, j))


def notes_height(spec: ChartSpec) -> float:
    return len(numbered(spec)) * NOTE_ROW + 4 * bool(numbered(spec))


def notes(spec: ChartSpec, left: float, top: float, width: float, hatched: bool) -> list[str]:
    """A row per flag under the legend: its swatch (hatched, or a ring), its mark, the flag and why. A row too long
    for the chart is cut, the whole of it its tooltip."""
    out = []
    lines = {along(spec, i) for i, series in enumerate(spec.series) if any(series.flags)}
    flagged = "hatched" if hatched else " or ".join(w for w, drawn in (("dashed", True), ("ringed", False))
                                                    if drawn in lines)
    for k, (flag, number) in enumerate(numbered(spec).items()):
        y = top + k * NOTE_ROW + NOTE_ROW / 2
        swatch = (f'<rect x="{left:.1f}" y="{y - 5:.1f}" width="16" height="10" stroke="{_INK}" '
                  f'fill="url(#{escape(spec.id)}-flag-hatch)"/>' if hatched else
                  f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{left + 18:.1f}" y2="{y:.1f}" stroke="{_INK}" '
                  f'stroke-dasharray="6 3"/><circle cx="{left + 9:.1f}" cy="{y:.1f}" r="{_RING}" fill="none" '
                  f'stroke="{_INK}" stroke-width="1.3"/>')
        text = f"{'⚑' if len(numbered(spec)) == 1 else f'⚑{number}'} {flagged}: {flag}: {flag_reason(flag)}"
        room = int((width - 24) / text_width("x", _SIZE))
        shown = text if len(text) <= room else text[:max(room - 1, 1)] + "…"
        out.append(f'<g class="flag-note" data-flag="{escape(flag)}">{swatch}<text x="{left + 24:.1f}" y="{y:.1f}" '
                   f'dy="0.35em" font-size="{_SIZE}">{escape(shown)}<title>{escape(text)}</title></text></g>')
    return out


def _names(flags: Flags) -> str:
    return escape(" ".join(flag for flag, _ in flags))
