"""Machine-readable exports of one run: JSON (versioned, raw units), CSV and Markdown (display units)."""

import io
import json
from dataclasses import asdict, fields
from functools import partial

from disklab.analysis.findings import findings
from disklab.analysis.repeats import planned_tests, repeated
from disklab.report.csv_text import CsvDictWriter
from disklab.report.parts import Parts
from disklab.report.rows import (
    ResultRow, SummaryRow, SweepRow, is_pgbench_run, is_pgbench_test, result_row, result_rows, summary_rows, sweep_rows,
)
from disklab.report.runs import markdown_cell
from disklab.report.table import (
    P99_NOTE, SPREAD_NOTE, SWEEP_HEADINGS, SWEEP_NOTE, format_spread, format_us, run_title, spread_warning, sweep_cells,
)
from disklab.report.terminal import terminal_text
from disklab.report.views import Pivot, build_view, cell_text
from disklab.store.records import RunRecord

# Bump when the JSON export changes shape. 1: first version. 2: tests carry `series` (log_interval);
# a `view` (the suite's pivot) when the suite declares one. 3: `planned`, per planned test the summary (n, mean,
# stdev, ci95) of IOPS and bandwidth over its repeats; tests carry `plan_index` and `attempt`. 4: `environment`
# and `outcomes` of the run; tests carry `flags` (cache traps). 5: pgbench runs carry `sweep`, one row per client
# count (SweepRow), and their tests' metrics are under the direction `transaction`. 6: the `view` carries `best_of`
# (run --best-of: its cells are each test's best pass, not the mean). 7: `findings`, what the figures say (start vs
# end, capped tests, the spec sheet, a peak then a decline, read-share dips), each with its figures and basis.
# 8: `notes`, what the run's user wrote about it (disklab note), each {text, added_at}, oldest first. 9: `undrawn`,
# present when a derived part (planned, findings, view, sweep) could not be drawn: each {part, reason} (a bug).
# 10: the run's `tool`, what ran its tests ("fio-3.33 libaio", "pgbench / PostgreSQL 17.2": a pgbench run's
# `fio_version` is PostgreSQL's).
JSON_FORMAT_VERSION = 10


def to_json(record: RunRecord, flat: bool = False, parts: Parts | None = None) -> str:
    """`parts` (when given) collects the derived parts left out, which the document also names (`undrawn`)."""
    parts = Parts() if parts is None else parts
    info = {**asdict(record.info), "tool": record.info.tool}
    tests = [
        {
            "seq": t.seq + 1,
            "label": t.label,
            "plan_index": t.plan_index,
            "attempt": t.attempt,
            "params": t.params,
            "started_at": t.started_at,
            "finished_at": t.finished_at,
            "usr_cpu_percent": t.usr_cpu_percent,
            "sys_cpu_percent": t.sys_cpu_percent,
            "metrics": {m.direction: _metrics_dict(m) for m in t.metrics},
            "series": _series_dict(t.series),
            "flags": dict(t.flags),
        }
        for t in record.tests
    ]
    document = {"format": "disklab-run", "format_version": JSON_FORMAT_VERSION, "run": info, "tests": tests,
                "planned": parts.draw("planned", partial(_planned, record), []), "environment": record.env,
                "outcomes": record.outcomes,
                "findings": parts.draw("findings", lambda: [finding.as_dict() for finding in findings(record)], []),
                "notes": [asdict(kept) for kept in record.notes]}
    view = None if flat else parts.draw("view", partial(build_view, record))
    if view:
        document["view"] = asdict(view)
    if is_pgbench_run(record):
        document["sweep"] = parts.draw("sweep", lambda: [row.as_dict() for row in sweep_rows(record)], [])
    if parts.undrawn:
        document["undrawn"] = [asdict(undrawn) for undrawn in parts.undrawn]
    return json.dumps(document, indent=2) + "\n"


