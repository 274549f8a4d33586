"""The pages: store data and a Links in, HTML out. The server (app.py) and the static site (publish.py) call the
same renderers; tables and charts come from the HTML report's data model (report/html/model.py), never a second
way of computing them."""

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial

from disklab.env.registry import DEVICE_PREFIX
from disklab.env.smart import format_amount, smart_changes
from disklab.report.html.model import TableModel, build_report
from disklab.report.runs import RUNS_HEADINGS, run_cells
from disklab.report.html.render import breakable, chart_markup, download_script, shown
from disklab.report.parts import Parts
from disklab.store.db import now_iso
from disklab.store.records import RunInfo, RunRecord
from disklab.store.filters import RUN_STATUSES, RunFilter
from disklab.store.groups import device_envs
from disklab.store.repository import Store
from disklab.web.links import Links

RUNS_PER_PAGE = 50
# The runs list's columns that sort (store/repository.py's RUN_ORDERS), by the heading they sit under.
SORTED_BY_HEADING = {"Run": "id", "Name": "name", "Started (UTC)": "started", "Suite": "suite", "Target": "target",
                     "Status": "status", "Host": "host"}


@dataclass(frozen=True)
class RunsListing:
    """One page of the runs list, as the store answered it."""

    runs: tuple[RunInfo, ...]
    models: Mapping[int, str]  # run id -> the models of the disks under its target
    matched: int  # runs the filters matched, on every page
    page: int  # from 1
    order: str  # a key of RUN_ORDERS, '-' before it for descending
    query: Mapping[str, str]  # the filters as the reader gave them, to fill the form and keep in links

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.matched / RUNS_PER_PAGE))


def list_runs(store: Store, where: RunFilter, order: str = "-id", page: int = 1,
              query: Mapping[str, str] | None = None) -> RunsListing:
    """Filtered and paged in SQL: a page reads its 50 runs' rows and their disks' models, whatever the store holds."""
    runs = tuple(store.list_runs(RUNS_PER_PAGE, where, order=order, offset=(page - 1) * RUNS_PER_PAGE))
    matched = store.count_runs(where) if len(runs) == RUNS_PER_PAGE or page > 1 else len(runs)
    return RunsListing(runs, disk_models(store, runs), matched, page, order, dict(query or {}))


def disk_models(store: Store, infos: Sequence[RunInfo]) -> dict[int, str]:
    """Run id -> the models of the disks under its target, as the runs list shows them: from the runs rows'
    device_env (store/groups.py), a page's runs in one query (a published site's every run in one a few hundred)."""
    return {run_id: _disk_models(env) for run_id, env in device_envs(store, [info.id for info in infos]).items()}


def _disk_models(env: dict) -> str:
    return ", ".join(dict.fromkeys(
        str(value) for key, value in env.items()
        if key.startswith(DEVICE_PREFIX) and key.endswith(".model") and value
    ))


def render_runs_page(listing: RunsListing, links: Links, drawn: Mapping[int, str] | None = None) -> str:
    """The runs list; `drawn`: rows drawn before (run_rows), by run id, used as they are."""
    from markupsafe import Markup

    drawn = drawn or {}
    rows = Markup("".join(drawn[info.id] if info.id in drawn else render_run_row(info, listing.models.get(info.id, ""),
                                                                                  links) for info in listing.runs))
    first = (listing.page - 1) * RUNS_PER_PAGE + 1
    return render_template(
        "runs.html.j2", links, title="Runs", listing=listing, rows_html=rows, headings=RUNS_HEADINGS,
        statuses=RUN_STATUSES, sorted_by=SORTED_BY_HEADING, first=first, last=first + len(listing.runs) - 1,
        sort_link=lambda key: links.runs({**listing.query, "sort": _toggled(listing.order, key)}),
        page_link=lambda page: links.runs({**listing.query, "sort": _kept_order(listing.order), "page": page}),
    )


