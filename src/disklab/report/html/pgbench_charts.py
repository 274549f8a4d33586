"""pgbench's charts (M3): TPS and latency over the client sweep, one line per run, and TPS over time, a line per step.

The figures are the sweep rows `show` prints (report/rows.py); steps of the same client count (a repeated run) are
drawn as their mean with its 95 % interval. TPS over time is pgbench's progress report of every second, stored as the
step's 'iops' series.
"""

from collections.abc import Sequence

from disklab.analysis.stats import summarize
from disklab.report.html.charts import MAX_LINES, ChartSpec, SeriesSpec, log_scale, y_axis_label
from disklab.report.labels import run_labels
from disklab.report.rows import SweepRow, is_pgbench_run, is_pgbench_test, sweep_rows
from disklab.store.records import RunRecord

# Clients that span this many times their fewest sit on a log2 axis (1, 2, 4 ... 64 a step apart).
_LOG2_SPAN = 4
# (legend, SweepRow field) of the latency chart: pgbench's mean, and percentiles of its transaction log.
_LATENCIES = (("mean", "latency_mean_ms"), ("p50", "latency_p50_ms"), ("p99", "latency_p99_ms"))


def pgbench_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    labels = run_labels([r.info for r in records])
    runs = [(label, record, sweep_rows(record)) for record, label in zip(records, labels) if is_pgbench_run(record)]
    runs = [(label, record, rows) for label, record, rows in runs if rows]
    charts = []
    if any(len({row.clients for row in rows}) > 1 for _, _, rows in runs):
        charts += _sweep_charts([(label, rows) for label, _, rows in runs])
    for n, (label, record, _) in enumerate(runs, start=1):
        chart = _over_time(f"pgbench-time-{n}", label, record)
        if chart:
            charts.append(chart)
    return charts


def _sweep_charts(runs: list[tuple[str, list[SweepRow]]]) -> list[ChartSpec]:
    clients = sorted({row.clients for _, rows in runs for row in rows})
    ticks = tuple((float(c), str(c)) for c in clients)
    log2 = clients[-1] >= _LOG2_SPAN * clients[0]
    x_label = "clients" + " (log2 scale)" * log2
    several = len(runs) > 1
    tps = tuple(_line(label, rows, "tps") for label, rows in runs)
    latency = [_line(f"{label} · {name}" if several else name, rows, field)
               for label, rows in runs for name, field in _LATENCIES]
    latency = tuple(line for line in latency if line.points)[:MAX_LINES]
    return [
        ChartSpec(
            id="pgbench-tps-clients", kind="line", title="pgbench: TPS over clients",
            caption="transactions per second (excluding connection set-up, as pgbench reports it) per client count, "
            "one line per run",
            x_label=x_label, y_label=y_axis_label("TPS", tps), series=tps, x_ticks=ticks, x_log2=log2,
            y_log=log_scale(tps), sample="steps", metric="tps",
        ),
        ChartSpec(
            id="pgbench-latency-clients", kind="line", title="pgbench: latency over clients",
            caption="latency per transaction per client count: pgbench's mean, and p50 and p99 from its transaction "
            "log" + ", one line of each per run" * several,
            x_label=x_label, y_label=y_axis_label("latency ms", latency), series=latency, x_ticks=ticks, x_log2=log2,
            y_log=log_scale(latency), sample="steps", metric="lat_mean_us",
        ),
    ]


def _line(name: str, rows: Sequence[SweepRow], field: str) -> SeriesSpec:
    """A point per client count: the step's figure, or the mean of the steps that ran it, with their summary."""
    by_clients: dict[int, list[float]] = {}
    for row in rows:
        value = getattr(row, field)
        if value is not None:
            by_clients.setdefault(row.clients, []).append(value)
    clients = sorted(by_clients)
    return SeriesSpec(name, tuple((c, sum(by_clients[c]) / len(by_clients[c])) for c in clients),
                      tuple(summarize(by_clients[c]) if len(by_clients[c]) > 1 else None for c in clients))


def _over_time(chart_id: str, label: str, record: RunRecord) -> ChartSpec | None:
    """pgbench's TPS of each second, a line per step; None when no step ran long enough to report one."""
    steps = [test for test in record.tests if is_pgbench_test(test)]
    lines = []
    for test in steps:
        points = [p for s in test.series if s.kind == "iops" for p in s.points]
        if points:
            name = test.label + (f" · pass {test.attempt}" if test.attempt > 1 else "")
            lines.append(SeriesSpec(name, tuple((p.t_ms / 1000, p.value) for p in points)))
    if not lines:
        return None
    shown = tuple(lines[:MAX_LINES])
    return ChartSpec(
        id=chart_id, kind="line", title=f"pgbench: TPS over time · {label}", runs=(record.info.id,),
        caption="transactions per second in each second of each step (pgbench's progress report), one line per step"
        + (f" · the first {MAX_LINES} of {len(lines)} steps" if len(lines) > MAX_LINES else ""),
        x_label="time from start of the step (s)", y_label=y_axis_label("TPS", shown), series=shown,
        y_log=log_scale(shown), metric="tps",
    )
