"""How long do `disklab serve`'s pages take at 10,000 runs? Time them from a real server, over HTTP and in Chromium;
and `disklab publish`, whole and per page.

Run by hand (not part of the tests):

    .venv/bin/python bench/web.py --rounds 5
    .venv/bin/python bench/web.py --publish  # publish only (10,000 runs: about a quarter of an hour)
    .venv/bin/python bench/web.py --postgresql --runs 100000  # the same lab in PostgreSQL (made for the bench)

The store is bench/make_store.py's generated lab (cached under /var/tmp; the first bench generates it, which takes
a minute or two). `disklab serve --port 0` serves it as a user starts it; each round fetches every page once, in
turn, with urllib (a request, the whole answer read: what the server takes), then loads the runs list and a
comparison in headless Chromium (Debian's, offline as the browser tests start it), whose Navigation Timing gives
the time until the page's load event (the server's answer, parsing, layout, the inline script). A round not counted
goes first, to fill the caches. min / median / max over the rounds, in seconds, and the size of each page.
With --postgresql the cached SQLite lab is copied (postgresql_copy.py) into a private PostgreSQL server that the
bench starts and removes (the tests' tests/pgserver.py, fsync off: the store is only read while timed), and served
from it: the same runs on both stores.

--publish publishes the store into a new folder under /var/tmp (removed after) in this process, timing each page's
renderer (a run's page, a comparison, a device's history page ...): min / median / max per kind, and the whole publish
(reading, rendering, every file written) divided by the pages it wrote. Then it times publishing one new run into
the published site, --rounds times: the first publish leaves the store's newest runs out (--exclude, one a round),
and each round publishes again with one of them more, as if it had just been stored (the store is only read): the
site updated in place; and a --full publish of the same site beside it (drawn whole and swapped in).
bench/publish_update.py times one new run into sites too large to publish whole (100,000 runs).
"""

import argparse
import re
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path

from make_store import DEVICES, cached_lab_store  # bench/ is on the path of a script run from it
from postgresql_copy import copy_store

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
START_TIMEOUT_S = 120


