"""`disklab doctor`: is this machine ready to measure, and if not, what to do."""

import click
from rich.table import Table
from rich.text import Text

from disklab.cli.common import stdout_console, store_location
from disklab.cli.helptext import examples
from disklab.database.leftovers import cluster_leftovers
from disklab.env.doctor import run_checks

_STYLE = {"ok": "green", "warn": "yellow", "fail": "red"}


@click.command(epilog=examples(
    "disklab doctor                       # fio, its engines and the results store",
    "disklab doctor --target /mnt/data    # also O_DIRECT there; removes what killed runs left"))
@click.option("--target", "-t", type=click.Path(), help="Also check direct I/O in this directory.")
@click.pass_context
def doctor(ctx, target):
    """Check fio, its engines, direct I/O on a target and the results store."""
    checks = run_checks(target, store_location(ctx), cluster_leftovers)
    table = Table()
    for heading in ("Check", "Status", "Detail"):
        table.add_column(heading)
    for check in checks:
        table.add_row(check.name, Text(check.status, style=_STYLE[check.status]), check.detail)
    stdout_console().print(table)
    for check in checks:
        for line in check.lines:
            stdout_console().print(line, highlight=False)
    if any(c.status == "fail" for c in checks):
        ctx.exit(1)
