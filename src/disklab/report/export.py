"""Machine-readable exports of one run: JSON (versioned, raw units), CSV and Markdown (display units)."""

import csv
import io
import json
from dataclasses import asdict, fields

from disklab.report.rows import ResultRow, result_rows
from disklab.report.table import format_us, run_title
from disklab.report.views import Pivot, build_view, cell_text
from disklab.store.repository import RunRecord

# Bump when the JSON export changes shape. 1: first version. 2: tests carry `series` (log_interval);
# a `view` (the suite's pivot) when the suite declares one.
JSON_FORMAT_VERSION = 2
FORMATS = ("table", "json", "csv", "markdown")


def to_json(record: RunRecord, flat: bool = False) -> str:
    info = asdict(record.info)
    tests = [
        {
            "seq": t.seq + 1,
            "label": t.label,
            "params": t.params,
            "started_at": t.started_at,
            "finished_at": t.finished_at,
            "usr_cpu_percent": t.usr_cpu_percent,
            "sys_cpu_percent": t.sys_cpu_percent,
            "metrics": {m.direction: _metrics_dict(m) for m in t.metrics},
            "series": _series_dict(t.series),
        }
        for t in record.tests
    ]
    document = {"format": "disklab-run", "format_version": JSON_FORMAT_VERSION, "run": info, "tests": tests}
    view = None if flat else build_view(record)
    if view:
        document["view"] = asdict(view)
    return json.dumps(document, indent=2) + "\n"


def to_csv(record: RunRecord, flat: bool = False) -> str:
    """With a view: the view's table, a blank line, then the per-test rows (--flat: those rows alone)."""
    out = io.StringIO()
    view = None if flat else build_view(record)
    if view:
        view_writer = csv.writer(out, lineterminator="\n")
        view_writer.writerow([view.row_heading, *(c.heading for c in view.columns)])
        for label, cells in zip(view.rows, view.cells):
            view_writer.writerow([label, *(cell_text(cell, column) for cell, column in zip(cells, view.columns))])
        out.write("\n")
    writer = csv.DictWriter(out, fieldnames=[f.name for f in fields(ResultRow)], lineterminator="\n")
    writer.writeheader()
    for row in result_rows(record):
        writer.writerow(row.as_dict())
    return out.getvalue()


def to_markdown(record: RunRecord, flat: bool = False) -> str:
    view = None if flat else build_view(record)
    lines = _view_markdown(view) if view else []
    lines += [
        f"**{run_title(record.info)}**",
        "",
        "| Test | Dir | MB/s | IOPS | Mean lat µs | p50 µs | p99 µs | p99.9 µs |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in result_rows(record):
        cells = [
            row.test, row.direction, f"{row.mb_per_s:,.1f}", f"{row.iops:,.0f}", format_us(row.lat_mean_us),
            format_us(row.clat_p50_us), format_us(row.clat_p99_us), format_us(row.clat_p99_9_us),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "MB/s = 10^6 bytes/s; latency: mean of total latency, percentiles of completion latency."]
    return "\n".join(lines) + "\n"


def _view_markdown(view: Pivot) -> list[str]:
    """The suite's view as its own section, before the per-test table."""
    lines = [
        f"**{_md(view.title)}**",
        "",
        "| " + " | ".join(_md(h) for h in (view.row_heading, *(c.heading for c in view.columns))) + " |",
        "|---|" + "---:|" * len(view.columns),
    ]
    for label, cells in zip(view.rows, view.cells):
        texts = [_md(label), *(cell_text(cell, column) for cell, column in zip(cells, view.columns))]
        lines.append("| " + " | ".join(texts) + " |")
    return lines + ["", " · ".join(view.notes), ""]


def _md(text: str) -> str:
    """Group names and descriptions are the user's text: a '|' would split a cell."""
    return text.replace("|", "\\|")


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
