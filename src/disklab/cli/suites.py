"""`disklab suites`: the suites that exist, what they measure, how long they take, and their tests."""

import os

import click
from rich.table import Table

from disklab.cli.common import stdout_console
from disklab.cli.helptext import examples
from disklab.plan.build import build_plan
from disklab.database.pgbench import pgbench_duration, plan_steps
from disklab.report.plans import pgbench_plan_table, plan_table
from disklab.suite.loader import builtin_names, load_suite
from disklab.units import format_duration


@click.group(invoke_without_command=True, epilog=examples(
    "disklab suites                   # every built-in suite, with its tests and estimated time",
    "disklab suites show matrix       # every test it expands to",
    "disklab suites show my.toml"))
@click.pass_context
def suites(ctx):
    """List the built-in suites with their tests and estimated time (or 'show NAME')."""
    if ctx.invoked_subcommand:
        return
    table = Table()
    for heading in ("Suite", "Tests", "Estimated time", "What it measures"):
        table.add_column(heading)
    for name in builtin_names():
        suite = load_suite(name)
        if suite.pgbench is not None:
            table.add_row(name, str(len(suite.pgbench.clients)), pgbench_duration(suite.pgbench), suite.description)
            continue
        plan = build_plan(suite)
        runs = suite.configurations.count if suite.configurations else 1
        table.add_row(name, str(len(plan.tests)) + (f" x {runs} runs" if runs > 1 else ""),
                      format_duration(runs * plan.estimated_seconds()), plan.suite.description)
    stdout_console().print(table)
    stdout_console().print("'disklab suites show NAME' lists every test; a suite file of your own runs with "
                           "'disklab run FILE.toml --target DIR'.")


@suites.command(epilog=examples("disklab suites show quick", "disklab suites show my-suite.toml"))
@click.argument("suite")
def show(suite):
    """Every test SUITE (a name or a .toml file) expands to, with its parameters."""
    console = stdout_console()
    loaded = load_suite(suite)
    if loaded.pgbench is not None:
        console.print(f"{loaded.name}: {loaded.description}")
        console.print(pgbench_plan_table(loaded, loaded.pgbench, plan_steps(loaded.pgbench, os.cpu_count() or 1)))
        console.print(f"estimated: {pgbench_duration(loaded.pgbench)}")
        return
    plan = build_plan(loaded)
    console.print(f"{plan.suite.name}: {plan.suite.description}")
    console.print(plan_table(plan, f"{len(plan.tests)} tests, estimated {format_duration(plan.estimated_seconds())} "
                                   "(regions are fitted to the target when it runs)"))
    if loaded.configurations:
        from disklab.cli.run_configured import configuration_lines

        for line in configuration_lines(loaded.configurations.as_options()):
            console.print(line)
    if plan.suite.view:
        view = plan.suite.view
        columns = " x ".join(view.columns) or "-"
        console.print(f"shown as: rows by {view.rows}, columns by {columns}, cells: {', '.join(view.values)}")
