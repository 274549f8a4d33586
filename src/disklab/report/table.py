"""The Rich table a run is shown as in the terminal."""

import re
from collections.abc import Sequence

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from disklab.analysis.repeats import TAIL_IOS, planned_tests, repeated
from disklab.analysis.stats import TOO_WIDE_PERCENT, Summary, too_wide
from disklab.report.rows import (
    ResultRow, SummaryRow, SweepRow, is_pgbench_run, result_rows, summary_rows, sweep_rows,
)
from disklab.report.labels import run_labels
from disklab.report.runs import counted_tests
from disklab.report.terminal import terminal_text
from disklab.store.records import RunInfo, RunRecord, StoredTest



def run_label(info: RunInfo) -> str:
    """The name a run goes by on its own: its given name, if any, with its number (run_labels for several runs)."""
    return run_labels([info])[0]


def run_title(info: RunInfo) -> str:
    return (
        f"{run_label(info)} · {info.suite_name} · {info.shown_target} · {info.status}{_resumed(info)} · "
        f"{counted_tests(info)} run · {info.started_at} · {_who(info)} · {info.tool}"
    )


def _who(info: RunInfo) -> str:
    """user@host that made the run (a shared store holds many), and the store an imported one was made in."""
    made = f"{info.user}@{info.hostname}" if info.user else info.hostname
    origin = info.origin or {}
    if "number" in origin:  # store/bundle.py's origin_of
        made += f" (run {origin['number']} of {origin.get('store', 'another store')})"
    return made


def _resumed(info: RunInfo) -> str:
    """' · resumed' (' · resumed 2 times'): its tests did not all run in one go (a reboot, a cache refilled)."""
    times = len(info.options.get("resumed") or ())
    return "" if not times else " · resumed" if times == 1 else f" · resumed {times} times"


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


def flag_lines(record: RunRecord) -> list[str]:
    """Why a figure may not be the disk's: one line per planned test and flag, however many of its passes (or
    rounds) carry it, saying how many did and what they saw, each number as the range over them; a line that
    several tests share is said once, for them all ('every test': a pgbench run's one data set flags each step)."""
    said: dict[str, list[str]] = {}  # what a line says -> the planned tests it is said of
    several = "passes" if repeated(record) else "rounds"
    planned = planned_tests(record).values()
    for tests in planned:
        for flag, line in planned_flags(tests, several):
            said.setdefault(f"{flag}{line}", []).append(tests[0].label)
    return [f"⚑ {'every test' if len(labels) == len(planned) > 1 else ', '.join(labels)}: {line}"
            for line, labels in said.items()]


def planned_flags(tests: Sequence[StoredTest], several: str) -> list[tuple[str, str]]:
    """(flag, what it says) once per flag of one planned test's passes or rounds (`several` names them): how many
    carry it and their messages merged, e.g. ' in 5 of 5 passes: other work ran beside this test: 0.81-1.20 CPUs'."""
    by_flag: dict[str, list[str]] = {}
    for test in tests:
        for flag, message in test.flags:
            by_flag.setdefault(flag, []).append(message)
    return [(flag, (f" in {len(messages)} of {len(tests)} {several}" if len(tests) > 1 else "")
             + f": {merged_message(messages)}") for flag, messages in by_flag.items()]


def merged_message(messages: list[str]) -> str:
    """Several passes' messages of one flag as one: alike but for their numbers, each number as its range over them
    ('1.05-1.32 CPUs'); else each distinct message once."""
    if len({_NUMBER.sub("#", message) for message in messages}) != 1:
        return " | ".join(dict.fromkeys(messages))
    columns = zip(*(_NUMBER.findall(message) for message in messages))
    texts = _NUMBER.split(messages[0])
    merged = [texts[0]]
    for column, text in zip(columns, texts[1:]):
        low = min(column, key=lambda number: float(number.replace(",", "")))
        high = max(column, key=lambda number: float(number.replace(",", "")))
        merged += [low if low == high else f"{low}-{high}", text]
    return "".join(merged)


