"""Pieces several commands share: opening the store, writing output to a file or stdout."""

import sys
from pathlib import Path

import click
from rich.console import Console

from disklab.system.host import host_identity
from disklab.errors import StoreError, UserError
from disklab.store.db import default_store_path
from disklab.store.repository import Store


def open_store(ctx: click.Context, write: bool = False) -> Store:
    """Commands that only read open the store read-only: they work on read-only media and never change the file.

    Every command marks this host's runs whose disklab was killed as interrupted, so no list shows a dead run as
    running; a reading command reopens the store for writing only when there is such a run (and it can write).
    """
    path = ctx.obj["db"] or default_store_path()
    hostname = host_identity().hostname
    store = Store(path, read_only=not write)
    if write:
        store.mark_abandoned_runs(hostname)
    elif store.abandoned_runs(hostname):
        try:
            writer = Store(path)
        except StoreError:
            return store  # read-only media, a damaged file: list as it stands
        store.close()
        writer.mark_abandoned_runs(hostname)
        store = writer
    return store


def converter(parse):
    """A click callback: the option parsed by `parse`, its ValueError shown as a bad parameter."""
    def convert(ctx, param, value):
        if value is None:
            return None
        try:
            return parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from exc

    return convert


def write_output(text: str, output: str | None) -> None:
    """'-o FILE' writes the file, '-o -' or nothing writes stdout."""
    if output in (None, "-"):
        click.echo(text, nl=False)
    else:
        try:
            Path(output).write_text(text)
        except OSError as exc:  # a missing folder, no permission, a full disk: the user's path, not our bug
            raise UserError(f"cannot write {output}: {exc.strerror or exc}") from None
        click.echo(f"written to {output}", err=True)


def stdout_console() -> Console:
    return _console(sys.stdout)


def stderr_console() -> Console:
    return _console(sys.stderr)


def _console(stream) -> Console:
    """Bound to the stream of the moment; terminals keep their width, pipes get lines never wrapped mid-value."""
    # Markup off: labels, paths and fio's messages may contain [brackets].
    return _PipeAwareConsole(file=stream, width=None if stream.isatty() else 200, soft_wrap=True, markup=False)


class _PipeAwareConsole(Console):
    """A closed pipe (`disklab runs | head`) ends disklab as every other write to it does (cli/main.py), not with
    rich's own exit code, which would read as a failed run."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError
