"""The HTML report printed to PDF (report --pdf) by headless Chromium, the browser the report's tests drive.

Chromium lays the page out with the report's own print styles (each run on a new page, charts never split), so
the PDF shows what the HTML file prints, on A4 or Letter (paper.py). It runs offline on a copy of the page, with a
profile of its own in a temporary folder (never the user's, never handed to a Chromium already open), and
everything it started is ended.
"""

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from disklab.errors import UserError
from disklab.report.html.paper import page_style
from disklab.system.outputs import write_whole

# Debian and Ubuntu's names first (scripts/setup.sh tests installs Debian's 'chromium'), then Google's builds.
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PRINT_TIMEOUT_S = 300  # a report of hundreds of charts on a busy machine; a hung browser is ended then
_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-extensions", "--no-pdf-header-footer",
)


def browser() -> str:
    """The Chromium to print with, or one UserError saying what to install."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise UserError("--pdf prints the report through Chromium, and none was found (chromium, chromium-browser or "
                    "google-chrome on PATH): install Debian's 'chromium' package, or leave out --pdf and print the "
                    "HTML file from a browser")


def print_pdf(html: str, paper: str = "a4") -> bytes:
    """The report page as PDF bytes, on `paper` (a key of paper.PAPERS): its size is set on the copy printed, so
    that the HTML file prints on whatever paper its reader's browser chooses."""
    program = browser()
    with tempfile.TemporaryDirectory(prefix="disklab-pdf-") as folder:
        page, pdf = Path(folder) / "report.html", Path(folder) / "report.pdf"
        head_end = html.index("</head>")
        write_whole(page, html[:head_end] + page_style(paper) + html[head_end:], "the page to print")
        command = [program, *_FLAGS, f"--user-data-dir={Path(folder) / 'profile'}", f"--print-to-pdf={pdf}",
                   page.as_uri()]
        stderr = _run(command)
        if not pdf.is_file() or pdf.stat().st_size == 0:
            reason = next((line for line in reversed(stderr.splitlines()) if line.strip()), "no PDF written")
            raise UserError(f"Chromium ({program}) could not print the report to PDF: {reason.strip()[:300]}")
        return pdf.read_bytes()


def _run(command: list[str]) -> str:
    """Chromium's stderr; it and the processes it started (renderer, GPU, zygote) are ended, however this ends."""
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    except OSError as exc:
        raise UserError(f"cannot run {command[0]}: {exc.strerror or exc}") from None
    try:
        _, stderr = process.communicate(timeout=PRINT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UserError(f"Chromium ({command[0]}) did not print the report within {PRINT_TIMEOUT_S} s") from None
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # its own session: only what this Chromium started
        except ProcessLookupError:
            pass
        process.wait()
    return stderr
