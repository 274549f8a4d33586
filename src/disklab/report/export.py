"""Machine-readable exports of one run: JSON (versioned, raw units), CSV and Markdown (display units)."""

import csv
import io
import json
from dataclasses import asdict, fields

from disklab.report.rows import ResultRow, result_rows
from disklab.report.table import format_us, run_title
from disklab.store.repository import RunRecord

# Bump when the JSON export changes shape. 1: first version.
JSON_FORMAT_VERSION = 1
FORMATS = ("table", "json", "csv", "markdown")


def to_json(record: RunRecord) -> str:
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
        }
        for t in record.tests
    ]
    document = {"format": "disklab-run", "format_version": JSON_FORMAT_VERSION, "run": info, "tests": tests}
    return json.dumps(document, indent=2) + "\n"


def to_csv(record: RunRecord) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=[f.name for f in fields(ResultRow)], lineterminator="\n")
    writer.writeheader()
    for row in result_rows(record):
        writer.writerow(row.as_dict())
    return out.getvalue()


def to_markdown(record: RunRecord) -> str:
    lines = [
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


def _metrics_dict(m) -> dict:
    d = asdict(m)
    d.pop("direction")
    return d


EXPORTERS = {"json": to_json, "csv": to_csv, "markdown": to_markdown}
