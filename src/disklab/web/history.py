"""The devices pages: every device the store has runs of (/devices), and one device's history (/devices/KEY), each
test's figures run after run with the change points marked. analysis/history.py decides; this lays it out."""

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from functools import partial

from disklab.analysis.compare import METRIC_BY_NAME, Cell, planned_units
from disklab.analysis.history import (
    Device, Entry, History, TestHistory, device_history, group_devices, of_device,
)
from disklab.analysis.verdict import BETTER, WITHIN_NOISE, WORSE
from disklab.report.compare import describe, format_value
from disklab.report.html.charts import ChartSpec, SeriesSpec, log_scale, y_axis_label
from disklab.report.html.provenance import runs_footer
from disklab.report.metrics import better
from disklab.report.parts import Parts
from disklab.report.labels import axis_label
from disklab.store.groups import RunGroup, group_counts, newest_runs, run_groups
from disklab.store.records import RunRecord
from disklab.store.repository import Store
from disklab.web.links import Links
from disklab.web.pages import render_template

MAX_TICKS = 12  # run labels on a chart's x axis; more would overlap, so every k-th run is labelled
# A device's history is paged: a page judges and draws this many runs whatever the device's total (a device with
# 2,582 runs took 9 s and 17 MB as one page, 1.3 s and 1.4 MB a page of 200; bench/web.py). Pages are counted from
# the oldest run and the newest page also holds the runs short of a page, so that a new run changes the newest page
# only: a bookmark of page 3 keeps its runs, and `publish` rewrites one page of a device's history, not all of them.
HISTORY_PAGE_RUNS = 20
# Runs before a page read as the baseline of its first steps: a test missing from all of them starts the page unjudged.
CONTEXT_RUNS = 20
_CONTEXT_BATCH = 5  # runs before a page read at once: most pages want one, a page of rarer tests up to CONTEXT_RUNS


def store_devices(store: Store, chosen: Collection[int] | None = None) -> tuple[Device, ...]:
    """Every run's device with its runs listed (or only the `chosen` runs'), from the keys of its environment that
    name it."""
    groups = run_groups(store)
    if chosen is not None:
        groups = [RunGroup(group.hostname, group.target, group.device_env, len(runs), runs[0][0], runs[-1][0], runs)
                  for group in groups if (runs := tuple(run for run in group.runs if run[1] in chosen))]
    return group_devices(groups)


def devices_page(store: Store, links: Links) -> str:
    """Every device, its runs counted in SQL (one pass over an index), not listed."""
    return render_devices_page(group_devices(group_counts(store)), links)


def device_page(store: Store, key: str, links: Links, page: int | None = None, parts: Parts | None = None) -> str:
    """One page of the device's history (None: its newest); raises werkzeug's NotFound for a key no device of the
    store has, or a page it does not have. `parts` collects the tests whose history could not be drawn. The device's
    runs are counted (its groups only), and only the page's and those just before it are read (store/groups.py)."""
    from werkzeug.exceptions import NotFound

    groups = group_counts(store, of_device(key))
    if not groups:
        raise NotFound(f"no device {key!r} in this store: see the devices page for those there are")
    (device,) = group_devices(groups)
    page = history_pages(device) if page is None else page
    if not 1 <= page <= history_pages(device):
        raise NotFound(f"device {key!r} has {history_pages(device)} page(s) of history, not {page}")
    start, end = page_span(device, page)
    window = newest_runs(store, groups, end - start + CONTEXT_RUNS, device.runs - end)  # newest first
    shown = window[:end - start][::-1]
    records = store.get_runs(shown)
    history = device_history(device, [*_context(window[end - start:], records, store.get_runs), *records],
                             shown=set(shown))
    return render_device_page(history, links, page, parts, shown)


def page_history(device: Device, page: int, read: Callable[[int], RunRecord | None]) -> History:
    """The history of one page's runs of a device whose runs are listed, judged against the runs just before them
    (`read`: a run's record by its id, None for a run that cannot be read, which the history leaves out)."""
    records = [record for run_id in page_runs(device, page) if (record := read(run_id)) is not None]
    return device_history(device, [*_context(context_runs(device, page)[::-1], records, lambda run_ids: [
        record for run_id in run_ids if (record := read(run_id)) is not None]), *records],
        shown={record.info.id for record in records})


def context_runs(device: Device, page: int) -> tuple[int, ...]:
    """The runs before the page that its history may read as the baseline of its first steps, oldest first."""
    first, _ = page_span(device, page)
    return device.run_ids[max(0, first - CONTEXT_RUNS):first]


