"""`disklab serve` in a real browser: a generated lab store of 1,000 runs, headless Chromium that may reach nothing
but the server, driven as a user would (filter, open a run, download a job file, tick three runs and compare, share
the comparison's address, open a device's history). What each page must show is read from the store with sqlite3.
"""

import hashlib
import select
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from bench.make_store import lab_store
from tests.integration.conftest import COMMAND_TIMEOUT_S
from tests.integration.test_report_browser import ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, browser_or_skip

pytestmark = pytest.mark.integration

RUNS = 1000
PER_PAGE = 50
# A device whose firmware moved its figures (bench/make_store.py), and the firmware before and after; a disk whose
# firmware update did not, on a host whose kernel update did.
DEVICE_SERIAL, OLD_FIRMWARE, NEW_FIRMWARE = "S7HENJ0X401234A", "4B2QJXD7", "0B2QJXD7"
DISK_SERIAL, DISK_FIRMWARE, NEW_KERNEL = "WSD0ABCD", "SN04", "6.12.9-amd64"
MARKUP_NAME = '<b>bold</b> & "quoted" <script>alert(1)</script>'


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    return lab_store(tmp_path_factory.mktemp("lab") / "lab.db", RUNS)


def query(store: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as conn:
        return conn.execute(sql, params).fetchall()


def store_state(store: Path) -> dict[str, object]:
    """The store's bytes, and every other file beside it but the shared-memory index (-shm) that SQLite makes for any
    reader of a store in WAL mode, `disklab runs` alike; its write-ahead log, if a reader made one, must be empty."""
    state: dict[str, object] = {path.name: path.stat().st_size for path in store.parent.iterdir()
                                if path.name != f"{store.name}-shm"}
    state[store.name] = hashlib.sha256(store.read_bytes()).hexdigest()
    state.setdefault(f"{store.name}-wal", 0)
    return state


def start_server(disklab, store: Path) -> tuple[subprocess.Popen, str]:
    """`disklab serve --port 0` and the address it says it listens on (any free port, no race for one)."""
    server = disklab.start("serve", "--port", "0", "--db", str(store))
    ready, _, _ = select.select([server.stdout], [], [], COMMAND_TIMEOUT_S)
    line = server.stdout.readline() if ready else ""
    if "http://127.0.0.1:" not in line:
        server.kill()
        _, stderr = server.communicate()
        pytest.fail(f"disklab serve did not start: {line!r} {stderr!r}")
    return server, line[line.index("http://"):].split()[0].rstrip("/")


def whole_history(page) -> tuple[set[int], list[str], int]:
    """A device's history, followed page after page to its oldest run: the runs in its tables, the change points'
    titles, and how often DISK_FIRMWARE is shown."""
    runs, points, firmware = set(), [], 0
    while True:
        page.wait_for_selector("table.history")
        runs |= set(page.eval_on_selector_all(
            "table.history tr[data-run-id]", "rows => rows.map(r => Number(r.dataset.runId))"))
        points += page.eval_on_selector_all("td.change-point", "cells => cells.map(c => c.title)")
        firmware += page.get_by_text(DISK_FIRMWARE).count()
        if page.locator("a#older").count() == 0:
            return runs, points, firmware
        page.click("a#older")


def rows(page) -> list[dict[str, str]]:
    """The runs table's rows as {heading: cell text}, and the run number as "id"."""
    return page.evaluate("""() => {
        const headings = [...document.querySelectorAll('table#runs thead th')]
            .map(th => th.textContent.replace(/[▲▼]/g, '').trim());
        return [...document.querySelectorAll('table#runs tbody tr[data-run-id]')].map(tr => Object.fromEntries(
            [['id', tr.dataset.runId], ...[...tr.cells].map((td, i) => [headings[i], td.textContent.trim()])]));
    }""")


def test_runs_are_filtered_opened_downloaded_compared_shared_and_a_device_followed_offline(lab, disklab, tmp_path):
    before = store_state(lab)
    server, base = start_server(disklab, lab)
    outside, errors, dialogs = [], [], []

    def local_only(route):
        if route.request.url.startswith(base + "/"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    try:
        with browser_or_skip() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            try:
                def new_page():
                    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
                    context.route("**/*", local_only)
                    page = context.new_page()
                    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                    page.on("pageerror", lambda error: errors.append(str(error)))
                    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
                    return page

                page = new_page()
                page.goto(base + "/")
                first = rows(page)
                count = page.locator("#count").inner_text()
                page.click("a#next")
                page.wait_for_url("**page=2**")  # a busy machine: read the rows of the page clicked to, not this one
                second = rows(page)
                second_url = page.url

                page.click("a.sort[data-sort=started]")
                page.wait_for_url("**sort=started**")
                oldest = rows(page)
                page.goto(base + "/compare?run=3&run=1&run=2")  # the tick boxes' form without JavaScript
                without_script = page.url

                page.goto(base + "/")
                page.fill("form#filters input[name=suite]", "quick")
                page.click("#apply")
                page.wait_for_url("**suite=quick**")
                quick = rows(page)
                quick_count = page.locator("#count").inner_text()
                page.fill("form#filters input[name=q]", "nightly")
                page.click("#apply")
                page.wait_for_url("**q=nightly**")
                nightly = rows(page)
                nightly_url, nightly_count = page.url, page.locator("#count").inner_text()

                page.click(f"tr[data-run-id='{nightly[0]['id']}'] a.run-link")
                page.wait_for_url(f"**/runs/{nightly[0]['id']}")
                run_url = page.url
                job_links = page.locator("a.download[href$='/job.fio']")
                job_count = job_links.count()
                with page.expect_download() as download:
                    job_links.first.click()
                job_path = tmp_path / download.value.suggested_filename
                download.value.save_as(job_path)
                job_href = job_links.first.get_attribute("href")
                chart_png = None
                if page.locator("figure.chart a[data-download=png]").count():
                    with page.expect_download() as download:
                        page.locator("figure.chart a[data-download=png]").first.click()
                    chart_png = tmp_path / download.value.suggested_filename
                    download.value.save_as(chart_png)

                page.goto(nightly_url)
                picked = [row["id"] for row in nightly[:3]]
                for run_id in picked:
                    page.check(f"input.pick[type=checkbox][value='{run_id}']")
                page.click("button#compare")
                page.wait_for_url("**/compare/*")
                compare_url = page.url
                comparison = page.locator("table.comparison").first.inner_text()
                compared_runs = page.eval_on_selector_all("a.run-link",
                                                          "links => links.map(a => a.getAttribute('href'))")
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "serve-compare.png"))

                shared = new_page()
                shared.goto(compare_url)
                shared_comparison = shared.locator("table.comparison").first.inner_text()

                page.goto(base + "/?q=bold")
                markup = rows(page)
                bold_elements = page.locator("table#runs b").count()

                page.goto(base + "/devices")
                page.click(f"table#devices tr:has(td:text-is('{DEVICE_SERIAL}')) a.device-link")
                history_runs, change_points, _ = whole_history(page)
                page.screenshot(path=str(ARTIFACTS / "serve-device.png"))
                page.goto(base + "/devices")
                page.click(f"table#devices tr:has(td:text-is('{DISK_SERIAL}')) a.device-link")
                _, disk_change_points, disk_firmware_shown = whole_history(page)
            finally:
                browser.close()
    finally:
        server.terminate()
        server.communicate(timeout=COMMAND_TIMEOUT_S)

    assert errors == [] and dialogs == []
    assert outside == [], "the pages asked for something other than the server"
    assert store_state(lab) == before, "serving wrote to the store or beside it"

    # The list: newest first, 50 a page, the next page going on where the first stopped.
    assert [int(row["id"]) for row in first] == list(range(RUNS, RUNS - PER_PAGE, -1))
    assert [int(row["id"]) for row in second] == list(range(RUNS - PER_PAGE, RUNS - 2 * PER_PAGE, -1))
    assert "page=2" in second_url and f"of {RUNS:,}" in count
    by_start = [row[0] for row in query(lab, f"SELECT id FROM runs ORDER BY started_at, id LIMIT {PER_PAGE}")]
    assert [int(row["id"]) for row in oldest] == by_start
    assert without_script == f"{base}/compare/3,1,2"
    # Filters narrow it to what the store holds.
    (quick_total,), = query(lab, "SELECT COUNT(*) FROM runs WHERE suite_name = 'quick'")
    nightly_ids = [row[0] for row in query(lab, "SELECT id FROM runs WHERE suite_name = 'quick' AND "
                                                "name LIKE 'nightly %' ORDER BY id DESC")]
    assert PER_PAGE < quick_total < RUNS and f"of {quick_total:,} matching" in quick_count
    assert {row["Suite"] for row in quick} == {"quick"} and len(quick) == PER_PAGE
    assert 3 <= len(nightly_ids) < quick_total and f"of {len(nightly_ids):,} matching" in nightly_count
    assert [int(row["id"]) for row in nightly] == nightly_ids[:PER_PAGE]
    assert "suite=quick" in nightly_url and "q=nightly" in nightly_url

    # A run's page offers each stored test's job file, which downloads as stored.
    run_id = int(nightly[0]["id"])
    assert run_url == f"{base}/runs/{run_id}"
    tests = query(lab, "SELECT id, label, jobfile FROM tests WHERE run_id = ? ORDER BY seq", (run_id,))
    assert job_count == len(tests) > 0
    test_id, label, jobfile = next(t for t in tests if job_href == f"/runs/{run_id}/tests/{t[0]}/job.fio")
    downloaded = job_path.read_text()
    if chart_png is not None:  # a chart drawn in the page as PNG under the server's content policy
        assert chart_png.suffix == ".png" and chart_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert job_path.suffix == ".fio" and downloaded == jobfile
    assert f"test '{label}'" in downloaded.splitlines()[0] and "[global]" in downloaded and "\nrw=" in downloaded

    # Three ticked runs compared at an address of their own, which gives the same comparison in a fresh browser.
    assert compare_url == f"{base}/compare/{','.join(picked)}"
    assert set(compared_runs) >= {f"/runs/{run_id}" for run_id in picked}
    assert all(f"nightly {run_id}" in comparison for run_id in picked)
    assert shared_comparison == comparison

    # Markup in a run's name is shown as text, never run.
    assert [row["Name"] for row in markup] == [MARKUP_NAME] and bold_elements == 0

    # The device's history holds every run of that serial, and marks the firmware update that moved its figures.
    device_runs = {row[0] for row in query(lab, "SELECT run_id FROM run_env WHERE key GLOB 'device.*.serial' AND "
                                                "value_json = ?", (f'"{DEVICE_SERIAL}"',))}
    assert history_runs == device_runs
    assert any(OLD_FIRMWARE in title and NEW_FIRMWARE in title for title in change_points), change_points
    assert disk_firmware_shown and not any(DISK_FIRMWARE in title for title in disk_change_points)
    assert any(NEW_KERNEL in title for title in disk_change_points), disk_change_points
