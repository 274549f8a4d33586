"""`disklab serve`'s WSGI app, driven through Werkzeug's test client on a store built from real fio output: every
route's status and selectors (the URL/selector contract the browser tests use), filters, sorting and paging done
by the store, downloads, escaping, refusals as one line, security headers, and a store file left unchanged."""

import hashlib
import json
import re
import select as readiness
import signal
import socket
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from werkzeug.test import Client

from disklab.cli.main import cli
from disklab.fio.parse import parse_fio_output
from disklab.store.repository import RunFilter, Store
from disklab.suite.params import PARAMS
from disklab.web.app import MAX_COMPARED, SECURITY_HEADERS, WebApp
from disklab.web.links import StaticLinks
from disklab.web.pages import RUNS_PER_PAGE, list_runs, render_compare_page, render_run_page, render_runs_page
from tests.conftest import BACKENDS, fixture_text, new_store_location
from tests.stores import query
from tests.unit.test_store import new_run

SMART = Path(__file__).parent.parent / "fixtures" / "smart"
EVIL = "<script>alert(1)</script>"
JOBFILE = "[global]\nioengine=io_uring\n\n[RND4K Q32]\nrw=randread\nbs=4k\niodepth=32\n"
FILLER_RUNS = 120  # runs without tests, so that the list has three pages


@dataclass
class Element:
    tag: str
    attrs: dict
    ancestors: tuple[str, ...]  # tag#id / tag.class of each enclosing element, outermost first
    text: str = ""
    children: list = field(default_factory=list)

    def has_class(self, name: str) -> bool:
        return name in (self.attrs.get("class") or "").split()


class _Collector(HTMLParser):
    VOID = {"input", "meta", "br", "img", "link", "hr"}

    def __init__(self):
        super().__init__()
        self.elements: list[Element] = []
        self.open: list[Element] = []

    def handle_starttag(self, tag, attrs):
        ancestors = tuple(_name(e) for e in self.open)
        element = Element(tag, dict(attrs), ancestors)
        self.elements.append(element)
        if tag not in self.VOID:
            self.open.append(element)

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop().tag == tag:
                break

    def handle_data(self, data):
        for element in self.open:
            element.text += data


def _name(element: Element) -> str:
    if element.attrs.get("id"):
        return f"{element.tag}#{element.attrs['id']}"
    return element.tag + "".join(f".{c}" for c in (element.attrs.get("class") or "").split())


def parse(html: bytes) -> list[Element]:
    collector = _Collector()
    collector.feed(html.decode())
    return collector.elements


def select(elements: list[Element], tag: str, within: str | None = None, cls: str | None = None, **attrs):
    return [
        e for e in elements
        if e.tag == tag and (cls is None or e.has_class(cls))
        and all(e.attrs.get(k.rstrip("_")) == v for k, v in attrs.items())
        and (within is None or any(a == within or a.startswith(within + ".") for a in e.ancestors))
    ]


def run_ids(elements: list[Element]) -> list[int]:
    return [int(tr.attrs["data-run-id"]) for tr in select(elements, "tr", within="table#runs")
            if "data-run-id" in tr.attrs]


def add_run(store: Store, *, name=None, suite="quick", target="/mnt/a", hostname="alpha", model=None,
            started_at="2026-10-01T08:00:00+00:00", status="complete", tests=("randread-4k-q32.jsonplus.json",),
            flag=None) -> int:
    run_id = store.create_run(new_run(name=name, suite_name=suite, target=target, hostname=hostname,
                                      started_at=started_at, planned_tests=len(tests)))
    params = {name: param.default for name, param in PARAMS.items()} | {"iodepth": 32, "rw": "randread"}
    for seq, fixture in enumerate(tests):
        output = fixture_text(fixture)
        (job,) = parse_fio_output(output).jobs
        test_id = store.add_test(run_id, seq, "RND4K Q32", params, JOBFILE, output, "", started_at, job)
        if flag:
            store.add_flag(test_id, *flag)
    if model:
        store.set_run_values("run_env", run_id, {"device.nvme0n1.model": model, "device.nvme0n1.serial": "S1"})
    store.finish_run(run_id, status)
    return run_id


