"""A Comparison of runs as a Rich table, Markdown, CSV or JSON; the notes under it say how noise was judged."""

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from disklab.analysis.overview import METHOD, Relative, overview
from disklab.analysis.ranking import standings
from disklab.analysis.compare import (
    METRIC_BY_NAME, Cell, Comparison, ConditionDifference, Crossover, Refusal, Row, TestKey,
)
from disklab.analysis.stats import TOO_WIDE_PERCENT
from disklab.analysis.withheld import WITHHELD_BY
from disklab.analysis.verdict import BETTER, INCONCLUSIVE, INTERVAL, NO_VERDICT, SINGLE_RUNS, T_TEST, WORSE
from disklab.report.csv_text import CsvWriter
from disklab.report.metrics import REGISTRY
from disklab.report.table import format_spread
from disklab.report.labels import axis_label, run_labels
from disklab.report.runs import markdown_cell
from disklab.report.terminal import terminal_text
from disklab.store.records import RunInfo

# Bump when the JSON export changes shape. 1: first version. 2: verdict "inconclusive" with a "reason"; basis
# "tolerance" renamed "tolerance-only", basis "interval" (one run repeated); "not_compared" (tests of another shape).
# 3: single runs on both sides are never judged: verdict "no verdict", basis "single runs" (was "tolerance-only");
# each run's "status"; an inconclusive "reason" may name a flag that withholds the verdict (analysis/withheld.py).
# 4: each value's "best", a --best-of run's best pass (null for other runs).
# 5: each run's "disklab_version"; fio's version left out of "environment_differences" (a note says it: version_lines).
# 6: "planner", where runs on arrays are compared: each array's figures beside the planner's prediction from a member
# measured alone (capacity/measured_render.py's as_data). 7: each run's "tool", what ran its tests ("fio-3.33 libaio",
# "pgbench / PostgreSQL 17.2": a pgbench run's "fio_version" is PostgreSQL's).
JSON_FORMAT_VERSION = 7
FORMATS = ("table", "markdown", "csv", "json")
VERDICT_STYLES = {BETTER: "green", WORSE: "red", INCONCLUSIVE: "yellow", NO_VERDICT: "dim"}
# The precision to ask of repeats when the figures cannot tell: docs/running.md's example, within any tolerance.
_SUGGESTED_PRECISION_PERCENT = 2.0


@dataclass(frozen=True)
class Shown:
    """The comparison as shown: with --only-changed, the rows within noise are left out (and counted); rows the
    figures cannot tell stay, since they may hide a change."""

    comparison: Comparison
    rows: tuple[Row, ...]
    hidden: int


def shown(comparison: Comparison, only_changed: bool, metrics: Sequence[str] = ()) -> Shown:
    """The rows of the chosen metrics (all without a choice), less those within noise with `only_changed`."""
    chosen = tuple(r for r in comparison.rows if not metrics or r.metric in metrics)
    rows = tuple(r for r in chosen if not r.within_noise) if only_changed else chosen
    return Shown(comparison, rows, len(chosen) - len(rows))


