"""The report's data model: everything the HTML shows, assembled from stored runs before any rendering.

Tables are plain text cells, formatted by the same helpers as `show`; charts are specs (charts.py). A new
section (a run-vs-run comparison, say) is a new field here and a block in the template.
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

from disklab.analysis.compare import compare_runs
from disklab.analysis.findings import findings
from disklab.analysis.overprovision import spare_area_levels
from disklab.analysis.overview import METHOD, overview
from disklab.analysis.repeats import repeated
from disklab.env.registry import format_value, label_of, ordered
from disklab.report.compare import headings, notes, row_texts, shown, verdict_styles
from disklab.report.choices import ReportChoices
from disklab.report.html.charts import ChartSpec, chart_functions
from disklab.report.html.markdown import markdown_html
from disklab.report.html.method_charts import method_charts
from disklab.report.findings import HEADINGS as FINDINGS_HEADINGS, TITLE as FINDINGS_TITLE, finding_cells
from disklab.report.run_options import options_text
from disklab.report.runs import ran_tests
from disklab.report.spare_area import spare_area_table
from disklab.report.rows import is_pgbench_run, result_rows, summary_rows, sweep_rows
from disklab.report.table import (
    P99_NOTE, SPREAD_NOTE, SWEEP_HEADINGS, SWEEP_NOTE, flag_lines, format_spread, format_us, spread_warning,
    sweep_cells,
)
from disklab.report.html.grid import DEFAULT_GRID_UNIT, grid_charts
from disklab.report.html.provenance import stamped
from disklab.report.labels import record_labels
from disklab.report.parts import Parts, Undrawn
from disklab.report.views import build_view, cell_text
from disklab.store.records import Note, RunRecord


@dataclass(frozen=True)
class TableModel:
    title: str
    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # the first cell of a row names it, the others are figures
    notes: tuple[str, ...] = ()
    # Per row, a class per cell ("" for none): a comparison's verdicts, coloured beside their words.
    styles: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class RunSection:
    id: int
    label: str
    title: str  # the run's label and suite
    tables: tuple[TableModel, ...]  # the suite's view (if it has one), then the per-test results
    environment: TableModel | None  # None: recorded by a disklab that did not record it
    notes: tuple[str, ...]  # flags on tests, what the run's schedule concluded, why it stopped
    findings: TableModel | None = None  # what the figures say (analysis/findings.py); None: nothing found
    user_notes: tuple[Note, ...] = ()  # what the run's user wrote about it (disklab note)


@dataclass(frozen=True)
class ReportModel:
    title: str
    generated_at: str
    tested: TableModel | None  # what was tested: one row per run; None: it could not be drawn (undrawn says why)
    comparison: TableModel | None  # None: a single run, or runs without a test in common
    charts: tuple[ChartSpec, ...]
    runs: tuple[RunSection, ...]
    spare_area: TableModel | None = None  # an over-provisioning series' steady state by level; None: not one
    overview: TableModel | None = None  # one relative figure per run; None: one run, or none shares a test
    notes_html: str = ""  # report --notes, rendered by markdown.py: markup that can neither run nor fetch
    chosen: str = ""  # the tests and metrics chosen (report --tests, --metrics); '': all of them
    undrawn: tuple[Undrawn, ...] = ()  # the parts these runs could not be drawn in (parts.py), each with its reason
    # Arrays among the runs beside the planner's prediction from a member measured alone, made by the caller (the
    # planner sits above the report: capacity/measured_render.py's report_table); None: no array run.
    planner: TableModel | None = None


def build_report(records: Sequence[RunRecord], generated_at: str, choices: ReportChoices = ReportChoices(),
                 grid_unit: str = DEFAULT_GRID_UNIT, planner: TableModel | None = None) -> ReportModel:
    """`grid_unit`: the unit of CrystalDiskMark's grid (grid.GRID_UNITS) for the runs whose suite has that view;
    `planner`: the table of arrays against the planner's predictions, shown as given. A part that cannot be drawn
    is left out and named in `undrawn`; the rest is drawn."""
    records = choices.applied(records)
    labels = record_labels(records)  # one name per run in every table, heading and legend
    suites = list(dict.fromkeys(r.info.suite_name for r in records))
    parts = Parts()
    families = (("CrystalDiskMark grid", lambda: grid_charts(records, grid_unit)),
                ("method charts", lambda: method_charts(records)),
                *((_family(make), partial(make, records)) for make in chart_functions()))
    charts = [chart for name, make in families for chart in parts.draw(name, make, ()) if choices.shows(chart.metric)]
    return ReportModel(
        title=choices.title or f"disklab report · {', '.join(labels)} · {', '.join(suites)}",
        generated_at=generated_at,
        tested=parts.draw("what was tested", lambda: _tested(records, labels)),
        comparison=parts.draw("comparison", lambda: _comparison(records, labels, choices)),
        overview=parts.draw("overview", lambda: _overview(records, labels)),
        spare_area=parts.draw("steady state by spare area", lambda: _spare_area(records)),
        charts=parts.draw("chart footers", lambda: stamped(charts, records), tuple(charts)),
        runs=tuple(_section(record, label, choices, parts) for record, label in zip(records, labels)),
        notes_html=markdown_html(choices.notes) if choices.notes else "",
        chosen=choices.described(),
        undrawn=tuple(parts.undrawn),
        planner=planner,
    )


def _family(make) -> str:
    """A chart function's name as a reader calls its charts: quick_bar_charts -> 'quick bar charts'."""
    return make.__name__.replace("_", " ")


