"""The note an array disklab built keeps in the temporary folder while it exists (PREFIX + PID + '-N.json': what it
is called and which members hold its labels). A SIGKILL cannot be caught, so the next configured run or `disklab
doctor` reads the note of a dead PID and takes the array apart with what it says. And the last step of taking any
array apart: each member's label of it cleared."""

import json
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

from disklab.errors import UserError
from disklab.system.commands import run_checked
from disklab.system.leftovers import Leftover, dead_entries, owned_prefix
from disklab.system.outputs import write_whole


def note_path(prefix: str, number: int) -> Path:
    return Path(tempfile.gettempdir()) / f"{owned_prefix(prefix)}{number}.json"


def write_note(path: Path, facts: dict) -> None:
    """Written again as the array is made, so that it names what exists (a UUID once it is known)."""
    write_whole(path, json.dumps(facts), "array note")


def noted_leftovers(prefix: str, what: str, undo: Callable[[dict], None]) -> list[Leftover]:
    """What killed runs left under `prefix`, each removed by `undo(note)` (a UserError when it cannot be)."""

    def remove(note: Path) -> bool:
        try:
            undo(json.loads(note.read_text()))
            note.unlink()
        except (OSError, ValueError, KeyError, TypeError, UserError):
            return False
        return True

    return [Leftover(note, what, remove) for note in dead_entries(tempfile.gettempdir(), prefix)
            if note.suffix == ".json"]


def cleared(members: tuple[str, ...], ours: Callable[[str], bool], clear: Callable[[str], list[str]],
            timeout_s: float) -> list[str]:
    """Every member that carries this array's label (`ours`) cleared by the command `clear(member)`; what failed,
    each with the command to run by hand."""
    left = []
    for member in members:
        if not ours(member):
            continue  # no label written yet, cleared already, or another's
        command = clear(member)
        try:
            run_checked(command, f"clearing {member}", timeout_s)
        except UserError as exc:
            left.append(f"{exc} ({shlex.join(command)})")
    return left
