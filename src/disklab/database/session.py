"""A pgbench suite's run: its settings and steps from the suite and the command line, the target directory checked,
the run stored, the benchmark carried out around its recorded environment, and the run's status whatever happens."""

import os
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Callable

from disklab.database.benchmark import OUTCOME_KEY, PgbenchOverrides, run_database_benchmark, whole_scale
from disklab.database.pgbench import Step, plan_steps
from disklab.database.leftovers import remove_stale_clusters
from disklab.database.placement import Placement, place_off_target
from disklab.database.postgres import ServerBinaries, check_cluster_target, find_binaries
from disklab.errors import UserError
from disklab.run.session import keep_warnings, new_run, recorded
from disklab.store.records import PGBENCH_ENGINE
from disklab.store.repository import Store
from disklab.suite.model import Suite
from disklab.suite.pgbench import PgbenchSettings
from disklab.targets.target import Target, absolute_path, resolve_target


def pgbench_plan(suite: Suite, scale: float | None, clients: tuple[int, ...] | None, transactions: int | None,
                 time_s: float | None, pg_set: tuple[tuple[str, str], ...] | None,
                 ) -> tuple[PgbenchSettings, tuple[Step, ...]]:
    """The suite's [pgbench] settings with the command line's options winning, and the client sweep's steps."""
    overrides = PgbenchOverrides(
        scale=None if scale is None else whole_scale(scale), clients=clients, transactions=transactions,
        time_s=time_s, settings=pg_set or (),
    )
    settings = overrides.apply(suite.pgbench)
    return settings, plan_steps(settings, os.cpu_count() or 1)


def prepare_cluster_target(suite: Suite, target: str, tablespace_only: bool, say: Callable[[str], None],
                           ) -> tuple[Target, Placement, ServerBinaries]:
    """A directory on the disk under test (and with `tablespace_only` one off it for the cluster), each checked and
    cleared of what a killed run left, and PostgreSQL's programs found."""
    if not os.path.exists(absolute_path(target)):  # no test file to offer (--new-file): PostgreSQL needs a folder
        raise UserError(f"target {target} does not exist: create the directory on the disk under test first")
    resolved = resolve_target(target)
    if resolved.kind != "directory":
        raise UserError(f"{target} is a {resolved.kind}; suite {suite.name!r} needs a directory on the disk under "
                        "test (a mounted file system), where PostgreSQL keeps its data and WAL")
    for line in resolved.warnings:
        say(line)
    target_dir = Path(resolved.path)
    check_cluster_target(target_dir)
    placement = Placement(target_dir)
    if tablespace_only:
        placement, warnings = place_off_target(target_dir)
        check_cluster_target(placement.off_target)
        for line in warnings:
            say(line)
        resolved = replace(resolved, warnings=resolved.warnings + warnings)
    for stale in remove_stale_clusters(target_dir):
        say(f"removed {stale}")
    return resolved, placement, find_binaries()


def carry_out_pgbench(
    store: Store, suite: Suite, target: Target, placement: Placement, binaries: ServerBinaries,
    settings: PgbenchSettings, steps: tuple[Step, ...], keep_cluster: bool, params: dict, say: Callable[[str], None],
    status: Callable[[], AbstractContextManager[Callable[[str], None]]],
) -> tuple[int, dict]:
    """M3's database test: a private PostgreSQL placed as `placement` says, pgbench's client sweep, every step stored.

    `say` prints a line; `status` shows a line that each call replaces (pgbench's report of every second).
    Returns the run's id and its outcomes, of a run now complete.
    """
    cluster = replace(target, test_path=str(placement.on_target))
    run_id = store.create_run(new_run(suite, cluster, f"PostgreSQL {binaries.version}", PGBENCH_ENGINE, params,
                                      len(steps)))
    keep_warnings(store, run_id, target)
    with recorded(store, run_id, target.path, False, None, []), status() as show_progress:
        outcome = run_database_benchmark(store, run_id, settings, steps, placement, keep_cluster, say=say,
                                         show_progress=show_progress)
    store.finish_run(run_id, "complete")
    return run_id, {OUTCOME_KEY: outcome}
