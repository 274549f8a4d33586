"""`disklab import`: fio JSON produced elsewhere becomes a stored run, shown and compared like a native one."""

import signal
from pathlib import Path

import click

from disklab.cli.common import converter, open_store, stderr_console
from disklab.cli.helptext import examples
from disklab.errors import UserError
from disklab.imports.fio_output import ImportedRun, read_fio_json, store_import
from disklab.store.names import run_name
from disklab.store.repository import Store
from disklab.system.signals import interrupt_on_termination

# What stops an import (as KeyboardInterrupt): Ctrl-C, and the signals interrupt_on_termination turns into it.
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


@click.command("import", epilog=examples(
    'disklab import results.json --name "old array"   # fio --output-format=json+ output becomes a stored run',
    "disklab import a.json b.json                     # one run per file",
    "disklab show last"))
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", callback=converter(run_name),
              help="A name for the run, shown beside its number (e.g. \"old array\").")
@click.pass_context
def import_run(ctx, files, name):
    """Store fio's JSON output (json or json+, any fio version, plain or client/server mode) in FILES as runs, one per file.

    Every good file is stored; each refused one is named with its reason, and the import exits 2 when any was."""
    stored: list[Path] = []
    refused: dict[Path, str] = {}
    try:
        with interrupt_on_termination():  # SIGTERM and SIGHUP stop it as Ctrl-C does: the file in flight is undone
            imported = _readable(files, refused)  # every file is read before any is stored
            with open_store(ctx, write=True) as store:
                for run in imported:
                    try:
                        _report(run, _store_counted(store, run, name, stored), store.name)
                    except UserError as error:  # the store refused it; its transaction left nothing
                        refused[run.source] = str(error)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(_stopped(files, stored, refused)) from None
    if refused:
        raise _refusal(files, stored, refused)


def _readable(files: tuple[Path, ...], refused: dict[Path, str]) -> list[ImportedRun]:
    """The files that read as fio's output; the others in `refused` with their reason."""
    runs = []
    for path in files:
        try:
            runs.append(read_fio_json(path))
        except UserError as error:
            refused[path] = str(error)
    return runs


def _refusal(files: tuple[Path, ...], stored: list[Path], refused: dict[Path, str]) -> UserError:
    """One file alone: its reason, as ever. A batch: each refused file on a line of its own, then the count."""
    if len(files) == 1:
        return UserError(next(iter(refused.values())))
    for reason in refused.values():
        stderr_console().print(f"refused: {reason}", markup=False, highlight=False)
    named = ", ".join(map(str, refused))
    return UserError(f"{len(stored)} of {len(files)} files imported; refused: {named}")


def _store_counted(store: Store, run: ImportedRun, name: str | None, stored: list[Path]) -> int:
    """The file's run, committed and counted in `stored` before a stop is let through: a stop during its writes
    undoes them; one during the commit (an fsync, most of the time a file takes) waits for it and for the count, so
    that what the interruption says was imported is what the store holds."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    try:
        with store.transaction():
            run_id = store_import(store, run, name)
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        stored.append(run.source)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return run_id


def _report(run: ImportedRun, run_id: int, store_name: str) -> None:
    hosts = {t.host for t in run.tests if t.host}
    on_hosts = f" from {len(hosts)} fio server{'s' if len(hosts) != 1 else ''}" if run.client_server else ""
    failed = f", {len(run.failed)} failed (fio reported an error)" if run.failed else ""
    console = stderr_console()
    console.print(
        f"{run.source}: {len(run.tests)} test{'s' if len(run.tests) != 1 else ''}{on_hosts}{failed} "
        f"stored as run {run_id} in {store_name}", markup=False, highlight=False,
    )
    status, reason = run.outcome
    if status == "interrupted":
        console.print(f"  interrupted: {reason}", markup=False, highlight=False)
    for note in run.notes:
        console.print(f"  {note}", markup=False, highlight=False)


def _stopped(files: tuple[Path, ...], stored: list[Path], refused: dict[Path, str]) -> str:
    """Which files are stored runs and which are not (the one in flight left nothing), so that the rest can be
    imported again."""
    rest = [path for path in files if path not in stored and path not in refused]
    named = f"; refused: {', '.join(map(str, refused))}" if refused else ""
    if not rest:
        everything = f"all {len(files)} file{'s' if len(files) > 1 else ''}"
        return f"{everything if not refused else f'{len(stored)} of {len(files)} files'} imported{named}"
    done = ", ".join(map(str, stored)) if len(stored) <= 3 else f"the first {len(stored)}, listed above"
    imported = f"{len(stored)} of {len(files)} files imported ({done})" if stored else "no file imported"
    after = f" and the {len(rest) - 1} file{'s' if len(rest) > 2 else ''} after it" if len(rest) > 1 else ""
    return f"{imported}; not imported: {rest[0]}{after}{named}"
