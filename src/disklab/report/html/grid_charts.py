"""Queue depth x jobs heat maps: a run's tests that differ only in iodepth and numjobs, a cell per pair.

Sequential workloads in MB/s, random ones in IOPS (as the quick profile's bars); repeated tests as the mean of
their repeats, the 95 % interval in each cell's tooltip. A pair the run did not measure is an empty cell.
"""

from collections.abc import Sequence

from disklab.report.html.charts import ChartSpec, Planned, SeriesSpec, describe, log_scale, planned
from disklab.report.labels import axis_label
from disklab.store.records import RunRecord

GRID_MIN_VALUES = 2  # queue depths and jobs each take at least this many values: else a line says it better
_AXES = ("iodepth", "jobs")


def grid_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    charts = []
    for record in records:
        grids: dict[tuple, dict[tuple[int, int], Planned]] = {}
        for test in planned(record, records):
            key = tuple(sorted((k, repr(v)) for k, v in test.params.items() if k not in _AXES))
            cells = grids.setdefault(key, {})
            cells.setdefault((test.params["iodepth"], test.params["jobs"]), test)
        for cells in grids.values():
            depths, jobs = sorted({d for d, _ in cells}), sorted({j for _, j in cells})
            if len(depths) >= GRID_MIN_VALUES and len(jobs) >= GRID_MIN_VALUES:
                charts.append(_heatmap(f"grid-{len(charts) + 1}", cells, depths, jobs, len(records) > 1))
    return charts


def _heatmap(chart_id: str, cells: dict[tuple[int, int], Planned], depths: list[int], jobs: list[int],
             several_runs: bool) -> ChartSpec:
    first = next(iter(cells.values()))
    metric, unit = ("mb_per_s", "MB/s") if first.params["pattern"] == "sequential" else ("iops", "IOPS")
    rows = []
    for depth in depths:
        tests = [cells.get((depth, j)) for j in jobs]
        found = [(float(c), t) for c, t in enumerate(tests) if t is not None and t.figure(metric) is not None]
        rows.append(SeriesSpec(axis_label("iodepth", depth), tuple((c, t.figure(metric)) for c, t in found),
                               tuple(t.spread(metric) for _, t in found), tuple(t.flags() for _, t in found)))
    mixed = " · read + write" if first.params["direction"] == "mixed" else ""
    return ChartSpec(
        id=chart_id, kind="heatmap",
        title=f"{unit} by queue depth and jobs · {describe(first.params, 'iodepth', 'jobs')}"
        + f" · {first.run}" * several_runs,
        caption=f"{unit} of each queue depth (row) and number of jobs (column){mixed}, the figure in its cell, "
        "the colour from the scale beside"
        + (" (log scale)" if log_scale(rows) else "") + " · an empty cell: a pair not measured"
        + (" · MB/s = 10^6 bytes/s" if unit == "MB/s" else ""),
        x_label="jobs (numjobs)", y_label=f"queue depth (iodepth) · {unit}", series=tuple(rows),
        x_ticks=tuple((float(c), axis_label("jobs", j)) for c, j in enumerate(jobs)), y_log=log_scale(rows),
        metric=metric,
    )
