"""Suite views: a run's results laid out as the suite's [view] declares, the shape in which its method was published."""

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table

from disklab.errors import UserError
from disklab.plan.build import expand_suite
from disklab.report.labels import axis_label, run_labels
from disklab.report.metrics import REGISTRY
from disklab.store.records import RunRecord, StoredTest
from disklab.suite.loader import parse_suite
from disklab.suite.model import Suite, View

NOT_AVAILABLE = "n/a"
_FIELD_HEADINGS = {
    "group": "Test", "bs": "Block size", "rwmixread": "Read share", "iodepth": "Queue depth", "jobs": "Jobs",
    "size": "Data set", "direction": "Direction", "pattern": "Pattern", "sync": "Sync", "nrfiles": "Files",
}


@dataclass(frozen=True)
class Column:
    heading: str
    metric: str | None  # the figure of every cell below; None: each cell shows its own test's metric, with its unit


@dataclass(frozen=True)
class Cell:
    value: float | None  # None: no such test ran (skipped, left out, interrupted), or the figure does not apply
    metric: str | None  # the name in METRICS the value is; None only for an empty cell whose metric is unknown


@dataclass(frozen=True)
class Pivot:
    title: str
    row_heading: str
    rows: tuple[str, ...]
    columns: tuple[Column, ...]
    cells: tuple[tuple[Cell, ...], ...]  # a tuple per row, a cell per column
    notes: tuple[str, ...]
    best_of: int | None = None  # each cell is its tests' best pass of this many (run --best-of); None: their mean


def stored_suite(record: RunRecord) -> Suite | None:
    """The suite as the run stored it; one this disklab cannot read has no view, and its tests still show flat."""
    try:
        where = f"the suite of run {record.info.id}"
        return parse_suite(record.suite_text, source=record.info.suite_source, where=where)
    except UserError:
        return None


def check_best_of(suite: Suite) -> None:
    """run --best-of picks a pass per cell of the suite's view: a suite needs a view, and passes that are repeats."""
    if suite.mode != "fixed":
        raise UserError(f"--best-of does not apply to suite {suite.name!r}: it runs its tests in {suite.mode} steps")
    if suite.view is None:
        raise UserError(f"--best-of picks the best pass for each cell of a suite's [view], and suite {suite.name!r} "
                        "has none; use --repeat, whose mean and +/- every table shows")


def build_view(record: RunRecord, label: str | None = None) -> Pivot | None:
    """The run's view, or None when its suite declares none; `label`: the run's name among the runs shown with it."""
    suite = stored_suite(record)
    if suite is None or suite.view is None:
        return None
    best_of = record.info.options.get("best_of")
    title = f"{label or run_labels([record.info])[0]} · {suite.name}"
    title += f" · best of {best_of} passes" if best_of else ""
    title += f" · {suite.description}" if suite.description else ""
    return pivot(suite, record.tests, title, best_of)


def pivot(suite: Suite, tests: Sequence[StoredTest], title: str, best_of: int | None = None) -> Pivot:
    """The suite's view over the tests that ran; a planned test that did not run leaves its cells None.

    With best_of (run --best-of), a cell shows each of its tests' best pass, the figure CrystalDiskMark reports;
    the stored passes stay as they ran, and the summary tables keep their mean and spread.
    """
    view = suite.view
    row_fields = (view.rows,)
    planned = [t.params() for t in expand_suite(suite)]
    stored = [t.params for t in tests]
    row_keys = _axis(row_fields, planned, stored)
    column_keys = _axis(view.columns, planned, stored)
    by_cell: dict[tuple, list[StoredTest]] = {}
    own_metric: dict[tuple, str] = {}
    for test in tests:
        by_cell.setdefault((_key(test.params, row_fields), _key(test.params, view.columns)), []).append(test)
    for params in planned + stored:
        if "metric" in params:
            own_metric[_key(params, row_fields), _key(params, view.columns)] = params["metric"]
    suffix = f" (best of {best_of})" if best_of else ""
    columns = tuple(
        Column(_heading(view.columns, key, value) + suffix, None if value == "metric" else value)
        for key in column_keys for value in view.values
    )
    cells = []
    for row_key in row_keys:
        row = []
        for column_key in column_keys:
            cell_tests = by_cell.get((row_key, column_key), [])
            for value in view.values:
                metric = own_metric.get((row_key, column_key)) if value == "metric" else value
                figure = cell_figure(metric, cell_tests, best_of) if cell_tests and metric else None
                row.append(Cell(figure, metric))
        cells.append(tuple(row))
    passes = _passes(tests)
    if best_of:  # a cell's passes of one test are no longer combined, its best pass is picked
        combined = sum(len({t.plan_index for t in group}) > 1 for group in by_cell.values())
    else:
        combined = sum(len(group) > 1 for group in by_cell.values())
    return Pivot(
        title=title,
        row_heading=_FIELD_HEADINGS.get(view.rows, view.rows),
        rows=tuple(axis_label(view.rows, key[0]) for key in row_keys),
        columns=columns,
        cells=tuple(cells),
        notes=_notes(cells, combined, mixed=any(t.params["direction"] == "mixed" for t in tests))
        + _passes_notes(view, best_of, passes),
        best_of=best_of,
    )


