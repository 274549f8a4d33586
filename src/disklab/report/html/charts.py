"""The report's charts: a registry of functions, each deciding from the runs whether its chart applies.

Adding a chart is adding one function to CHARTS: it takes the runs and returns chart specs (none when it does
not apply). Specs are plain data; svg.py draws them. Repeated tests are plotted as their mean (the view metrics)
with the 95 % confidence interval of that mean (analysis/stats.py), as the tables show it. An axis whose figures
span more than a decade is logarithmic.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from disklab.analysis.overprovision import spare_area_levels
from disklab.analysis.repeats import planned_tests, repeated
from disklab.analysis.stats import Summary, summarize
from disklab.report.metrics import REGISTRY
from disklab.report.rows import is_pgbench_test
from disklab.report.labels import axis_label, record_labels
from disklab.report.table import planned_flags
from disklab.report.views import cell_figure, stored_suite
from disklab.suite.fio_options import block_sizes_as_written
from disklab.store.records import RunRecord, StoredTest

MAX_LINES = 10  # svg.py's palette (matplotlib's tab10) has 10 colours: more lines cannot be told apart
SWEEP_MIN_POINTS = 3  # a parameter that takes fewer values is a comparison, not a curve
# The parameters that make two tests the same workload, so that they may share a line or a chart.
_WORKLOAD_FIELDS = ("pattern", "direction", "rwmixread", "bs", "bssplit", "iodepth", "jobs", "sync", "frame_size",
                    "fio")
_MIXED_NOTE = " · read + write"
LOG_RATIO = 10  # figures whose largest is this many times their smallest get a log axis: a linear one flattens them


@dataclass(frozen=True)
class SeriesSpec:
    name: str  # the legend entry
    points: tuple[tuple[float, float], ...]  # (x, y); for bars x is the category's index
    # Per point, when its y is the mean of n > 1 repeats: their summary, drawn as the 95 % interval. Else None.
    spreads: tuple[Summary | None, ...] = ()
    # Per point, the flags of the tests behind it, (flag, what they saw): the point is marked, the legend says why.
    flags: tuple[tuple[tuple[str, str], ...], ...] = ()
    # Per point, a range that is no mean's interval (a model's error band: range_bands.py), (low, high); or None.
    ranges: tuple[tuple[float, float] | None, ...] = ()


@dataclass(frozen=True)
class Reference:
    """A marked value drawn across the plot with its label: on axis "x" a vertical line, on "y" a horizontal one."""

    axis: str
    value: float
    label: str


@dataclass(frozen=True)
class ChartSpec:
    id: str  # unique in the report; the SVG's series are `{id}-series-{i}` (bars: `...-series-{i}-bar-{j}`)
    kind: str  # "line", "bars", "heatmap" (heatmap.py: a series per row, its points (column index, value)) or "grid"
    # (a table of figures: grid.py)
    title: str
    caption: str
    x_label: str
    y_label: str
    series: tuple[SeriesSpec, ...]
    x_ticks: tuple[tuple[float, str], ...] = ()  # positions and their labels; bars: the categories
    x_log2: bool = False
    x_log10: bool = False  # x values are placed by their log10 (latencies); x_ticks then name the powers of ten
    y_log: bool = False
    y_range: tuple[float, float] | None = None  # figures the y axis must reach: one range over charts compared
    bands: bool = False  # intervals drawn as a band along the line (many points) instead of error bars
    note: str = ""  # under the title, inside the SVG: what a copied chart must not lose
    sample: str = "repeats"  # what the n of an error bar counts
    references: tuple[Reference, ...] = ()  # the axes reach them
    y_from_zero: bool = True  # False: a linear y axis fitted to the figures (judged against their own average)
    metric: str = ""  # the figure it draws (report/metrics.py), which report --metrics chooses; '': none of them
    tests: tuple[str, ...] = ()  # labels of the tests drawn, for the footer's parameters; (): the runs' every test
    runs: tuple[int, ...] = ()  # ids of the runs a chart of one run draws, for the footer; (): every run
    # Filled for every chart where the report is built (provenance.py), not by the functions of CHARTS:
    footer: str = ""  # provenance: disk, file system, fio, the tests' parameters, date, disklab version
    y_better: str = ""  # "higher is better" or "lower is better": the y axis' metric read as OpenBenchmarking does


@dataclass(frozen=True)
class Planned:
    """A planned test of a run with its stored tests (one, or its repeats)."""

    run: str  # the run's label
    label: str
    params: dict
    tests: tuple[StoredTest, ...]
    repeats: bool  # the tests are repeats of one measurement (not rounds towards steady state)
    best_of: int | None = None  # run --best-of: the figure is the best pass, as its grid shows it

    def figure(self, metric: str) -> float | None:
        """Read + write for mixed tests, the mean over repeats (the best pass with --best-of)."""
        return cell_figure(metric, self.tests, self.best_of)

    def spread(self, metric: str) -> Summary | None:
        """The repeats' summary (its mean is figure's), when there are several; None for one test, rounds, best-of."""
        values = [REGISTRY[metric].compute([test]) for test in self.tests]
        if not self.repeats or self.best_of or len(values) < 2 or None in values:
            return None
        return summarize(values)

    def flags(self) -> tuple[tuple[str, str], ...]:
        """Each flag of its tests once, with how many carry it and what they saw (the run's flag lines)."""
        return tuple(planned_flags(self.tests, "passes" if self.repeats else "rounds"))

    def workload(self, *leave_out: str) -> tuple:
        return tuple(self.params.get(f) for f in _WORKLOAD_FIELDS if f not in leave_out)


def planned(record: RunRecord, records: Sequence[RunRecord]) -> list[Planned]:
    """`records`: the runs charted together; the run's label names what differs between them (labels.py)."""
    labels = dict(zip((r.info.id for r in records), record_labels(records)))
    best_of = record.info.options.get("best_of")
    label = labels[record.info.id] + (f" · best of {best_of}" if best_of else "")
    return [Planned(label, tests[0].label, tests[0].params, tuple(tests), repeated(record), best_of)
            for tests in planned_tests(record).values()
            if not is_pgbench_test(tests[0])]  # pgbench steps are no fio workload; their sweep is a table


def log_scale(series: Sequence[SeriesSpec]) -> bool:
    """Whether the figures span more than LOG_RATIO: then a linear axis would flatten the smaller to its floor."""
    values = [y for s in series for _, y in s.points if y is not None and math.isfinite(y) and y > 0]
    return bool(values) and max(values) >= LOG_RATIO * min(values)


def y_axis_label(unit: str, series: Sequence[SeriesSpec], bars: bool = False) -> str:
    """The unit, defined where it could be misread, and the scale when it is not linear: a copied chart keeps them.
    Bars are always on a linear axis from zero: a bar's length is its figure, and their ratios show as they are."""
    notes = ["10^6 bytes/s"] * (unit == "MB/s") + ["log scale"] * (log_scale(series) and not bars)
    return f"{unit} ({', '.join(notes)})" if notes else unit


def describe(params: dict, *leave_out: str) -> str:
    """A workload in words, for titles: 'random mixed 50 % read · QD1 · 16 jobs'."""
    direction = params["direction"]
    if direction == "mixed" and "rwmixread" not in leave_out:
        direction = f"mixed {params['rwmixread']} % read"
    parts = [f"{params['pattern']} {direction}"]
    if "bs" not in leave_out:
        parts.append(block_sizes_as_written(params) or params.get("bssplit") or axis_label("bs", params["bs"]))
    if "iodepth" not in leave_out:
        parts.append(axis_label("iodepth", params["iodepth"]))
    if "jobs" not in leave_out:
        parts.append(axis_label("jobs", params["jobs"]))
    return " · ".join(parts)


def _sweeps(records: Sequence[RunRecord], field: str) -> dict[tuple, list[Planned]]:
    """Planned tests grouped by workload with `field` left out, kept where `field` takes enough values."""
    groups: dict[tuple, list[Planned]] = {}
    for record in records:
        for test in planned(record, records):
            if not (test.params.get("bssplit") or test.params.get("frame_size") or test.params.get("fio")):
                groups.setdefault(test.workload(field), []).append(test)
    return {
        key: tests for key, tests in groups.items()
        if max(len({t.params[field] for t in tests if t.run == run}) for run in {t.run for t in tests})
        >= SWEEP_MIN_POINTS
    }


def _line(name: str, tests: Sequence[Planned], x_field: str, metric: str) -> SeriesSpec:
    by_x = {}
    for test in tests:
        value = test.figure(metric)
        if value is not None:
            by_x[test.params[x_field]] = (value, test.spread(metric), test.flags())
    points = sorted(by_x.items())
    return SeriesSpec(name, tuple((x, y) for x, (y, _, _) in points), tuple(spread for _, (_, spread, _) in points),
                      tuple(flags for _, (_, _, flags) in points))


def blocksize_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """M2: IOPS and MB/s over block size, one line per run, for every workload that sweeps bs."""
    charts = []
    for n, tests in enumerate(_sweeps(records, "bs").values(), start=1):
        runs = list(dict.fromkeys(t.run for t in tests))
        sizes = sorted({t.params["bs"] for t in tests})
        workload = describe(tests[0].params, "bs")
        mixed = _MIXED_NOTE if tests[0].params["direction"] == "mixed" else ""
        for metric, unit in (("iops", "IOPS"), ("mb_per_s", "MB/s")):
            series = tuple(_line(run, [t for t in tests if t.run == run], "bs", metric) for run in runs)
            charts.append(ChartSpec(
                id=f"blocksize-{metric.replace('_', '-')}-{n}", kind="line",
                title=f"{unit} over block size · {workload}",
                caption=f"{unit} per block size, one line per run{mixed}"
                + (" · MB/s = 10^6 bytes/s" if metric == "mb_per_s" else ""),
                x_label="block size (log2 scale)", y_label=y_axis_label(unit, series), series=series,
                x_ticks=tuple((size, axis_label("bs", size)) for size in sizes), x_log2=True, y_log=log_scale(series),
                metric=metric, tests=tuple(dict.fromkeys(t.label for t in tests)),
            ))
    return charts


def read_share_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """M5: IOPS over the read share, one line per queue depth (and run), for workloads that sweep rwmixread."""
    charts = []
    sweeps = _sweeps(records, "rwmixread")
    groups: dict[tuple, list[Planned]] = {}
    for tests in sweeps.values():  # the queue depths of one workload share a chart
        if tests[0].params["direction"] == "mixed":
            groups.setdefault(tests[0].workload("rwmixread", "iodepth"), []).extend(tests)
    for n, tests in enumerate(groups.values(), start=1):
        several_runs = len({t.run for t in tests}) > 1
        lines = {}
        for test in tests:
            name = axis_label("iodepth", test.params["iodepth"])
            lines.setdefault(f"{test.run} · {name}" if several_runs else name, []).append(test)
        shares = sorted({t.params["rwmixread"] for t in tests})
        series = tuple(_line(name, line, "rwmixread", "iops") for name, line in lines.items())
        charts.append(ChartSpec(
            id=f"read-share-{n}", kind="line",
            title=f"IOPS over read share · {describe(tests[0].params, 'rwmixread', 'iodepth')}",
            caption="IOPS (read + write) per read share, one line per queue depth" + " and run" * several_runs,
            x_label="read share (%)", y_label=y_axis_label("IOPS", series), series=series,
            x_ticks=tuple((share, f"{share}") for share in shares), y_log=log_scale(series), metric="iops",
            tests=tuple(dict.fromkeys(t.label for t in tests)),
        ))
    return charts


QUICK_SUITE = "quick"


def quick_bar_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """The quick profile as grouped bars, one bar per run per test: sequential tests in MB/s, random in IOPS."""
    quick = [test for record in records if record.info.suite_name == QUICK_SUITE for test in planned(record, records)]
    return [_bars(f"quick-{pattern}", f"Quick profile · {pattern} tests in {unit}", tests, metric, unit)
            for pattern, metric, unit in (("sequential", "mb_per_s", "MB/s"), ("random", "iops", "IOPS"))
            for tests in ([t for t in quick if t.params["pattern"] == pattern],) if tests]


def test_bar_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """IOPS and MB/s bars of the tests that no curve draws, in runs of a job file, fio's options, a user's suite or
    an import: the figures a suite's own charts would show."""
    on_curves = {(t.run, t.label) for field in ("bs", "rwmixread") for tests in _sweeps(records, field).values()
                 for t in tests}
    tests = [test for record in records if _own_tests(record) for test in planned(record, records)
             if (test.run, test.label) not in on_curves]
    if not tests:
        return []
    return [_bars(f"tests-{metric.replace('_', '-')}", f"{unit} per test", tests, metric, unit)
            for metric, unit in (("iops", "IOPS"), ("mb_per_s", "MB/s"))]


def _own_tests(record: RunRecord) -> bool:
    """A run of tests its user wrote (a job file, fio's options, a suite file) or imported, run once each (not in
    rounds or a search, whose charts are their own)."""
    if record.info.suite_source == "built-in":
        return False
    suite = stored_suite(record)
    return suite is None or suite.mode == "fixed"


def _bars(chart_id: str, title: str, tests: Sequence[Planned], metric: str, unit: str) -> ChartSpec:
    categories = list(dict.fromkeys(t.label for t in tests))
    runs = list(dict.fromkeys(t.run for t in tests))
    series = tuple(
        SeriesSpec(run, tuple((float(categories.index(t.label)), t.figure(metric)) for t in mine),
                   tuple(t.spread(metric) for t in mine), tuple(t.flags() for t in mine))
        for run in runs for mine in ([t for t in tests if t.run == run],)
    )
    mixed = " (read + write of a mixed test)" if any(t.params["direction"] == "mixed" for t in tests) else ""
    return ChartSpec(
        id=chart_id, kind="bars", title=title,
        caption=f"{unit} per test{mixed}, one bar per run" + (" · MB/s = 10^6 bytes/s" if metric == "mb_per_s" else ""),
        x_label="test", y_label=y_axis_label(unit, series, bars=True), series=series,
        x_ticks=tuple(enumerate(categories)), metric=metric, tests=tuple(categories),  # linear, from zero
    )


def spare_area_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """M4: the steady-state figure over the over-provisioning level (its 95 % interval from the steady window), and
    each level's rounds over time, one line per level, for the runs of an over-provisioning series."""
    levels = spare_area_levels(records)
    if len(levels) < 2:
        return []
    unit = REGISTRY[levels[0].metric].unit
    steady = [level for level in levels if level.steady]
    unsteady = [f"OP {level.percent} %" for level in levels if not level.steady]
    charts = []
    if len(steady) > 1:
        series = (SeriesSpec(f"steady-state {unit}", tuple((level.percent, level.steady.mean) for level in steady),
                             tuple(level.steady for level in steady)),)
        charts.append(ChartSpec(
            id="spare-area-steady", kind="line", title=f"Steady-state {unit} over spare area · {_workload(records)}",
            caption=f"steady-state {unit} per over-provisioning level (the share of the device left unused after a "
            "full discard): the mean of the steady window's rounds, with its 95 % interval"
            + (f" · not steady, left out: {', '.join(unsteady)}" if unsteady else ""),
            x_label="over-provisioning (% of the device left unused)", y_label=y_axis_label(unit, series),
            series=series, x_ticks=tuple((level.percent, f"{level.percent}") for level in steady),
            y_log=log_scale(series), sample="rounds of the steady window", metric=levels[0].metric,
        ))
    lines = tuple(SeriesSpec(f"OP {level.percent} %", tuple((end / 60, value) for end, value in
                                                             zip(level.round_ends_s, level.rounds)))
                  for level in levels[:MAX_LINES])
    charts.append(ChartSpec(
        id="spare-area-rounds", kind="line", title=f"{unit} per round over time, by spare area · {_workload(records)}",
        caption=f"{unit} of each round of the workload after preconditioning, one line per over-provisioning level; "
        "a point at the end of its round" + (f" · the first {MAX_LINES} levels" if len(levels) > MAX_LINES else ""),
        x_label="measured time (min)", y_label=y_axis_label(unit, lines), series=lines, y_log=log_scale(lines),
        metric=levels[0].metric,
    ))
    return charts


def _workload(records: Sequence[RunRecord]) -> str:
    """The rounds' workload in words, from the first run's last test (a round, never a preconditioning pass)."""
    tests = [t for r in records for t in r.tests]
    return describe(tests[-1].params) if tests else ""


ChartFunction = Callable[[Sequence[RunRecord]], list[ChartSpec]]
CHARTS: tuple[ChartFunction, ...] = (quick_bar_charts, test_bar_charts, blocksize_charts, read_share_charts, spare_area_charts)


def chart_functions() -> tuple[ChartFunction, ...]:
    """The registry's functions, then those of the measured data: the order a report draws their charts in."""
    # Imported here: data_charts builds on this module's specs, so it cannot be imported above them.
    from disklab.report.html.data_charts import DATA_CHARTS

    return (*CHARTS, *DATA_CHARTS)
