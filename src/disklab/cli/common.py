"""Pieces several commands share: opening the store, writing output to a file or stdout."""

import signal
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import click
from rich.console import Console, RenderableType
from rich.text import Text

from disklab.system.host import host_identity
from disklab.errors import StoreError, UserError
from disklab.report.terminal import terminal_rich_text, terminal_text
from disklab.store.repository import Store
from disklab.system.outputs import write_whole


def open_store(ctx: click.Context, write: bool = False) -> Store:
    """Commands that only read open the store read-only: they work on read-only media and never change the file.

    Every command marks this host's runs whose disklab was killed as interrupted, so no list shows a dead run as
    running; a reading command reopens the store for writing only when there is such a run (and it can write).
    """
    location = store_location(ctx)
    hostname = host_identity().hostname
    store = Store(location, read_only=not write, say=_note)
    if write:
        store.mark_abandoned_runs(hostname)
    elif store.abandoned_runs(hostname):
        try:
            writer = Store(location, say=_note)
        except StoreError:
            return store  # read-only media, a damaged file: list as it stands
        try:
            writer.mark_abandoned_runs(hostname)
        except StoreError:  # a full file system: marked by a later command, once there is room
            writer.close()
            return store
        store.close()
        store = writer
    return store


def store_location(ctx: click.Context):
    """The store the command line, the environment or the config file names, else the default file."""
    from disklab.store.locations import configured_location

    return ctx.find_root().obj["store"] or configured_location()


def open_location(text: str, read_only: bool = False) -> Store:
    """The store `store copy` names: a file path or a postgresql:// URL; a file that is only read must be there."""
    from disklab.store.locations import parse_location

    location = parse_location(text)
    if read_only and isinstance(location, Path) and not location.exists():
        raise UserError(f"there is no results store at {location}")
    return Store(location, read_only=read_only, say=_note)


def _note(line: str) -> None:
    stderr_console().print(f"note: {line}", highlight=False)


# What stops an import or a copy (as KeyboardInterrupt): Ctrl-C, and the signals interrupt_on_termination turns
# into it.
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
_Stored = TypeVar("_Stored")


def commit_counted(store: Store, write: Callable[[], _Stored], count: Callable[[_Stored], None]) -> _Stored:
    """What `write` stores, committed in one transaction and counted before a stop is let through: a stop during its
    writes undoes them; one during the commit (an fsync, most of the time a run takes) waits for it and for the count,
    so that what an interruption says was stored is what the store holds."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    try:
        with store.transaction():
            stored = write()
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        count(stored)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return stored


# A command's output is written, but some of it could not be drawn: each part is named on stderr.
EXIT_IN_PART = 1


def report_undrawn(ctx: click.Context, undrawn: Sequence[object], written: str) -> None:
    """Each part that `written` (the report, the site) leaves out, as a warning line, then one error line and exit 1:
    the output is there, but not whole, and a script should know."""
    for part in undrawn:
        click.echo(f"disklab: warning: {terminal_text(str(part))}", err=True)
    if undrawn:
        click.echo(f"disklab: error: {len(undrawn):,} part{'s' * (len(undrawn) != 1)} of {written} could not be drawn "
                   "(above); the rest is written", err=True)
        ctx.exit(EXIT_IN_PART)


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


def write_output(text: str | bytes | Iterable[str], output: str | None) -> None:
    """'-o FILE' writes the file, '-o -' or nothing writes stdout; text in chunks as they come, bytes (a PDF) to
    stdout's binary stream."""
    if output in (None, "-"):
        for chunk in (text,) if isinstance(text, (str, bytes)) else text:
            click.echo(chunk, nl=False)
    else:
        write_whole(output, text)
        click.echo(f"written to {terminal_text(output)}", err=True)


def stdout_console() -> Console:
    return _console(sys.stdout)


def stderr_console() -> Console:
    return _console(sys.stderr)


def _console(stream) -> Console:
    """Bound to the stream of the moment; terminals keep their width, pipes get lines never wrapped mid-value."""
    # Markup and emoji codes off: labels, paths and fio's messages may contain [brackets] and :colons:.
    return _TerminalConsole(file=stream, width=None if stream.isatty() else 200, soft_wrap=True, markup=False,
                            emoji=False)


class _TerminalConsole(Console):
    """Stored text is shown, never obeyed: every string it prints, wherever it sits (cell, title, line), has its
    control and bidi characters escaped (report/terminal.py) before rich measures it, every Text as it is drawn.

    A closed pipe (`disklab runs | head`) ends disklab as every other write to it does (cli/main.py), not with
    rich's own exit code, which would read as a failed run."""

    def render_str(self, text: str, **options) -> Text:
        return super().render_str(terminal_text(text, keep_lines=True), **options)

    def render(self, renderable: RenderableType, options=None):
        # Text built elsewhere (notes, styled cells) reaches the terminal here, nested or not.
        return super().render(terminal_rich_text(renderable) if isinstance(renderable, Text) else renderable, options)

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError
