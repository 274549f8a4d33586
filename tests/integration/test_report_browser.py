"""The HTML report in a real browser: real short runs, `disklab report`, then headless Chromium with no network.

What the page must draw is derived from the tests the runs stored; what it did draw is counted in the SVGs.
"""

import json
import os
import re
import shutil
import struct
import xml.etree.ElementTree as ET
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
SHORT = ("--runtime", "300ms", "--ramp", "0", "--pause", "0")  # charts, not figures, are checked
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
        pytest.skip(f"{CHROMIUM} is not installed (Debian's 'chromium' package; 'make test' installs it: scripts/setup.sh tests)")
    return sync_playwright()


def chart_titles(page_path: Path) -> list[str]:
    """The title of every chart SVG of an HTML file as Chromium draws it, in page order (what a reader sees)."""
    with browser_or_skip() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.goto(page_path.as_uri())
            return page.evaluate("""() => [...document.querySelectorAll('figure.chart svg')]
                .map(svg => svg.querySelector(':scope > title').textContent)""")
        finally:
            browser.close()


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
        kind: {row["direction"]: row["n"] for row in disklab.query(
            "SELECT direction, COUNT(*) AS n FROM series WHERE test_id = ? AND kind = ? GROUP BY direction",
            (logged_test["id"], kind))}
        for kind in ("iops", "bw_bytes_per_s", "lat_mean_ns")
    }
    expected = {  # chart id -> points (or bars) of each series, in series order
        "quick-sequential": [sum(p["pattern"] == "sequential" for p in run) for run in quick],
        "quick-random": [sum(p["pattern"] == "random" for p in run) for run in quick],
        "blocksize-iops-1": [len({p["bs"] for p in sweep})],
        "blocksize-mb-per-s-1": [len({p["bs"] for p in sweep})],
        # 3 s logged: too short for a moving average (5 intervals at least)
        "series-1": list(logged_points["iops"].values()),
        "series-mb-per-s-1": list(logged_points["bw_bytes_per_s"].values()),
        "series-latency-1": list(logged_points["lat_mean_ns"].values()),
        # the logged run's one test, of a suite file of its own, on no curve: its IOPS and MB/s as bars
        "tests-iops": [1],
        "tests-mb-per-s": [1],
    }
    # Percentiles (p50, p90, p99, p99.9, p99.99) and exceedance: a chart per quick test with a line for each of runs
    # 1 and 2; the block size run's and the logged run's tests, which no other run has, a line per test and
    # direction, on charts of their run, at most 10 lines to a chart.
    # A percentile line needs the I/Os to support its median at least (10 / (1 - 0.5) = 20: analysis/repeats.py's
    # TAIL_IOS); the exceedance chart draws every histogram. A line pools its test's passes (the quick runs').
    pooled: dict[tuple, int] = {}
    for run_id in (1, 2, 3, 4):
        for test in disklab.tests(run_id):
            for m in disklab.metrics(test["id"]):
                if m["clat_p50_ns"] is not None:
                    key = (run_id, test["plan_index"], m["direction"])
                    pooled[key] = pooled.get(key, 0) + m["total_ios"]
    percentile_lines = len([ios for ios in pooled.values() if ios >= 20])
    exceedance_lines = len(pooled)
    assert expected["blocksize-iops-1"] == [15] and expected["quick-random"] == [4, 4]
    assert all(n >= 2 for n in logged_points["iops"].values())

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
    latency = {chart: figure["points"] for chart, figure in drawn.items() if chart.startswith("latency")}
    exceedance = {chart: figure["points"] for chart, figure in drawn.items() if chart.startswith("exceedance")}
    grids = [chart for chart in drawn if chart.startswith("grid-")]  # quick's CrystalDiskMark grid (grid.py)
    assert grids and {chart: figure["points"] for chart, figure in drawn.items()
                      if chart not in latency and chart not in exceedance and chart not in grids} == expected
    # p50 .. p99.99, each where the line's I/O supports it (p99.99 from 100,000 I/Os): at least the median
    assert all(1 <= n <= 5 for points in latency.values() for n in points)
    assert sum(len(points) for points in latency.values()) == percentile_lines
    assert sum(len(points) for points in exceedance.values()) == exceedance_lines
    assert all(len(points) <= 10 for points in [*latency.values(), *exceedance.values()]), "split, not dropped"
    assert all(n > 1 for points in exceedance.values() for n in points)
    assert all(figure["width"] > 300 and figure["height"] > 100 for figure in drawn.values()), "every chart visible"
    assert "MB/s = 10^6" in drawn["blocksize-mb-per-s-1"]["caption"]
    assert screenshot.stat().st_size > 50_000


