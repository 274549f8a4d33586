"""The time series of tests run with log_interval, one row per interval in display units, for `show --series`."""

from dataclasses import dataclass

from rich.table import Table

from disklab.report.table import format_us
from disklab.store.records import RunRecord, StoredTest

Values = tuple[float | None, ...]  # one per direction of the table; None: nothing logged in that interval


@dataclass(frozen=True)
class IntervalRow:
    t_s: float  # end of the interval, from the start of measurement
    iops: Values
    mb_per_s: Values  # 10^6 bytes per second
    lat_mean_us: Values


@dataclass(frozen=True)
class SeriesTable:
    seq: int
    test: str
    directions: tuple[str, ...]
    rows: tuple[IntervalRow, ...]


def series_tables(record: RunRecord) -> list[SeriesTable]:
    return [_series_table(test) for test in record.tests if test.series]


def _series_table(test: StoredTest) -> SeriesTable:
    directions = tuple(dict.fromkeys(s.direction for s in test.series))
    values = {(s.kind, s.direction): {p.t_ms: p.value for p in s.points} for s in test.series}
    times = sorted({p.t_ms for s in test.series for p in s.points})

    def column(kind: str, t_ms: int, scale: float) -> Values:
        found = (values.get((kind, d), {}).get(t_ms) for d in directions)
        return tuple(None if v is None else v / scale for v in found)

    rows = tuple(
        IntervalRow(t / 1000, column("iops", t, 1), column("bw_bytes_per_s", t, 1e6), column("lat_mean_ns", t, 1e3))
        for t in times
    )
    return SeriesTable(seq=test.seq + 1, test=test.label, directions=directions, rows=rows)


def render_series_table(table: SeriesTable) -> Table:
    rendered = Table(title=f"{table.seq}. {table.test}", title_justify="left")
    rendered.add_column("t s", justify="right")
    # pgbench's transactions: their rate is TPS, and they move no bytes disklab counts
    data = [i for i, d in enumerate(table.directions) if d != "transaction"]
    for heading, places in (("IOPS", range(len(table.directions))), ("MB/s", data),
                            ("Mean lat µs", range(len(table.directions)))):
        for i in places:
            direction = table.directions[i]
            rendered.add_column("TPS" if (heading, direction) == ("IOPS", "transaction") else f"{heading} {direction}",
                                justify="right")
    for row in table.rows:
        rendered.add_row(
            f"{row.t_s:g}",
            *(_number(v, "{:,.0f}") for v in row.iops),
            *(_number(row.mb_per_s[i], "{:,.1f}") for i in data),
            *(format_us(v) for v in row.lat_mean_us),
        )
    rendered.caption = "per interval, jobs combined · MB/s = 10^6 bytes/s · latency: mean of total latency"
    return rendered


def _number(value: float | None, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)