def notes(view: Shown) -> list[str]:
    """How to read the table, then what the comparison found around it: crossovers, gaps, differences of setup."""
    c = view.comparison
    labels = run_labels(c.runs)
    tolerance = f"{c.tolerance_percent:g} %"
    lines = overview_lines(c, labels) + [
        f"baseline: {labels[0]} · ratio = run / baseline · MB/s = 10^6 bytes/s · lower latency is better",
        f"better / worse: more than {tolerance} apart (--tolerance) and supported by the spread, as below · "
        f"within noise: at most {tolerance} apart, with every repeated figure's 95 % interval within ±{tolerance} "
        f"(no difference measured) · {INCONCLUSIVE}: the spread of the figures cannot tell",
    ]
    bases = c.bases
    if T_TEST in bases:
        lines.append("where both runs repeated a test (t-test): a verdict also needs Welch's t-test at 95 % to find the "
                     "difference beyond the tolerance, and each mean outside the other's 95 % interval")
    if INTERVAL in bases:
        lines.append("where one run repeated a test and the other ran it once (interval): a verdict also needs the "
                     "single figure beyond the tolerance from the 95 % prediction interval of the repeats (where one "
                     "more run would fall); the single run's own spread is not measured")
    if SINGLE_RUNS in bases:
        count = sum(c.verdict == NO_VERDICT for row in view.comparison.rows for c in row.cells[1:])
        lines.append(f"{NO_VERDICT} ({SINGLE_RUNS}), {count} figure{'s' if count != 1 else ''}: neither run measured "
                     "the figure's spread (one pass each, --repeat 1), so no difference is called, however large the "
                     "ratio: two single runs of the same configuration differ by 2x on a busy machine; run both "
                     "with the default passes (or --repeat 3) to judge them")
    if any(cell.best is not None for row in c.rows for cell in row.cells):
        lines.append("best of N: a --best-of run's best pass, as CrystalDiskMark reports it; its ratio and verdict "
                     "judge the mean of every pass")
    if c.repeated:
        lines.append(f"±: 95 % confidence interval from the repeats; ! wider than {TOO_WIDE_PERCENT:g} % · mean lat "
                     "and p99: of every I/O of the repeats, as show has them (p99 of their json+ histograms merged)")
    lines += _inconclusive_notes(c)
    for label, info in zip(labels, c.runs):
        if info.status != "complete":
            lines.append(f"warning: {label} is {info.status}" + (f" ({info.error})" if info.error else "")
                         + ": some of its figures may be partial or missing")
    if view.hidden:
        lines.append(f"{view.hidden} of {len(c.rows)} rows within noise not shown (--only-changed)")
    if c.rows and not view.rows and view.hidden:
        lines.append("every figure is within noise")
    lines += _ranking_lines(c, labels)
    lines += [crossover_text(x, labels) for x in c.crossovers]
    for label, tests in zip(labels, c.unmatched):
        if tests:
            lines.append(f"not compared, {label}: {', '.join(tests)} (no matching test in the baseline or the others)")
    lines += [refusal_text(r, labels) for r in c.refused]
    names = [run_labels([info])[0] for info in c.runs]  # the labels would say the differing condition twice
    for condition in c.conditions:
        lines.append(_condition_text(condition, names))
    lines += version_lines(c.runs)
    for label, differences in zip(labels[1:], c.env_differences[1:]):
        if differences:
            lines.append(f"warning: {label} ran in another environment than {labels[0]}, which may explain "
                         f"differences: {'; '.join(differences)}")
    return lines


def version_lines(infos: Sequence[RunInfo]) -> list[str]:
    """A line for each tool whose version is not every run's: 'made by different disklab versions: 0.1.dev130+gaaaa
    (run 3) -> 0.1.dev137+gbbbb (run 5)', each version with the runs it made, the baseline's first."""
    lines = []
    kinds = {info.pgbench for info in infos}
    measured_by = "PostgreSQL" if kinds == {True} else "fio and PostgreSQL" if len(kinds) > 1 else "fio"
    for tool, field in (("disklab", "disklab_version"), (measured_by, "fio_version")):
        made_by: dict[str, list[str]] = {}
        for info in infos:
            made_by.setdefault(getattr(info, field), []).append(str(info.id))
        if len(made_by) > 1:
            lines.append(f"made by different {tool} versions: " + " -> ".join(
                f"{version} (run{'s' if len(ids) > 1 else ''} {', '.join(ids)})" for version, ids in made_by.items()))
    return lines


def overview_lines(c: Comparison, labels: list[str]) -> list[str]:
    """One relative figure per run, first: the overview of a review (analysis/overview.py)."""
    relatives = overview(c)
    if not relatives:
        return []
    parts = [f"{labels[r.run]} {overview_text(r)}" for r in relatives if r.run]
    return [f"overview, relative to {labels[0]} over the tests they share: {'; '.join(parts)} · {METHOD}"]


