"""The WSGI app of `disklab serve`: Werkzeug's routing over the store, opened read-only for each request.

Nothing here writes: each request opens the store read-only and closes it. Every answer carries the security
headers; a missing run, a bad query or an unreadable store is a page with one line and its HTTP status.
"""

import sys
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from werkzeug.datastructures import MultiDict
from werkzeug.exceptions import BadRequest, HTTPException, NotFound, ServiceUnavailable
from werkzeug.routing import Map, RequestRedirect, Rule
from werkzeug.wrappers import Request, Response

from disklab.errors import StoreError, UserError
from disklab.report.parts import Parts
from disklab.store.records import RunRecord
from disklab.store.filters import RUN_ORDERS, RUN_STATUSES, RunFilter
from disklab.store.repository import Store
from disklab.store.series import SERIES_PREFIX, resolve_refs
from disklab.web.links import ServerLinks
from disklab.web.pages import (
    FIGURE_TYPES, list_runs, render_compare_page, render_message_page, render_run_page, render_runs_page, run_figures,
)

MAX_COMPARED = 12  # more columns than a page can show side by side
FILTERS = ("q", "suite", "device", "target", "host", "user", "status", "since", "until")
# Inline styles and scripts only (no CDN, fonts or scripts from elsewhere): the pages work offline.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "script-src 'self' 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; "
                               "form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
# A run or test number SQLite can hold (a signed 64-bit integer): a larger one is no run, not an OverflowError.
_ID = f"int(max={2**63 - 1})"
# The last page number a query may ask for; its digits are counted before int() reads them (4,301 digits and more
# are a ValueError in Python, a huge number a huge offset).
MAX_PAGE = 10**9
_URLS = Map([
    Rule("/", endpoint="runs"),
    Rule(f"/runs/<{_ID}:run_id>", endpoint="run"),
    Rule(f"/runs/<{_ID}:run_id>/tests/<{_ID}:test_id>/job.fio", endpoint="job_file"),
    Rule(f"/runs/<{_ID}:run_id>/tests/<{_ID}:test_id>/fio.json", endpoint="fio_output"),
    Rule(f"/runs/<{_ID}:run_id>/suite.toml", endpoint="suite_file"),
    Rule(f"/runs/<{_ID}:run_id>/figures.<any(csv, json):form>", endpoint="figures"),
    Rule("/compare", endpoint="compare_form"),
    Rule("/compare/<ids>", endpoint="compare"),
    Rule("/devices", endpoint="devices"),
    Rule("/devices/<path:key>", endpoint="device"),
], strict_slashes=False)