def render_run_row(info: RunInfo, models: str, links: Links) -> str:
    """One run's row of the runs list, its line ended (a template's last is not)."""
    return _environment().get_template("runs-row.html.j2").render(
        links=links, info=info, cells=run_cells(info), models=models, headings=RUNS_HEADINGS) + "\n"


_ROW = re.compile(r'    <tr data-run-id="(\d+)">.*?</tr>\n', re.DOTALL)  # a cell's text is escaped: no "</tr>"


def run_rows(html: str) -> dict[int, str]:
    """The rows of a runs list render_runs_page drew, by run id."""
    return {int(found[1]): found[0] for found in _ROW.finditer(html)}


def _toggled(order: str, key: str) -> str:
    """A heading's link: its column ascending, or descending when the list is sorted by it ascending already."""
    return f"-{key}" if order == key else key


def _kept_order(order: str) -> str:
    return "" if order == "-id" else order  # the default is left out of links


def render_run_page(record: RunRecord, smart: Mapping[str, Mapping[str, dict]], links: Links,
                    generated_at: str | None = None, parts: Parts | None = None) -> str:
    """The run as `disklab report N` draws it, with its SMART changes and its files for download. `parts` (when
    given) collects what the page could not draw; the page itself says it."""
    parts = Parts() if parts is None else parts
    report = build_report([record], generated_at=generated_at or now_iso())
    parts.undrawn.extend(report.undrawn)
    return render_template(
        "run.html.j2", links, title=report.runs[0].title, report=report, charts=chart_markup(report.charts, parts),
        record=record, smart=parts.draw("SMART", partial(_smart_tables, smart), []), undrawn=parts.undrawn,
    )


def render_compare_page(records: Sequence[RunRecord], links: Links, generated_at: str | None = None,
                        parts: Parts | None = None) -> str:
    """The runs as `disklab report 1 5 9` compares them: verdicts beside their figures, and the charts."""
    parts = Parts() if parts is None else parts
    report = build_report(records, generated_at=generated_at or now_iso())
    parts.undrawn.extend(report.undrawn)
    return render_template("compare.html.j2", links, title=report.title, report=report,
                           charts=chart_markup(report.charts, parts), undrawn=parts.undrawn)


FIGURE_TYPES = {"csv": "text/csv", "json": "application/json"}  # the run's figures a page offers, as `export`


def run_figures(record: RunRecord, form: str) -> str:
    """The run's figures as `disklab export -f csv|json` writes them."""
    from disklab.report.export import EXPORTERS

    return EXPORTERS[form](record)


def render_message_page(title: str, message: str, links: Links) -> str:
    """A refusal or a missing page: one line that says why."""
    return render_template("message.html.j2", links, title=title, message=message)


def render_template(name: str, links: Links, **context) -> str:
    """Any page of the site, in layout.html.j2 (its nav and styles); autoescaped, so store text stays text."""
    return _environment().get_template(name).render(links=links, download_script=download_script(), **context)


def _smart_tables(smart: Mapping[str, Mapping[str, dict]]) -> list[TableModel]:
    """Each drive reported before and after the run, as `show --env` prints it."""
    tables = []
    for device in sorted(smart):
        phases = smart[device]
        if "before" not in phases or "after" not in phases:
            continue
        rows = tuple(
            (c.label, format_amount(c.before, c.unit), format_amount(c.after, c.unit),
             format_amount(c.delta, c.unit, signed=True))
            for c in smart_changes(phases["before"], phases["after"])
        )
        tables.append(TableModel(f"SMART of {device}, before and after", ("Counter", "Before", "After", "Change"),
                                 rows, ("GB = 10^9 bytes",)))
    return tables


@cache
def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined  # only the commands that write HTML load it

    environment = Environment(
        loader=PackageLoader("disklab.web", ""), autoescape=True, undefined=StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, finalize=shown,
    )
    environment.filters["breakable"] = breakable
    return environment
