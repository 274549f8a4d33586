"""Pieces several commands share: opening the store, writing output to a file or stdout."""

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


stdout_console = Console()
stderr_console = Console(stderr=True)
