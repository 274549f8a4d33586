"""`disklab import`: fio JSON produced elsewhere becomes a stored run, shown and compared like a native one."""

from pathlib import Path

import click

from disklab.cli.common import commit_counted, converter, open_store, stderr_console
from disklab.cli.helptext import examples
from disklab.errors import UserError
from disklab.imports.fio_output import ImportedRun, read_fio_json, store_import
from disklab.store.bundle_file import looks_like_bundle
from disklab.store.names import run_name
from disklab.system.signals import interrupt_on_termination


@click.command("import", epilog=examples(
    'disklab import results.json --name "old array"   # fio --output-format=json+ output becomes a stored run',
    "disklab import a.json b.json                     # one run per file",
    "disklab import lab.json.gz                       # a bundle (export-run): its runs as they were there",
    "disklab show last"))
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", callback=converter(run_name),
              help="A name for the run, shown beside its number (e.g. \"old array\").")
@click.pass_context
def import_run(ctx, files, name):
    """Store fio's JSON output (json or json+, any fio version, plain or client/server mode) in FILES as runs, one per file.

    Every good file is stored; each refused one is named with its reason, and the import exits 2 when any was.

    A bundle written by 'disklab export-run' (plain or .gz) stores its runs as they were, each under this store's
    next number, with where it came from; a run already here (the same uid) is skipped. A damaged bundle, or one of
    a newer format, is refused whole: nothing of it is stored."""
    bundles = [path for path in files if looks_like_bundle(path)]
    if bundles:
        from disklab.cli.bundles import import_bundles, refuse_mixed

        refuse_mixed(files, bundles, name)
        return import_bundles(ctx, files)
    stored: list[Path] = []
    refused: dict[Path, str] = {}
    try:
        with interrupt_on_termination():  # SIGTERM and SIGHUP stop it as Ctrl-C does: the file in flight is undone
            imported = _readable(files, refused)  # every file is read before any is stored
            with open_store(ctx, write=True) as store:
                for run in imported:
                    try:
                        _report(run, commit_counted(store, lambda: store_import(store, run, name),
                                                    lambda _: stored.append(run.source)), store.name)
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
