"""`disklab report --pdf`: real short fio runs printed to PDF by Debian's Chromium, the PDF read back by poppler
(pdfinfo, pdftotext, pdftoppm: Debian's poppler-utils, which scripts/setup.sh tests installs).

What must be in the PDF is taken from the HTML report of the same runs and options: every chart's title on a page,
each run's section starting a page of its own (the report's print styles), and page 1 and the charts' pages drawn,
not blank.
"""

import html as html_text
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO

pytestmark = [pytest.mark.integration, NEEDS_FIO]

ARTIFACTS = Path(__file__).parents[1] / "artifacts"
SHORT = ("--runtime", "300ms", "--ramp", "0", "--pause", "0")  # charts, not figures, are checked
SWEEP = """
name = "sweep"
[[group]]
name = "bs"
label = "RND read {bs}"
bs = ["4k", "16k", "64k"]
iodepth = 4
runtime = "1s"
size = "16M"
"""


def poppler(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=120).stdout


def gray_pages(pdf, folder, resolution: int = 40) -> list[bytes]:
    """Each page's grey pixels (pdftoppm -gray writes binary PGM: 'P5 W H 255' then a byte per pixel)."""
    poppler("pdftoppm", "-gray", "-r", str(resolution), str(pdf), str(folder / "page"))
    pixels = []
    for path in sorted(folder.glob("page-*.pgm"), key=lambda p: int(p.stem.rsplit("-", 1)[1])):
        data = path.read_bytes()
        magic, width, height, depth, body = data.split(maxsplit=4)
        assert magic == b"P5" and depth == b"255" and len(body) == int(width) * int(height)
        pixels.append(body)
    return pixels


def inked(pixels: bytes) -> float:
    """The share of the page that is not white paper."""
    return sum(1 for value in pixels if value < 200) / len(pixels)


def test_a_pdf_of_three_runs_has_a_page_per_run_section_and_every_chart_drawn(tmp_path, disklab):
    for tool in ("pdfinfo", "pdftotext", "pdftoppm"):
        if shutil.which(tool) is None and os.environ.get("CI") != "true":
            pytest.skip(f"{tool} is not installed (Debian's poppler-utils; scripts/setup.sh tests installs it)")
    if shutil.which("chromium") is None and os.environ.get("CI") != "true":
        pytest.skip("chromium is not installed (Debian's 'chromium'; scripts/setup.sh tests installs it)")
    target = tmp_path / "target"
    target.mkdir()
    suite = tmp_path / "sweep.toml"
    suite.write_text(SWEEP)
    for args in (("quick", "--size", "16M", *SHORT), ("quick", "--size", "16M", *SHORT), (str(suite),)):
        result = disklab("run", *args, "--target", str(target))
        assert result.returncode == 0, result.stderr
    assert disklab("note", "2", "second pass, after a TRIM of the whole file system").returncode == 0
    options = ("--title", "Three runs in print", "--label", "1=first pass", "--notes", "**Set-up**: one VM disk")

    page = tmp_path / "r.html"
    assert disklab("report", "1", "2", "3", "-o", str(page), *options).returncode == 0
    html = page.read_text()
    titles = [html_text.unescape(t) for t in re.findall(r"<svg[^>]*>\s*<title>(.*?)</title>", html)]
    headings = [html_text.unescape(h) for h in re.findall(r'<section class="run" id="run-\d+">\s*<h2>(.*?)</h2>', html)]
    assert len(titles) >= 5 and len(headings) == 3

    pdf = tmp_path / "r.pdf"
    result = disklab("report", "1", "2", "3", "--pdf", "-o", str(pdf), *options)
    assert result.returncode == 0, result.stderr
    assert pdf.read_bytes().startswith(b"%PDF-")
    pages = int(re.search(r"^Pages:\s+(\d+)$", poppler("pdfinfo", str(pdf)), re.M).group(1))
    texts = [" ".join(text.split()) for text in poppler("pdftotext", str(pdf), "-").split("\f")[:pages]]
    assert len(texts) == pages

    # Page 1: the title, the notes rendered from Markdown, what was tested; each run's section opens a page.
    assert texts[0].startswith("Three runs in print") and "Set-up: one VM disk" in texts[0]
    assert "**" not in texts[0]
    # A heading ends in the target's path, which may break anywhere: its run and suite start the page.
    starts = [next((i for i, text in enumerate(texts) if text.startswith(heading.rsplit(" · ", 1)[0] + " · ")),
                   None) for heading in headings]
    assert None not in starts, (headings, [text[:80] for text in texts])
    assert starts == sorted(starts) and len(set(starts)) == 3 and starts[0] >= 1
    assert pages >= starts[-1] + 1 >= 4
    assert "second pass, after a TRIM" in " ".join(texts[starts[1]:starts[2]])  # run 2's note, in its section
    assert headings[0].startswith("first pass (run 1)")

    # Every chart is in the PDF, before the runs' sections, on pages drawn with it.
    chart_pages = set()
    for title in titles:
        found = [i for i, text in enumerate(texts) if " ".join(title.split()) in text]
        assert found and found[0] < starts[0], (title, found)
        chart_pages.add(found[0])
    drawn = gray_pages(pdf, tmp_path)
    assert len(drawn) == pages
    assert inked(drawn[0]) > 0.02, "page 1 is blank"
    for index in chart_pages:  # a page of thin lines inks 1-2 % of it; a blank one, none
        assert inked(drawn[index]) > 0.005, f"page {index + 1} holds a chart but is blank"
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(pdf, ARTIFACTS / "report-three-runs.pdf")
    print(f"the PDF: {ARTIFACTS / 'report-three-runs.pdf'}")
