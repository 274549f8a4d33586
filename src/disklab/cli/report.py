"""`disklab report`: stored runs as one self-contained HTML file, tables and charts, readable offline and in print;
or that page printed to PDF by Chromium."""

import os
from pathlib import Path

import click

from disklab.capacity.measured_render import report_table
from disklab.capacity.member_runs import held_to_members
from disklab.cli.common import converter, open_store, report_undrawn, write_output
from disklab.cli.completion import complete_run
from disklab.cli.helptext import examples
from disklab.cli.spec import spec_option, with_spec
from disklab.errors import UserError
from disklab.report.choices import ReportChoices, metric_names, report_title, run_label, tests_pattern
from disklab.report.html.grid import DEFAULT_GRID_UNIT, GRID_UNITS
from disklab.report.html.model import build_report
from disklab.report.html.paper import PAPERS, locale_paper
from disklab.report.html.render import render_html
from disklab.report.metrics import REGISTRY
from disklab.report.parts import Parts
from disklab.store.db import now_iso
from disklab.store.series import resolve_refs
from disklab.system.textfile import read_text_file

_EXAMPLES = examples(
    "disklab report 12 15 -o ssd-vs-hdd.html",
    'disklab report 1 2 3 --pdf -o review.pdf --title "Three NVMe drives" --notes @notes.md',
    "disklab report 4 5 --label 4=\"990 PRO\" --label 5=\"870 EVO\" --tests 'RND4K*' --metrics iops,clat_p99_us")


@click.command(epilog=_EXAMPLES)
@click.argument("run_refs", metavar="RUN...", nargs=-1, shell_complete=complete_run)
@click.option("--output", "-o",
              help="Write to FILE ('-' for stdout; default: disklab-report-run12-15.html for runs 12 and 15, .pdf "
                   "with --pdf).")
@click.option("--title", callback=converter(report_title), metavar="TEXT",
              help="The report's title (default: the runs and their suites).")
@click.option("--notes", metavar="TEXT|@FILE",
              help="Notes under the title, in Markdown (CommonMark): TEXT, or @FILE to read them from FILE. Raw HTML "
                   "is shown as text and images are not loaded.")
@click.option("--label", "labels", multiple=True, callback=converter(lambda values: tuple(map(run_label, values))),
              metavar="RUN=TEXT", help="Call RUN TEXT in this report's tables, headings and legends, as if renamed "
                                       "(repeatable).")
@click.option("--tests", "tests", multiple=True, callback=converter(lambda values: tuple(map(tests_pattern, values))),
              metavar="PATTERN", help="Only the tests whose label matches PATTERN, a shell glob in any case "
                                      "('SEQ1M*', '*Q1T1*'); repeatable, a test matching any is shown.")
@click.option("--metrics", callback=converter(metric_names), metavar="LIST",
              help=f"Only these metrics (comma-separated) in the comparison, the charts and the per-test tables: "
                   f"{', '.join(REGISTRY)}.")
@click.option("--pdf", is_flag=True,
              help="Write a PDF instead: the page printed by headless Chromium (Debian's 'chromium' package).")
@click.option("--paper", type=click.Choice(list(PAPERS), case_sensitive=False),
              help="The PDF's paper size (with --pdf). Default: letter where the locale's paper is Letter (LC_ALL, "
                   "else LC_PAPER, else LANG names a territory that uses it, as glibc does: US, CA, MX, PH, CL, CO, VE "
                   "...), else a4.")
@click.option("--grid-unit", type=click.Choice(list(GRID_UNITS)), default=DEFAULT_GRID_UNIT, show_default=True,
              help="Unit of CrystalDiskMark's grid, drawn for runs of a suite with its view (quick, desktop-mix).")
@spec_option
@click.pass_context
def report(ctx, run_refs, output, title, notes, labels, tests, metrics, pdf, paper, grid_unit, spec):
    """Write RUNs (numbers, 'last', 'last~N' or series:RUN; default: last) as one HTML report with tables and charts.
    """
    if paper and not pdf:
        raise click.BadParameter("sets the PDF's paper: give --pdf with it", param_hint="'--paper'")
    notes_text = _notes(notes) if notes is not None else None
    with open_store(ctx) as store:
        run_ids = list(dict.fromkeys(resolve_refs(store, run_refs or ("last",))))
        chosen_labels = _labels(store, labels or (), run_ids)
        records = [with_spec(record, spec) for record in store.get_runs(run_ids)]
        held = held_to_members(store, records)
    choices = ReportChoices(title=title, notes=notes_text, labels=chosen_labels, tests=tests or (),
                            metrics=metrics or ())
    output = output or f"disklab-report-run{'-'.join(str(i) for i in run_ids)}.{'pdf' if pdf else 'html'}"
    if output != "-" and not Path(output).parent.is_dir():
        raise UserError(f"cannot write {output}: the directory {Path(output).parent} does not exist")
    parts = Parts()
    html = render_html(build_report(records, generated_at=now_iso(), choices=choices, grid_unit=grid_unit,
                                    planner=report_table(held) if held else None), parts)
    if not pdf:
        try:
            write_output(html, output)
        except OSError as exc:
            raise UserError(f"cannot write {output}: {exc.strerror}") from exc
    else:
        from disklab.report.html.pdf import print_pdf

        document = print_pdf(html, (paper or locale_paper(os.environ)).lower())
        write_output(document, output)
    report_undrawn(ctx, parts.undrawn, "the report")


def _notes(value: str) -> str:
    """--notes TEXT, or @FILE's text (UTF-8, at most 1 MiB); blank notes are refused rather than shown empty."""
    text = read_text_file(Path(value[1:]), "notes file") if value.startswith("@") else value
    if not text.strip():
        raise UserError("--notes: the notes are empty" + (f" ({value[1:]} holds no text)" if value[:1] == "@" else ""))
    return text


def _labels(store, labels: tuple[tuple[str, str], ...], run_ids: list[int]) -> tuple[tuple[int, str], ...]:
    """--label's RUNs resolved ('last' too), each one of the report's runs, each labelled once."""
    resolved: dict[int, str] = {}
    for ref, label in labels:
        run_id = store.resolve_run_id(ref)
        if run_id not in run_ids:
            raise UserError(f"--label {ref}={label}: run {run_id} is not in this report (runs "
                            f"{', '.join(map(str, run_ids))})")
        if run_id in resolved:
            raise UserError(f"--label: run {run_id} is labelled twice")
        resolved[run_id] = label
    return tuple(resolved.items())