def overview_text(relative: Relative) -> str:
    """'1.12x (95 % 1.05-1.19, 8 tests)' or '1.12x (8 tests; no interval: ...)'."""
    if relative.low is None:
        return f"{relative.ratio:.2f}x ({relative.tests} tests; no interval: {relative.why_no_interval})"
    return f"{relative.ratio:.2f}x (95 % {relative.low:.2f}-{relative.high:.2f}, {relative.tests} tests)"


def _ranking_lines(c: Comparison, labels: list[str]) -> list[str]:
    """Overall, with three runs or more: the geometric mean of each run's throughput ratios, and what the verdicts
    on those figures support."""
    ranked = standings(c)
    if len(c.runs) < 3 or not ranked:
        return []
    figures = max(s.figures for s in ranked)
    supported = any(v in (BETTER, WORSE) for s in ranked for v, _ in s.verdicts)
    if not supported:
        means = "; ".join(f"{labels[s.run]} {s.geomean_ratio:.2f}x" for s in ranked if s.run)
        return [f"overall: no ranking: the spread supports no better or worse in any of the {figures} tests' "
                f"throughput figures (geometric means of the ratios to the baseline: {means})"]
    parts = []
    for place, standing in enumerate(ranked, start=1):
        counts = ", ".join(f"{verdict} {n}" for verdict, n in standing.verdicts)
        parts.append(f"{place}. {labels[standing.run]} {standing.geomean_ratio:.2f}x"
                     + (f" ({counts})" if counts else " (baseline)"))
    return [f"overall, by the overview's geometric means over {figures} tests: {'; '.join(parts)} · the order is "
            "the ratios'; the verdicts in brackets say how much of it the spread supports"]


def _inconclusive_notes(c: Comparison) -> list[str]:
    """How many figures the spread cannot tell, why, and how to measure them precisely enough."""
    judged = [cell for row in c.rows for cell in row.cells[1:] if cell.verdict]
    reasons: dict[str, int] = {}
    for cell in judged:
        if cell.verdict == INCONCLUSIVE:
            reasons[cell.reason] = reasons.get(cell.reason, 0) + 1
    if not reasons:
        return []
    lines = [f"{INCONCLUSIVE} ({count} of {len(judged)} figures): {reason}" for reason, count in reasons.items()]
    if set(reasons) <= set(WITHHELD_BY.values()):
        return lines  # a flag withheld them (analysis/withheld.py): its reason says what to do, not more repeats
    precision = min(_SUGGESTED_PRECISION_PERCENT, c.tolerance_percent / 2)
    return lines + [
        f"to tell, measure more precisely: disklab run ... --precision {precision:g}% (repeats each test until its "
        "95 % interval is that narrow), or a larger --repeat, on the runs whose intervals are wide or single"
    ]


def refusal_text(refusal: Refusal, labels: list[str]) -> str:
    """Why a test was left out though another run has one of its parameters: one job of a group is not the group."""
    others = ", ".join(labels[j] for j in refusal.against) + (" holds" if len(refusal.against) == 1 else " hold")
    if refusal.part_of is None:
        shape = f"the whole group's figures, while {others} one job's figures of it only"
    else:
        shape = (f"the figures of one of its {refusal.part_of} jobs (fio output without group_reporting, imported "
                 f"a test per job), while {others} the whole group's")
    return (f"not compared, {labels[refusal.run]}: {refusal.test}: {shape}; one job is not the group: import that "
            "fio output again, which combines its jobs, or run fio with group_reporting")


def crossover_text(crossover: Crossover, labels: list[str]) -> str:
    """'random read QD1 1 job, read: from 64KiB on, run 15 delivers more MB/s (run 12 leads below, up to 32KiB)'."""
    metric = METRIC_BY_NAME[crossover.metric]
    return (
        f"crossover: {describe(crossover.context)}, {crossover.direction}: from "
        f"{axis_label(crossover.parameter, crossover.value)} on, {labels[crossover.leader]} {metric.lead} "
        f"({labels[crossover.previous_leader]} leads below, up to "
        f"{axis_label(crossover.parameter, crossover.below)})"
    )


