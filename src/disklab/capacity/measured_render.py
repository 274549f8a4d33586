"""The planner held to measured arrays (measured.py) as a Rich table with its notes, and as plain data for JSON
exports (compare's, capacity validate's) and the report's page."""

import io
import json

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from disklab.capacity.measured import HELD_PERCENT, HeldArray, HeldSeries
from disklab.capacity.model import MODEL_NOTE
from disklab.report.csv_text import CsvWriter
from disklab.report.html.model import TableModel
from disklab.report.runs import markdown_cell
from disklab.report.terminal import terminal_text

# `capacity validate --runs` as JSON. Bump when it changes shape. 1: first version.
JSON_FORMAT_VERSION = 1
FORMATS = ("table", "markdown", "csv", "json")

HEADINGS = ["Run", "Array", "Test", "Member alone", "Predicted", "Measured", "Error", "Limit"]


def _iops(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f} IOPS" if value >= 100 else f"{value:,.1f} IOPS"


def _array_name(array: HeldArray) -> str:
    return array.run.name or array.layout or f"run {array.run.id}"


def rows(held: HeldSeries) -> list[list[str]]:
    return [[str(a.run.id), _array_name(a), f.test, _iops(f.member_iops), _iops(f.predicted_iops),
             _iops(f.measured_iops), f"{f.error_percent:+.0f} %", f.limit] for a in held.arrays for f in a.figures]


def summary_lines(held: HeldSeries) -> list[str]:
    """What the figures were predicted from, how close they came, the band they support, and what was not
    predicted and why."""
    lines = []
    for a in held.arrays:
        if a.reason:
            lines.append(f"run {a.run.id} ({_array_name(a)}): no prediction: {a.reason}")
            continue
        errors = [abs(f.error_percent) for f in a.figures]
        told = (f"{sum(f.held for f in a.figures)} of {len(errors)} within +/-{HELD_PERCENT:g} %, the largest "
                f"error {max(errors):.0f} %") if errors else "no test predicted"
        lines.append(f"run {a.run.id} ({_array_name(a)}): planned as '{a.layout}' from member run "
                     f"{a.member_run.id} ({a.member_run.target}): {told}")
        lines += [f"run {a.run.id}: not predicted: {why}" for why in a.left_out]
    band = held.band
    if band.validated:
        lines.append(f"band these runs support: {band.text()} around the prediction from a measured member "
                     f"({band.points} figures of {band.studies} arrays; each array left out in turn held "
                     f"{band.coverage:.0%} of its figures inside the band built from the others)")
    elif held.figures:
        lines.append(f"band these runs support: none yet: {band.why.removeprefix('not validated: ')}")
    lines.append(f"predicted: the planner's {MODEL_NOTE}, with each member as measured alone (error = measured / "
                 "predicted - 1)")
    return lines


def renderables(held: HeldSeries) -> list[RenderableType]:
    table = Table(title="The planner's prediction from the member measured alone", title_justify="left")
    for heading in HEADINGS:
        table.add_column(heading, justify="left" if heading in ("Array", "Test", "Limit") else "right")
    for row in rows(held):
        table.add_row(*(terminal_text(cell) for cell in row))
    out: list[RenderableType] = [table] if held.figures else []
    return out + [Text(terminal_text(line)) for line in summary_lines(held)]


def report_table(held: HeldSeries) -> TableModel:
    """The report's table: the same rows and notes as the terminal's."""
    return TableModel("The planner's prediction from the member measured alone", tuple(HEADINGS),
                      tuple(tuple(row) for row in rows(held)), tuple(summary_lines(held)))


def as_data(held: HeldSeries) -> dict:
    """Plain data: each array with its member run, its layout in the planner's words and each figure."""
    band = held.band
    return {
        "arrays": [
            {"run": a.run.id, "name": a.run.name, "member_run": a.member_run and a.member_run.id,
             "member": a.member_run and a.member_run.target, "layout": a.layout, "reason": a.reason,
             "not_predicted": list(a.left_out),
             "figures": [{"seq": f.seq, "test": f.test, "params": f.params, "member_iops": f.member_iops,
                          "predicted_iops": f.predicted_iops, "measured_iops": f.measured_iops,
                          "error_percent": f.error_percent, "within_percent": HELD_PERCENT, "held": f.held,
                          "limit": f.limit} for f in a.figures]}
            for a in held.arrays
        ],
        "band": {"low": band.low, "high": band.high, "text": band.text(), "points": band.points,
                 "arrays": band.studies, "coverage": band.coverage, "basis": band.why},
        "notes": summary_lines(held),
    }


def to_markdown(held: HeldSeries) -> str:
    lines = ["| " + " | ".join(HEADINGS) + " |", "|---|---|---|" + "---:|" * (len(HEADINGS) - 4) + "---|"]
    lines += ["| " + " | ".join(markdown_cell(cell) for cell in row) + " |" for row in rows(held)]
    return "\n".join(lines + [""] + [f"- {terminal_text(line)}" for line in summary_lines(held)]) + "\n"


def to_csv(held: HeldSeries) -> str:
    """One line per test of each array: raw IOPS, the error in per cent, what limits the prediction."""
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.writerow(["run", "array", "layout", "member_run", "test", "member_iops", "predicted_iops", "measured_iops",
                     "error_percent", "limit"])
    for a in held.arrays:
        for f in a.figures:
            writer.writerow([a.run.id, _array_name(a), a.layout, a.member_run.id, f.test,
                             "" if f.member_iops is None else f.member_iops, f.predicted_iops, f.measured_iops,
                             round(f.error_percent, 2), f.limit])
    return out.getvalue()


def to_json(held: HeldSeries) -> str:
    return json.dumps({"format": "disklab-capacity-measured", "format_version": JSON_FORMAT_VERSION,
                       **as_data(held)}, indent=2) + "\n"


EXPORTERS = {"markdown": to_markdown, "csv": to_csv, "json": to_json}