def to_csv(record: RunRecord, flat: bool = False, parts: Parts | None = None) -> str:
    """One tidy table that pandas, csvkit or a spreadsheet load as is: one header, one row per stored test and
    direction (every repeat, round and host its own row), the run's id on every row so that runs concatenate, each
    figure in a column whose name ends in its unit. The suite's view and the repeats' summaries are derived figures:
    they stay in the table, Markdown and JSON (its `view` and `planned`); `flat` and `parts` change nothing here."""
    out = io.StringIO()
    run = {"run_id": record.info.id, "run_name": record.info.name or ""}
    if is_pgbench_run(record):
        writer = CsvDictWriter(out, [*run, *(f.name for f in fields(SweepRow))])
        writer.writeheader()
        writer.writerows({**run, **row.as_dict()} for row in sweep_rows(record))
        return out.getvalue()
    writer = CsvDictWriter(out, CSV_COLUMNS)
    writer.writeheader()
    for test in record.tests:
        if is_pgbench_test(test):
            continue
        place = {"planned_test": test.plan_index + 1, "attempt": test.attempt, "host": test.host or "",
                 "block_size_bytes": test.params["bs"], "flags": ";".join(flag for flag, _ in test.flags)}
        for m in test.metrics:
            writer.writerow({**run, **place, **result_row(test, m).as_dict()})
    return out.getvalue()


# The CSV's columns: the run, where the row sits in it, what fio ran, then the figures (units in the names: MB/s is
# 10^6 bytes per second; latencies in microseconds; mean of total latency, percentiles of completion latency).
CSV_COLUMNS = [
    "run_id", "run_name", "seq", "planned_test", "attempt", "host", "test", "direction", "pattern", "block_size",
    "block_size_bytes", "iodepth", "jobs", *(f.name for f in fields(ResultRow) if f.name not in (
        "seq", "test", "direction", "pattern", "block_size", "iodepth", "jobs")), "flags",
]


