"""`disklab run` of a pgbench suite: steps -> target directory -> private PostgreSQL -> pgbench -> store -> summarise.

Its own module, so that PostgreSQL's modules load only when a pgbench suite runs.
"""

from contextlib import contextmanager

import click

from disklab.cli.common import open_store, stderr_console, stdout_console
from disklab.cli.run import show_finished
from disklab.database.pgbench import pgbench_duration
from disklab.database.placement import off_target_parent
from disklab.database.session import carry_out_pgbench, pgbench_plan, prepare_cluster_target
from disklab.report.plans import pgbench_plan_table
from disklab.suite.model import Suite


def run_pgbench(ctx, suite: Suite, target: str | None, scale: float | None, clients, transactions, time_s, pg_set,
                keep_cluster: bool, tablespace_only: bool, dry_run: bool) -> None:
    """M3's database test: the plan shown, or the run carried out (database/session.py) and its results shown."""
    settings, steps = pgbench_plan(suite, scale, clients, transactions, time_s, pg_set)
    if dry_run or target is None:
        if not dry_run:
            raise click.UsageError("--target is required: a directory on the disk under test")
        stdout_console().print(pgbench_plan_table(suite, settings, steps))
        stdout_console().print(f"estimated duration: {pgbench_duration(settings)}")
        if tablespace_only:
            stdout_console().print("--tablespace-only: tables and indexes in a tablespace on the target; the cluster, "
                                   f"its WAL and catalog in {off_target_parent()}", markup=False, highlight=False)
        return
    resolved, placement, binaries = prepare_cluster_target(suite, target, tablespace_only,
                                                           lambda line: stderr_console().print(line))
    with open_store(ctx, write=True) as store:
        console = stderr_console()
        run_id, outcomes = carry_out_pgbench(
            store, suite, resolved, placement, binaries, settings, steps, keep_cluster, ctx.params,
            say=lambda line: console.print(line, markup=False, highlight=False), status=lambda: _status_line(console),
        )
        show_finished(store, run_id, outcomes)


@contextmanager
def _status_line(console):
    """A line on the terminal that each update replaces."""
    with console.status("") as status:
        yield lambda line: status.update(line)
