"""Fuzzing `disklab serve`'s URLs through its WSGI app, as waitress hands them over (the path's bytes unquoted, the
query string raw): paths of random segments, ids of every size, page numbers and filters of random text, unicode and
control characters. Every answer is a page, a redirect or a refusal (200, 3xx, 400, 404, 405) with the security
headers, never an internal error."""

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from werkzeug.datastructures import Headers
from werkzeug.test import EnvironBuilder

from disklab.store.repository import Store
from disklab.web.app import FILTERS, SECURITY_HEADERS, WebApp
from disklab.web.history import store_devices
from tests.unit.test_history import around, disk_env, run_at
from tests.unit.test_web_app import EVIL, add_run

ANSWERS = {200, 301, 302, 303, 307, 308, 400, 404, 405}
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

digits = st.one_of(
    st.integers(0, 10**20).map(str),
    st.integers(2**63 - 2, 2**64 + 2).map(str),  # around SQLite's largest integer
    st.text("0123456789", min_size=1, max_size=5000),  # int() refuses a str of more than 4,300 digits
    st.text("0123456789", min_size=4299, max_size=4302),
    st.sampled_from(["-1", "+1", "0", "1e3", "١٢", "0x10", " 1", "1 ", "00001"]),
)
text = st.one_of(st.text(max_size=60), st.text(st.characters(codec="utf-8"), max_size=20),
                 st.text("\x00\x01\x1b\r\n\t\x7f\x85\u202e\u2066\ufeff%&=?#/\\<>\"' .", max_size=20))
segment = st.one_of(
    st.sampled_from(["runs", "tests", "compare", "devices", "job.fio", "fio.json", "suite.toml", "", ".", "..",
                     "1,2", "1,,2", "%00", "%2F"]),
    digits, text,
    st.lists(digits, min_size=1, max_size=14).map(",".join),
)


@st.composite
def paths(draw) -> bytes:
    """A route's shape with random ids, or random segments; as bytes, which may not be UTF-8."""
    shaped = st.one_of(
        st.builds("/runs/{}".format, digits),
        st.builds("/runs/{}/tests/{}/{}".format, digits, digits, st.sampled_from(["job.fio", "fio.json", "x"])),
        st.builds("/runs/{}/suite.toml".format, digits),
        st.builds("/compare/{}".format, st.lists(digits, min_size=1, max_size=14).map(",".join)),
        st.builds("/devices/{}".format, st.one_of(st.sampled_from(KEYS), text)),
    ).map(lambda path: path.encode("utf-8", "surrogatepass"))
    random = st.lists(st.one_of(segment.map(lambda s: s.encode("utf-8", "surrogatepass")), st.binary(max_size=12)),
                      max_size=6).map(lambda parts: b"/" + b"/".join(parts))
    return draw(st.one_of(shaped, random))


@st.composite
def queries(draw) -> bytes:
    """Known parameters and random ones with random values, percent-encoded, or a raw query string of any bytes."""
    names = st.one_of(st.sampled_from([*FILTERS, "page", "sort", "run"]), text)
    values = st.one_of(digits, text, st.sampled_from(["2026-10-01", "2026-02-30", "9999-12-31T23:59:59+14:00",
                                                       "-id", "started", "-", "failed"]))
    pairs = draw(st.lists(st.tuples(names, values), max_size=5))
    encoded = "&".join(f"{quote(n.encode('utf-8', 'surrogatepass'))}={quote(v.encode('utf-8', 'surrogatepass'))}"
                       for n, v in pairs).encode()
    return draw(st.one_of(st.just(encoded), st.binary(max_size=40)))


KEYS: list[str] = []  # the store's device keys, filled by the fixture before any example is drawn


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> WebApp:
    """Runs with markup in their names, a device with a history of a few runs, and a run of a real fio job."""
    path = tmp_path_factory.mktemp("web-fuzz") / "results.db"
    with Store(path) as store:
        add_run(store, name=EVIL, model="Samsung SSD 980 PRO")
        for day, firmware in enumerate(("2.1", "2.1", "2.2"), start=1):
            run_at(store, day, around(1000 * day), disk_env(firmware))
        KEYS[:] = [device.key for device in store_devices(store)]
    return WebApp(path)


def answer(app: WebApp, method: str, path: bytes, query: bytes) -> tuple[int, Headers, bytes]:
    """What the app answers a request waitress parsed: PATH_INFO and QUERY_STRING as WSGI's latin-1 strings."""
    environ = EnvironBuilder(method=method).get_environ()
    environ.update(PATH_INFO=path.decode("latin-1"), QUERY_STRING=query.decode("latin-1"))
    started = {}

    def start_response(status, headers, exc_info=None):
        started.update(status=int(status.split()[0]), headers=Headers(headers))

    body = b"".join(app(environ, start_response))
    return started["status"], started["headers"], body


def assert_answered(status: int, headers: Headers, body: bytes, request) -> None:
    assert status in ANSWERS, (request, status, body[-400:])
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name) == value, (request, name)
    assert b"Traceback" not in body


@FUZZ
@given(path=paths(), query=queries(), method=st.sampled_from(["GET", "GET", "HEAD", "POST"]))
def test_every_url_is_answered_with_the_security_headers_and_never_an_internal_error(app, path, query, method):
    assert_answered(*answer(app, method, path, query), (method, path, query))


@FUZZ
@given(page=digits, name=st.sampled_from(["page", "sort", "since", "until", "status", "q"]))
def test_every_page_number_and_filter_value_is_a_page_or_a_400(app, page, name):
    for path in (b"/", f"/devices/{KEYS[0]}".encode()):
        status, headers, body = answer(app, "GET", path, f"{name}={quote(page)}".encode())
        assert_answered(status, headers, body, (path, name, page[:30]))
        assert status in (200, 400, 404)


@pytest.mark.parametrize("path, query, status", [
    (b"/runs/9223372036854775807", b"", 404),  # the largest id SQLite holds: no such run
    (b"/runs/9223372036854775808", b"", 404),  # 2^63: OverflowError before
    (b"/runs/1/tests/99999999999999999999/job.fio", b"", 404),
    (b"/runs/" + b"9" * 5000 + b"/suite.toml", b"", 404),
    (b"/compare/1,99999999999999999999", b"", 404),
    (b"/", b"page=" + b"1" * 4301, 400),  # 4,301 digits: ValueError before
    (b"/", b"page=" + b"1" * 11, 400),
    (b"/devices/KEY", b"page=" + b"1" * 4301, 400),
    (b"/devices/KEY", b"page=" + b"1" * 11, 400),
])
def test_ids_past_sqlites_integers_and_page_numbers_of_thousands_of_digits_are_404_and_400(app, path, query,
                                                                                            status):
    path = path.replace(b"KEY", KEYS[0].encode())
    answered = answer(app, "GET", path, query)
    assert_answered(*answered, path)
    assert answered[0] == status