@pytest.fixture(scope="module", params=BACKENDS)
def store_path(request, tmp_path_factory) -> Path | str:
    """The lab's store, a SQLite file or a PostgreSQL database: the server serves either alike."""
    path = new_store_location(request, tmp_path_factory.mktemp("web"))
    with Store(path) as store:
        add_run(store, name=EVIL, model="Samsung SSD 980 PRO", started_at="2026-10-03T08:00:00+00:00",
                flag=("cache", f"the data set fits in RAM {EVIL}"))
        add_run(store, name="new disk", target="/mnt/b", hostname="beta", model="WDC WD40EFRX",
                started_at="2026-10-01T08:00:00+00:00", tests=("randread-4k-q32.json.json",))
        add_run(store, suite="crystal", target="/mnt/b", status="failed", started_at="2026-10-02T08:00:00+00:00")
        for i in range(FILLER_RUNS):
            started_at = f"2026-09-{1 + i % 28:02d}T{i % 24:02d}:00:00+00:00"
            store.create_run(new_run(suite_name="filler", started_at=started_at))
        for device, phase in (("nvme0n1", "before"), ("nvme0n1", "after")):
            store.add_smart(1, device, phase, json.loads((SMART / f"nvme-{phase}.real.json").read_text()))
    return path


@pytest.fixture(scope="module")
def unchanged(store_path):
    """Every test reads through this: the store's bytes, and the files beside it, are the same afterwards."""
    before = _fingerprint(store_path)
    yield
    assert _fingerprint(store_path) == before


def _fingerprint(path: Path | str) -> tuple:
    """SQLite's -shm and an empty -wal are a reader's (a read-only open of a WAL store leaves them, as `runs` does).
    A PostgreSQL store: its runs as they are, and how many rows each table that refers to them has."""
    if not isinstance(path, Path):
        counts = [query(path, f"SELECT COUNT(*) FROM {table}")[0][0] for table in (
            "tests", "metrics", "series", "test_flags", "run_env", "run_outcomes", "run_smart", "run_notes")]
        return query(path, "SELECT * FROM runs ORDER BY id"), counts
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    beside = sorted(p.name for p in path.parent.iterdir() if not p.name.endswith(("-shm", "-wal")))
    return hashlib.sha256(path.read_bytes()).hexdigest(), beside


@pytest.fixture
def client(store_path, unchanged) -> Client:
    return Client(WebApp(store_path))


def get(client: Client, url: str, status: int = 200):
    response = client.get(url)
    assert response.status_code == status, (url, response.get_data(as_text=True)[-600:])
    return response


def one_line_message(response) -> str:
    (message,) = select(parse(response.data), "p", cls="message")
    assert "\n" not in message.text.strip()
    return message.text.strip()


def test_the_runs_list_has_the_filters_the_table_the_picks_and_the_pager(client):
    page = parse(get(client, "/").data)
    (form,) = select(page, "form", id="filters")
    names = {e.attrs.get("name") for e in page if e.tag in ("input", "select") and "form#filters" in e.ancestors}
    assert names >= {"q", "suite", "device", "target", "host", "status", "since", "until"}
    assert select(page, "button", id="apply")
    rows = run_ids(page)
    assert rows == list(range(FILLER_RUNS + 3, FILLER_RUNS + 3 - RUNS_PER_PAGE, -1))  # newest first, 50 a page
    first = rows[0]
    assert select(page, "a", cls="run-link", href=f"/runs/{first}")
    (pick,) = select(page, "input", cls="pick", value=str(first))
    assert pick.attrs["type"] == "checkbox" and "form#pick" in pick.ancestors
    assert {a.attrs["data-sort"] for a in select(page, "a", cls="sort")} >= {"id", "started", "suite", "name"}
    assert select(page, "button", id="compare")
    assert select(page, "a", id="next", href="/?page=2") and not select(page, "a", id="prev")
    assert f"1–50 of {FILLER_RUNS + 3:,} runs" in select(page, "p", id="count")[0].text


