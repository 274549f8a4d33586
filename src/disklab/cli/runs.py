"""`disklab runs`: the stored runs, newest first, filtered and paged; it reads the runs table and nothing else.
--all in a format streams: every run written as it is read, in flat memory."""

import click
from rich.table import Table

from disklab.cli.common import open_store, stdout_console, write_output
from disklab.cli.helptext import examples
from disklab.cli.run_filters import run_filter_options
from disklab.report.runs import FORMATS, RUNS_EXPORTERS, RUNS_HEADINGS, run_cells
from disklab.report.terminal import terminal_text
from disklab.store.filters import RunFilter

DEFAULT_RUNS_SHOWN = 20


@click.command(epilog=examples(
    "disklab runs --suite quick --since 7d",
    "disklab runs --name array --status complete    # names that contain 'array', any case",
    "disklab runs --host lab-07 --user alice        # a shared store: one machine's runs, one user's",
    "disklab runs --all -f csv -o runs.csv"))
@click.option("--limit", "-n", type=click.IntRange(min=1),
              help=f"Show the newest N runs (default {DEFAULT_RUNS_SHOWN}).")
@click.option("--all", "show_all", is_flag=True, help="Show every run that matches.")
@run_filter_options
@click.option("--format", "-f", "output_format", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--output", "-o", help="Write to FILE ('-' for stdout, the default).")
@click.pass_context
def runs(ctx, limit, show_all, where, output_format, output):
    """List stored runs, newest first; how many matched is said under the list."""
    if show_all and limit:
        raise click.UsageError("--all and --limit exclude each other")
    if output_format == "table" and output not in (None, "-"):
        raise click.UsageError("a table goes to the terminal; use --format json, csv or markdown with --output")
    wanted = None if show_all else limit or DEFAULT_RUNS_SHOWN
    filtered = where != RunFilter()
    with open_store(ctx) as store:
        if output_format != "table":
            with store.snapshot():  # the count and the runs listed agree while others store runs
                matched = store.count_runs(where)
                infos = store.iter_runs(where) if wanted is None else store.list_runs(wanted, where)
                write_output(RUNS_EXPORTERS[output_format](infos, matched), output)
            if wanted is not None and wanted < matched:
                click.echo(_counted(wanted, matched, filtered), err=True)
            return
        infos = store.list_runs(wanted, where)
        # A list shorter than asked for holds every match.
        matched = len(infos) if wanted is None or len(infos) < wanted else store.count_runs(where)
    if not infos:
        click.echo("no stored run matches" if filtered else f"no runs stored yet in {terminal_text(store.name)}; "
                   "start one with 'disklab run quick --target DIR'")
        return
    table = Table()
    for heading in RUNS_HEADINGS:
        table.add_column(heading)
    for info in infos:
        table.add_row(*run_cells(info))
    stdout_console().print(table)
    click.echo(_counted(len(infos), matched, filtered))


def _counted(shown: int, matched: int, filtered: bool) -> str:
    """'20 of 10,000 runs; --all or --limit N for more' under a list that is cut short."""
    runs = f"{'matching ' if filtered else ''}run{'' if matched == 1 else 's'}"
    if shown == matched:
        return f"{matched:,} {runs}"
    return f"{shown:,} of {matched:,} {runs}; --all or --limit N for more"
