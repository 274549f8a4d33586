"""The README a newcomer follows and the manual in docs/ behind it: the README a short front page (quick start first,
a picture, the methods, a link to every page), links and anchors that resolve across the pages, methods called by
their names, and size examples that disklab reads as written."""

import re
from pathlib import Path

from disklab.cli.main import cli

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
PAGES = sorted((ROOT / "docs").glob("*.md"))
MAX_README_LINES = 300
METHOD_NAMES = {"M1": "device matrix", "M2": "array", "M3": "SSD review", "M4": "NVMe in a NAS", "M5": "database pattern"}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def outside_code(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


def headings(text: str, levels: str = "1,6") -> list[str]:
    return re.findall(rf"^#{{{levels}}} (.+)$", outside_code(text), re.M)


def section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def test_the_readme_is_a_front_page():
    text = README.read_text()
    assert len(text.splitlines()) < MAX_README_LINES
    linked = {(README.parent / target).resolve() for target in re.findall(r"\]\((docs/[^)#]+\.md)", text)}
    assert set(PAGES) <= linked, set(PAGES) - linked  # every page of the manual is reachable from the front page


def test_quick_start_comes_first_with_real_commands_output_and_a_picture():
    readme = README.read_text()
    assert readme.index("## Quick start") == readme.index("## ")  # the first section
    quick_start = section(readme, "Quick start")
    commands = re.search(r"```\n(.*?)```", quick_start, re.S).group(1).splitlines()
    assert len(commands) <= 12 and commands[:2] == [line for line in commands if line.startswith("make")]
    assert commands[0].startswith("make demo") and commands[1].startswith("make test")  # the README's two commands
    used = {line.split()[1] for line in commands if line.startswith("disklab ")}
    assert {"run", "show", "compare", "report"} <= used <= set(cli.list_commands(None))
    assert "stored as run 1 in" in quick_start  # real output, pasted
    assert "![" in quick_start and "docs/report.png" in quick_start


def test_the_readmes_contents_list_every_section():
    readme = README.read_text()
    listed = set(re.findall(r"\]\(#([^)]+)\)", section(readme, "Contents")))
    assert {slug(text) for text in headings(readme, "2,3") if text != "Contents"} <= listed


def test_every_link_and_anchor_resolves_across_the_readme_and_docs():
    for page in [README, *PAGES]:
        text = page.read_text()
        for target, anchor in re.findall(r"\]\((?!https?:|mailto:)([^)#\s]*)(?:#([^)\s]+))?\)", outside_code(text)):
            path = (page.parent / target).resolve() if target else page
            assert path.exists(), (page.name, target)
            if anchor:
                assert anchor in {slug(h) for h in headings(path.read_text())}, (page.name, target, anchor)


def test_every_method_number_is_said_with_its_name():
    for page in [README, *PAGES]:
        text = " ".join(page.read_text().split())  # lines wrap anywhere
        for match in re.finditer(r"(?<!to )\b(M[1-5])\b(?! to M)", text):  # "M1 to M5" names the range
            near = text[max(0, match.start() - 40):match.end() + 80].lower()
            assert METHOD_NAMES[match.group(1)].lower() in near, (page.name, near)


def test_the_size_units_table_matches_disklabs_parser():
    from disklab.units import parse_size

    running = (ROOT / "docs" / "running.md").read_text()
    for written, expected in (("4k", 4096), ("1GiB", 2**30), ("5GB", 5 * 10**9), ("512b", 512), ("1.5k", 1536)):
        assert parse_size(written) == expected
        assert f"`{written}`" in running


def test_every_test_a_page_names_exists():
    """A table that names its tests (docs/targets.md: `check_safety.py::check_...`) names ones that are there."""
    functions = {f"{path.name}::{name}" for path in (ROOT / "tests").rglob("*.py")
                 for name in re.findall(r"^def ((?:test|check)_\w+)", path.read_text(), re.M)}
    named = {name for page in PAGES for name in re.findall(r"`([\w/]+\.py::\w+)(?:\[[\w-]+\])?`", page.read_text())}
    assert named, "no page names a test: the pattern no longer matches how they are named"
    assert sorted(name.rpartition("/")[2] for name in named if name.rpartition("/")[2] not in functions) == []