def test_paging_reaches_the_last_runs_and_past_it_says_so(client):
    last = parse(get(client, "/?page=3").data)
    assert run_ids(last) == list(range(FILLER_RUNS + 3 - 2 * RUNS_PER_PAGE, 0, -1))
    assert select(last, "a", id="prev", href="/?page=2") and not select(last, "a", id="next")
    past = parse(get(client, "/?page=9").data)
    assert run_ids(past) == [] and "page 9 is past the last (3)" in select(past, "p", id="count")[0].text


@pytest.mark.parametrize("query, expected", [
    ("q=samsung", [1]),  # a disk's model
    ("q=ALERT", [1]),  # the name, in any case
    ("q=beta", [2]),  # the host
    ("q=crystal", [3]),  # the suite
    ("q=%2Fmnt%2Fb", [3, 2]),  # the target
    ("device=wd40", [2]),
    ("suite=crystal", [3]),
    ("target=%2Fmnt%2Fb", [3, 2]),
    ("host=alpha&suite=quick", [1]),
    ("status=failed", [3]),
    ("since=2026-10-02", [3, 1]),
    ("until=2026-10-02", list(range(FILLER_RUNS + 3, 1, -1))[:RUNS_PER_PAGE]),  # that whole day, not run 1
    ("since=2026-10-01&until=2026-10-01", [2]),
    ("q=nothing-like-this", []),
])
def test_filters_narrow_the_list_in_the_store(client, query, expected):
    page = parse(get(client, "/?" + query).data)
    assert run_ids(page) == expected
    (count,) = select(page, "p", id="count")
    assert "matching" in count.text


def test_the_form_keeps_the_filters_and_the_links_keep_filters_and_sort(client):
    page = parse(get(client, "/?suite=filler&sort=started").data)
    (suite,) = select(page, "input", name="suite")
    assert suite.attrs["value"] == "filler"
    assert select(page, "a", id="next", href="/?suite=filler&sort=started&page=2")
    (started,) = select(page, "a", cls="sort", **{"data-sort": "started"})
    assert started.attrs["href"] == "/?suite=filler&sort=-started"  # sorted by it already: the link reverses


@pytest.mark.parametrize("order, expected", [
    ("started", None), ("-started", None), ("id", list(range(1, RUNS_PER_PAGE + 1))), ("suite", None),
])
def test_sorting_is_by_the_column_asked(client, store_path, order, expected):
    ids = run_ids(parse(get(client, f"/?sort={order}").data))
    with Store(store_path, read_only=True) as store:
        infos = {info.id: info for info in store.list_runs()}
    key = {"started": "started_at", "suite": "suite_name", "id": "id"}[order.lstrip("-")]
    values = [getattr(infos[i], key) for i in ids]
    assert values == sorted(values, reverse=order.startswith("-"))
    assert expected is None or ids == expected
    assert len(ids) == RUNS_PER_PAGE


@pytest.mark.parametrize("query, says", [
    ("sort=fastest", "cannot sort by 'fastest'"),
    ("page=0", "'0' is not a page number"),
    ("page=two", "'two' is not a page number"),
    ("status=done", "'done' is not a run status"),
    ("since=last+tuesday", "since: 'last tuesday' is not a date"),
])
def test_a_bad_query_is_one_line_and_400(client, query, says):
    assert says in one_line_message(get(client, "/?" + query, 400))


