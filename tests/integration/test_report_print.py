"""The report a reviewer prints (issue 42): real short fio runs (two quick runs, fio's ssd-test job file, a sweep of 24
tests) on a target at a long path, printed by Debian's Chromium on A4 and Letter, the PDF read back by poppler;
and the same report, and serve's pages of the same runs, laid out by Chromium at a phone's to a desktop's width.

Every page is A4 or Letter as asked (each page's MediaBox), the first page is filled down its length (a long
table goes on over the next page rather than leaving page 1 near empty), no word lies beyond a page's edge and no
table beyond the page's text.
"""

import re
import shutil
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO
from tests.integration.test_report_browser import ARTIFACTS, CHROMIUM, CHROMIUM_FLAGS, browser_or_skip
from tests.integration.test_report_pdf import poppler
from tests.integration.test_web_browser import start_server

pytestmark = [pytest.mark.integration, NEEDS_FIO]

JOB_FILE = Path(__file__).parents[1] / "fixtures" / "jobfiles" / "ssd-test.fio"
SHORT = ("--runtime", "300ms", "--ramp", "0", "--pause", "0", "--size", "16MiB")
SWEEP = """
name = "many"
[defaults]
runtime = "300ms"
ramp = "0s"
pause = "0s"
size = "16M"
[[group]]
name = "sweep"
label = "RND {bs} Q{iodepth} {direction}"
pattern = "random"
bs = ["4k", "16k", "64k", "1m"]
iodepth = [1, 4, 32]
direction = ["read", "write"]
"""
PAPERS = {"a4": (595, 842), "letter": (612, 792)}  # points, as Chromium writes them (A4: 594.96 x 841.92)
WIDTHS = (360, 600, 800, 1200)
# Each table's overhang past the right edge of the page's text, in CSS pixels (none: 0).
OVERHANG = """() => {
    const body = document.body;
    const right = body.getBoundingClientRect().right - parseFloat(getComputedStyle(body).paddingRight);
    return [...document.querySelectorAll('table')].map(table =>
        [table.querySelector('caption')?.textContent || table.closest('section')?.id || '',
         Math.round(table.getBoundingClientRect().right - right)]).filter(([, over]) => over > 0);
}"""


def reviewed_runs(disklab, tmp_path) -> list[str]:
    """The runs of the report: 1 and 2 quick (an overview and a long comparison), 3 the job file, 4 the sweep."""
    for tool in ("pdfinfo", "pdftotext", "pdftoppm"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (Debian's poppler-utils; scripts/setup.sh tests installs it)")
    target = tmp_path / "disks_under_test" / "samsung_990_pro_2tb_on_the_second_slot" / "benchmark_directory"
    target.mkdir(parents=True)
    suite = tmp_path / "many.toml"
    suite.write_text(SWEEP)
    for args in (("quick", *SHORT), ("quick", *SHORT), (str(JOB_FILE),), (str(suite),)):
        result = disklab("run", *args, "--target", str(target))
        assert result.returncode == 0, result.stderr
    return ["1", "2", "3", "4"]


def first_page_rows(pdf: Path, stem: Path) -> list[bytes]:
    """Page 1's rows of grey pixels at 40 dpi (pdftoppm -gray writes binary PGM: 'P5 W H 255' then a byte a pixel)."""
    poppler("pdftoppm", "-gray", "-r", "40", "-f", "1", "-l", "1", "-singlefile", str(pdf), str(stem))
    magic, width, height, depth, body = stem.with_suffix(".pgm").read_bytes().split(maxsplit=4)
    assert magic == b"P5" and depth == b"255" and len(body) == int(width) * int(height)
    return [body[i:i + int(width)] for i in range(0, len(body), int(width))]


def test_the_pdf_is_on_the_paper_asked_for_its_first_page_filled_and_nothing_past_a_page_edge(tmp_path, disklab):
    runs = reviewed_runs(disklab, tmp_path)
    for paper, (width, height) in PAPERS.items():
        pdf = tmp_path / f"review-{paper}.pdf"
        result = disklab("report", *runs, "--pdf", "--paper", paper, "-o", str(pdf))
        assert result.returncode == 0, result.stderr
        pages = int(re.search(r"^Pages:\s+(\d+)$", poppler("pdfinfo", str(pdf)), re.M).group(1))
        boxes = re.findall(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf.read_bytes())
        assert len(boxes) == pages and {(round(float(w)), round(float(h))) for w, h in boxes} == {(width, height)}

        # Page 1: the title, the overview and what was tested, inked down to its foot. A table was kept whole: the
        # comparison's 32 rows, or what was tested with its long paths, went to page 2 and left page 1 half empty.
        first = " ".join(poppler("pdftotext", "-f", "1", "-l", "1", str(pdf), "-").split())
        assert first.startswith("disklab report") and "Overview" in first and "What was tested" in first
        rows = first_page_rows(pdf, tmp_path / paper)
        inked_rows = [i for i, row in enumerate(rows) if any(value < 200 for value in row)]
        assert inked_rows[-1] > 0.8 * len(rows), f"page 1 ends at {inked_rows[-1] / len(rows):.0%} of its height"

        # No word of any page lies past the page's right edge (pdftotext -bbox: each word's box in points).
        boxes = poppler("pdftotext", "-bbox", str(pdf), "-")
        right_edges = [float(x) for x in re.findall(r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)"', boxes)]
        assert len(right_edges) > 1000 and max(right_edges) <= width, max(right_edges)
        ARTIFACTS.mkdir(exist_ok=True)
        shutil.copy(pdf, ARTIFACTS / pdf.name)

    # Without --paper, the locale's: Letter for a US LANG, A4 where LC_ALL says Germany.
    for environ, (width, height) in (({"LANG": "en_US.UTF-8"}, PAPERS["letter"]),
                                     ({"LC_ALL": "de_DE.UTF-8", "LANG": "en_US.UTF-8"}, PAPERS["a4"])):
        pdf = tmp_path / "default.pdf"
        env = {**{k: v for k, v in disklab.env.items() if k not in ("LC_ALL", "LC_PAPER", "LANG")}, **environ}
        assert disklab("report", "1", "--pdf", "-o", str(pdf), env=env).returncode == 0
        size = re.search(r"^Page size:\s+([\d.]+) x ([\d.]+) pts", poppler("pdfinfo", str(pdf)), re.M).groups()
        assert tuple(round(float(v)) for v in size) == (width, height), environ


def test_no_table_runs_past_the_page_in_the_report_or_serve_from_a_phone_to_a_desktop(tmp_path, disklab):
    runs = reviewed_runs(disklab, tmp_path)
    report = tmp_path / "review.html"
    assert disklab("report", *runs, "-o", str(report)).returncode == 0
    server, base = start_server(disklab, disklab.store_path)
    addresses = [report.as_uri(), f"{base}/compare/{','.join(runs)}", f"{base}/runs/1", f"{base}/runs/4"]
    overhangs = {}
    try:
        with browser_or_skip() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            try:
                for width in WIDTHS:
                    page = browser.new_page(viewport={"width": width, "height": 900})
                    for address in addresses:
                        page.goto(address)
                        tables = page.locator("table").count()
                        assert tables >= 3, address
                        overhangs[(width, address)] = page.evaluate(OVERHANG)
                    page.close()
            finally:
                browser.close()
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert {key: over for key, over in overhangs.items() if over} == {}
