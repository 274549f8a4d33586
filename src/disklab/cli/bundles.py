"""Runs moved between stores whole: `disklab export-run` writes a bundle, `disklab import` reads one back (it hands
bundles here), `disklab store copy` copies a whole store. A run keeps its uid everywhere, gets each store's next
number, and is skipped where its uid already is, so that moving the same runs again adds nothing."""

from collections import Counter
from pathlib import Path

import click

from disklab.cli.common import commit_counted, open_location, open_store, stderr_console
from disklab.cli.completion import complete_run
from disklab.cli.helptext import examples
from disklab.errors import UserError
from disklab.store.bundle import insert_entry, oldest_first, origin_of, refuse_running, run_entry, stored_run_number
from disklab.store.bundle_file import bundle_bytes, bundle_document, read_bundle, store_location
from disklab.store.db import now_iso
from disklab.store.repository import Store
from disklab.store.series import resolve_refs
from disklab.system.host import host_identity
from disklab.system.outputs import write_whole
from disklab.system.signals import interrupt_on_termination


@click.command("export-run", epilog=examples(
    "disklab export-run last -o run.json           # one run, every row of it, to move to another store",
    "disklab export-run 3 7 series:12 -o lab.json.gz",
    "disklab export-run last~1 -o - | gzip > run.json.gz"))
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True, shell_complete=complete_run)
@click.option("--output", "-o", required=True,
              help="Bundle file to write ('-' for stdout); a name ending in .gz is gzip-compressed.")
@click.pass_context
def export_run(ctx, run_refs, output):
    """Write the RUNs (numbers, 'last', 'last~N', series:RUN) and everything stored with them to one bundle file,
    which 'disklab import' stores elsewhere as they are here. Runs go in the order of their numbers."""
    with open_store(ctx) as store:
        run_ids = sorted(set(resolve_refs(store, run_refs)))
        refuse_running(store, run_ids)
        data = bundle_bytes(bundle_document(store, run_ids, host_identity().hostname, now_iso()),
                            compressed=output.endswith(".gz"))
    if output == "-":
        click.echo(data, nl=False)  # bytes: to stdout's binary stream
    else:
        write_whole(output, data)
    named = ", ".join(map(str, run_ids)) if len(run_ids) <= 10 else f"{run_ids[0]} to {run_ids[-1]}"
    stderr_console().print(f"exported {_runs(len(run_ids))} ({named}) to {'stdout' if output == '-' else output}",
                           markup=False, highlight=False)


def import_bundles(ctx: click.Context, files: tuple[Path, ...]) -> None:
    """Every bundle checked whole before its first run is stored; then each run in one transaction of its own."""
    tally: Counter = Counter()
    say = stderr_console().print
    try:
        with interrupt_on_termination():  # SIGTERM and SIGHUP stop it as Ctrl-C does: the run in flight is undone
            documents = [(path, read_bundle(path)) for path in files]
            with open_store(ctx, write=True) as store:
                for path, document in documents:
                    heads: dict[str, int] = {}
                    for entry in document["runs"]:
                        number, added = _moved(store, entry, origin_of(entry, document, now_iso()), heads, tally)
                        was = f"was run {entry['number']} on {document['host']}"
                        say(f"{path}: stored as run {number} ({was})" if added else
                            f"{path}: already here as run {number} ({was}): skipped", markup=False, highlight=False)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"{_runs(tally['added'])} imported, {tally['skipped']} skipped; the run in flight "
                                "left nothing: import again to store the rest (the runs already here are skipped)"
                                ) from None


@click.group("store", epilog=examples(
    "disklab store copy old/results.db new/results.db   # every run of one store into another",
    "disklab store copy lab.db ~/.local/share/disklab/results.db"))
def store_group():
    """Whole results stores: copy every run of one into another."""


@store_group.command("copy", epilog=examples(
    "disklab store copy old/results.db new/results.db   # oldest first, one transaction per run",
    "disklab store copy new/results.db old/results.db   # and back: only the runs old lacks"))
@click.argument("source")
@click.argument("destination")
def store_copy(source, destination):
    """Copy every run of the store SOURCE (opened read-only) into DESTINATION, oldest first, each run whole with its
    uid; a run DESTINATION already has (the same uid) is skipped, as is one still running, so a second copy adds
    nothing. Each copied run records SOURCE and its number there as its origin."""
    tally: Counter = Counter()
    try:
        with interrupt_on_termination(), open_location(source, read_only=True) as src, \
                open_location(destination) as dst:
            copy = {"host": host_identity().hostname, "store": store_location(src), "exported_at": now_iso()}
            heads: dict[str, int] = {}
            for number, uid, status, _ in oldest_first(src):
                if status == "running":
                    tally["running"] += 1
                elif stored_run_number(dst, uid) is not None:
                    tally["skipped"] += 1
                else:
                    entry = run_entry(src, number)
                    _moved(dst, entry, origin_of(entry, copy, now_iso()), heads, tally)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(f"copied {_runs(tally['added'])} before the stop (the run in flight left nothing): "
                                "copy again to add the rest") from None
    left = f", left {_runs(tally['running'])} still running" if tally["running"] else ""
    click.echo(f"copied {_runs(tally['added'])}, skipped {tally['skipped']} already there{left}")


def _moved(store: Store, entry: dict, origin: dict, heads: dict[str, int], tally: Counter) -> tuple[int, bool]:
    """(its number here, True) once the run is stored under a new number; (the number it has, False) when its uid
    is already here. Counted in `tally` ('added', 'skipped') with the commit."""
    def write() -> tuple[int, bool]:
        uid = entry["run"]["uid"]
        there = stored_run_number(store, uid)
        number = insert_entry(store, entry, origin, heads) if there is None else None
        return (number, True) if number is not None else (there or stored_run_number(store, uid), False)

    return commit_counted(store, write, lambda moved: tally.update(["added" if moved[1] else "skipped"]))


def _runs(count: int) -> str:
    return f"{count} run{'s' if count != 1 else ''}"


def refuse_mixed(files: tuple[Path, ...], bundles: list[Path], name: str | None) -> None:
    if len(bundles) != len(files):
        raise UserError(f"{bundles[0]} is a disklab bundle and {next(f for f in files if f not in bundles)} is not: "
                        "import bundles and fio output with separate commands")
    if name is not None:
        raise UserError("--name names a run made from fio output; a bundle's runs keep their own names "
                        "(rename one with 'disklab rename')")
