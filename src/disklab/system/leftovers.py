"""What a disklab process makes outside the store (fio's folder, a capture's spool, a replay's iolog, a tracing
instance) carries its PID in its name. SIGKILL cannot be caught, so what a killed disklab left is told apart from
what a live one uses by that PID, and removed by the next command of the same kind or by `disklab doctor`."""

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from disklab.system.host import process_alive


def remove_entry(path: Path) -> bool:
    """A file or a folder (never a link's target) gone; False when it could not be removed."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class Leftover:
    path: Path
    what: str  # for `disklab doctor`: "a capture's spool file"
    remove: Callable[[Path], bool] = remove_entry  # a tracing instance is stopped, a file system unmounted first


def remove_leftovers(leftovers: list[Leftover]) -> list[Leftover]:
    """Those removed."""
    return [leftover for leftover in leftovers if leftover.remove(leftover.path)]


def owned_prefix(prefix: str) -> str:
    """The start of a name this process gives what it makes: PREFIX + PID + '-'."""
    return f"{prefix}{os.getpid()}-"


def dead_entries(folder: Path | str, prefix: str) -> list[Path]:
    """Entries of `folder` named PREFIX + PID (then '-', '.' or the end) whose process is gone."""
    pattern = re.compile(re.escape(prefix) + r"(?P<pid>[0-9]+)(?:[-.].*)?$", re.DOTALL)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [Path(folder) / name for name in names
            if (found := pattern.match(name)) and not process_alive(int(found["pid"]))]


def remove_dead(folder: Path | str, prefix: str) -> list[Path]:
    """What dead processes left in `folder` under `prefix`, removed; the paths removed."""
    return [path for path in dead_entries(folder, prefix) if remove_entry(path)]
