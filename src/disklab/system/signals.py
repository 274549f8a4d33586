"""Termination signals taken as Ctrl-C, so that what Ctrl-C cleans up is cleaned up for a kill too."""

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupt_on_termination() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt while the block runs: a run stops fio and keeps its finished
    tests, a capture writes what it traced and removes its tracing instance."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