def pages(store: Path | str) -> dict[str, str]:
    """What is timed: a name, and the page's address on the server."""
    from disklab.store.repository import Store

    with Store(store, read_only=True) as opened:
        quick = [row[0] for row in opened.conn.execute("SELECT id FROM runs WHERE suite_name = 'quick' AND status = "
                                                       "'complete' ORDER BY id").fetchall()]
        middle = quick[len(quick) // 2]  # a run of the quick suite's 8 tests, in the middle of the store
        test = opened.conn.execute("SELECT min(id) FROM tests WHERE run_id = ?", (middle,)).fetchone()[0]
    compared = ",".join(str(run_id) for run_id in (quick[0], middle, quick[-1]))
    run = f"/runs/{middle}"
    return {
        "/ (first page)": "/",
        "/?suite=quick&q=nightly": "/?suite=quick&q=nightly",
        "/?page=100": "/?page=100",
        run: run,
        **{f"{run}/{name}": f"{run}/{name}" for name in (
            "figures.csv", "figures.json", "suite.toml", f"tests/{test}/job.fio", f"tests/{test}/fio.json")},
        f"/compare/{compared}": f"/compare/{compared}",
        "/devices": "/devices",
    }


@contextmanager
def serving(store: Path | str):
    """`disklab serve` of a store (a file or a URL) on any free port; its base address."""
    disklab = Path(sys.executable).with_name("disklab")
    server = subprocess.Popen([str(disklab), "--store", str(store), "serve", "--port", "0"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], START_TIMEOUT_S)
        line = server.stdout.readline() if ready else ""
        if "http://" not in line:
            raise SystemExit(f"disklab serve did not start: {line!r}")
        yield line[line.index("http://"):].split()[0].rstrip("/")
    finally:
        server.terminate()
        server.communicate(timeout=START_TIMEOUT_S)


def fetch(url: str) -> tuple[float, int]:
    """(seconds, bytes) of one request, the whole answer read."""
    started = time.monotonic()
    with urllib.request.urlopen(url, timeout=600) as response:
        body = response.read()
    return time.monotonic() - started, len(body)


def device_pages(base: str) -> dict[str, str]:
    """The history of the lab's most tested device, by its key on the devices page: its newest page and a middle one."""
    serial = max(DEVICES, key=lambda d: d.weight).serial.lower()
    with urllib.request.urlopen(base + "/devices", timeout=600) as response:
        html = response.read().decode()
    address = "/devices/" + re.search(rf'data-device-key="([^"]*{serial}[^"]*)"', html).group(1)
    with urllib.request.urlopen(base + address, timeout=600) as response:  # the newest page links the one before
        pages = int(re.search(r'id="older" href="[^"]*\?page=(\d+)"', response.read().decode()).group(1)) + 1
    return {"device page": address, f"device page {pages // 2} of {pages}": f"{address}?page={pages // 2}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="stored runs (default 10,000)")
    parser.add_argument("--rounds", type=int, default=5, help="times each page is fetched (default 5)")
    parser.add_argument("--no-browser", action="store_true", help="time over HTTP only")
    parser.add_argument("--publish", action="store_true", help="time disklab publish instead of the server")
    parser.add_argument("--postgresql", action="store_true",
                        help="the lab copied into a private PostgreSQL server (made and removed by the bench)")
    args = parser.parse_args()
    if args.publish and args.postgresql:
        parser.error("--publish times a SQLite store only")
    with ExitStack() as stack:
        store = postgresql_lab(args.runs, stack) if args.postgresql else cached_lab_store(args.runs)
        if args.publish:
            publishing(store, args.runs, args.rounds)
            return
        serve_pages(store, args)


def postgresql_lab(runs: int, stack: ExitStack) -> str:
    """make_store.py's lab, the SQLite store the bench times, copied into a new database of a private server
    (tests/pgserver.py, fsync off: a generated store, timed for reading), which stops with the bench: both stores
    hold the same runs."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.pgserver, the tests' private server
    from tests.pgserver import PrivateServer

    server = PrivateServer.start()
    stack.callback(server.stop)
    url = server.url(server.create_database())
    copy_store(cached_lab_store(runs), url)
    return url


def described(store: Path | str) -> str:
    """The store and its size, a URL without its password."""
    from disklab.store.repository import Store

    if isinstance(store, Path):
        return f"{store} ({store.stat().st_size / 1e6:,.0f} MB)"
    with Store(store, read_only=True) as opened:
        size = opened.conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        return f"{opened.name} ({size / 1e6:,.0f} MB)"


def serve_pages(store: Path | str, args: argparse.Namespace) -> None:
    to_time = pages(store)
    http: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    loads: dict[str, list[float]] = {}
    with serving(store) as base:
        to_time.update(device_pages(base))
        in_browser = {} if args.no_browser else {"/ in Chromium": "/", "compare in Chromium": to_time[
            next(name for name in to_time if name.startswith("/compare"))]}
        browser_round = browsing(base, in_browser)
        next(browser_round)
        for round_number in range(args.rounds + 1):  # round 0 fills the caches and is not counted
            for name, path in to_time.items():
                seconds, sizes[name] = fetch(base + path)
                if round_number:
                    http.setdefault(name, []).append(seconds)
            for name, seconds in browser_round.send(None).items():
                if round_number:
                    loads.setdefault(name, []).append(seconds)
        browser_round.close()
    print(f"{args.runs:,} runs in {described(store)}, {args.rounds} rounds, seconds:")
    print(f"{'page':<40} {'min':>6} {'median':>7} {'max':>6} {'size':>9}")
    for name, times in http.items():
        print(f"{name:<40} {min(times):6.2f} {statistics.median(times):7.2f} {max(times):6.2f} "
              f"{sizes[name] / 1e3:7,.0f} kB")
    for name, times in loads.items():
        print(f"{name:<40} {min(times):6.2f} {statistics.median(times):7.2f} {max(times):6.2f}")
    print(f"device page: {to_time['device page']}; in Chromium: until the load event (Navigation Timing)")


def publishing(store: Path, runs: int, rounds: int) -> None:
    """Publish the store once, timing each page's renderer; then the whole publish per page written; then one new
    run published into the site, `rounds` times, and the site published again with --full."""
    import disklab.web.publish_pages as pages_module
    from disklab.store.repository import Store
    from disklab.web.publish import publish

    renderers = ("render_run_page", "render_compare_page", "render_device_page", "render_devices_page", "_index")
    times: dict[str, list[float]] = {name: [] for name in renderers}

    def timed(name, render):
        def timing(*args, **kwargs):
            started = time.monotonic()
            html = render(*args, **kwargs)
            times[name].append(time.monotonic() - started)
            return html
        return timing

    originals = {name: getattr(pages_module, name) for name in renderers}
    for name in renderers:
        setattr(pages_module, name, timed(name, originals[name]))
    scratch = Path(tempfile.mkdtemp(dir="/var/tmp"))
    site_folder = scratch / "site"
    try:
        with Store(store, read_only=True) as opened:
            newest = [info.id for info in opened.list_runs(rounds)][::-1]  # oldest of them first
            started = time.monotonic()
            site = publish(opened, site_folder, excluded=newest)
            total = time.monotonic() - started
            for name in renderers:
                setattr(pages_module, name, originals[name])
            incremental = []
            for n in range(1, rounds + 1):
                started = time.monotonic()
                added = publish(opened, site_folder, excluded=newest[n:])
                incremental.append(time.monotonic() - started)
            started = time.monotonic()
            publish(opened, site_folder, full=True)
            full = time.monotonic() - started
    finally:
        shutil.rmtree(scratch)
    pages = sum(len(seconds) for seconds in times.values())
    print(f"publish of {site.runs:,} runs ({site.runs:,} run pages, {site.comparisons:,} comparisons, {site.devices} "
          f"devices; {site.files:,} files): {total:,.1f} s, {pages:,} pages, {total / pages:.3f} s a page")
    print(f"{'page (its renderer)':<28} {'pages':>6} {'min':>6} {'median':>7} {'max':>6}")
    for name, seconds in times.items():
        print(f"{name:<28} {len(seconds):6,} {min(seconds):6.3f} {statistics.median(seconds):7.3f} "
              f"{max(seconds):6.3f}")
    print(f"one new run published into the site of the runs before it ({rounds} rounds, up to {added.runs:,} runs, "
          f"{added.files:,} files): {min(incremental):.2f} / {statistics.median(incremental):.2f} / "
          f"{max(incremental):.2f} s (min / median / max); the same site with --full: {full:.1f} s")


def browsing(base: str, in_browser: dict[str, str]):
    """A generator: each send loads every page once in a fresh page and yields {name: seconds to load}."""
    if not in_browser:
        while True:
            yield {}
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield {}
            while True:
                loads = {}
                for name, path in in_browser.items():
                    page = browser.new_page(viewport={"width": 1280, "height": 900})
                    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base + "/")
                               else route.abort())
                    page.goto(base + path, wait_until="load")
                    loads[name] = page.evaluate(
                        "() => performance.getEntriesByType('navigation')[0].loadEventEnd / 1000")
                    page.close()
                yield loads
        finally:
            browser.close()


if __name__ == "__main__":
    main()
