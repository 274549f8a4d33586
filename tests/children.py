"""Processes a test starts and signals: each takes SIGINT as a user's Ctrl-C, and none outlives its test.

A background job of a non-interactive shell (`make test &` in a script, `nohup make test &`) starts with SIGINT and
SIGQUIT ignored, and an ignored signal stays ignored across fork and exec: a `disklab capture` started from such a
test run never sees the Ctrl-C the test sends it (disklab, like Python and the shells, keeps a signal its starter
ignored). So every child started here has them back at their defaults.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable, Sequence

from disklab.fio.executor import die_with_parent

# A child given the signals a background job starts with ignored, back at their defaults.
RESET_SIGNALS = (signal.SIGINT, signal.SIGQUIT)
# How long a child asked to stop at teardown may take to clean up (a capture writes its trace and removes its tracing
# instance, a run stops fio) before its process group is killed; it bounds a hang, it measures nothing.
END_GRACE_S = 60.0


def as_a_user_started_it(*, with_parent: bool = True) -> Callable[[], None]:
    """A preexec_fn: Ctrl-C and SIGQUIT as a terminal would deliver them, and (by default) death with the test."""

    def setup() -> None:
        for sig in RESET_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, RESET_SIGNALS)
        if with_parent:
            die_with_parent()  # a test run killed outright takes its children with it

    return setup


class Children:
    """What one test started: each child leads its own process group, and the group is ended at teardown."""

    def __init__(self) -> None:
        self.started: list[tuple[subprocess.Popen, signal.Signals]] = []

    def start(self, command: Sequence[str], *, stop_signal: signal.Signals = signal.SIGTERM, with_parent: bool = True,
              **popen) -> subprocess.Popen:
        """`stop_signal` asks it to finish at teardown (SIGTERM: disklab's commands clean up as on Ctrl-C)."""
        process = subprocess.Popen(command, process_group=0, preexec_fn=as_a_user_started_it(with_parent=with_parent),
                                   **popen)
        self.started.append((process, stop_signal))
        return process

    def end_all(self) -> None:
        """Latest first, as a stack unwinds; safe to call more than once."""
        while self.started:
            process, stop_signal = self.started.pop()
            end(process, stop_signal)


def end(process: subprocess.Popen, stop_signal: signal.Signals = signal.SIGTERM, grace_s: float = END_GRACE_S) -> None:
    """Ask the child's process group to stop (its output drained meanwhile, so that a full pipe cannot hold it up),
    kill what is left of the group, and reap the child. A child the test reaped itself is left as it is: its number
    may belong to another process group by now."""
    if process.returncode is not None:
        return
    if process.poll() is None:
        _signal_group(process.pid, stop_signal)
        try:
            process.communicate(timeout=grace_s)
        except (subprocess.TimeoutExpired, ValueError):  # ValueError: the test closed a pipe of it already
            pass
    # Also when the child is gone: what it forked into its group. Reaped a moment ago at most, its number cannot have
    # been handed out again (the kernel hands pids out in turn, and frees one only once no process has it as its pid,
    # group or session).
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass
