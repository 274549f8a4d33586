"""What a capture or a replay killed by SIGKILL leaves (a tracing instance still tracing, a spool of raw events, a
rewritten iolog as large as the trace): found by the PID in its name and removed by the next capture or replay, and
by `disklab doctor`."""

import tempfile
from pathlib import Path

from disklab.system.leftovers import Leftover, dead_entries
from disklab.trace.blockevents import SPOOL_PREFIX
from disklab.trace.tracefs import dead_instances, remove_instance

REPLAY_PREFIX = "disklab-replay-"


def replay_parent() -> Path:
    """Where a replay's rewritten iolog lives: as large as the trace, so on disk (/var/tmp), not in RAM."""
    return Path("/var/tmp") if Path("/var/tmp").is_dir() else Path(tempfile.gettempdir())


def capture_leftovers() -> list[Leftover]:
    return ([Leftover(path, "a killed capture's tracing instance, still tracing", remove_instance)
             for path in dead_instances()]
            + [Leftover(path, "a killed capture's spool of events")
               for path in dead_entries(tempfile.gettempdir(), SPOOL_PREFIX)])


def replay_leftovers() -> list[Leftover]:
    return [Leftover(path, "a killed replay's rewritten iolog") for path in dead_entries(replay_parent(), REPLAY_PREFIX)]