def _tested(records: Sequence[RunRecord], labels: Sequence[str]) -> TableModel:
    rows = []
    for record, label in zip(records, labels):
        info = record.info
        rows.append((
            label, info.suite_name, _target(info), info.hostname, info.started_at,
            info.status, ran_tests(info), info.tool, options_text(info.options),
        ))
    headings = ("Run", "Suite", "Target", "Host", "Started (UTC)", "Status", "Tests", "Tool", "Options")
    return TableModel("", headings, tuple(rows))


def _target(info) -> str:
    if info.shown_target != info.target:
        return f"{info.shown_target}: a test file on the file system made for the run"
    return f"{info.target} ({info.target_kind})"


def _comparison(records: Sequence[RunRecord], report_labels: Sequence[str],
                choices: ReportChoices) -> TableModel | None:
    """The runs side by side as `disklab compare` shows them, baseline first, with its notes (crossovers, noise)."""
    if len(records) < 2:
        return None
    comparison = compare_runs(records)
    # Runs without a test in common with the baseline would only add columns of n/a.
    kept = [i for i in range(len(records)) if any(row.cells[i].summary for row in comparison.rows)]
    if len(kept) < 2 or kept[0] != 0:
        return None
    view = shown(compare_runs([records[i] for i in kept]), only_changed=False)
    view = replace(view, rows=tuple(row for row in view.rows if choices.shows(row.metric)))
    labels = [report_labels[i] for i in kept]
    return TableModel(
        f"{' vs '.join(labels)} · baseline {labels[0]}", tuple(headings(labels)),
        tuple(tuple(row_texts(row)) for row in view.rows), tuple(notes(view)),
        tuple(tuple(_verdict_class(v) for v in verdict_styles(row)) for row in view.rows),
    )


def _overview(records: Sequence[RunRecord], labels: Sequence[str]) -> TableModel | None:
    """Each run's geometric-mean throughput relative to the first, with its interval (analysis/overview.py)."""
    if len(records) < 2:
        return None
    relatives = overview(compare_runs(records))
    if not relatives:
        return None
    rows = tuple((labels[r.run], f"{r.ratio:.2f}x", "-" if r.low is None else f"{r.low:.2f}-{r.high:.2f}",
                  str(r.tests), "baseline" if r.run == 0 else (r.why_no_interval or "")) for r in relatives)
    return TableModel(f"overview · relative to {labels[0]}", ("Run", "Relative", "95 % interval", "Tests", "Note"),
                      rows, (f"relative = {METHOD}",))


def _spare_area(records: Sequence[RunRecord]) -> TableModel | None:
    """Steady state against the over-provisioning level (M4), when the runs are such a series' levels."""
    levels = spare_area_levels(records)
    if len(levels) < 2:
        return None
    table = spare_area_table(levels)
    return TableModel(table.title, table.headings, table.rows, table.notes,
                      tuple(("",) * (len(row) - 1) + (_verdict_class(verdict),)
                            for row, verdict in zip(table.rows, table.verdicts)))


def _verdict_class(verdict: str | None) -> str:
    """'within noise' -> 'verdict-within-noise'; the page's stylesheet colours them."""
    return f"verdict-{verdict.replace(' ', '-')}" if verdict else ""


