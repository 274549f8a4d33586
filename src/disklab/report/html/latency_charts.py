"""Latency charts: completion-latency percentiles and exceedance (1 - CDF) from fio's json+ histogram.

A test that several runs have (matched by label) gets a chart of its own, a line per run, overlaid; a run's other
tests share charts of the run, a line per test and direction, at most MAX_LINES to a chart: more are split over
several charts, never dropped. Each chart's latency axis is fitted to its own figures.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from disklab.analysis.repeats import TAIL_IOS, merged_latency_bins, pooled_percentiles
from disklab.fio.parse import DIRECTIONS, PERCENTILES
from disklab.report.html.axes import short_number
from disklab.report.html.charts import MAX_LINES, ChartSpec, Planned, SeriesSpec, planned
from disklab.store.records import RunRecord, StoredTest

# Percentiles sit at -log10(1 - p), as latency plots place them: 50, 90, 99, 99.9 and 99.99 a step apart.
_PERCENTILE_X = {name: -math.log10(1 - float(key) / 100) for key, name in PERCENTILES.items()}
_PERCENTILE_TICKS = tuple((_PERCENTILE_X[name], f"{float(key):g}") for key, name in PERCENTILES.items())
EXCEEDANCE_STEP = 0.05  # decades between the exceedance curve's points: 20 a decade keep its shape, not 1,800 bins

Points = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class LatencyGroup:
    """The lines of one latency chart."""

    key: str  # the test's label (runs overlaid) or the run's
    across: bool  # the lines are runs (else the tests of one run)
    repeats: frozenset[int]  # how many repeats the chart's tests had
    lines: tuple[SeriesSpec, ...]
    part: int = 1
    parts: int = 1
    tests: tuple[str, ...] = ()  # the labels of the tests drawn, for the footer

    @property
    def title_end(self) -> str:
        return self.key + (f" · part {self.part} of {self.parts}" if self.parts > 1 else "")


def latency_groups(records: Sequence[RunRecord], line: Callable[[Sequence[StoredTest], str], Points]) \
        -> list[LatencyGroup]:
    """`line(tests, direction)`: the points of one test's line (its repeats together); empty when it has none."""
    by_label: dict[str, list[Planned]] = {}
    for record in records:
        for test in planned(record, records):
            by_label.setdefault(test.label, []).append(test)
    blocks: dict[str, list[tuple[str, list[SeriesSpec]]]] = {}  # per chart key, per test: its label and lines
    across: dict[str, bool] = {}
    repeats: dict[str, set[int]] = {}
    for label, tests in by_label.items():
        shared = len({t.run for t in tests}) > 1
        for test in tests:
            key = label if shared else test.run
            several = len(test.tests[0].metrics) > 1  # mixed and trimwrite tests: a line per direction
            name = test.run if shared else test.label
            lines = [SeriesSpec(f"{name} · {direction}" if several else name, points,
                                flags=(test.flags(),) * len(points))
                     for direction in DIRECTIONS for points in (line(test.tests, direction),) if points]
            if lines:
                across[key] = shared
                repeats.setdefault(key, set()).add(len(test.tests))
                blocks.setdefault(key, []).append((label, lines))
    groups = []
    for key, tests in blocks.items():
        parts = _split(tests)
        groups += [LatencyGroup(key, across[key], frozenset(repeats[key]), tuple(line for _, lines in part
                                                                                   for line in lines),
                                n, len(parts), tuple(dict.fromkeys(label for label, _ in part)))
                   for n, part in enumerate(parts, start=1)]
    return groups


def _split(tests: list[tuple[str, list[SeriesSpec]]]) -> list[list[tuple[str, list[SeriesSpec]]]]:
    """The tests' lines in charts of at most MAX_LINES (the palette's colours), a test's directions together."""
    parts: list[list[tuple[str, list[SeriesSpec]]]] = [[]]
    for label, lines in tests:
        if parts[-1] and sum(len(drawn) for _, drawn in parts[-1]) + len(lines) > MAX_LINES:
            parts.append([])
        parts[-1].append((label, lines))
    return parts


def _lines_of(group: LatencyGroup) -> str:
    return ("run" if group.across else "test") + " and direction" * any(" · " in s.name for s in group.lines)


