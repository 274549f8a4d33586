"""`disklab runs` and `disklab show`: stored runs, listed and shown again in any format."""

import click
from rich.table import Table

from disklab.cli.common import open_store, stdout_console, write_output
from disklab.report.export import EXPORTERS, FORMATS
from disklab.report.rows import result_rows
from disklab.report.table import results_table


@click.command()
@click.option("--limit", "-n", type=click.IntRange(min=1), help="Show only the newest N runs.")
@click.pass_context
def runs(ctx, limit):
    """List stored runs, newest first."""
    with open_store(ctx) as store:
        infos = store.list_runs(limit)
    if not infos:
        click.echo(f"no runs stored yet in {store.path}; start one with 'disklab run quick --target DIR'")
        return
    table = Table()
    for heading in ("Run", "Started (UTC)", "Suite", "Target", "Tests", "Status", "Host"):
        table.add_column(heading)
    for info in infos:
        table.add_row(
            str(info.id), info.started_at, info.suite_name, info.target,
            f"{info.finished_tests}/{info.planned_tests}", info.status, info.hostname,
        )
    stdout_console().print(table)


@click.command()
@click.argument("run_ref", metavar="RUN", default="last")
@click.option("--format", "-f", "output_format", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--output", "-o", help="Write to FILE ('-' for stdout, the default).")
@click.option("--jobfile", is_flag=True, help="Print the fio job file of every test instead.")
@click.pass_context
def show(ctx, run_ref, output_format, output, jobfile):
    """Show a stored RUN (a number, 'last' or 'last~N') again."""
    with open_store(ctx) as store:
        record = store.get_run(store.resolve_run_id(run_ref))
    if jobfile:
        write_output("\n".join(t.jobfile for t in record.tests), output)
    elif output_format == "table":
        if output not in (None, "-"):
            raise click.UsageError("a table goes to the terminal; use --format json, csv or markdown with --output")
        stdout_console().print(results_table(record.info, result_rows(record)))
        if record.info.error:
            stdout_console().print(f"{record.info.status}: {record.info.error}", style="yellow")
    else:
        write_output(EXPORTERS[output_format](record), output)
