"""The Rich table a run is shown as in the terminal."""

from rich.table import Table

from disklab.plan import Plan
from disklab.suite.model import TestSpec
from disklab.report.rows import ResultRow
from disklab.store.repository import RunInfo
from disklab.units import format_size


def run_title(info: RunInfo) -> str:
    return (
        f"run {info.id} · {info.suite_name} · {info.target} · {info.status} · "
        f"{info.finished_tests}/{info.planned_tests} tests · {info.started_at} · {info.fio_version} {info.fio_engine}"
    )


def results_table(info: RunInfo, rows: list[ResultRow]) -> Table:
    table = Table(title=run_title(info), title_justify="left")
    table.add_column("Test", no_wrap=True)
    table.add_column("Dir")
    for heading in ("MB/s", "IOPS", "Mean lat µs", "p50 µs", "p99 µs", "p99.9 µs"):
        table.add_column(heading, justify="right")
    for row in rows:
        table.add_row(
            row.test,
            row.direction,
            f"{row.mb_per_s:,.1f}",
            f"{row.iops:,.0f}",
            format_us(row.lat_mean_us),
            format_us(row.clat_p50_us),
            format_us(row.clat_p99_us),
            format_us(row.clat_p99_9_us),
        )
    table.caption = "MB/s = 10^6 bytes/s · latency: mean of total latency, percentiles of completion latency"
    return table


def format_us(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def plan_table(plan: Plan, title: str) -> Table:
    """Every test of a plan with the parameters fio will get."""
    table = Table(title=title, title_justify="left")
    for heading in ("#", "Test", "rw", "bs", "QD", "jobs", "data", "runtime", "pause", "writes"):
        table.add_column(heading, no_wrap=heading == "Test")
    for seq, test in enumerate(plan.tests, start=1):
        table.add_row(
            str(seq), test.label, test.fio_rw + (f" {test.rwmixread}% read" if test.direction == "mixed" else ""),
            test.bssplit or format_size(test.bs), str(test.iodepth), str(test.jobs), _data(test),
            f"{'' if test.time_based else '≤'}{test.runtime:g}s", f"{test.pause:g}s", "yes" if test.writes else "no",
        )
    return table


def _data(test: TestSpec) -> str:
    """Where the test does its I/O: a region of the target, or a set of files."""
    if test.file_set:
        return f"{test.nrfiles} x {format_size(test.filesize)}"
    if test.size is None:
        return "whole target" if test.region == "whole" else f"{test.region} of target"
    region = format_size(test.size)
    return f"{region} at {format_size(test.offset)}" if test.offset else region
