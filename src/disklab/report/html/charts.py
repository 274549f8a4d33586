"""The report's charts: a registry of functions, each deciding from the runs whether its chart applies.

Adding a chart is adding one function to CHARTS: it takes the runs and returns chart specs (none when it does
not apply). Specs are plain data; svg.py draws them. Repeated tests are plotted as their mean (the view metrics).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from disklab.analysis.repeats import planned_tests
from disklab.fio.parse import DIRECTIONS, PERCENTILES
from disklab.report.metrics import REGISTRY
from disklab.report.rows import is_pgbench_test
from disklab.report.table import run_label
from disklab.report.labels import axis_label
from disklab.store.records import RunRecord, StoredTest

MAX_LINES = 10  # svg.py's palette (matplotlib's tab10) has 10 colours: more lines cannot be told apart
SWEEP_MIN_POINTS = 3  # a parameter that takes fewer values is a comparison, not a curve
# The parameters that make two tests the same workload, so that they may share a line or a chart.
_WORKLOAD_FIELDS = ("pattern", "direction", "rwmixread", "bs", "bssplit", "iodepth", "jobs", "sync", "frame_size")
_MIXED_NOTE = " · read + write"
_PERCENTILE_LABELS = {name: name.replace("_", ".") for name in PERCENTILES.values()}  # p99_9 -> p99.9


@dataclass(frozen=True)
class SeriesSpec:
    name: str  # the legend entry
    points: tuple[tuple[float, float], ...]  # (x, y); for bars x is the category's index


@dataclass(frozen=True)
class ChartSpec:
    id: str  # unique in the report; the SVG's series are `{id}-series-{i}` (bars: `...-series-{i}-bar-{j}`)
    kind: str  # "line" or "bars"
    title: str
    caption: str
    x_label: str
    y_label: str
    series: tuple[SeriesSpec, ...]
    x_ticks: tuple[tuple[float, str], ...] = ()  # positions and their labels; bars: the categories
    x_log2: bool = False
    y_log: bool = False


@dataclass(frozen=True)
class Planned:
    """A planned test of a run with its stored tests (one, or its repeats)."""

    run: str  # the run's label
    label: str
    params: dict
    tests: tuple[StoredTest, ...]

    def figure(self, metric: str) -> float | None:
        """Read + write for mixed tests, the mean over repeats."""
        return REGISTRY[metric].compute(self.tests)

    def workload(self, *leave_out: str) -> tuple:
        return tuple(self.params.get(f) for f in _WORKLOAD_FIELDS if f not in leave_out)


def planned(record: RunRecord) -> list[Planned]:
    label = run_label(record.info)
    return [Planned(label, tests[0].label, tests[0].params, tuple(tests)) for tests in planned_tests(record).values()
            if not is_pgbench_test(tests[0])]  # pgbench steps are no fio workload; their sweep is a table


def describe(params: dict, *leave_out: str) -> str:
    """A workload in words, for titles: 'random mixed 50 % read · QD1 · 16 jobs'."""
    direction = params["direction"]
    if direction == "mixed" and "rwmixread" not in leave_out:
        direction = f"mixed {params['rwmixread']} % read"
    parts = [f"{params['pattern']} {direction}"]
    if "bs" not in leave_out:
        parts.append(params.get("bssplit") or axis_label("bs", params["bs"]))
    if "iodepth" not in leave_out:
        parts.append(axis_label("iodepth", params["iodepth"]))
    parts.append(axis_label("jobs", params["jobs"]))
    return " · ".join(parts)


def _sweeps(records: Sequence[RunRecord], field: str) -> dict[tuple, list[Planned]]:
    """Planned tests grouped by workload with `field` left out, kept where `field` takes enough values."""
    groups: dict[tuple, list[Planned]] = {}
    for record in records:
        for test in planned(record):
            if test.params.get("bssplit") is None and test.params.get("frame_size") is None:
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
            by_x[test.params[x_field]] = value
    return SeriesSpec(name, tuple(sorted(by_x.items())))


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
                x_label="block size (log2 scale)", y_label=unit, series=series,
                x_ticks=tuple((size, axis_label("bs", size)) for size in sizes), x_log2=True,
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
        charts.append(ChartSpec(
            id=f"read-share-{n}", kind="line",
            title=f"IOPS over read share · {describe(tests[0].params, 'rwmixread', 'iodepth')}",
            caption="IOPS (read + write) per read share, one line per queue depth" + " and run" * several_runs,
            x_label="read share (%)", y_label="IOPS",
            series=tuple(_line(name, line, "rwmixread", "iops") for name, line in lines.items()),
            x_ticks=tuple((share, f"{share}") for share in shares),
        ))
    return charts


def latency_percentile_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """Completion-latency percentiles, one chart per run, one line per test and direction (when they fit)."""
    charts = []
    for record in records:
        lines = []
        for test in planned(record):
            for direction in DIRECTIONS:
                points = _worst_percentiles(test.tests, direction)
                if points:
                    several = len(test.tests[0].metrics) > 1  # mixed and trimwrite tests: a line per direction
                    lines.append(SeriesSpec(f"{test.label} · {direction}" if several else test.label, points))
        if not lines or len(lines) > MAX_LINES:
            continue
        repeated = any(len(t.tests) > 1 for t in planned(record))
        charts.append(ChartSpec(
            id=f"latency-run-{record.info.id}", kind="line",
            title=f"Completion latency percentiles · {run_label(record.info)}",
            caption="fio's completion latency (clat) percentiles in µs, log scale, one line per test and direction"
            + (" · repeated tests: the worst of the repeats (percentiles cannot be averaged)" if repeated else ""),
            x_label="percentile", y_label="latency (µs)", series=tuple(lines),
            x_ticks=tuple(enumerate(_PERCENTILE_LABELS.values())), y_log=True,
        ))
    return charts


def _worst_percentiles(tests: Sequence[StoredTest], direction: str) -> tuple[tuple[float, float], ...]:
    points = []
    for i, name in enumerate(_PERCENTILE_LABELS):
        values = [m.clat_percentiles_ns[name] for t in tests for m in t.metrics
                  if m.direction == direction and name in m.clat_percentiles_ns]
        if values:
            points.append((float(i), max(values) / 1e3))
    return tuple(points)


def time_series_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """IOPS per logged interval, one chart per test (matched across runs by label), one line per run and direction."""
    by_label: dict[str, list[Planned]] = {}
    for record in records:
        for test in planned(record):
            if any(s.kind == "iops" for t in test.tests for s in t.series):
                by_label.setdefault(test.label, []).append(test)
    charts = []
    for n, (label, tests) in enumerate(by_label.items(), start=1):
        several_runs = len(tests) > 1
        series = []
        for test in tests:
            for direction in DIRECTIONS:
                points = _mean_series(test.tests, direction)
                if points:
                    name = " · ".join([test.run] * several_runs + [direction])
                    series.append(SeriesSpec(name, points))
        charts.append(ChartSpec(
            id=f"series-{n}", kind="line", title=f"IOPS over time · {label}",
            caption="IOPS per logged interval, jobs combined, one line per " + "run and " * several_runs + "direction"
            + " · repeated tests: the mean of the repeats" * any(len(t.tests) > 1 for t in tests),
            x_label="time from start of measurement (s)", y_label="IOPS", series=tuple(series),
        ))
    return charts


def _mean_series(tests: Sequence[StoredTest], direction: str) -> tuple[tuple[float, float], ...]:
    by_t: dict[int, list[float]] = {}
    for test in tests:
        for s in test.series:
            if s.kind == "iops" and s.direction == direction:
                for p in s.points:
                    by_t.setdefault(p.t_ms, []).append(p.value)
    return tuple((t / 1000, sum(values) / len(values)) for t, values in sorted(by_t.items()))


QUICK_SUITE = "quick"


def quick_bar_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """The quick profile as grouped bars, one bar per run per test: sequential tests in MB/s, random in IOPS."""
    quick = [test for record in records if record.info.suite_name == QUICK_SUITE for test in planned(record)]
    charts = []
    for pattern, metric, unit in (("sequential", "mb_per_s", "MB/s"), ("random", "iops", "IOPS")):
        tests = [t for t in quick if t.params["pattern"] == pattern]
        if not tests:
            continue
        categories = list(dict.fromkeys(t.label for t in tests))
        runs = list(dict.fromkeys(t.run for t in tests))
        series = tuple(
            SeriesSpec(run, tuple((float(categories.index(t.label)), t.figure(metric)) for t in tests if t.run == run))
            for run in runs
        )
        charts.append(ChartSpec(
            id=f"quick-{pattern}", kind="bars", title=f"Quick profile · {pattern} tests in {unit}",
            caption=f"{unit} per test, one bar per run" + (" · MB/s = 10^6 bytes/s" if metric == "mb_per_s" else ""),
            x_label="test", y_label=unit, series=series, x_ticks=tuple(enumerate(categories)),
        ))
    return charts


ChartFunction = Callable[[Sequence[RunRecord]], list[ChartSpec]]
CHARTS: tuple[ChartFunction, ...] = (
    quick_bar_charts, blocksize_charts, read_share_charts, latency_percentile_charts, time_series_charts,
)


def select_charts(records: Sequence[RunRecord]) -> tuple[ChartSpec, ...]:
    """Every chart that applies to these runs, in the registry's order."""
    return tuple(chart for make in CHARTS for chart in make(records))
