"""The README a newcomer follows: quick start first, a table of contents that works, methods called by their names,
and links and pictures that exist."""

import re
from pathlib import Path

from disklab.cli.main import cli

ROOT = Path(__file__).parents[2]
README = (ROOT / "README.md").read_text()
METHOD_NAMES = {"M1": "device matrix", "M2": "array", "M3": "SSD review", "M4": "NVMe in a NAS", "M5": "database pattern"}


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings() -> list[tuple[int, str]]:
    outside_code = re.sub(r"```.*?```", "", README, flags=re.S)
    return [(len(m.group(1)), m.group(2)) for m in re.finditer(r"^(#{2,3}) (.+)$", outside_code, re.M)]


def test_quick_start_comes_first_with_real_commands_output_and_a_picture():
    start = README.index("## Quick start")
    assert start == README.index("## ")  # the first section
    section = README[start:README.index("\n## ", start + 1)]
    commands = re.search(r"```\n(.*?)```", section, re.S).group(1).splitlines()
    assert len(commands) <= 12 and commands[:2] == [line for line in commands if line.startswith("make")]
    assert commands[0].startswith("make demo") and commands[1].startswith("make test")  # the README's two commands
    used = {line.split()[1] for line in commands if line.startswith("disklab ")}
    assert {"run", "show", "compare", "report"} <= used <= set(cli.list_commands(None))
    assert "stored as run 1 in" in section  # real output, pasted
    assert "![" in section and "docs/report.png" in section


def test_table_of_contents_lists_every_section_and_every_anchor_resolves():
    anchors = {slug(text) for _, text in headings()}
    links = set(re.findall(r"\]\(#([^)]+)\)", README))
    assert links <= anchors, links - anchors
    contents = README[README.index("## Contents"):README.index("\n## ", README.index("## Contents") + 1)]
    listed = set(re.findall(r"\]\(#([^)]+)\)", contents))
    assert {slug(text) for _, text in headings() if text != "Contents"} <= listed


def test_local_links_and_pictures_exist():
    for target in re.findall(r"\]\(((?:docs|tests|src|bench|scripts)/[^)#]+)\)", README):
        assert (ROOT / target).exists(), target


def test_every_method_number_is_said_with_its_name():
    text = " ".join(README.split())  # lines wrap anywhere
    for match in re.finditer(r"(?<!to )\b(M[1-5])\b(?! to M)", text):  # "M1 to M5" names the range, not a method
        near = text[max(0, match.start() - 40):match.end() + 80].lower()
        assert METHOD_NAMES[match.group(1)].lower() in near, near


def test_the_size_units_table_matches_disklabs_parser():
    from disklab.units import parse_size

    for written, expected in (("4k", 4096), ("1GiB", 2**30), ("5GB", 5 * 10**9), ("512b", 512), ("1.5k", 1536)):
        assert parse_size(written) == expected
        assert f"`{written}`" in README