def test_a_runs_page_has_its_tables_charts_environment_smart_flags_and_downloads(client):
    response = get(client, "/runs/1")
    page = parse(response.data)
    captions = [e.text for e in select(page, "caption")]
    assert any("every test" in c for c in captions) and any("environment" in c for c in captions)
    assert select(page, "table", cls="smart") and select(page, "figure", cls="chart")
    assert select(page, "svg")
    notes = " ".join(e.text for e in select(page, "ul", cls="run-notes"))
    assert "fits in RAM" in notes
    environment = select(page, "table", cls="environment")[0].text
    assert "Samsung SSD 980 PRO" in environment
    downloads = {a.attrs["href"] for a in select(page, "a", cls="download") if "download" in a.attrs}
    assert downloads == {"/runs/1/suite.toml", "/runs/1/tests/1/job.fio", "/runs/1/tests/1/fio.json",
                         "/runs/1/figures.csv", "/runs/1/figures.json"}
    charts = [f.attrs["id"] for f in select(page, "figure", cls="chart")]
    offered = {(a.attrs["data-chart"], a.attrs["data-download"]) for a in select(page, "a") if "data-download" in a.attrs}
    assert offered == {(chart, form) for chart in charts for form in ("svg", "png")}, "each chart as SVG and PNG"
    assert "XMLSerializer" in response.get_data(as_text=True), "the page carries the script that makes them"


def test_downloads_are_attachments_of_the_stored_text(client):
    job = get(client, "/runs/1/tests/1/job.fio")
    assert job.mimetype == "text/plain" and job.get_data(as_text=True) == JOBFILE
    assert job.headers["Content-Disposition"] == "attachment; filename=run1-test1.fio"
    output = get(client, "/runs/1/tests/1/fio.json")
    assert output.mimetype == "application/json"
    assert output.get_data(as_text=True) == fixture_text("randread-4k-q32.jsonplus.json")
    assert output.headers["Content-Disposition"] == "attachment; filename=run1-test1.json"
    suite = get(client, "/runs/1/suite.toml")
    assert suite.get_data(as_text=True) == "name = 'quick'"
    assert suite.headers["Content-Disposition"] == "attachment; filename=run1-suite.toml"
    figures = get(client, "/runs/1/figures.json")
    assert figures.headers["Content-Disposition"] == "attachment; filename=run1-figures.json"
    document = json.loads(figures.get_data(as_text=True))
    assert document["run"]["id"] == 1
    table = get(client, "/runs/1/figures.csv")
    assert table.mimetype == "text/csv" and table.get_data(as_text=True).splitlines()[0].startswith("run_id,")
    get(client, "/runs/1/figures.xml", 404)


def test_a_test_of_another_run_or_no_run_is_404(client):
    assert one_line_message(get(client, "/runs/1/tests/2/job.fio", 404)) == "run 1 has no test 2"
    assert one_line_message(get(client, "/runs/999", 404)) == "there is no run 999"
    assert one_line_message(get(client, "/runs/999/suite.toml", 404)) == "there is no run 999"
    get(client, "/runs/abc", 404)
    get(client, "/no/such/page", 404)


def test_compare_shows_the_comparison_with_verdicts_and_charts(client):
    page = parse(get(client, "/compare/1,2").data)
    (table,) = select(page, "table", cls="comparison")
    verdicts = [td for td in select(page, "td", within="table.comparison")
                if any(c.startswith("verdict-") for c in td.attrs.get("class", "").split())]
    assert verdicts, "every compared figure carries its verdict"
    assert select(page, "figure", cls="chart")
    assert {a.attrs["href"] for a in select(page, "a", cls="run-link")} == {"/runs/1", "/runs/2"}
    html = get(client, "/compare/1,2").data.decode()
    assert html.index('id="overview"') < html.index('id="tested"'), "the overview comes first"


def test_compare_refuses_bad_ids_unknown_runs_and_too_many(client):
    assert one_line_message(get(client, "/compare/1,999", 404)) == "there is no run 999"
    assert "is not a list of run numbers" in one_line_message(get(client, "/compare/1,x", 404))
    many = ",".join(str(i) for i in range(1, MAX_COMPARED + 2))
    assert f"pick at most {MAX_COMPARED}" in one_line_message(get(client, f"/compare/{many}", 400))


def test_ticked_runs_without_javascript_redirect_to_the_shareable_address(client):
    response = get(client, "/compare?run=1&run=2&run=3", 303)
    assert response.headers["Location"] == "/compare/1,2,3"
    assert "tick the runs" in one_line_message(get(client, "/compare", 400))


