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

    previous = {sig: signal.signal(sig, interrupt) for sig in heeded(signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def heeded(*signals: signal.Signals) -> tuple[signal.Signals, ...]:
    """The signals not ignored: one ignored when disklab started (nohup's SIGHUP, SIGINT in a background script)
    stays ignored, as the user asked."""
    return tuple(sig for sig in signals if signal.getsignal(sig) is not signal.SIG_IGN)