def _section(record: RunRecord, label: str, choices: ReportChoices, parts: Parts) -> RunSection:
    info = record.info

    def part(what: str) -> str:
        return f"{label} · {what}"  # not a format string: the label is the run's name, which may hold braces

    tables = []
    view = parts.draw(part("the suite's view"), lambda: _view_table(record, label))
    if view:
        tables.append(view)
    every_test = parts.draw(part("every test"), lambda: _every_test(record, label, choices))
    if every_test:
        tables.append(every_test)
    notes = [*parts.draw(part("flags"), lambda: flag_lines(record), [])]
    notes += [o["summary"] for o in record.outcomes.values() if isinstance(o, dict) and isinstance(o.get("summary"), str)]
    if info.error:
        notes.append(f"{info.status}: {info.error}")
    return RunSection(
        id=info.id, label=label, title=f"{label} · {info.suite_name} · {info.shown_target}",
        tables=tuple(tables), environment=parts.draw(part("environment"), lambda: _environment(record, label)),
        notes=tuple(notes), findings=parts.draw(part("findings"), lambda: _findings(record, label)),
        user_notes=record.notes,
    )


def _findings(record: RunRecord, label: str) -> TableModel | None:
    """What the figures say (analysis/findings.py); None: nothing found."""
    found = findings(record)
    if not found:
        return None
    return TableModel(f"{label} · {FINDINGS_TITLE.lower()}", FINDINGS_HEADINGS, tuple(finding_cells(f) for f in found))


def _view_table(record: RunRecord, label: str) -> TableModel | None:
    """The suite's own view (CrystalDiskMark's grid, a sweep ...), None for a suite without one."""
    view = build_view(record, label)
    if not view:
        return None
    return TableModel(
        view.title, (view.row_heading, *(c.heading for c in view.columns)),
        tuple((row, *(cell_text(cell, column) for cell, column in zip(cells, view.columns)))
              for row, cells in zip(view.rows, view.cells)),
        view.notes,
    )


def _every_test(record: RunRecord, label: str, choices: ReportChoices) -> TableModel:
    if is_pgbench_run(record):
        every_test = _sweep_table(record, label)
    else:
        every_test = _summary_table(record, label) if repeated(record) else _results_table(record, label)
    headings, rows = choices.columns(every_test.headings, every_test.rows)
    return replace(every_test, headings=headings, rows=rows)


def _results_table(record: RunRecord, label: str) -> TableModel:
    rows = tuple(
        (row.test, row.direction, f"{row.mb_per_s:,.1f}", f"{row.iops:,.0f}", format_us(row.lat_mean_us),
         format_us(row.clat_p50_us), format_us(row.clat_p99_us), format_us(row.clat_p99_9_us),
         format_us(row.clat_p99_99_us))
        for row in result_rows(record)
    )
    headings = ("Test", "Dir", "MB/s", "IOPS", "Mean lat µs", "p50 µs", "p99 µs", "p99.9 µs", "p99.99 µs")
    notes = ("MB/s = 10^6 bytes/s · latency: mean of total latency, percentiles of completion latency",)
    return TableModel(f"{label} · every test", headings, rows, notes)


def _sweep_table(record: RunRecord, label: str) -> TableModel:
    """A pgbench run's client sweep, as `show` prints it."""
    rows = tuple(tuple(sweep_cells(row)) for row in sweep_rows(record))
    return TableModel(f"{label} · client sweep", SWEEP_HEADINGS, rows, (SWEEP_NOTE,))


def _summary_table(record: RunRecord, label: str) -> TableModel:
    rows = summary_rows(record)
    cells = tuple(
        (row.test, row.direction, str(row.iops.n), f"{row.mb_per_s.mean:,.1f}", format_spread(row.mb_per_s),
         f"{row.iops.mean:,.0f}", format_spread(row.iops), format_us(row.lat_mean_us), format_us(row.clat_p99_us))
        for row in rows
    )
    headings = ("Test", "Dir", "n", "MB/s", "+/-", "IOPS", "+/-", "Mean lat µs", "p99 µs")
    warning = spread_warning(rows, record.info.options)
    notes = (SPREAD_NOTE, "MB/s = 10^6 bytes/s", P99_NOTE, *([warning] if warning else []))
    return TableModel(f"{label} · every planned test", headings, cells, notes)


def _environment(record: RunRecord, label: str) -> TableModel | None:
    if not record.env:
        return None
    rows = tuple((label_of(name), format_value(name, value)) for name, value in ordered(record.env))
    return TableModel(f"{label} · environment", ("Key", "Value"), rows)