def to_markdown(record: RunRecord, flat: bool = False, parts: Parts | None = None) -> str:
    """`parts` (when given) collects the suite's view when it cannot be drawn; the figures are shown without it."""
    parts = Parts() if parts is None else parts
    if is_pgbench_run(record):
        lines = [f"**{markdown_cell(run_title(record.info))}**", "", "| " + " | ".join(SWEEP_HEADINGS) + " |",
                 "|" + "---:|" * len(SWEEP_HEADINGS)]
        lines += ["| " + " | ".join(sweep_cells(row)) + " |" for row in sweep_rows(record)]
        return "\n".join(lines + ["", SWEEP_NOTE + "."]) + "\n"
    view = None if flat else parts.draw("the suite's view", partial(build_view, record))
    lines = _view_markdown(view) if view else []
    if repeated(record):
        return "\n".join(lines + _summary_markdown(record)) + "\n"
    lines += [
        f"**{markdown_cell(run_title(record.info))}**",
        "",
        "| Test | Dir | MB/s | IOPS | Mean lat µs | p50 µs | p99 µs | p99.9 µs |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result_rows(record):
        cells = [
            markdown_cell(row.test), row.direction, f"{row.mb_per_s:,.1f}", f"{row.iops:,.0f}", format_us(row.lat_mean_us),
            format_us(row.clat_p50_us), format_us(row.clat_p99_us), format_us(row.clat_p99_9_us),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "MB/s = 10^6 bytes/s; latency: mean of total latency, percentiles of completion latency."]
    return "\n".join(lines) + "\n"


def _summary_markdown(record: RunRecord) -> list[str]:
    rows = summary_rows(record)
    lines = [
        f"**{markdown_cell(run_title(record.info))}**",
        "",
        "| Test | Dir | n | MB/s | +/- | IOPS | +/- | Mean lat µs | p99 µs |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        cells = [
            markdown_cell(row.test), row.direction, str(row.iops.n), f"{row.mb_per_s.mean:,.1f}", format_spread(row.mb_per_s),
            f"{row.iops.mean:,.0f}", format_spread(row.iops), format_us(row.lat_mean_us),
            format_us(row.clat_p99_us),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    warning = spread_warning(rows, record.info.options)
    notes = ["", f"{SPREAD_NOTE}; MB/s = 10^6 bytes/s; {P99_NOTE}."]
    return lines + notes + (["", f"**{terminal_text(warning)}**"] if warning else [])


def _planned(record: RunRecord) -> list[dict]:
    """Per planned test, the spread of its repeats; raw units, like `tests`."""
    by_direction: dict[int, dict[str, SummaryRow]] = {}
    for row in summary_rows(record):
        by_direction.setdefault(row.plan_index, {})[row.direction] = row
    return [
        {
            "plan_index": plan_index,
            "label": tests[0].label,
            "seqs": [t.seq + 1 for t in tests],
            "summary": {
                direction: {
                    "iops": row.iops.as_dict(),
                    "bw_bytes_per_s": _scaled(row.mb_per_s.as_dict(), 1e6),
                    "lat_mean_ns": row.lat_mean_us * 1e3,  # over every I/O of the repeats
                    "clat_percentiles_ns": row.clat_percentiles_ns,  # of their json+ histograms merged
                    "clat_ios": row.clat_ios,
                    "too_wide": row.too_wide,
                }
                for direction, row in by_direction.get(plan_index, {}).items()  # a failed test has none
            },
        }
        for plan_index, tests in planned_tests(record).items()
    ]


def _scaled(summary: dict, factor: float) -> dict:
    """A summary in other units: every figure scales but n and the percentage."""
    return {k: v if k in ("n", "ci95_percent") or v is None else v * factor for k, v in summary.items()}


def _view_markdown(view: Pivot) -> list[str]:
    """The suite's view as its own section, before the per-test table."""
    lines = [
        f"**{markdown_cell(view.title)}**",
        "",
        "| " + " | ".join(markdown_cell(h) for h in (view.row_heading, *(c.heading for c in view.columns))) + " |",
        "|---|" + "---:|" * len(view.columns),
    ]
    for label, cells in zip(view.rows, view.cells):
        texts = [markdown_cell(label), *(cell_text(cell, column) for cell, column in zip(cells, view.columns))]
        lines.append("| " + " | ".join(texts) + " |")
    return lines + ["", terminal_text(" · ".join(view.notes)), ""]


def _series_dict(series) -> dict:
    """Compact: {kind: {direction: [[t_ms, value], ...]}}; empty for tests without log_interval."""
    d: dict = {}
    for s in series:
        d.setdefault(s.kind, {})[s.direction] = [[p.t_ms, p.value] for p in s.points]
    return d


def _metrics_dict(m) -> dict:
    d = asdict(m)
    d.pop("direction")
    return d


EXPORTERS = {"json": to_json, "csv": to_csv, "markdown": to_markdown}


# Bump when the environment export changes shape. 1: first version.
ENV_JSON_FORMAT_VERSION = 1


def environment_to_json(run_id: int, env: dict, smart: dict[str, dict[str, dict]]) -> str:
    """`show --env --format json`: the registry's values as stored, smartctl's reports verbatim and what changed."""
    from disklab.env.smart import smart_changes

    changes = {
        device: [{"counter": c.label, "unit": c.unit, "before": c.before, "after": c.after, "change": c.delta}
                 for c in smart_changes(phases["before"], phases["after"])]
        for device, phases in sorted(smart.items()) if "before" in phases and "after" in phases
    }
    document = {"format": "disklab-environment", "format_version": ENV_JSON_FORMAT_VERSION, "run_id": run_id,
                "environment": env, "smart": smart, "smart_changes": changes}
    return json.dumps(document, indent=2) + "\n"


def environment_to_markdown(run_id: int, env: dict, smart: dict[str, dict[str, dict]]) -> str:
    """The terminal's tables of `show --env`, as Markdown sections."""
    from disklab.env.registry import format_value, label_of, ordered
    from disklab.env.smart import format_amount, smart_changes

    lines = [f"**run {run_id} · environment**", "", "| Key | Value |", "|---|---|"]
    lines += [f"| {markdown_cell(label_of(name))} | {markdown_cell(format_value(name, value))} |"
              for name, value in ordered(env)]
    if not env:
        lines = [f"run {run_id} has no recorded environment (it was made by an older disklab)"]
    for device, phases in sorted(smart.items()):
        if "before" not in phases or "after" not in phases:
            continue
        lines += ["", f"**run {run_id} · SMART of {markdown_cell(device)}, before and after**", "",
                  "| Counter | Before | After | Change |", "|---|---:|---:|---:|"]
        lines += [f"| {c.label} | {format_amount(c.before, c.unit)} | {format_amount(c.after, c.unit)} | "
                  f"{format_amount(c.delta, c.unit, signed=True)} |" for c in smart_changes(phases["before"], phases["after"])]
    return "\n".join(lines) + "\n"


ENVIRONMENT_EXPORTERS = {"json": environment_to_json, "markdown": environment_to_markdown}
