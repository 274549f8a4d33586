"""`disklab suites`: the suites that exist, what they measure and how long they take."""

import click
from rich.table import Table

from disklab.cli.common import stdout_console
from disklab.plan import build_plan
from disklab.suite.loader import builtin_names, load_suite
from disklab.units import format_duration


@click.command()
def suites():
    """List the built-in suites with their tests and estimated time."""
    table = Table()
    for heading in ("Suite", "Tests", "Estimated time", "What it measures"):
        table.add_column(heading)
    for name in builtin_names():
        plan = build_plan(load_suite(name))
        table.add_row(name, str(len(plan.tests)), format_duration(plan.estimated_seconds()), plan.suite.description)
    stdout_console().print(table)
    stdout_console().print("A suite file of your own runs with 'disklab run FILE.toml --target DIR'.")