def latency_percentile_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """Completion-latency percentiles on a log-scaled percentile axis."""
    return [ChartSpec(
        id=f"latency-{n}", kind="line", title=f"Completion latency percentiles · {group.title_end}",
        caption="fio's completion latency (clat) percentiles, both axes log scale, one line per " + _lines_of(group)
        + " · of every I/O: the repeats' json+ histograms merged, as the exceedance chart's; a percentile p only "
        f"where {TAIL_IOS} / (1 - p) I/Os or more support it (p99.99 from {TAIL_IOS * 10_000:,}); output without "
        "json+ bins (imported): the largest of the repeats' own",
        x_label="percentile (%), log scale of 1 - p", y_label="latency (µs, log scale)", series=group.lines,
        x_ticks=_PERCENTILE_TICKS, y_log=True, note=_pooled_note(group.repeats), metric="clat_p99_us",
        tests=group.tests,
    ) for n, group in enumerate(latency_groups(records, _pooled_percentiles), start=1)]


def _pooled_note(counts: frozenset[int]) -> str:
    """Percentiles of repeats are those of all their I/O, never a mean of theirs: no error bars, and the chart says
    why."""
    if max(counts) < 2:
        return ""
    n = f"{min(counts)}-{max(counts)}" if len(counts) > 1 else f"{max(counts)}"
    return f"repeated tests: the percentiles of every I/O of n = {n} repeats (their histograms merged)"


def _pooled_percentiles(tests: Sequence[StoredTest], direction: str) -> Points:
    pooled = pooled_percentiles(tests, (direction,))
    if pooled is None:
        return ()
    return tuple((x, pooled.ns[name] / 1e3) for name, x in _PERCENTILE_X.items() if name in pooled.ns)


def exceedance_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """The share of I/Os slower than each latency, from fio's json+ histogram, both axes log scale: the tail a
    percentile table cuts off at p99.99 runs on to the slowest I/O."""
    charts = []
    for n, group in enumerate(latency_groups(records, exceedance), start=1):
        latencies = [x for line in group.lines for x, _ in line.points]
        decades = range(math.floor(math.log10(min(latencies))), math.ceil(math.log10(max(latencies))) + 1)
        charts.append(ChartSpec(
            id=f"exceedance-{n}", kind="line", title=f"Latency exceedance (1 - CDF) · {group.title_end}",
            caption="share of I/Os whose completion latency (clat) was longer than each latency, from fio's json+ "
            f"histogram, both axes log scale, points at its bins (at most {round(1 / EXCEEDANCE_STEP)} a decade; the "
            "last at the bin before the slowest I/O's), one line per " + _lines_of(group)
            + (" · repeated tests: their histograms merged (latencies of repeats are never averaged)"
               if max(group.repeats) > 1 else ""),
            x_label="completion latency (µs, log scale)", y_label="I/Os slower (%, log scale)", series=group.lines,
            x_ticks=tuple((10.0 ** k, short_number(10.0 ** k)) for k in decades), x_log10=True, y_log=True,
            note="repeated tests: the repeats' histograms merged" if max(group.repeats) > 1 else "",
            metric="clat_p99_us", y_better="lower is better", tests=group.tests,  # better: fewer I/Os slower
        ))
    return charts


def exceedance(tests: Sequence[StoredTest], direction: str) -> Points:
    """(latency µs, % of I/Os slower) at fio's histogram bins, the repeats' histograms summed; empty without json+
    bins. The slowest bin has no I/O slower than it, so no place on a log axis: the curve ends at the bin before."""
    merged = merged_latency_bins(tests, (direction,))
    if not merged:
        return ()
    total = sum(merged.values())
    ordered = sorted(merged.items())
    points, slower, last = [], total, -math.inf
    for i, (value_ns, count) in enumerate(ordered[:-1]):
        slower -= count
        if value_ns <= 0:  # no place on a log axis
            continue
        x = math.log10(value_ns / 1e3)
        if x >= last + EXCEEDANCE_STEP or (i == len(ordered) - 2 and x > last):
            points.append((value_ns / 1e3, 100 * slower / total))
            last = x
    return tuple(points)
