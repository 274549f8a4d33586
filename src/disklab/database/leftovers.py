"""What a pgbench run killed by SIGKILL leaves: its server still running, its cluster (in the target directory, or off
the target with --tablespace-only), its tablespace on the target and its socket folder. Found by the host and PID in
their names (targets/target.py); removed by the next pgbench run and by `disklab doctor`."""

import shutil
from pathlib import Path

from disklab.database.placement import CLUSTER_KIND, TABLESPACE_KIND, off_target_parent, tablespace_links
from disklab.database.postgres import SOCKET_PREFIX, kill_postmaster
from disklab.system.leftovers import Leftover, remove_entry
from disklab.targets.target import is_stale_entry, stale_entries

CLUSTER = "a PostgreSQL cluster left by a killed run"
TABLESPACE = "a PostgreSQL tablespace left by a killed run"


def cluster_leftovers(target_dir: str | None) -> list[Leftover]:
    """Killed runs' clusters off the target (in $TMPDIR, else /var/tmp) and, given a target directory, in it, then
    their tablespaces there; for `disklab doctor`, which removes them in this order."""
    found = [Leftover(path, f"{CLUSTER} (its server stopped first)", _remove_cluster)
             for path in _stale_clusters(Path(target_dir) if target_dir else None)]
    if target_dir and Path(target_dir).is_dir():
        found += [Leftover(path, TABLESPACE) for path in _stale(Path(target_dir), TABLESPACE_KIND)]
    return found


def remove_stale_clusters(target_dir: Path) -> list[str]:
    """Before a run: what killed runs left off the target and in `target_dir`, removed; a line for each."""
    removed = []
    for folder in _stale_clusters(target_dir):
        stopped, tablespaces = _stop_and_remove(folder)
        removed.append(f"{CLUSTER}: {folder}" + (" (its server stopped)" if stopped else "")
                       + "".join(f"; its tablespace {space}" for space in tablespaces))
    for space in _stale(target_dir, TABLESPACE_KIND):
        if remove_entry(space):
            removed.append(f"{TABLESPACE}: {space}")
    return removed


def _stale_clusters(target_dir: Path | None) -> list[Path]:
    """Off the target first: a cluster there links to its tablespace on a target, removed with it."""
    parents = dict.fromkeys(folder.resolve() for folder in (off_target_parent(), target_dir) if folder is not None)
    return [path for parent in parents for path in _stale(parent, CLUSTER_KIND)]


def _stale(folder: Path, kind: str) -> list[Path]:
    return stale_entries(str(folder), (kind,)) if folder.is_dir() else []


def _remove_cluster(folder: Path) -> bool:
    _stop_and_remove(folder)
    return not folder.exists()


def _stop_and_remove(folder: Path) -> tuple[bool, list[Path]]:
    """The server of a killed run's cluster stopped if it still runs; its socket folder, the tablespaces of killed
    runs it links to (wherever they lie) and the cluster removed. Whether a server was stopped, and those
    tablespaces."""
    data_dir = folder / "data"
    socket_dir = _socket_dir(data_dir)
    stopped = kill_postmaster(data_dir)
    if socket_dir is not None and socket_dir.name.startswith(SOCKET_PREFIX):
        shutil.rmtree(socket_dir, ignore_errors=True)
    linked = [link.resolve() for link in tablespace_links(data_dir)]
    tablespaces = [space for space in linked
                   if space.exists() and is_stale_entry(space, (TABLESPACE_KIND,)) and remove_entry(space)]
    shutil.rmtree(folder, ignore_errors=True)
    return stopped, tablespaces


def _socket_dir(data_dir: Path) -> Path | None:
    """postmaster.pid's fifth line names the socket directory."""
    try:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
    except OSError:
        return None
    return Path(lines[4]) if len(lines) > 4 and lines[4] else None
