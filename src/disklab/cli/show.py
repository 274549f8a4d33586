"""`disklab show`: a stored run shown again, in any format.

Each way of showing (the tables, an export, the environment, the series) loads its own renderer when asked for.
"""

import click

from disklab.cli.common import open_store, report_undrawn, stdout_console, write_output
from disklab.cli.completion import complete_run
from disklab.cli.helptext import examples
from disklab.cli.spec import spec_option, with_spec
from disklab.env.registry import label_of
from disklab.report.parts import Parts
from disklab.report.runs import FORMATS


@click.command(epilog=examples(
    "disklab show last --flat              # only the per-test table",
    "disklab show 3 --format json -o 3.json",
    "disklab show 3 --env                  # the machine, fio, file system and disks; SMART before and after"))
@click.argument("run_ref", metavar="RUN", default="last", shell_complete=complete_run)
@click.option("--format", "-f", "output_format", type=click.Choice(FORMATS), default="table", show_default=True,
              help="csv: one tidy table, a row per test and direction with the run's id; json and markdown add the "
                   "suite's view; with --env: json or markdown.")
@click.option("--output", "-o", help="Write to FILE ('-' for stdout, the default).")
@click.option("--jobfile", is_flag=True, help="Print the fio job file of every test instead.")
@click.option("--series", is_flag=True, help="Print the per-interval time series of tests run with log_interval instead.")
@click.option("--flat", is_flag=True, help="Only the per-test table, without the suite's view.")
@click.option("--per-host", is_flag=True,
              help="A run on many hosts (run --hosts): each host's result beside the aggregate of every test.")
@click.option("--env", "environment", is_flag=True,
              help="Print the run's environment (host, fio, file system, disks) and its drives' SMART changes instead.")
@spec_option
@click.pass_context
def show(ctx, run_ref, output_format, output, jobfile, flat, series, environment, per_host, spec):
    """Show a stored RUN (a number, 'last' or 'last~N') again: the suite's view, if it has one, then every test."""
    _refuse_conflicts(output_format, output, jobfile=jobfile, series=series, env=environment, flat=flat,
                      per_host=per_host)
    parts = Parts()
    with open_store(ctx) as store:
        record = with_spec(store.get_run(store.resolve_run_id(run_ref), per_host=per_host), spec)
        flat = flat or per_host  # the suite's view summarises the aggregates
        outcomes, env, smart = record.outcomes, record.env, store.smart(record.info.id)
    if environment and output_format != "table":
        from disklab.report.export import ENVIRONMENT_EXPORTERS

        write_output(ENVIRONMENT_EXPORTERS[output_format](record.info.id, env, smart), output)
    elif environment:
        from disklab.report.environment import env_table, smart_tables

        if not env:
            click.echo(f"run {record.info.id} has no recorded environment (it was made by an older disklab)")
        else:
            stdout_console().print(env_table(record.info.id, env))
        for table in smart_tables(record.info.id, smart):
            stdout_console().print(table)
    elif jobfile:
        write_output("\n".join(t.jobfile for t in record.tests), output)
    elif series:
        if output_format != "table" or output not in (None, "-"):
            raise click.UsageError("--series prints tables to the terminal; 'show --format json' carries the series")
        from disklab.report.series import render_series_table, series_tables

        tables = series_tables(record)
        if not tables:
            click.echo(f"run {record.info.id} has no time series; set log_interval (e.g. \"1s\") in a suite to log one")
        for table in tables:
            stdout_console().print(render_series_table(table))
    elif output_format == "table":
        if output not in (None, "-"):
            raise click.UsageError("a table goes to the terminal; use --format json, csv or markdown with --output")
        if env.get("target_on"):  # which disk the figures are of, as the run's header said it
            stdout_console().print(f"{label_of('target_on')}: {env['target_on']}", markup=False, highlight=False)
        print_results(record, outcomes, flat, parts)
        if record.info.error:
            stdout_console().print(f"{record.info.status}: {record.info.error}", style="yellow")
        for kept in record.notes:  # disklab note
            stdout_console().print(f"note ({kept.added_at}): {kept.text}", markup=False, highlight=False)
    else:
        from disklab.report.export import EXPORTERS

        write_output(EXPORTERS[output_format](record, flat=flat, parts=parts), output)
    report_undrawn(ctx, parts.undrawn, f"run {record.info.id}")


def _refuse_conflicts(output_format: str, output: str | None, **given: bool) -> None:
    """Options that cannot be honoured together are refused, never ignored."""
    ways = [f"--{name}" for name in ("jobfile", "series", "env") if given[name]]
    if len(ways) > 1:
        raise click.UsageError(f"{' and '.join(ways)} exclude each other: each shows the run in its own way")
    if ways and given["flat"]:
        raise click.UsageError(f"--flat leaves the suite's view out of the results; {ways[0]} shows no results")
    if given["env"] and given["per_host"]:
        raise click.UsageError("--per-host splits the results by host; --env shows the run's environment")
    if given["jobfile"] and output_format != "table":
        raise click.UsageError("--jobfile prints fio's job files as they are, in no other format; "
                               "leave out --format (-o FILE writes them to a file)")
    if given["env"] and output_format == "csv":
        raise click.UsageError("--env is several tables (the environment, each drive's SMART), not one CSV; "
                               "use --format json or markdown")
    if given["env"] and output_format == "table" and output not in (None, "-"):
        raise click.UsageError("a table goes to the terminal; use --format json or markdown with --output")


def print_results(record, outcomes: dict, flat: bool = False, parts: Parts | None = None) -> None:
    """The suite's view (unless flat), every test, the flags, what the schedule concluded and what the figures say
    (findings): as `run` ends and as `show` shows a stored run. A part that cannot be drawn is left out, noted in
    `parts` (when given), and the others are printed."""
    from disklab.analysis.findings import findings
    from disklab.report.findings import findings_lines
    from disklab.report.table import flag_lines, run_results
    from disklab.report.views import build_view, view_table

    def view():
        built = build_view(record)
        return view_table(built) if built else None

    parts = Parts() if parts is None else parts
    drawn = None if flat else parts.draw("the suite's view", view)
    if drawn:
        stdout_console().print(drawn)
    for item in parts.draw("every test", lambda: run_results(record), []):
        stdout_console().print(item)
    for line in parts.draw("flags", lambda: flag_lines(record), []):
        stdout_console().print(line, style="yellow", markup=False, highlight=False)
    for outcome in outcomes.values():
        if isinstance(outcome, dict) and isinstance(outcome.get("summary"), str):
            stdout_console().print(outcome["summary"])
    for line in parts.draw("findings", lambda: findings_lines(findings(record)), []):
        stdout_console().print(line)
