"""Time series of the tests run with log_interval: IOPS, MB/s and mean latency per logged interval, each with its
moving average as a second line where the series is long enough to have one.

One chart per test and figure (tests matched across runs by label), a line per run and direction; repeated tests
as the mean of their repeats in a band of its 95 % interval.
"""

from collections.abc import Sequence

from disklab.analysis.stats import summarize
from disklab.fio.parse import DIRECTIONS
from disklab.report.html.charts import MAX_LINES, ChartSpec, Planned, SeriesSpec, planned, y_axis_label
from disklab.store.records import RunRecord

# (stored kind, chart id's part, title's name, unit, scale from the stored unit)
_FIGURES = (
    ("iops", "", "IOPS", "IOPS", 1.0),
    ("bw_bytes_per_s", "mb-per-s-", "MB/s", "MB/s", 1e6),
    ("lat_mean_ns", "latency-", "Mean latency", "µs", 1e3),
)
_METRIC_OF = {"iops": "iops", "bw_bytes_per_s": "mb_per_s", "lat_mean_ns": "lat_mean_us"}  # report --metrics
_CAPTIONS = {
    "iops": "IOPS per logged interval, jobs combined",
    "bw_bytes_per_s": "MB/s per logged interval, jobs combined · MB/s = 10^6 bytes/s",
    "lat_mean_ns": "mean total latency per logged interval, the jobs' means weighted by their IOPS",
}


def moving_average_window(points: int) -> int:
    """Intervals in a centred moving average: an odd tenth of the series, at least 3; 0 when the series is too
    short to average over (fewer than twice the window)."""
    window = max(3, points // 10 // 2 * 2 + 1)
    return window if points >= 2 * window - 1 else 0


def moving_average(points: Sequence[tuple[float, float]], window: int) -> tuple[tuple[float, float], ...]:
    """The mean of each `window` consecutive points, at the middle one's time; none where the window is not full."""
    half = window // 2
    return tuple((points[i][0], sum(y for _, y in points[i - half:i + half + 1]) / window)
                 for i in range(half, len(points) - half))


def time_series_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    by_label: dict[str, list[Planned]] = {}
    for record in records:
        for test in planned(record, records):
            if any(s.kind == "iops" for t in test.tests for s in t.series):
                by_label.setdefault(test.label, []).append(test)
    charts = []
    for n, (label, tests) in enumerate(by_label.items(), start=1):
        for kind, id_part, name, unit, scale in _FIGURES:
            chart = _chart(f"series-{id_part}{n}", label, tests, kind, name, unit, scale)
            if chart:
                charts.append(chart)
    return charts


def _chart(chart_id: str, label: str, tests: Sequence[Planned], kind: str, name: str, unit: str, scale: float) \
        -> ChartSpec | None:
    several_runs = len(tests) > 1
    lines = []
    for test in tests:
        for direction in DIRECTIONS:
            line = _mean_series(test, kind, direction, scale)
            if line.points:
                lines.append(SeriesSpec(" · ".join([test.run] * several_runs + [direction]), line.points,
                                        line.spreads, (test.flags(),) * len(line.points)))
    if not lines:
        return None
    windows = [moving_average_window(len(line.points)) for line in lines]
    averaged = [SeriesSpec(f"{line.name} · moving average", moving_average(line.points, window))
                for line, window in zip(lines, windows) if window]
    averages = 2 * len(lines) <= MAX_LINES and len(averaged) == len(lines)  # every line its average, or none
    steps = [b[0] - a[0] for line in lines for a, b in zip(line.points, line.points[1:])]
    interval = min(steps) if steps else 0
    series = (*lines, *averaged) if averages else tuple(lines)
    return ChartSpec(
        id=chart_id, kind="line", title=f"{name} over time · {label}",
        caption=_CAPTIONS[kind] + ", one line per " + "run and " * several_runs + "direction"
        + (f" · moving average: centred, over {_window_text(set(windows), interval)}" if averages else "")
        + " · repeated tests: the mean of the repeats" * any(len(t.tests) > 1 for t in tests),
        x_label="time from start of measurement (s)", y_label=y_axis_label(unit, lines), series=series, bands=True,
        metric=_METRIC_OF[kind], tests=(label,),
    )


def _window_text(windows: set[int], interval: float) -> str:
    """'5 logged intervals (5 s)'; windows that differ between lines are each named."""
    return " / ".join(f"{w} logged intervals ({w * interval:g} s)" for w in sorted(windows))


def _mean_series(test: Planned, kind: str, direction: str, scale: float) -> SeriesSpec:
    by_t: dict[int, list[float]] = {}
    for stored in test.tests:
        for s in stored.series:
            if s.kind == kind and s.direction == direction:
                for p in s.points:
                    by_t.setdefault(p.t_ms, []).append(p.value / scale)
    times = sorted(by_t)
    return SeriesSpec(direction, tuple((t / 1000, sum(by_t[t]) / len(by_t[t])) for t in times),
                      tuple(summarize(by_t[t]) if test.repeats and len(by_t[t]) > 1 else None for t in times))
