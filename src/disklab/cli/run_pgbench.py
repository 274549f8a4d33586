"""`disklab run` of a pgbench suite: steps -> target directory -> private PostgreSQL -> pgbench -> store -> summarise.

Its own module, so that PostgreSQL's modules load only when a pgbench suite runs.
"""

import os
from dataclasses import replace
from pathlib import Path

import click

from disklab.cli.common import open_store, stderr_console, stdout_console
from disklab.cli.run import finish, new_run, recorded
from disklab.database.benchmark import OUTCOME_KEY, PgbenchOverrides, run_database_benchmark, whole_scale
from disklab.database.pgbench import pgbench_duration, plan_steps
from disklab.database.postgres import check_cluster_target, cluster_folder, find_binaries, remove_stale_clusters
from disklab.database.settings import PGBENCH_ENGINE
from disklab.errors import UserError
from disklab.report.table import pgbench_plan_table
from disklab.suite.model import Suite
from disklab.targets.target import resolve_target


def run_pgbench(ctx, suite: Suite, target: str | None, scale: float | None, clients, transactions, time_s, pg_set,
                keep_cluster: bool, dry_run: bool) -> None:
    """M3's database test: a private PostgreSQL on the target directory, pgbench's client sweep, every step stored."""
    overrides = PgbenchOverrides(
        scale=None if scale is None else whole_scale(scale), clients=clients, transactions=transactions,
        time_s=time_s, settings=pg_set or (),
    )
    settings = overrides.apply(suite.pgbench)
    steps = plan_steps(settings, os.cpu_count() or 1)
    if dry_run or target is None:
        if not dry_run:
            raise click.UsageError("--target is required: a directory on the disk under test")
        stdout_console().print(pgbench_plan_table(suite, settings, steps))
        stdout_console().print(f"estimated duration: {pgbench_duration(settings)}")
        return
    resolved = resolve_target(target)
    if resolved.kind != "directory":
        raise UserError(f"{target} is a {resolved.kind}; suite {suite.name!r} needs a directory on the disk under "
                        "test (a mounted file system), where PostgreSQL keeps its data and WAL")
    check_cluster_target(Path(resolved.path))
    for stale in remove_stale_clusters(Path(resolved.path)):
        stderr_console().print(f"removed a PostgreSQL cluster left by a killed run: {stale}")
    binaries = find_binaries()
    with open_store(ctx, write=True) as store:
        cluster = replace(resolved, test_path=str(cluster_folder(Path(resolved.path))))
        run_id = store.create_run(new_run(suite, cluster, f"PostgreSQL {binaries.version}", PGBENCH_ENGINE,
                                           ctx.params, len(steps)))
        console = stderr_console()
        with recorded(store, run_id, resolved.path, False, None, []), console.status("") as status:
            outcome = run_database_benchmark(
                store, run_id, settings, steps, Path(resolved.path), keep_cluster,
                say=lambda line: console.print(line, markup=False, highlight=False),
                show_progress=lambda line: status.update(line),
            )
        finish(store, run_id, {OUTCOME_KEY: outcome})
