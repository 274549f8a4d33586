"""Pieces several commands share: opening the store, writing output to a file or stdout."""

import sys
from pathlib import Path

import click
from rich.console import Console

from disklab.env.host import host_identity
from disklab.store.db import default_store_path
from disklab.store.repository import Store


def open_store(ctx: click.Context) -> Store:
    store = Store(ctx.obj["db"] or default_store_path())
    store.mark_abandoned_runs(host_identity().hostname)
    return store


def write_output(text: str, output: str | None) -> None:
    """'-o FILE' writes the file, '-o -' or nothing writes stdout."""
    if output in (None, "-"):
        click.echo(text, nl=False)
    else:
        Path(output).write_text(text)
        click.echo(f"written to {output}", err=True)


def stdout_console() -> Console:
    return _console(sys.stdout)


def stderr_console() -> Console:
    return _console(sys.stderr)


def _console(stream) -> Console:
    """Bound to the stream of the moment; terminals keep their width, pipes get lines never wrapped mid-value."""
    # Markup off: labels, paths and fio's messages may contain [brackets].
    return Console(file=stream, width=None if stream.isatty() else 200, soft_wrap=True, markup=False)
