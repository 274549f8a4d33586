"""A PNG of an HTML report's first screen, as the README shows it (docs/report.png), taken in Debian's Chromium.

Chromium starts as tests/integration/test_report_browser.py starts it: headless, offline (only file:// loads).
Usage: .venv/bin/python scripts/report_screenshot.py REPORT.html OUT.png [--from-heading Charts] [--width 1000]
[--height 1400]
"""

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("png", type=Path)
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--height", type=int, default=1400)
    parser.add_argument("--from-heading", metavar="TEXT", help="start at the section headed so (default: the top)")
    args = parser.parse_args()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                       else route.abort())
            page.goto(args.report.resolve().as_uri(), wait_until="load")
            top = 0
            if args.from_heading:
                top = page.locator("h2", has_text=args.from_heading).first.bounding_box()["y"] - 8
            page.screenshot(path=str(args.png), full_page=True,
                            clip={"x": 0, "y": top, "width": args.width, "height": args.height})
        finally:
            browser.close()
    print(f"{args.png}: {args.png.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