def describe(key: TestKey) -> str:
    """The parameters of a test as a short phrase: sequential mixed 70 % read 4KiB QD32 4 jobs."""
    parts = [key.get("benchmark"), key.get("pattern"), key.get("direction")]
    for name in ("rwmixread", "bssplit", "bs", "iodepth", "jobs", "region", "sync"):
        value = key.get(name)
        if value not in (None, "whole", "none"):  # the whole target and no sync go without saying
            parts.append(axis_label(name, value))
    if key.occurrence > 1:
        parts.append(f"(occurrence {key.occurrence})")
    return " ".join(str(p) for p in parts if p is not None)


def _condition_text(condition: ConditionDifference, labels: list[str]) -> str:
    per_run = "; ".join(
        f"{label} {', '.join(_condition_value(condition.parameter, v) for v in values)}"
        for label, values in zip(labels, condition.values)
    )
    return f"the matched tests ran with different {condition.parameter}: {per_run}"


def _condition_value(parameter: str, value) -> str:
    if value is None:
        return "none"
    return axis_label(parameter, value) + ("/s" if parameter == "rate" else "")


def format_value(metric: str, cell: Cell) -> str:
    """The mean ± its interval; a --best-of run's best pass first, labelled, as its grid shows it."""
    if cell.summary is None:
        return "n/a"
    text = REGISTRY[metric].format(cell.summary.mean)
    text = text if cell.summary.n == 1 else f"{text} ±{format_spread(cell.summary)}"
    return text if cell.best is None else \
        f"{REGISTRY[metric].format(cell.best)} best of {cell.summary.n} (mean {text})"


def _ratio(cell: Cell) -> str:
    if cell.ratio is None:
        return ""
    return f"{cell.ratio:.2f}x" if cell.ratio >= 0.1 else f"{cell.ratio:.2g}x"


def headings(labels: list[str]) -> list[str]:
    texts = ["Test", "Dir", "Metric", labels[0]]
    for label in labels[1:]:
        texts += [label, "ratio", "verdict"]
    return texts


def verdict_text(cell: Cell) -> str:
    """The verdict as written in tables and titles; no verdict says what it lacked."""
    if cell.verdict == NO_VERDICT:
        return f"{NO_VERDICT} ({cell.basis})"
    return cell.verdict or ""


def row_texts(row: Row) -> list[str]:
    texts = [row.test, row.direction, METRIC_BY_NAME[row.metric].label, format_value(row.metric, row.cells[0])]
    for cell in row.cells[1:]:
        texts += [format_value(row.metric, cell), _ratio(cell), verdict_text(cell)]
    return texts


def verdict_styles(row: Row) -> list[str | None]:
    """Per cell of row_texts, the verdict that colours it (a run's ratio and its verdict), else None. The verdict is
    also written out: colour is never its only carrier."""
    return [None] * 4 + [v for cell in row.cells[1:] for v in (None, cell.verdict, cell.verdict)]


def _title(labels: list[str]) -> str:
    return f"{' vs '.join(labels)} · baseline {labels[0]}"


def compare_renderables(view: Shown) -> list[RenderableType]:
    labels = run_labels(view.comparison.runs)
    table = Table(title=_title(labels), title_justify="left")
    for i, heading in enumerate(headings(labels)):
        table.add_column(heading, justify="left" if i < 3 else "right", no_wrap=i == 0)
    # Escaped before rich's Text is built: it would drop CR and BS, and measure a cell without its escapes.
    for row in view.rows:
        table.add_row(*(Text(terminal_text(t), style=VERDICT_STYLES.get(v, ""))
                        for t, v in zip(row_texts(row), verdict_styles(row))))
    return ([table] if view.rows else []) + [
        Text(terminal_text(line), style="yellow" if line.startswith("warning") else "") for line in notes(view)
    ]


