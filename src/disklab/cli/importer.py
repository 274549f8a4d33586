"""`disklab import`: fio JSON produced elsewhere becomes a stored run, shown and compared like a native one."""

from pathlib import Path

import click

from disklab.cli.common import converter, open_store, stderr_console
from disklab.imports.fio_output import read_fio_json, store_import
from disklab.store.names import run_name


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", callback=converter(run_name),
              help="A name for the run, shown beside its number (e.g. \"old array\").")
@click.pass_context
def import_run(ctx, files, name):
    """Store fio's JSON output (json or json+, any fio version, plain or client/server mode) in FILES as runs, one per file."""
    imported = [read_fio_json(path) for path in files]  # every file is read before any is stored
    with open_store(ctx, write=True) as store:
        for run in imported:
            run_id = store_import(store, run, name)
            hosts = {t.host for t in run.tests if t.host}
            on_hosts = f" from {len(hosts)} fio server{'s' if len(hosts) != 1 else ''}" if run.client_server else ""
            failed = f", {len(run.failed)} failed (fio reported an error)" if run.failed else ""
            console = stderr_console()
            console.print(
                f"{run.source}: {len(run.tests)} test{'s' if len(run.tests) != 1 else ''}{on_hosts}{failed} "
                f"stored as run {run_id} in {store.path}", markup=False, highlight=False,
            )
            status, reason = run.outcome
            if status == "interrupted":
                console.print(f"  interrupted: {reason}", markup=False, highlight=False)
            for note in run.notes:
                console.print(f"  {note}", markup=False, highlight=False)
