"""`disklab note`: notes kept with a run (what was special about it, what to check), shown wherever the run is."""

import click

from disklab.cli.common import open_store, stderr_console, stdout_console
from disklab.cli.completion import complete_run
from disklab.errors import UserError
from disklab.store.notes import add_note, clear_notes, note_text, run_notes

_EXAMPLES = """\b
Examples:
  disklab note 3 "firmware 2B2QGXA7; drive 61 % full before the run"
  disklab note 3                       # print run 3's notes
  disklab note 3 --clear               # remove them
  disklab note 3 --clear "only this"   # replace them
"""


@click.command(epilog=_EXAMPLES)
@click.argument("run_ref", metavar="RUN", shell_complete=complete_run)
@click.argument("words", metavar="[TEXT]...", nargs=-1)
@click.option("--clear", is_flag=True, help="Remove the run's notes; with TEXT, TEXT replaces them.")
@click.pass_context
def note(ctx, run_ref, words, clear):
    """Keep TEXT as a note with RUN (a number, 'last' or 'last~N'); without TEXT, print its notes. Several words
    make one note, joined by spaces; quote TEXT to keep its spacing and lines.

    Notes show in `show`, `report`, serve's run page and `publish`. A note is plain text of up to 4,000 characters,
    on several lines if need be (no other control characters).
    """
    try:
        text = note_text(" ".join(words)) if words else None
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if text is None and not clear:
        with open_store(ctx) as store:
            run_id = store.resolve_run_id(run_ref)
            notes = run_notes(store, run_id)
        if not notes:
            stderr_console().print(f"run {run_id} has no notes (disklab note {run_id} \"TEXT\" adds one)",
                                   highlight=False)
        for kept in notes:
            stdout_console().print(f"{kept.added_at}  {kept.text}", highlight=False)
        return
    with open_store(ctx, write=True) as store:
        run_id = store.resolve_run_id(run_ref)
        if text is None:
            removed = clear_notes(store, run_id)
            message = f"run {run_id}: {removed} note{'s' * (removed != 1)} removed"
        else:
            count = add_note(store, run_id, text, replace=clear)
            message = f"run {run_id} has {count} note{'s' * (count != 1)} now"
    stderr_console().print(message, highlight=False)
