"""A PNG of `disklab serve`'s runs list as docs/serve.md shows it (docs/serve.png), taken in Debian's Chromium.

The store is bench/make_store.py's generated lab of 1,000 runs (as the browser test browses); the list is filtered
to one suite with three runs ticked for comparison. Chromium starts as tests/integration/test_web_browser.py starts
it: headless, reaching nothing but the server.
Usage: .venv/bin/python scripts/serve_screenshot.py docs/serve.png [--width 1040] [--height 700]
"""

import argparse
import select
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from make_store import lab_store  # noqa: E402
from report_screenshot import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402  (this folder: Chromium as the report's picture)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1040)
    parser.add_argument("--height", type=int, default=700)
    parser.add_argument("--query", default="?suite=quick", help="the list's filters (default ?suite=quick)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = lab_store(Path(folder) / "lab.db", 1000)
        disklab = Path(sys.executable).with_name("disklab")
        server = subprocess.Popen([str(disklab), "serve", "--port", "0", "--db", str(store)], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, text=True)
        try:
            select.select([server.stdout], [], [], 60)
            line = server.stdout.readline()
            base = line[line.index("http://"):].split()[0].rstrip("/")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
                try:
                    page = browser.new_page(viewport={"width": args.width, "height": args.height}, locale="en-GB")
                    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base + "/")
                               else route.abort())
                    page.goto(base + "/" + args.query, wait_until="load")
                    for box in page.locator("input.pick").all()[1:4]:
                        box.check()
                    page.screenshot(path=str(args.png))
                finally:
                    browser.close()
        finally:
            server.terminate()
            server.wait(timeout=60)
    print(f"{args.png}: {args.png.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
