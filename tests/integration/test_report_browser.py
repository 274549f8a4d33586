"""The HTML report in a real browser: real short runs, `disklab report`, then headless Chromium with no network.

What the page must draw is derived from the tests the runs stored; what it did draw is counted in the SVGs.
"""

import json
import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from tests.integration.conftest import NEEDS_FIO

pytestmark = [pytest.mark.integration, NEEDS_FIO]

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parents[1] / "artifacts"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SHORT = ("--runtime", "1", "--ramp", "0", "--pause", "0")
LOGGED = """
name = "logged"
[defaults]
runtime = "3s"
size = "32M"
log_interval = "1s"
[[group]]
name = "logged"
label = "RND4K Q8 read logged"
bs = "4k"
iodepth = 8
"""


def browser_or_skip():
    """Playwright driving Debian's chromium; in CI a missing browser fails the test instead of skipping it."""
    if not Path(CHROMIUM).exists() and os.environ.get("CI") != "true":
        pytest.skip(f"{CHROMIUM} is not installed (Debian's 'chromium' package; scripts/setup.sh installs it)")
    return sync_playwright()


def run_ok(disklab, *args: str) -> None:
    result = disklab(*args)
    assert result.returncode == 0, result.stderr


def stored_params(disklab, run_id: int) -> list[dict]:
    return [json.loads(row["params_json"]) for row in disklab.tests(run_id)]


def test_a_report_of_several_runs_opens_offline_with_every_chart_drawn(tmp_path, disklab):
    target = tmp_path / "target"
    target.mkdir()
    suite = tmp_path / "logged.toml"
    suite.write_text(LOGGED)
    run_ok(disklab, "run", "quick", "--target", str(target), "--size", "32M", *SHORT)
    run_ok(disklab, "run", "quick", "--target", str(target), "--size", "32M", *SHORT)
    run_ok(disklab, "run", "blocksize", "--target", str(target), "--size", "128M", *SHORT)
    run_ok(disklab, "run", str(suite), "--target", str(target))
    report = tmp_path / "several runs.html"
    run_ok(disklab, "report", "1", "2", "3", "last", "-o", str(report))

    quick = [stored_params(disklab, run_id) for run_id in (1, 2)]
    sweep = stored_params(disklab, 3)
    (logged_test,) = disklab.tests(4)
    logged_points = {
        row["direction"]: row["n"] for row in disklab.query(
            "SELECT direction, COUNT(*) AS n FROM series WHERE test_id = ? AND kind = 'iops' GROUP BY direction",
            (logged_test["id"],))
    }
    expected = {  # chart id -> points (or bars) of each series, in series order
        "quick-sequential": [sum(p["pattern"] == "sequential" for p in run) for run in quick],
        "quick-random": [sum(p["pattern"] == "random" for p in run) for run in quick],
        "blocksize-iops-1": [len({p["bs"] for p in sweep})],
        "blocksize-mb-per-s-1": [len({p["bs"] for p in sweep})],
        "latency-run-1": [5] * len(quick[0]),  # p50, p90, p99, p99.9, p99.99 of each single-direction test
        "latency-run-2": [5] * len(quick[1]),
        "latency-run-4": [5] * len(logged_points),
        "series-1": list(logged_points.values()),
    }
    assert expected["blocksize-iops-1"] == [15] and expected["quick-random"] == [4, 4]
    assert all(n >= 2 for n in logged_points.values())

    requests = []
    with browser_or_skip() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors = []
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))

            def only_files(route):
                requests.append(route.request.url)
                if route.request.url.startswith("file://"):
                    route.continue_()
                else:
                    route.abort()

            page.route("**/*", only_files)
            page.goto(report.as_uri(), wait_until="load")
            drawn = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('figure.chart')].map(f => {
                const count = (i) => f.dataset.kind === 'bars'
                    ? f.querySelectorAll(`[id^="${f.id}-series-${i}-bar-"]`).length
                    : f.querySelectorAll(`[id="${f.id}-series-${i}"] use`).length;
                const prefix = `${f.id}-series-`;
                const indices = [...f.querySelectorAll(`[id^="${prefix}"]`)]
                    .map(e => parseInt(e.id.slice(prefix.length)));
                const series = [...Array(new Set(indices).size).keys()];
                const box = f.querySelector('svg').getBoundingClientRect();
                return [f.id, {points: series.map(count), width: box.width, height: box.height,
                               caption: f.querySelector('figcaption').textContent}];
            }))""")
            ARTIFACTS.mkdir(exist_ok=True)
            screenshot = ARTIFACTS / "report-several-runs.png"
            page.screenshot(path=str(screenshot), full_page=True)
            print(f"screenshot of the report: {screenshot}")
            shutil.copy(report, ARTIFACTS / "report-several-runs.html")
        finally:
            browser.close()

    assert errors == []
    assert [url for url in requests if not url.startswith("file://")] == []
    assert {chart: figure["points"] for chart, figure in drawn.items()} == expected
    assert all(figure["width"] > 300 and figure["height"] > 100 for figure in drawn.values()), "every chart visible"
    assert "MB/s = 10^6" in drawn["blocksize-mb-per-s-1"]["caption"]
    assert screenshot.stat().st_size > 50_000