_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def run_results(record: RunRecord) -> list[RenderableType]:
    """Every test as it ran; or, when tests were repeated, one row per planned test with its spread and a warning;
    pgbench runs as their client sweep."""
    if is_pgbench_run(record):
        return [sweep_table(record.info, sweep_rows(record))]
    if not repeated(record):
        return [results_table(record.info, result_rows(record))]
    rows = summary_rows(record)
    warning = spread_warning(rows, record.info.options)
    # rich's Text drops CR and BS silently: escaped first, they show.
    return [summary_table(record.info, rows)] + ([Text(terminal_text(warning), style="yellow")] if warning else [])


SWEEP_HEADINGS = ("Clients", "TPS", "TPS incl. conn.", "Mean lat ms", "p50 ms", "p99 ms", "Failed", "CPU usr %",
                  "CPU sys %", "iowait %")
SWEEP_NOTE = ("TPS excluding connection set-up, as pgbench reports it; incl. conn.: over the elapsed time with the "
              "clients' connection set-up · latency per transaction, percentiles from pgbench's transaction log · "
              "CPU: the whole machine's (pgbench and the server share it)")


def sweep_cells(row: SweepRow) -> list[str]:
    return [
        str(row.clients), f"{row.tps:,.1f}", _optional(row.tps_including_connections, "{:,.1f}"),
        f"{row.latency_mean_ms:,.3f}", _optional(row.latency_p50_ms, "{:,.3f}"),
        _optional(row.latency_p99_ms, "{:,.3f}"), _optional(row.failed, "{:,}"), f"{row.usr_cpu_percent:.1f}",
        f"{row.sys_cpu_percent:.1f}", _optional(row.iowait_percent, "{:.1f}"),
    ]


def _optional(value, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


def sweep_table(info: RunInfo, rows: list[SweepRow]) -> Table:
    table = Table(title=run_title(info), title_justify="left")
    for heading in SWEEP_HEADINGS:
        table.add_column(heading, justify="right")
    for row in rows:
        table.add_row(*sweep_cells(row))
    table.caption = SWEEP_NOTE
    return table


def summary_table(info: RunInfo, rows: list[SummaryRow]) -> Table:
    table = Table(title=run_title(info), title_justify="left")
    table.add_column("Test", no_wrap=True)
    table.add_column("Dir")
    for heading in ("n", "MB/s", "+/-", "IOPS", "+/-", "Mean lat µs", "p99 µs"):
        table.add_column(heading, justify="right")
    for row in rows:
        table.add_row(
            row.test, row.direction, str(row.iops.n), f"{row.mb_per_s.mean:,.1f}", format_spread(row.mb_per_s),
            f"{row.iops.mean:,.0f}", format_spread(row.iops), format_us(row.lat_mean_us),
            format_us(row.clat_p99_us), style="yellow" if row.too_wide else None,
        )
    table.caption = f"{SPREAD_NOTE} · MB/s = 10^6 bytes/s · {P99_NOTE}"
    return table


SPREAD_NOTE = (f"MB/s and IOPS: means of the repeats; +/-: 95 % confidence interval of the mean (Student's t) in % "
               f"of it; ! wider than {TOO_WIDE_PERCENT:g} %")
# The latency figures, the same in show, compare, report and serve (analysis/repeats.py).
P99_NOTE = (f"mean lat and p99: of every I/O of the repeats (p99 from fio's json+ histograms merged; - from fewer "
            f"than {TAIL_IOS * 100:,} I/Os)")


def format_spread(summary: Summary) -> str:
    if summary.ci95_percent is None:
        return "-"
    return f"{summary.ci95_percent:.1f} %" + (" !" if too_wide(summary) else "")


def spread_warning(rows: list[SummaryRow], options: dict) -> str | None:
    """Names the tests whose spread is too wide to trust, and the fix: a run that had --precision already repeated
    them until its time budget ran out, so more of the same advice would not help it."""
    wide = list(dict.fromkeys(r.test for r in rows if r.too_wide))
    if not wide:
        return None
    fix = ("--precision ran out of its time budget before these settled: give it a longer --max-time, or run them "
           "on a quieter machine" if options.get("precision") is not None else "use --precision or more --repeat")
    return (f"spread too wide to trust (95 % interval beyond +/- {TOO_WIDE_PERCENT:g} % of the mean): "
            f"{', '.join(wide)}; {fix}")


def format_us(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"