def to_markdown(view: Shown) -> str:
    labels = run_labels(view.comparison.runs)
    columns = headings(labels)
    lines = [
        f"**{terminal_text(_title(labels))}**",
        "",
        "| " + " | ".join(map(markdown_cell, columns)) + " |",
        "|---|---|---|" + "---:|" * (len(columns) - 3),
    ]
    for row in view.rows:
        lines.append("| " + " | ".join(map(markdown_cell, row_texts(row))) + " |")
    return "\n".join(lines + [""] + [f"- {terminal_text(line)}" for line in notes(view)]) + "\n"


def to_csv(view: Shown) -> str:
    """One line per test, direction and metric; raw figures (MB/s, µs), a mean, ratio, verdict and basis per run."""
    labels = run_labels(view.comparison.runs)
    out = io.StringIO()
    writer = CsvWriter(out)
    header = ["test", "direction", "metric"]
    for label in labels:
        header += [f"{label} mean", f"{label} n", f"{label} ci95_percent", f"{label} ratio", f"{label} verdict",
                   f"{label} basis"]
    writer.writerow(header)
    for row in view.rows:
        line = [row.test, row.direction, row.metric]
        for cell in row.cells:
            s = cell.summary
            line += [s and s.mean, s and s.n, s and s.ci95_percent, cell.ratio, cell.verdict, cell.basis]
        writer.writerow(["" if v is None else v for v in line])
    return out.getvalue()


def to_json(view: Shown, planner: dict | None = None) -> str:
    """`planner`: the planner held to arrays among the runs, as plain data made above this layer (capacity)."""
    c = view.comparison
    labels = run_labels(c.runs)
    ids = [info.id for info in c.runs]
    document = {
        "format": "disklab-compare",
        "format_version": JSON_FORMAT_VERSION,
        "baseline": ids[0],
        "tolerance_percent": c.tolerance_percent,
        "runs": [
            {"id": info.id, "label": label, "suite": info.suite_name, "target": info.target,
             "started_at": info.started_at, "disklab_version": info.disklab_version, "fio_version": info.fio_version,
             "fio_engine": info.fio_engine, "tool": info.tool, "status": info.status}
            for info, label in zip(c.runs, labels)
        ],
        "rows": [
            {
                "test": row.test, "params": dict(row.key.params), "occurrence": row.key.occurrence,
                "direction": row.direction, "metric": row.metric,
                "higher_is_better": METRIC_BY_NAME[row.metric].higher_is_better,
                "values": [
                    {"run": run_id, **(cell.summary.as_dict() if cell.summary else {"n": 0, "mean": None}),
                     "best": cell.best, "ratio": cell.ratio, "verdict": cell.verdict, "basis": cell.basis,
                     "reason": cell.reason}
                    for run_id, cell in zip(ids, row.cells)
                ],
            }
            for row in view.rows
        ],
        "rows_hidden_within_noise": view.hidden,
        "crossovers": [
            {"parameter": x.parameter, "value": x.value, "below": x.below, "metric": x.metric,
             "direction": x.direction, "params": dict(x.context.params), "leader": ids[x.leader],
             "previous_leader": ids[x.previous_leader], "text": crossover_text(x, labels)}
            for x in c.crossovers
        ],
        "unmatched": {str(run_id): list(tests) for run_id, tests in zip(ids, c.unmatched)},
        "not_compared": [{"run": ids[r.run], "test": r.test, "one_job_of": r.part_of,
                          "against": [ids[j] for j in r.against], "text": refusal_text(r, labels)}
                         for r in c.refused],
        "environment_differences": {str(run_id): list(d) for run_id, d in zip(ids[1:], c.env_differences[1:])},
        "conditions": [{"parameter": d.parameter, "values": {str(run_id): list(v) for run_id, v in zip(ids, d.values)}}
                       for d in c.conditions],
        "notes": notes(view),
        **({"planner": planner} if planner is not None else {}),
    }
    return json.dumps(document, indent=2) + "\n"


EXPORTERS = {"markdown": to_markdown, "csv": to_csv, "json": to_json}