def test_a_report_of_repeated_runs_shows_titles_units_and_error_bars_and_downloads_each_chart(tmp_path, disklab):
    target = tmp_path / "target"
    target.mkdir()
    suite = tmp_path / "logged.toml"
    suite.write_text(LOGGED)
    run_ok(disklab, "run", "quick", "--target", str(target), "--size", "32M", "--repeat", "3", *SHORT)
    run_ok(disklab, "run", str(suite), "--target", str(target), "--repeat", "3")
    report = tmp_path / "repeats.html"
    run_ok(disklab, "report", "1", "2", "-o", str(report))
    downloads = tmp_path / "downloads"
    downloads.mkdir()

    with browser_or_skip() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900}, accept_downloads=True)
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                       else route.abort())
            page.goto(report.as_uri(), wait_until="load")
            charts = page.evaluate("""() => [...document.querySelectorAll('figure.chart')].map(f => {
                const svg = f.querySelector('svg'), text = (selector) =>
                    [...svg.querySelectorAll(selector)].map(t => t.textContent);
                return {id: f.id, kind: f.dataset.kind, title: text('text.chart-title').join(' '),
                        svgTitle: svg.querySelector(':scope > title').textContent, notes: text('text.chart-note'),
                        x: text('text.x-label')[0], y: text('text.y-label')[0], legend: text('g.legend text'),
                        points: f.querySelectorAll(f.dataset.kind === 'bars' ? 'g[id] > rect' : 'g[id] > use').length,
                        errorBars: svg.querySelectorAll('g.error-bars .error-bar').length,
                        bands: svg.querySelectorAll('g.error-bars .error-band').length,
                        links: [...f.querySelectorAll('a[data-download]')].map(a => a.dataset.download)};
            })""")
            ARTIFACTS.mkdir(exist_ok=True)
            for chart in charts:
                shot = ARTIFACTS / f"report-repeats-{chart['id']}.png"
                page.locator(f"#{chart['id']} svg").screenshot(path=str(shot))
            grids = [chart for chart in charts if chart["kind"] == "grid"]  # quick's CrystalDiskMark grid (grid.py)
            charts = [chart for chart in charts if chart["kind"] != "grid"]
            saved = {}
            for chart in (charts[0], charts[-1], grids[0]):  # bars, a line chart and the grid
                for kind in ("svg", "png"):
                    with page.expect_download() as download:
                        page.click(f"#{chart['id']} a[data-download={kind}]")
                    path = downloads / download.value.suggested_filename
                    download.value.save_as(path)
                    saved[chart["id"], kind] = path
            view_boxes = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('figure.chart')]
                .map(f => [f.id, [f.querySelector('svg').viewBox.baseVal.width,
                                  f.querySelector('svg').viewBox.baseVal.height]]))""")
        finally:
            browser.close()

    assert errors == []
    assert [c["id"] for c in charts][:2] == ["quick-sequential", "quick-random"] and charts[-1]["id"] == "series-latency-1"
    units = re.compile(r"IOPS|MB/s|µs|\(%|\(s\)")
    for chart in charts:
        assert chart["title"] and chart["title"] == chart["svgTitle"], chart
        assert units.search(chart["y"]) and chart["x"], chart
        assert chart["legend"] and chart["links"] == ["svg", "png"], chart
        if chart["id"].startswith("latency"):  # percentiles are never averaged: the worst of the repeats, said so
            assert chart["errorBars"] == chart["bands"] == 0 and "every I/O of n = 3 repeats" in chart["notes"][0]
        elif chart["id"].startswith("exceedance"):  # nor are latencies: the repeats' histograms merged
            assert chart["errorBars"] == chart["bands"] == 0 and "histograms merged" in chart["notes"][0]
        elif chart["kind"] == "bars":  # every bar the mean of 3 repeats, with its interval
            assert chart["errorBars"] == chart["points"] > 0 and "mean of n = 3 repeats" in chart["notes"][-1], chart
        else:  # the time series: a band per direction
            assert chart["bands"] >= 1 and "mean of n = 3 repeats" in chart["notes"][-1], chart
    assert [g["id"] for g in grids] == ["grid-run-1"] and "mean of 3 passes" in grids[0]["svgTitle"]
    for (chart_id, kind), path in saved.items():
        chart = next(c for c in charts + grids if c["id"] == chart_id)
        assert path.name == f"{chart_id}.{kind}"
        if kind == "svg":
            svg = ET.parse(path).getroot()
            assert svg.tag == "{http://www.w3.org/2000/svg}svg"
            assert svg.find("{http://www.w3.org/2000/svg}title").text == chart["title"]
        else:
            header = path.read_bytes()[:24]
            assert header[:8] == b"\x89PNG\r\n\x1a\n"
            width, height = struct.unpack(">II", header[16:24])
            assert (width, height) == (round(2 * view_boxes[chart_id][0]), round(2 * view_boxes[chart_id][1]))
