"""A validation (validation.py) as a Rich table, Markdown, CSV or JSON: every point, each case's summary, the
crossover, the bands and how they are made."""

import io
import json

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from disklab.capacity.bands import TARGET_COVERAGE, Band
from disklab.capacity.held_out import HeldOutPoint, HeldOutStudy
from disklab.capacity.model import MODEL_NOTE
from disklab.capacity.validation import SPEC_SHEET_QUEUE_DEPTH, Case, Crossover, StudyCheck, Validation
from disklab.units import format_size
from disklab.report.csv_text import CsvWriter
from disklab.report.terminal import terminal_text

# Bump when the JSON export changes shape. 1: first version. 2: `held_out`, the tables the model never saw, each
# point with the band printed beside its prediction and whether the published figure lies inside it. 3: bands are
# cross-validated intervals (low/high ratios); `studies`: each study's in-sample and cross-validated band; a
# held-out point's band is the one built without its study.
JSON_FORMAT_VERSION = 3
FORMATS = ("table", "markdown", "csv", "json")
POINT_HEADINGS = ["Array", "Point", "Published", "Predicted", "Error"]
HELD_OUT_HEADINGS = ["Array", "Point", "Published", "Predicted", "Error", "Band without this study", "Inside"]
STUDY_HEADINGS = ["Study", "Kind", "Points", "Median error", "Band with it", "Inside", "Band without it",
                  "Inside"]


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
    share = f" ({inside / len(banded):.0%}, where the band promises {TARGET_COVERAGE:.0%})" if banded else ""
    return (f"held out: {sum(len(s.points) for s in studies)} published figures from sources the model was not "
            f"built against, {planned} planned from catalogue drives, {len(banded)} with a band built without "
            f"their study, {inside} inside it{share}")


def _inside(count: int | None, points: int) -> str:
    return "-" if count is None else f"{count} of {points}"


def study_rows(checks: tuple[StudyCheck, ...]) -> list[list[str]]:
    return [[c.study, c.kind, str(c.points), f"{c.median_error_percent:.0f} %", c.in_sample.text(),
             _inside(c.in_sample_inside, c.points), c.cross_validated.text(),
             _inside(c.cross_validated_inside, c.points)] for c in checks]


def cross_validation_line(checks: tuple[StudyCheck, ...]) -> str:
    counted = [c for c in checks if c.cross_validated_inside is not None]
    inside, total = sum(c.cross_validated_inside for c in counted), sum(c.points for c in counted)
    share = f" ({inside / total:.0%})" if total else ""
    return (f"cross-validated: {inside} of {total} figures lie inside the band built without their study{share}; "
            f"{sum(c.points for c in checks) - total} figures belong to studies whose kind has no band without them")


def _band_json(band: Band) -> dict:
    return {"kind": band.kind, "low": band.low, "high": band.high, "points": band.points, "studies": band.studies,
            "cross_validated_coverage": band.coverage, "basis": band.why}


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
    lines.append(cross_validation_line(v.studies))
    lines.append(held_out_line(v.held_out))
    lines.append(
        "error = (predicted - published) / published; a band is where the published figure may lie around a "
        "prediction, as a share of it (-45/+120 %: from 0.55 to 2.2 times the prediction); the bands are what "
        "`capacity show` and `capacity compare` print beside each prediction, built from every predicted point "
        "of the drive kind (the arithmetic points are not predictions) and cross-validated by leaving each study "
        f"out: the narrowest that held {TARGET_COVERAGE:.0%} of the left-out figures"
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
    studies = Table(title="each study left out · the band built with it and without it", title_justify="left",
                    caption=cross_validation_line(v.studies), caption_justify="left")
    for i, heading in enumerate(STUDY_HEADINGS):
        studies.add_column(heading, justify="left" if i < 2 else "right")
    for row in study_rows(v.studies):
        studies.add_row(*row)
    items.append(studies)
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
    lines += ["**each study left out**", "", "| " + " | ".join(STUDY_HEADINGS) + " |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
    lines += ["| " + " | ".join(row) + " |" for row in study_rows(v.studies)]
    lines += ["", cross_validation_line(v.studies), ""]
    for study in v.held_out:
        lines += [f"**held out** · `{study.source}`", "", "| " + " | ".join(HELD_OUT_HEADINGS) + " |",
                  "|---|---|---:|---:|---:|---|---|"]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in held_out_rows(study)]
        lines += ["", study.summary(), ""]
    return "\n".join(lines + [f"- {line}" for line in notes(v)]) + "\n"


def to_csv(v: Validation) -> str:
    """Points in raw numbers; a blank line; each case's summary; a blank line; the crossover; then the bands."""
    out = io.StringIO()
    writer = CsvWriter(out)
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
    writer.writerow(["kind", "band_low", "band_high", "points", "studies", "basis"])
    for b in v.bands:
        writer.writerow([b.kind, _blank(b.low), _blank(b.high), b.points, b.studies, b.why])
    out.write("\n")
    writer.writerow(["study", "kind", "points", "median_abs_error_percent", "in_sample_low", "in_sample_high",
                     "in_sample_inside", "cross_validated_low", "cross_validated_high", "cross_validated_inside"])
    for c in v.studies:
        writer.writerow([c.study, c.kind, c.points, c.median_error_percent, _blank(c.in_sample.low),
                         _blank(c.in_sample.high), _blank(c.in_sample_inside), _blank(c.cross_validated.low),
                         _blank(c.cross_validated.high), _blank(c.cross_validated_inside)])
    out.write("\n")
    writer.writerow(["held_out_source", "array", "point", "unit", "published", "predicted", "error_percent",
                     "band_low", "band_high", "inside", "not_planned"])
    for study in v.held_out:
        for p in study.points:
            band = p.band or Band("", None, None, 0, 0, "")
            writer.writerow([study.source, p.array, p.label, p.unit, p.published, _blank(p.predicted),
                             _blank(p.error_percent), _blank(band.low), _blank(band.high), _blank(p.inside),
                             p.why_not or ""])
    return out.getvalue()


def _blank(value):
    """Unknown as an empty cell."""
    return "" if value is None else value


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
        "bands": [_band_json(b) for b in v.bands],
        "studies": [{"study": c.study, "kind": c.kind, "points": c.points,
                     "median_abs_error_percent": c.median_error_percent, "in_sample": _band_json(c.in_sample),
                     "in_sample_inside": c.in_sample_inside, "cross_validated": _band_json(c.cross_validated),
                     "cross_validated_inside": c.cross_validated_inside} for c in v.studies],
        "skipped": list(v.skipped),
        "held_out": [{"source": study.source, "summary": study.summary(),
                      "points": [{"array": p.array, "point": p.label, "unit": p.unit, "published": p.published,
                                  "predicted": p.predicted, "error_percent": p.error_percent,
                                  "band": p.band and _band_json(p.band), "inside": p.inside,
                                  "not_planned": p.why_not} for p in study.points]}
                     for study in v.held_out],
        "notes": notes(v),
    }
    return json.dumps(document, indent=2) + "\n"


EXPORTERS = {"markdown": to_markdown, "csv": to_csv, "json": to_json}
