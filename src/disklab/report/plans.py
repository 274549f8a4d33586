"""A plan as a Rich table: the tests of a dry run or a run about to start, the steps of a pgbench suite.

Apart from a run's results (report/table.py), so that showing stored runs loads neither the plan nor the suites.
"""

from typing import TYPE_CHECKING

from rich.table import Table

from disklab.plan.build import Plan
from disklab.suite.fio_options import block_sizes_as_written, other_options_as_written
from disklab.suite.model import Suite, TestSpec
from disklab.suite.pgbench import PgbenchSettings
from disklab.units import format_size

if TYPE_CHECKING:  # a type only: database.pgbench and PostgreSQL's modules stay out of plain commands' start-up
    from disklab.database.pgbench import Step


def plan_table(plan: Plan, title: str) -> Table:
    """Every test of a plan with the parameters fio will get."""
    table = Table(title=title, title_justify="left")
    as_written = any(test.fio for test in plan.tests)
    for heading in ("#", "Test", "rw", "bs", "QD", "jobs", "data", "runtime", "pause", "writes",
                    *["fio's options as written"] * as_written):
        table.add_column(heading, no_wrap=heading == "Test")
    for seq, test in enumerate(plan.tests, start=1):
        params = test.params()
        table.add_row(
            str(seq), test.label, test.fio_rw + (f" {test.rwmixread}% read" if test.direction == "mixed" else ""),
            block_sizes_as_written(params) or test.bssplit or format_size(test.bs), str(test.iodepth), str(test.jobs),
            _data(test), _runtime(test), f"{test.pause:g}s", "yes" if test.writes else "no",
            *[other_options_as_written(params)] * as_written,
        )
    return table


def _runtime(test: TestSpec) -> str:
    if test.time_based:
        return f"{test.runtime:g}s"
    return f"≤{test.runtime:g}s" if test.runtime else "once over"


def _data(test: TestSpec) -> str:
    """Where the test does its I/O: a region of the target, or a set of files."""
    if test.file_set:
        return f"{test.nrfiles} x {format_size(test.filesize)}"
    if test.size is None:
        return "whole target" if test.region == "whole" else f"{test.region} of target"
    region = format_size(test.size)
    return f"{region} at {format_size(test.offset)}" if test.offset else region


def pgbench_plan_table(suite: Suite, settings: PgbenchSettings, steps: tuple["Step", ...]) -> Table:
    """A pgbench suite's steps: one pgbench run per client count against the data set loaded once."""
    server = ", ".join(f"{name}={value}" for name, value in settings.settings) or "as shipped"
    table = Table(title=f"suite {suite.name}: pgbench -i -s {settings.scale} (about {settings.scale * 16:,} MB), then "
                        f"{len(steps)} step{'s' if len(steps) > 1 else ''}; server settings: {server}",
                  title_justify="left")
    for heading in ("#", "Step", "clients", "threads", "length", "vacuum", "command"):
        table.add_column(heading, no_wrap=heading in ("Step", "command"))
    for seq, step in enumerate(steps, start=1):
        length = f"{step.transactions:,} transactions per client" if step.transactions else f"{step.time_s:g} s"
        table.add_row(str(seq), step.label, str(step.clients), str(step.threads), length,
                      "yes" if step.vacuum else "no (-n)", "pgbench " + " ".join(step.arguments()))
    return table