def _passes(tests: Sequence[StoredTest]) -> dict[int, list[StoredTest]]:
    """The passes of each planned test (its repeats share the plan index)."""
    by_plan: dict[int, list[StoredTest]] = {}
    for test in tests:
        by_plan.setdefault(test.plan_index, []).append(test)
    return by_plan


def cell_figure(metric: str, tests: Sequence[StoredTest], best_of: int | None) -> float | None:
    """The cell's figure over its tests; with best_of, over the best pass of each planned test among them."""
    compute = REGISTRY[metric].compute
    if not best_of:
        return compute(tests)
    best = []
    for passes in _passes(tests).values():
        scored = [(figure, test) for test in passes if (figure := compute([test])) is not None]
        if scored:
            best.append(REGISTRY[metric].best(scored, key=lambda pair: pair[0])[1])
    return compute(best) if best else None


def _passes_notes(view: View, best_of: int | None, passes: dict[int, list[StoredTest]]) -> tuple[str, ...]:
    """How many passes a cell stands for, and how that compares with the tool whose grid the view reproduces."""
    tool, tool_best_of = view.published_by, view.published_best_of
    if best_of:
        note = f"best of {best_of}: each cell is its test's best pass (most IOPS and MB/s, least latency)"
        if tool and tool_best_of == best_of:
            note += f", as {tool} reports it"
        elif tool and tool_best_of:
            note += f"; {tool} reports the best of {tool_best_of}"
        notes = [note + "; every pass is stored as it ran, and the summary gives the mean and +/- of the passes"]
        short = sum(len(p) < best_of for p in passes.values())
        if short:
            notes.append(f"{short} tests ran fewer than {best_of} passes (the run stopped early): "
                         "their cells are the best of those that ran")
        return tuple(notes)
    if not (tool and tool_best_of):
        return ()
    if any(len(p) > 1 for p in passes.values()):
        return (f"{tool} reports the best of {tool_best_of} passes, not their mean: "
                f"run with --best-of {tool_best_of} to compare",)
    return (f"one pass per test; {tool} reports the best of {tool_best_of} passes: "
            f"run with --best-of {tool_best_of} to compare",)


def _key(params: dict, fields: tuple[str, ...]) -> tuple:
    return tuple(params.get(field) for field in fields)


def _axis(fields: tuple[str, ...], planned: list[dict], stored: list[dict]) -> list[tuple]:
    """Keys ordered by each field's values in order of first appearance, the first field varying slowest.

    The planned tests keep the published shape, so tests that did not run show as n/a; but when no stored
    test matches any planned key, the plan rewrote the field (a --size, frames rounding a data set) and
    only what ran is shown.
    """
    ran = [_key(p, fields) for p in stored]
    shape = [_key(p, fields) for p in planned]
    if ran and not set(ran) & set(shape):
        shape = []
    keys = list(dict.fromkeys(shape + ran))
    firsts = [list(dict.fromkeys(key[i] for key in keys)) for i in range(len(fields))]
    return sorted(keys, key=lambda key: tuple(firsts[i].index(v) for i, v in enumerate(key)))


def _heading(fields: tuple[str, ...], key: tuple, value: str) -> str:
    parts = [axis_label(field, v) for field, v in zip(fields, key)]
    if value != "metric":
        parts.append(REGISTRY[value].heading)
    return " ".join(parts) or "result"


def _notes(cells: list[tuple[Cell, ...]], combined: int, mixed: bool) -> tuple[str, ...]:
    used = {cell.metric for row in cells for cell in row}
    notes = [metric.note for name, metric in REGISTRY.items() if name in used and metric.note]
    if mixed and used & {"iops", "mb_per_s"}:
        notes.insert(0, "IOPS and MB/s of mixed tests are read + write")
    if any(cell.value is None for row in cells for cell in row):
        notes.append(f"{NOT_AVAILABLE}: no such test ran (skipped, left out, interrupted) or the figure does not apply")
    if combined:
        notes.append(
            f"{combined} cells combine several tests (repeats, or parameters the view does not show): "
            "IOPS, MB/s and frames are the mean per test, latency pools their I/O (p99 of their histograms merged)"
        )
    return tuple(dict.fromkeys(notes))


def cell_text(cell: Cell, column: Column) -> str:
    if cell.value is None:
        return NOT_AVAILABLE
    metric = REGISTRY[cell.metric]
    return metric.format(cell.value) if column.metric else f"{metric.format(cell.value)} {metric.unit}"


def view_table(view: Pivot) -> Table:
    """The view in the terminal, before the per-test table."""
    table = Table(title=view.title, title_justify="left", caption=" · ".join(view.notes), caption_justify="left")
    table.add_column(view.row_heading, no_wrap=True)
    for column in view.columns:
        table.add_column(column.heading, justify="right")
    for label, cells in zip(view.rows, view.cells):
        table.add_row(label, *(cell_text(cell, column) for cell, column in zip(cells, view.columns)))
    return table
