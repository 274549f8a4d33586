"""A validation (validation.py) as a Rich table, Markdown, CSV or JSON: every point, each case's summary, the
crossover, the bands and how they are made."""

import csv
import io
import json

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from disklab.capacity.held_out import HeldOutPoint, HeldOutStudy
from disklab.capacity.model import MODEL_NOTE
from disklab.capacity.validation import BAND_PERCENTILE, SPEC_SHEET_QUEUE_DEPTH, Case, Crossover, Validation
from disklab.units import format_size
from disklab.report.terminal import terminal_text

# Bump when the JSON export changes shape. 1: first version. 2: `held_out`, the tables the model never saw, each
# point with the band printed beside its prediction and whether the published figure lies inside it.
JSON_FORMAT_VERSION = 2
FORMATS = ("table", "markdown", "csv", "json")
POINT_HEADINGS = ["Array", "Point", "Published", "Predicted", "Error"]
HELD_OUT_HEADINGS = ["Array", "Point", "Published", "Predicted", "Error", "Band", "Inside"]


def _figure(value: float, unit: str) -> str:
    """80,000 IOPS; 17.7 IOPS; 9.6 TB: no more digits than the published figures carry."""
    text = f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}".rstrip("0").rstrip(".")
    return f"{text} {unit}"


def point_rows(case: Case) -> list[list[str]]:
    return [[p.array, p.label, _figure(p.published, p.unit), _figure(p.predicted, p.unit), f"{p.error_percent:+.1f} %"]
            for p in case.points]


def held_out_rows(study: HeldOutStudy) -> list[list[str]]:
    return [[p.array, p.label, _figure(p.published, p.unit),
             "-" if p.predicted is None else _figure(p.predicted, p.unit),
             "-" if p.error_percent is None else f"{p.error_percent:+.0f} %",
             _band_text(p), {True: "yes", False: "no", None: "-"}[p.inside]] for p in study.points]


def _band_text(point: HeldOutPoint) -> str:
    if point.predicted is None:
        return f"not planned: {point.why_not}"
    return point.band.text() if point.band else "-"


def held_out_line(studies: tuple[HeldOutStudy, ...]) -> str:
    planned = sum(len(s.planned) for s in studies)
    banded = [p for s in studies for p in s.banded]
    inside = sum(bool(p.inside) for p in banded)
    share = f" ({inside / len(banded):.0%}, where a {BAND_PERCENTILE} % band promises {BAND_PERCENTILE} %)" \
        if banded else ""
    return (f"held out: {sum(len(s.points) for s in studies)} published figures the model never saw, {planned} "
            f"planned from catalogue drives, {len(banded)} with a band, {inside} inside it{share}; the bands "
            "above are in-sample (from the tables the model was built against), not yet cross-validated")


def summary(case: Case) -> str:
    return (f"median absolute error {case.median_error_percent:.1f} %, largest {case.max_error_percent:.1f} % "
            f"over {len(case.points)} points")


def crossover_lines(x: Crossover) -> list[str]:
    def lead(at: int | None, crossings: int) -> str:
        start = f"the HDD array leads from {format_size(at)}" if at else "the HDD array never leads"
        return f"{start}, the curves cross {crossings} time{'s' * (crossings != 1)}"

    return [f"crossover in MB/s over block size, published: {lead(x.published_bytes, x.published_crossings)}",
            f"crossover in MB/s over block size, predicted: {lead(x.predicted_bytes, x.predicted_crossings)}"]


def notes(v: Validation) -> list[str]:
    lines = crossover_lines(v.crossover) if v.crossover else []
    lines += [f"error band of {b.kind} drives: {b.described()}" for b in v.bands]
    lines += [f"not checked: {text}" for text in v.skipped]
    if v.held_out:
        lines.append(held_out_line(v.held_out))
    lines.append(
        "error = (predicted - published) / published; the bands are what `capacity show` and `capacity compare` "
        f"print beside each prediction: per drive kind the {BAND_PERCENTILE}th percentile (nearest rank) of the "
        "absolute errors of that kind's predicted points, rounded up; the arithmetic points are not predictions"
    )
    lines.append(
        "errors on IOPS: the published MB/s are IOPS x KiB / 1000 (binary and decimal mixed), so MB/s only says "
        "which array leads; M2's read share was not published, the suites use 50 %; the spec sheet rates 4 KiB "
        f"at QD{SPEC_SHEET_QUEUE_DEPTH}; arithmetic is rounded as published; sources: README.md beside the tables "
        "(disklab/capacity/published/)"
    )
    return lines


