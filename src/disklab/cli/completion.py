"""Shell completion of suite names and run ids (Click's `_DISKLAB_COMPLETE` mechanism; docs/installing.md, "Shell
completion").

A completion runs on every Tab press: it reads only what it lists, opens the store read-only, writes nothing, and
offers nothing rather than fail (a traceback would land in the user's shell prompt).
"""

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # loaded at a Tab press only: show, compare and report import this module at every start
    from click.shell_completion import CompletionItem

# With nothing typed yet, the newest runs are offered; once digits are typed, every run whose number starts so.
NEWEST_RUNS_OFFERED = 50


def complete_suite(ctx: click.Context, param: click.Parameter, incomplete: str) -> "list[CompletionItem]":
    """Built-in suite names, then suite files (*.toml) and fio job files (*.fio) where the typed path points (the
    current directory at first)."""
    import glob

    from click.shell_completion import CompletionItem

    from disklab.suite.loader import builtin_names

    names = [CompletionItem(name, help="built-in suite") for name in builtin_names() if name.startswith(incomplete)]
    files = [(path, help) for ending, help in (("*.toml", "suite file"), ("*.fio", "fio job file"))
             for path in sorted(glob.glob(glob.escape(incomplete) + ending))]
    return names + [CompletionItem(path, help=help) for path, help in files if os.path.isfile(path)]


def complete_run(ctx: click.Context, param: click.Parameter, incomplete: str) -> "list[CompletionItem]":
    """'last' and stored run numbers (with name, suite, target and start as help); nothing if the store can't be read."""
    from click.shell_completion import CompletionItem

    last = CompletionItem("last", help="the newest run")
    if incomplete and "last".startswith(incomplete):  # no need to read the store
        return [last]
    if incomplete and not incomplete.isdigit():
        return []
    try:
        runs = _stored_runs(_store_path(ctx), incomplete)
    except Exception:  # a damaged, locked or newer store, a bad --db: completion offers nothing, never a traceback
        return []
    return ([last] if runs and not incomplete else []) + [CompletionItem(str(run.id), help=_run_help(run)) for run in runs]


def _store_path(ctx: click.Context) -> Path | str:
    """--store or --db (or their variables) as the root command parsed them for completion, else the configured."""
    from disklab.store.locations import configured_location, parse_location

    params = ctx.find_root().params
    return parse_location(params["store"]) if params.get("store") else params.get("db") or configured_location()


def _stored_runs(location: Path | str, incomplete: str) -> list:
    from disklab.store.repository import Store

    if isinstance(location, Path) and not location.is_file():  # opening would create a store
        return []
    with Store(location, read_only=True) as store:
        if incomplete:
            return [run for run in store.list_runs() if str(run.id).startswith(incomplete)]
        return store.list_runs(limit=NEWEST_RUNS_OFFERED)


def _run_help(run) -> str:
    name = f"{run.name}: " if run.name else ""
    return f"{name}{run.suite_name} on {run.shown_target}, {run.started_at[:16].replace('T', ' ')}, {run.status}"
