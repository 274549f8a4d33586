"""The list of stored runs in every format of `disklab runs`; light, so that listing loads nothing else."""

import io
import json
import textwrap
from collections.abc import Iterable, Iterator
from dataclasses import fields
from datetime import datetime

from disklab.report.csv_text import CsvWriter
from disklab.report.terminal import terminal_text
from disklab.store.records import RunInfo
from disklab.store.series import series_id
from disklab.units import format_duration

FORMATS = ("table", "json", "csv", "markdown")
# Bump when the runs list's JSON changes shape. 1: first version. 2: each run's "tool", what ran its tests
# ("fio-3.33 libaio", "pgbench / PostgreSQL 17.2": a pgbench run's "fio_version" is PostgreSQL's); CSV's last column.
RUNS_JSON_FORMAT_VERSION = 2
RUNS_HEADINGS = ("Run", "Name", "Started (UTC)", "Suite", "Target", "Tests run", "Duration", "Status",
                 "Host")


def markdown_cell(text: str) -> str:
    """Names, labels and descriptions are the user's text: a '|' would split a Markdown table's cell, a line feed
    its row, and Markdown is read in terminals too, so controls are escaped as there."""
    return terminal_text(text).replace("|", "\\|")


def run_cells(info: RunInfo) -> list[str]:
    """One row of the runs list, in RUNS_HEADINGS' order: the terminal table and Markdown show the same, a run on
    one line (its controls escaped, line feeds too)."""
    series = series_id(info)
    name = f"{info.name or ''} [series:{series}]".lstrip() if series is not None else info.name or ""
    cells = [str(info.id), name, info.started_at, info.suite_name, info.shown_target, ran_tests(info), duration(info),
             info.status, info.hostname]
    return [terminal_text(cell) for cell in cells]


def ran_tests(info: RunInfo) -> str:
    """How many fio tests a run ran, every repeat, round and probe counted: '24' once complete, '10 of 24' before.

    Only a fixed plan knows its count beforehand: --precision plans each test's least number of runs and repeats
    until the figure is known; rounds and searches plan their most and stop when they may; so a complete run
    says what it ran, and an unfinished one what it planned, a precision run's as 'at least'."""
    if info.status == "complete":
        return f"{info.finished_tests:,}"
    least = "at least " if info.options.get("precision") is not None else ""
    return f"{info.finished_tests:,} of {least}{info.planned_tests:,}"


def duration(info: RunInfo) -> str:
    """Wall time from start to finish ('12m05s'); '-' while a run has no end (running, or killed before one)."""
    try:
        seconds = (datetime.fromisoformat(info.finished_at) - datetime.fromisoformat(info.started_at)).total_seconds()
    except (TypeError, ValueError):  # no end yet; a time an older disklab or an import wrote otherwise
        return "-"
    return format_duration(seconds) if seconds >= 0 else "-"


def counted_tests(info: RunInfo) -> str:
    """'1 test run', '24 tests run', '10 of 24 tests run': the noun agrees with the last number."""
    last = info.finished_tests if info.status == "complete" else info.planned_tests
    return f"{ran_tests(info)} test{'' if last == 1 else 's'}"


def runs_to_json(infos: Iterable[RunInfo], matched: int) -> Iterator[str]:
    """`matched`: the runs the filters matched, of which `infos` holds the newest. Written run by run, as
    json.dumps(document, indent=2) would write the whole: a list of every run streams in flat memory."""
    head = {"format": "disklab-runs", "format_version": RUNS_JSON_FORMAT_VERSION, "matched": matched}
    opening = json.dumps(head, indent=2)[:-2] + ',\n  "runs": ['
    separator = "\n"
    for info in infos:
        yield opening + separator + textwrap.indent(json.dumps(_run_dict(info), indent=2), "    ")
        opening, separator = "", ",\n"
    yield opening + ("]\n}\n" if opening else "\n  ]\n}\n")


def runs_to_csv(infos: Iterable[RunInfo], matched: int) -> Iterator[str]:
    """Every field of a run, its options and origin as JSON; a chunk of rows at a time."""
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.writerow(_RUN_FIELDS)
    for number, info in enumerate(infos, start=1):
        row = list(_run_dict(info).values())
        row[_OPTIONS] = json.dumps(info.options, sort_keys=True)
        row[_ORIGIN] = "" if info.origin is None else json.dumps(info.origin, sort_keys=True)
        writer.writerow(row)
        if number % _CHUNK_ROWS == 0:
            yield _taken(out)
    yield _taken(out)


def runs_to_markdown(infos: Iterable[RunInfo], matched: int) -> Iterator[str]:
    yield "| " + " | ".join(RUNS_HEADINGS) + " |\n|---:|" + "---|" * (len(RUNS_HEADINGS) - 1) + "\n"
    for info in infos:
        yield "| " + " | ".join(markdown_cell(cell) for cell in run_cells(info)) + " |\n"


def _taken(out: io.StringIO) -> str:
    """What `out` holds, which it then no longer does."""
    text = out.getvalue()
    out.seek(0)
    out.truncate()
    return text


_CHUNK_ROWS = 1000
_RUN_FIELDS = [*(f.name for f in fields(RunInfo)), "tool"]
_OPTIONS = _RUN_FIELDS.index("options")
_ORIGIN = _RUN_FIELDS.index("origin")


def _run_dict(info: RunInfo) -> dict:
    """asdict without its deep copy, which would be most of the time of listing 10,000 runs; a dataclass's
    attributes are its fields, in their order; then what ran its tests."""
    return {**vars(info), "tool": info.tool}


RUNS_EXPORTERS = {"json": runs_to_json, "csv": runs_to_csv, "markdown": runs_to_markdown}
