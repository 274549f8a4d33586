"""A run's notes (`disklab note`): what its user wrote about it, in run_notes beside the run, oldest first.

Apart from repository.py so that the store's reading and writing of runs stays one module within the size limit;
the Store is passed in (its connection, path and transaction), never imported, as repository.py imports this.
"""

from collections.abc import Sequence

from disklab.errors import UserError
from disklab.store.db import now_iso
from disklab.store.names import checked_text
from disklab.store.records import Note

MAX_NOTE_CHARS = 4000


def note_text(text: str) -> str:
    """A note as it is kept (white space around it dropped), or ValueError saying in one line why it cannot be."""
    return checked_text(text.strip() or text, "a note", MAX_NOTE_CHARS, lines=True)


def add_note(store, run_id: int, text: str, replace: bool = False) -> int:
    """Keep `text` (checked by note_text) with the run; `replace`: in place of its notes. Returns how many it has."""
    with store.transaction():
        _check_run(store, run_id)
        if replace:
            store.conn.execute("DELETE FROM run_notes WHERE run_id = ?", (run_id,))
        store.conn.execute("INSERT INTO run_notes (run_id, text, added_at) VALUES (?, ?, ?)",
                           (run_id, text, now_iso()))
        return store.conn.execute("SELECT COUNT(*) FROM run_notes WHERE run_id = ?", (run_id,)).fetchone()[0]


def clear_notes(store, run_id: int) -> int:
    """Remove every note of the run; returns how many there were."""
    with store.transaction():
        _check_run(store, run_id)
        return store.conn.execute("DELETE FROM run_notes WHERE run_id = ?", (run_id,)).rowcount


def run_notes(store, run_id: int) -> tuple[Note, ...]:
    return notes_by_run(store, (run_id,)).get(run_id, ())


def _check_run(store, run_id: int) -> None:
    if store.conn.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
        raise UserError(f"there is no run {run_id} in {store.name}")


def notes_by_run(store, run_ids: Sequence[int] | None = None) -> dict[int, tuple[Note, ...]]:
    """The notes of the runs (of every run when None) in one read, oldest first; a run without notes is not there
    (`publish` tells by every run's notes what changed; runs read together read theirs at once)."""
    where, values = ("", ()) if run_ids is None else store.dialect.is_one_of("run_id", tuple(run_ids))
    chosen = f" WHERE {where}" if where else ""
    notes: dict[int, list[Note]] = {}
    with store.errors():
        for row in store.conn.execute(f"SELECT run_id, text, added_at FROM run_notes{chosen} ORDER BY id", values):
            notes.setdefault(row["run_id"], []).append(Note(row["text"], row["added_at"]))
    return {run_id: tuple(kept) for run_id, kept in notes.items()}
