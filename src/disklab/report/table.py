"""The Rich table a run is shown as in the terminal."""

from rich.table import Table

from disklab.report.rows import ResultRow
from disklab.store.repository import RunInfo


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