def test_everything_from_the_store_is_escaped(client):
    for url in ("/?q=alert", "/runs/1", "/compare/1,2", "/?q=%3Cscript%3E"):
        html = get(client, url).get_data(as_text=True)
        assert EVIL not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@pytest.mark.parametrize("url, status", [
    ("/", 200), ("/runs/1", 200), ("/runs/1/tests/1/job.fio", 200), ("/compare/1,2", 200), ("/runs/999", 404),
    ("/?sort=x", 400),
])
def test_every_answer_carries_the_security_headers(client, url, status):
    headers = get(client, url, status).headers
    assert headers["Content-Security-Policy"].startswith("default-src 'self';")
    assert "https:" not in headers["Content-Security-Policy"] and "http:" not in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"


def test_pages_load_nothing_from_elsewhere(client):
    for url in ("/", "/runs/1", "/compare/1,2"):
        html = get(client, url).get_data(as_text=True)
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)


def test_only_get_is_answered(client):
    response = client.post("/")
    assert response.status_code == 405 and response.headers["Allow"] == "GET, HEAD"


def test_a_store_gone_while_serving_is_503_not_a_new_empty_store(tmp_path):
    path = tmp_path / "gone.db"
    response = Client(WebApp(path)).get("/")
    assert response.status_code == 503 and not path.exists()


def test_serve_refuses_a_missing_or_damaged_store_in_one_line(tmp_path):
    missing = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 5 and missing.output.count("\n") == 1
    assert "there is no results store at" in missing.output and not (tmp_path / "none.db").exists()
    (tmp_path / "bad.db").write_text("not a database")
    damaged = CliRunner().invoke(cli, ["serve", "--db", str(tmp_path / "bad.db")])
    assert damaged.exit_code == 5 and "corrupt" in damaged.output and damaged.output.count("\n") == 1