class WebApp:
    """Serves the store at `location`, which must exist (serve checks it before starting)."""

    def __init__(self, location: Path | str):
        self.location = location
        self.links = ServerLinks()

    def __call__(self, environ, start_response):
        response = self.respond(Request(environ))
        response.headers.update(SECURITY_HEADERS)
        return response(environ, start_response)

    def respond(self, request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return self._message(405, "Method not allowed", "this server only shows the store: it takes GET only",
                                 headers={"Allow": "GET, HEAD"})
        try:
            if not _is_utf8(request.query_string):  # Werkzeug decodes the path leniently, the query string strictly
                raise BadRequest("the query string is not UTF-8 text: percent-encode its bytes")
            endpoint, values = _URLS.bind_to_environ(request.environ).match()
            if isinstance(self.location, Path) and not self.location.is_file():  # opening would create a store
                raise ServiceUnavailable(f"the results store {self.location} is no longer there")
            with Store(self.location, read_only=True) as store:
                return getattr(self, f"_{endpoint}")(request, store, **values)
        except RequestRedirect as exc:
            return exc.get_response(request.environ)
        except HTTPException as exc:
            return self._message(exc.code, exc.name, exc.description)
        except StoreError as exc:
            return self._message(503, "The results store cannot be read", str(exc))
        except Exception as exc:  # a bug: one line in the server's log and on the page, never a traceback
            print(f"disklab serve: internal error on {request.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return self._message(500, "Internal error", "disklab failed to draw this page; this is a bug in disklab")

    def _message(self, status: int, title: str, message: str, headers: dict | None = None) -> Response:
        html = render_message_page(title, message, self.links)
        return Response(html, status=status, mimetype="text/html", headers=headers)

    def _runs(self, request: Request, store: Store) -> Response:
        where, order, page, query = runs_query(request.args)
        return _html(render_runs_page(list_runs(store, where, order, page, query), self.links))

    def _run(self, request: Request, store: Store, run_id: int) -> Response:
        parts = Parts()
        html = render_run_page(_record(store, run_id), store.smart(run_id), self.links, parts=parts)
        return _html(html, request, parts)

    def _job_file(self, request: Request, store: Store, run_id: int, test_id: int) -> Response:
        jobfile, _ = _raw(store, run_id, test_id)
        return _download(jobfile, "text/plain", f"run{run_id}-test{test_id}.fio")

    def _fio_output(self, request: Request, store: Store, run_id: int, test_id: int) -> Response:
        _, output = _raw(store, run_id, test_id)
        return _download(output, "application/json", f"run{run_id}-test{test_id}.json")

    def _suite_file(self, request: Request, store: Store, run_id: int) -> Response:
        return _download(_record(store, run_id).suite_text, "text/plain", f"run{run_id}-suite.toml")

    def _figures(self, request: Request, store: Store, run_id: int, form: str) -> Response:
        return _download(run_figures(_record(store, run_id), form), FIGURE_TYPES[form], f"run{run_id}-figures.{form}")

    def _compare_form(self, request: Request, store: Store) -> Response:
        """The runs list's tick boxes without JavaScript: ?run=1&run=5 -> /compare/1,5, the address to share."""
        picked = request.args.getlist("run")
        if not picked:
            raise BadRequest("tick the runs to compare in the runs list first")
        return Response(status=303, headers={"Location": self.links.compare(_run_ids(",".join(picked)))})

    def _compare(self, request: Request, store: Store, ids: str) -> Response:
        if ids.startswith(SERIES_PREFIX):  # /compare/series:7 -> the address of its runs, the one to share
            try:
                series = resolve_refs(store, [ids])
            except UserError as exc:
                raise NotFound(str(exc)) from None
            return Response(status=303, headers={"Location": self.links.compare(series)})
        records = [_record(store, run_id) for run_id in _run_ids(ids)]
        parts = Parts()
        return _html(render_compare_page(records, self.links, parts=parts), request, parts)

    def _devices(self, request: Request, store: Store) -> Response:
        from disklab.web.history import devices_page

        return _html(devices_page(store, self.links))

    def _device(self, request: Request, store: Store, key: str) -> Response:
        from disklab.web.history import device_page

        parts = Parts()
        page = page_number(request.args) if request.args.get("page") else None  # none: the newest
        return _html(device_page(store, key, self.links, page, parts), request, parts)


def runs_query(args: MultiDict) -> tuple[RunFilter, str, int, dict[str, str]]:
    """The runs list's query string: its filters, sort and page, each refused with a reason when it is not one."""
    query = {name: args.get(name, "").strip() for name in FILTERS if args.get(name, "").strip()}
    order = args.get("sort") or "-id"
    if order.removeprefix("-") not in RUN_ORDERS:
        raise BadRequest(f"cannot sort by {order!r}: use one of {', '.join(RUN_ORDERS)}, with '-' for descending")
    status = query.get("status")
    if status is not None and status not in RUN_STATUSES:
        raise BadRequest(f"{status!r} is not a run status: use one of {', '.join(RUN_STATUSES)}")
    target = query.get("target")
    where = RunFilter(
        suite=query.get("suite"), targets=(target,) if target else (), host=query.get("host"), user=query.get("user"),
        since=_moment(query, "since"), until=_moment(query, "until"), status=status,
        device=query.get("device"), text=query.get("q"),
    )
    return where, order, page_number(args), query


def page_number(args: MultiDict) -> int:
    """?page=N, from 1 (the first when not given)."""
    text = args.get("page") or "1"
    if not (text.isascii() and text.isdigit() and len(text) <= len(str(MAX_PAGE)) and 1 <= int(text) <= MAX_PAGE):
        raise BadRequest(f"{text[:20]!r}{'...' * (len(text) > 20)} is not a page number (1 to {MAX_PAGE:,})")
    return int(text)


def _moment(query: dict[str, str], name: str) -> str | None:
    """A date (what a date field sends) or an ISO time, UTC unless it says otherwise, as started_at is stored;
    'until' a date takes in that whole day."""
    text = query.get(name)
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
        if name == "until" and _is_date(text):
            moment += timedelta(days=1)
    except (ValueError, OverflowError):
        raise BadRequest(
            f"{name}: {text[:40]!r} is not a date (2026-11-01) or an ISO time (2026-11-01T08:00)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


def _is_date(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def _run_ids(text: str) -> list[int]:
    """'1,5,9' -> [1, 5, 9], each once; at most MAX_COMPARED."""
    parts = text.split(",")
    if not all(part.isascii() and part.isdigit() and len(part) <= 18 for part in parts):
        raise NotFound(f"{text[:60]!r} is not a list of run numbers such as 1,5,9")
    run_ids = list(dict.fromkeys(int(part) for part in parts))
    if len(run_ids) > MAX_COMPARED:
        raise BadRequest(f"{len(run_ids)} runs are more than one page compares; pick at most {MAX_COMPARED}")
    return run_ids


def _record(store: Store, run_id: int) -> RunRecord:
    try:
        return store.get_run(run_id)
    except UserError:
        raise NotFound(f"there is no run {run_id}") from None


def _raw(store: Store, run_id: int, test_id: int) -> tuple[str, str]:
    """(jobfile, fio_output) of a test of the run."""
    raw = store.raw_text(run_id).get(test_id)
    if raw is None:
        raise NotFound(f"run {run_id} has no test {test_id}")
    return raw


def _html(html: str, request: Request | None = None, parts: Parts | None = None) -> Response:
    """The page; what it could not draw (it says so itself) goes to the server's log too, one line a part."""
    for undrawn in parts.undrawn if parts else ():
        print(f"disklab serve: {request.path}: {undrawn}", file=sys.stderr)
    return Response(html, mimetype="text/html")


def _download(text: str, mimetype: str, filename: str) -> Response:
    response = Response(text, mimetype=mimetype)
    response.headers.set("Content-Disposition", "attachment", filename=filename)
    return response