def _context(before: Sequence[int], records: list[RunRecord],
             read: Callable[[Sequence[int]], list[RunRecord]]) -> list[RunRecord]:
    """The runs just before the page's `records` (`before`: their ids, newest first), so that the page's first steps
    are judged against their runs: read a few at a time (`read`: the records of those ids that can be read) until
    each test of the page has its previous run, or all of them were."""
    wanted = {key for record in records for key in planned_units(record)}
    context: list[RunRecord] = []
    for first in range(0, len(before), _CONTEXT_BATCH):
        if not wanted:
            break
        for record in read(before[first:first + _CONTEXT_BATCH]):
            if wanted:
                context.append(record)
                wanted -= planned_units(record).keys()
    return context[::-1]


def history_pages(device: Device) -> int:
    return max(1, device.runs // HISTORY_PAGE_RUNS)


def page_span(device: Device, page: int) -> tuple[int, int]:
    """Where the page's runs are among the device's, oldest first: page 1 holds the oldest HISTORY_PAGE_RUNS, each
    page the next ones, and the newest page (history_pages) the rest, up to twice as many less one."""
    start = (page - 1) * HISTORY_PAGE_RUNS
    return start, device.runs if page == history_pages(device) else start + HISTORY_PAGE_RUNS


def page_runs(device: Device, page: int) -> tuple[int, ...]:
    """The run ids of one page (page_span) of a device whose runs are listed, oldest first."""
    if not 1 <= page <= history_pages(device):
        return ()
    start, end = page_span(device, page)
    return device.run_ids[start:end]


def page_pairs(history: History, page: int) -> set[tuple[int, int]]:
    """The (previous, run) comparisons a page links to: each step of each test to a run of the page."""
    shown = set(page_runs(history.device, page))
    return {(e.previous.id, e.run.id) for test in history.tests for e in test.entries
            if e.previous is not None and e.run.id in shown}


def render_devices_page(devices: Sequence[Device], links: Links) -> str:
    return render_template("devices.html.j2", links, title="Devices", devices=devices)


@dataclass(frozen=True)
class TestView:
    """One test's history as its table and chart show it."""

    test: TestHistory
    title: str
    headings: tuple[str, ...]  # of the figure columns
    rows: tuple["RowView", ...]
    chart: tuple[ChartSpec, object] | None  # the spec and its SVG markup


@dataclass(frozen=True)
class RowView:
    entry: Entry
    cells: tuple[tuple[str, str, str], ...]  # (text, class, title) per figure column
    changed: tuple[str, ...]  # what differs from the previous run of the test


def render_device_page(history: History, links: Links, page: int, parts: Parts | None = None,
                       shown: Collection[int] | None = None) -> str:
    """One page of the history: the page's runs (`shown`, or page_runs of a device whose runs are listed), judged
    against the runs before them that `history` also holds; a test whose history cannot be drawn is named on the page
    (and in `parts`), the others drawn. Only the newest page says the device's totals (its runs, the last of them):
    the others hold what their own runs decide."""
    parts = Parts() if parts is None else parts
    device = history.device
    shown = set(page_runs(device, page) if shown is None else shown)
    tests = [replace(test, entries=tuple(e for e in test.entries if e.run.id in shown)) for test in history.tests]
    disk = " + ".join(dict.fromkeys(model for model, _ in device.disks)) or device.label  # serials stay off images
    paged = history_pages(device) > 1
    drawn = (parts.draw(f"the history of {test.label}", partial(_test_view, test, n, history.tolerance_percent, disk,
                                                                  paged))
             for n, test in enumerate((t for t in tests if t.entries), start=1))
    return render_template(
        "device.html.j2", links, title=device.label, history=history, device=device,
        tests=tuple(view for view in drawn if view is not None),
        runs=[info for info in history.runs if info.id in shown][::-1], page=page, pages=history_pages(device),
        first_run=(page - 1) * HISTORY_PAGE_RUNS + 1,
        change_points=sum(test.change_points for test in tests), undrawn=parts.undrawn,
    )


def _test_view(test: TestHistory, n: int, tolerance_percent: float, disk: str, paged: bool) -> TestView:
    headings = tuple(f"{column.direction} {METRIC_BY_NAME[column.metric].label}" for column in test.columns)
    rows = []
    for previous, entry in zip((None, *test.entries), test.entries):
        changed = (*entry.environment, *(_condition(*c) for c in entry.conditions))
        cells = tuple(
            _cell(cell, previous and previous.cells[i], heading, test.columns[i].metric, entry, changed,
                  tolerance_percent)
            for i, (cell, heading) in enumerate(zip(entry.cells, headings))
        )
        rows.append(RowView(entry, cells, changed))
    return TestView(test, f"{test.label} · {describe(test.key)}", headings, tuple(rows), _chart(test, n, disk, paged))


def _cell(cell: Cell, before: Cell | None, heading: str, metric: str, entry: Entry, changed: tuple[str, ...],
          tolerance_percent: float) -> tuple[str, str, str]:
    """The figure, its classes (verdict, change point) and a title: what moved, how it was judged, what changed."""
    text = format_value(metric, cell)
    if cell.verdict is None:
        return text, "", ""
    if cell.verdict == WITHIN_NOISE:  # most cells of a long history: the class says it, a title would only weigh
        return text, "verdict-within-noise", ""
    moved = cell.verdict in (BETTER, WORSE)
    classes = " ".join(["change-point"] * moved + [f"verdict-{cell.verdict.replace(' ', '-')}"])
    ratio = f"{cell.ratio:.2f}x, " if cell.ratio is not None else ""
    # The first step of a page is judged against a run on the page before: its figure is not in this table.
    was = f"{format_value(metric, before)} in " if before is not None and before.summary is not None else ""
    title = (f"{heading}: {was}run {entry.previous.id} -> {text} ({ratio}{cell.verdict}; "
             f"{cell.basis}, tolerance {tolerance_percent:g} %)") + (f": {cell.reason}" if cell.reason else "")
    if moved:
        title += " · changed since run {}: {}".format(
            entry.previous.id, "; ".join(changed) if changed else "nothing the runs recorded")
    return text + (f" ({cell.verdict})" if moved else ""), classes, title


def _condition(name: str, before, after) -> str:
    return f"{name}: {_condition_value(name, before)} -> {_condition_value(name, after)}"


def _condition_value(name: str, value) -> str:
    return "none" if value is None else axis_label(name, value)


def _chart(test: TestHistory, n: int, disk: str, paged: bool = False) -> tuple[ChartSpec, object] | None:
    """The test's main figure run after run, a line per direction: MB/s for sequential tests, else IOPS (or TPS);
    `paged`: the entries are one page's, and the caption says so."""
    from markupsafe import Markup

    from disklab.report.html.svg import render_svg

    names = [c.metric for c in test.columns]
    sequential = test.params.get("pattern") == "sequential"
    preferred = ("mb_per_s", "iops", "tps") if sequential else ("iops", "tps", "mb_per_s")
    metric = next((m for m in preferred if m in names), None)
    if metric is None or len(test.entries) < 2:
        return None
    unit = METRIC_BY_NAME[metric].label
    series = []
    for i, column in enumerate(test.columns):
        if column.metric != metric:
            continue
        points = [(x, e.cells[i]) for x, e in enumerate(test.entries) if e.cells[i].summary is not None]
        # A --best-of run's point is its best pass (Cell.best), as compare shows it, without the passes' interval.
        series.append(SeriesSpec(column.direction,
                                 tuple((x, c.summary.mean if c.best is None else c.best) for x, c in points),
                                 tuple(c.summary if c.summary.n > 1 and c.best is None else None for _, c in points)))
    step = -(-len(test.entries) // MAX_TICKS)
    ticks = tuple((x, f"run {e.run.id}") for x, e in enumerate(test.entries) if x % step == 0)
    moved = [e.run.id for e in test.entries if e.change_point]
    best_of = sorted({e.run.options["best_of"] for e in test.entries if e.run.options.get("best_of")})
    spec = ChartSpec(
        id=f"history-{n}", kind="line", title=f"{unit} run after run · {test.label}",
        caption=f"{unit} of each run of this test on this device{' on this page' * paged}, oldest first, evenly "
        "spaced (not to time scale)"
        + (" · MB/s = 10^6 bytes/s" if metric == "mb_per_s" else "")
        + (f" · change points at run {', '.join(map(str, moved))}" if moved else " · no change beyond noise")
        + (f" · runs made with --best-of: their best pass (best of {'/'.join(map(str, best_of))})" if best_of else ""),
        x_label="run (oldest first)", y_label=y_axis_label(unit, series), series=tuple(series), x_ticks=ticks,
        y_log=log_scale(series),
        note=f"change points (beyond noise): run {', '.join(map(str, moved))}" if moved else "",
        footer=runs_footer(disk, [e.run for e in test.entries], test.params), y_better=better(unit),
    )
    return spec, Markup(render_svg(spec))