def renderables(v: Validation) -> list[RenderableType]:
    items = []
    for case in v.cases:
        table = Table(title=f"{case.name} · {case.source}", title_justify="left", caption=summary(case),
                      caption_justify="left")
        for i, heading in enumerate(POINT_HEADINGS):
            table.add_column(heading, justify="left" if i < 2 else "right")
        for row in point_rows(case):
            table.add_row(*row)
        items.append(table)
    for study in v.held_out:
        table = Table(title=f"held out · {study.source}", title_justify="left", caption=study.summary(),
                      caption_justify="left")
        for i, heading in enumerate(HELD_OUT_HEADINGS):
            table.add_column(heading, justify="left" if i < 2 else "right", overflow="fold")
        for row in held_out_rows(study):
            table.add_row(*(Text(terminal_text(cell)) for cell in row))
        items.append(table)
    return items + [Text(terminal_text(line)) for line in notes(v)]


def to_markdown(v: Validation) -> str:
    lines = []
    for case in v.cases:
        lines += [f"**{case.name}** · `{case.source}`", "", "| " + " | ".join(POINT_HEADINGS) + " |",
                  "|---|---|---:|---:|---:|"]
        lines += ["| " + " | ".join(row) + " |" for row in point_rows(case)]
        lines += ["", summary(case), ""]
    for study in v.held_out:
        lines += [f"**held out** · `{study.source}`", "", "| " + " | ".join(HELD_OUT_HEADINGS) + " |",
                  "|---|---|---:|---:|---:|---|---|"]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in held_out_rows(study)]
        lines += ["", study.summary(), ""]
    return "\n".join(lines + [f"- {line}" for line in notes(v)]) + "\n"


def to_csv(v: Validation) -> str:
    """Points in raw numbers; a blank line; each case's summary; a blank line; the crossover; then the bands."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["case", "source", "array", "point", "unit", "published", "predicted", "error_percent", "kind"])
    for case in v.cases:
        for p in case.points:
            writer.writerow([case.name, case.source, p.array, p.label, p.unit, p.published, p.predicted,
                             p.error_percent, p.kind or ""])
    out.write("\n")
    writer.writerow(["case", "points", "median_abs_error_percent", "max_abs_error_percent"])
    for case in v.cases:
        writer.writerow([case.name, len(case.points), case.median_error_percent, case.max_error_percent])
    out.write("\n")
    if x := v.crossover:
        writer.writerow(["crossover", "published_bytes", "predicted_bytes", "published_crossings",
                         "predicted_crossings"])
        writer.writerow(["hdd array leads in MB/s from", x.published_bytes, x.predicted_bytes,
                         x.published_crossings, x.predicted_crossings])
        out.write("\n")
    writer.writerow(["kind", "band_percent", "points", "basis"])
    for b in v.bands:
        writer.writerow([b.kind, "" if b.percent is None else b.percent, b.points, b.why])
    out.write("\n")
    writer.writerow(["held_out_source", "array", "point", "unit", "published", "predicted", "error_percent",
                     "band_percent", "inside", "not_planned"])
    for study in v.held_out:
        for p in study.points:
            band = p.band.percent if p.band and p.band.percent is not None else ""
            writer.writerow([study.source, p.array, p.label, p.unit, p.published,
                             "" if p.predicted is None else p.predicted,
                             "" if p.error_percent is None else p.error_percent, band,
                             "" if p.inside is None else p.inside, p.why_not or ""])
    return out.getvalue()


def to_json(v: Validation) -> str:
    document = {
        "format": "disklab-capacity-validation",
        "format_version": JSON_FORMAT_VERSION,
        "note": MODEL_NOTE,
        "cases": [
            {"name": case.name, "source": case.source, "median_abs_error_percent": case.median_error_percent,
             "max_abs_error_percent": case.max_error_percent,
             "points": [{"array": p.array, "point": p.label, "unit": p.unit, "published": p.published,
                         "predicted": p.predicted, "error_percent": p.error_percent, "kind": p.kind}
                        for p in case.points]}
            for case in v.cases
        ],
        "crossover": v.crossover and {"published_bytes": v.crossover.published_bytes,
                                      "predicted_bytes": v.crossover.predicted_bytes,
                                      "published_crossings": v.crossover.published_crossings,
                                      "predicted_crossings": v.crossover.predicted_crossings},
        "bands": [{"kind": b.kind, "percent": b.percent, "percentile": BAND_PERCENTILE, "points": b.points,
                   "basis": b.why} for b in v.bands],
        "skipped": list(v.skipped),
        "held_out": [{"source": study.source, "summary": study.summary(),
                      "points": [{"array": p.array, "point": p.label, "unit": p.unit, "published": p.published,
                                  "predicted": p.predicted, "error_percent": p.error_percent,
                                  "band_percent": p.band.percent if p.band else None, "inside": p.inside,
                                  "not_planned": p.why_not} for p in study.points]}
                     for study in v.held_out],
        "notes": notes(v),
    }
    return json.dumps(document, indent=2) + "\n"


EXPORTERS = {"markdown": to_markdown, "csv": to_csv, "json": to_json}
