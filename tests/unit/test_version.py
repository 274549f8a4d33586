"""The version names the code (disklab/__init__.py): in a clone, the commit it is at now, as setuptools-scm writes
it; a tag where there is one; the build's version file where git cannot tell.

Each test runs this tree's disklab from a clone of this repository with the tree committed in it: `python -m
disklab` with the clone's src/ first on the path, so that the clone's checkout is the one disklab looks at.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import disklab

ROOT = Path(__file__).parents[2]
GIT = ("git", "-c", "user.name=disklab tests", "-c", "user.email=tests@disklab.invalid", "-c", "commit.gpgsign=false")
pytestmark = pytest.mark.skipif(not (ROOT / ".git").exists() or shutil.which("git") is None,
                                reason="not a git checkout, or git is not installed")


def git(clone: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(clone), *args], check=True, capture_output=True, text=True,
                          timeout=120).stdout.strip()


@pytest.fixture
def clone(tmp_path) -> Path:
    """A clone without tags, whatever this one has, and this work tree's code and pyproject.toml committed in it."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-tags", str(ROOT), str(clone)], check=True, capture_output=True,
                   timeout=300)
    shutil.rmtree(clone / "src")
    shutil.copytree(ROOT / "src", clone / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info",
                                                                              "_version.py"))
    shutil.copy(ROOT / "pyproject.toml", clone / "pyproject.toml")
    git(clone, "add", "--all")
    git(clone, "commit", "--quiet", "--allow-empty", "-m", "this work tree")
    return clone


def version_of(clone: Path, env: dict[str, str] | None = None) -> str:
    """`disklab --version` of the clone's code, from a folder outside it."""
    result = subprocess.run([sys.executable, "-m", "disklab", "--version"], cwd=clone.parent, capture_output=True,
                            text=True, timeout=120, env={**(env or {"PATH": "/usr/bin:/bin"}),
                                                         "PYTHONPATH": str(clone / "src")})
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout.removeprefix("disklab, version ").strip()


def names_head(version: str, clone: Path) -> bool:
    """0.1.dev138+g04c4963e6: the commit abbreviated as setuptools-scm asks git to (7 hex digits or more)."""
    found = re.search(r"\+g([0-9a-f]{7,40})$", version)
    return found is not None and git(clone, "rev-parse", "HEAD").startswith(found.group(1))


def test_a_clone_without_tags_is_a_dev_version_of_its_commit_and_a_tagged_one_its_tag(clone):
    version = version_of(clone)
    assert version.startswith(f"0.1.dev{git(clone, 'rev-list', '--count', 'HEAD')}+g") and names_head(version, clone)
    git(clone, "tag", "v1.2.3")
    assert version_of(clone) == "1.2.3"


def test_the_version_follows_the_commit_the_clone_is_at_and_says_when_its_tree_has_changes(clone):
    before = version_of(clone)
    (clone / "README.md").write_text("changed\n")
    dirty = version_of(clone)
    assert re.fullmatch(re.escape(before) + r"\.d\d{8}", dirty), dirty  # the date of the changes
    git(clone, "commit", "--quiet", "--all", "-m", "a change")
    after = version_of(clone)
    assert after != before and names_head(after, clone)


def test_without_git_the_version_is_the_one_the_build_wrote(clone):
    assert version_of(clone, {"PATH": "/nonexistent"}) == disklab.UNKNOWN, "no build: nothing to say but that"
    (clone / "src" / "disklab" / "_version.py").write_text("version = '0.1.dev5+gabc1234'\n")
    assert version_of(clone, {"PATH": "/nonexistent"}) == "0.1.dev5+gabc1234"