def test_serve_listens_warns_off_loopback_and_stops_cleanly(store_path, unchanged, children):
    """A real server on a free port: it prints its address, answers, and SIGTERM (as Ctrl-C) stops it with 0."""
    process = children.start(
        [sys.executable, "-m", "disklab", "--store", str(store_path), "serve", "--host", "0.0.0.0", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = process.stdout.readline()
        url = re.search(r"http://0\.0\.0\.0:(\d+)/", line)
        assert url, line
        with urllib.request.urlopen(f"http://127.0.0.1:{url[1]}/runs/1") as answer:
            assert answer.status == 200 and answer.headers["X-Content-Type-Options"] == "nosniff"
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0
    assert "warning: listening on 0.0.0.0" in err and "stopped" in err and "Traceback" not in err


@pytest.mark.parametrize("host", ["example.invalid", "", "::1;x", "300.1.2.3"])
def test_an_address_that_does_not_resolve_is_one_line_and_exit_2(store_path, unchanged, host):
    result = CliRunner().invoke(cli, ["--store", str(store_path), "serve", "--host", host, "--port", "0"])
    assert result.exit_code == 2, result.output
    assert result.output == f"disklab: error: cannot listen on {host!r}: not an address or a host name this machine " \
                            "resolves\n"


@pytest.fixture
def server(store_path, unchanged, children, tmp_path):
    """`disklab serve --port 0`: its address, and the file its stderr goes to (read when it has stopped)."""
    stderr = tmp_path / "serve.err"
    with stderr.open("w") as err:
        process = children.start([sys.executable, "-m", "disklab", "--store", str(store_path), "serve", "--port", "0"],
                                 stdout=subprocess.PIPE, stderr=err, text=True)
    ready, _, _ = readiness.select([process.stdout], [], [], 120)
    line = process.stdout.readline() if ready else ""
    port = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert port, line
    yield int(port[1]), stderr
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    assert process.returncode == 0


def raw_answer(port: int, request: bytes) -> tuple[str, dict[str, str]]:
    """waitress's answer to bytes sent as they are: its status line and headers."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head = answer.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    return head[0], dict(line.split(": ", 1) for line in head[1:])


def test_the_servers_own_error_answers_carry_the_security_headers(server):
    """waitress answers a request it cannot parse, or whose headers are too large, without asking the app."""
    from waitress.adjustments import Adjustments

    port, _ = server
    start = b"GET / HTTP/1.1\r\nHost: x\r\nX-Filler: "
    # Exactly the largest header block waitress reads: it reads every byte sent, then refuses (431).
    filler = Adjustments.max_request_header_size - len(start) - 4
    answers = [raw_answer(port, b"GARBAGE\r\n\r\n"), raw_answer(port, start + b"a" * filler + b"\r\n\r\n"),
               raw_answer(port, b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n")]
    assert [status.split()[1] for status, _ in answers] == ["400", "431", "400"]
    for _, headers in answers:
        assert {name: headers.get(name) for name in SECURITY_HEADERS} == SECURITY_HEADERS


def test_a_backlog_of_requests_is_one_log_line_not_one_per_request(server):
    port, stderr = server

    def fetch(n: int) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/?page={n % 3 + 1}", timeout=120) as answer:
            answer.read()
            return answer.status

    with ThreadPoolExecutor(16) as pool:
        assert set(pool.map(fetch, range(96))) == {200}
    warnings = [line for line in stderr.read_text().splitlines() if "Task queue depth" in line]
    assert len(warnings) == 1, warnings  # 16 clients, 4 threads: there was a backlog, said once
    assert warnings[0].startswith("disklab serve: requests wait for one of 4 threads: Task queue depth is ")


def test_queue_warnings_held_back_are_counted_in_the_next_line_said(monkeypatch):
    import logging

    from disklab.web import server

    clock = [1000.0]
    monkeypatch.setattr(server.time, "monotonic", lambda: clock[0])
    warnings = server.QueueWarnings(every_s=60)

    def warn(depth: int) -> str | None:
        record = logging.LogRecord("waitress.queue", logging.WARNING, "", 0, "Task queue depth is %d", (depth,), None)
        return record.getMessage() if warnings.filter(record) else None

    said = [warn(1), *(warn(depth) for depth in range(2, 40))]
    clock[0] += 61
    said.append(warn(3))
    assert [line for line in said if line] == [
        "disklab serve: requests wait for one of 4 threads: Task queue depth is 1",
        "disklab serve: requests wait for one of 4 threads: Task queue depth is 3 (38 more such warnings in the last "
        "61 s)",
    ]


def test_only_serve_loads_the_web_libraries():
    code = ("import sys; from disklab.cli.main import cli; cli.get_command(None, 'serve'); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('werkzeug', 'waitress', 'jinja2')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"


def test_the_same_renderers_write_a_static_sites_pages_with_relative_links(store_path, unchanged):
    """`disklab publish` calls these with StaticLinks: no form or tick boxes (no server answers them), file links."""
    with Store(store_path, read_only=True) as store:
        listing = list_runs(store, RunFilter(), page=2)
        index = parse(render_runs_page(listing, StaticLinks(0)).encode())
        run = parse(render_run_page(store.get_run(1), store.smart(1), StaticLinks(1)).encode())
        compare = parse(render_compare_page([store.get_run(1), store.get_run(2)], StaticLinks(1)).encode())
    assert not select(index, "form") and not select(index, "input", cls="pick") and not select(index, "a", cls="sort")
    assert select(index, "a", cls="run-link", href=f"runs/{run_ids(index)[0]}.html")
    assert select(index, "a", id="prev", href="index.html") and select(index, "a", id="next", href="index-3.html")
    assert {a.attrs["href"] for a in select(run, "a", cls="download")} == {
        "../runs/1/suite.toml", "../runs/1/tests/1/job.fio", "../runs/1/tests/1/fio.json", "../runs/1/figures.csv",
        "../runs/1/figures.json"}
    assert select(compare, "table", cls="comparison") and select(compare, "a", cls="run-link", href="../runs/2.html")
    assert select(run, "a", href="../devices/index.html")
