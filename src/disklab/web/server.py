"""waitress set up for `disklab serve`: its own error answers (400, 431, 500 ...) carry the app's security headers,
and its "Task queue depth" warning is said once a minute at most, with a count, instead of once per waiting request
(under load a line per request, and a slow reader of stderr then stalls the server)."""

import logging
import threading
import time

from waitress import create_server
from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask

from disklab.errors import UserError
from disklab.web.app import SECURITY_HEADERS

THREADS = 4  # waitress's default; the pages are Python-bound, so more threads would not answer sooner
QUEUE_WARNING_EVERY_S = 60.0


class _SecureErrorTask(ErrorTask):
    """An answer waitress makes itself, before or instead of the app (a request it cannot parse, headers too large,
    an app that failed), with the headers the app's answers carry."""

    def build_response_header(self):
        self.response_headers.extend(SECURITY_HEADERS.items())
        return super().build_response_header()


class _Channel(HTTPChannel):
    error_task_class = _SecureErrorTask


class QueueWarnings(logging.Filter):
    """The first warning of a backlog passes; the next ones within `every_s` of it are counted, and the next to pass
    says how many were held back."""

    def __init__(self, every_s: float = QUEUE_WARNING_EVERY_S):
        super().__init__()
        self.every_s = every_s
        self.lock = threading.Lock()
        self.passed_at: float | None = None
        self.held = 0

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        with self.lock:
            since = self.passed_at
            if since is not None and now - since < self.every_s:
                self.held += 1
                return False
            held, self.held, self.passed_at = self.held, 0, now
        record.msg = f"disklab serve: requests wait for one of {THREADS} threads: {record.getMessage()}" + (
            f" ({held:,} more such warnings in the last {now - since:,.0f} s)" if held else "")
        record.args = ()
        return True


def listen(app, host: str, port: int):
    """A waitress server bound to host:port (not yet serving); a port in use, an address not of this machine or a
    name that does not resolve is one UserError."""
    sockets: dict = {}
    try:
        server = create_server(app, map=sockets, host=host, port=port, ident="disklab", threads=THREADS)
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    except ValueError:  # waitress's word for what getaddrinfo refused ('', 'example.invalid', '::1;x')
        raise UserError(f"cannot listen on {host!r}: not an address or a host name this machine resolves") from None
    for listener in sockets.values():  # one server per address a name resolves to; each accepts its own channels
        if isinstance(listener, BaseWSGIServer):
            listener.channel_class = _Channel
    queue_log = logging.getLogger("waitress.queue")
    if not any(isinstance(f, QueueWarnings) for f in queue_log.filters):
        queue_log.addFilter(QueueWarnings())
    return server
