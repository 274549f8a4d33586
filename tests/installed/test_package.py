"""What the sdist and the wheel hold, and what installing the wheel puts where a user looks: every file of the
package's source (code, templates, scripts, suites, data), the man pages, the version of the commit built, the
completion a shell asks for and every command's help."""

import shutil
import subprocess
import tarfile
import zipfile

import pytest

import disklab
from disklab.cli.main import cli
from tests.installed.conftest import ROOT
from tests.unit.test_man_pages import commands

pytestmark = pytest.mark.installed
SOURCE = ROOT / "src" / "disklab"


def package_source() -> set[str]:
    """Every file of the package as the tree has it (what the code opens from its own folder too), by its path in
    the package, less Python's caches."""
    return {path.relative_to(SOURCE.parent).as_posix() for path in SOURCE.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts}


def test_every_file_of_the_package_is_in_the_sdist_and_in_the_wheel(built):
    """A data file the package-data globs miss (downloads.js was) makes report, publish and serve fail installed."""
    with tarfile.open(built.sdist) as sdist:
        members = [name.split("/", 2) for name in sdist.getnames()]  # disklab-VERSION, src, disklab/...
    in_sdist = {parts[2] for parts in members if len(parts) == 3 and parts[1] == "src"}
    with zipfile.ZipFile(built.wheel) as wheel:
        in_wheel = {name for name in wheel.namelist() if name.startswith("disklab/")}
    source = package_source()
    assert "disklab/report/html/downloads.js" in source
    assert sorted(source - in_sdist) == [], "in the tree but not in the sdist: untracked by git, or not in package-data"
    assert sorted(source - in_wheel) == [], "in the tree but not in the wheel: pyproject.toml's package-data"
    assert "disklab/_version.py" in in_wheel, "the version an installed disklab reads (setuptools-scm's version_file)"


def test_the_man_pages_are_installed_where_man_finds_them(installed):
    pages = installed.venv / "share" / "man" / "man1"
    assert {page.name for page in pages.glob("*.1")} == {f"{path}.1" for path, _, _ in commands(cli)}
    if shutil.which("man"):  # man looks in share/man beside each folder of PATH
        found = subprocess.run(["man", "-w", "disklab-run"], env={**installed.env, "MANPATH": ""},
                               capture_output=True, text=True, timeout=60)
        assert found.stdout.strip() == str(pages / "disklab-run.1"), found.stderr


def test_the_version_is_the_commit_it_was_built_from_read_from_the_build_s_file(installed, version):
    """The build's copy of this tree had its .git: the same commit, and the same changes if any. The venv has no
    setuptools-scm: the version comes from disklab/_version.py."""
    assert version == disklab.version()
    assert not list(installed.venv.glob("lib/*/site-packages/setuptools_scm"))


def test_a_shell_gets_its_completion_from_the_installed_command(installed):
    """disklab ships no completion files: the shell asks the command (docs/installing.md, "Shell completion")."""
    script = installed(env={**installed.env, "_DISKLAB_COMPLETE": "bash_source"}).stdout
    assert "_disklab_completion()" in script and "_DISKLAB_COMPLETE=bash_complete" in script
    offered = installed(env={**installed.env, "_DISKLAB_COMPLETE": "bash_complete", "COMP_WORDS": "disklab ru",
                             "COMP_CWORD": "1"}).stdout.split()
    assert offered == ["plain,run", "plain,runs"]
    suites = installed(env={**installed.env, "_DISKLAB_COMPLETE": "bash_complete", "COMP_WORDS": "disklab run qu",
                            "COMP_CWORD": "2"}).stdout.split()
    assert "plain,quick" in suites  # the built-in suites, read from the package's data


def test_every_command_answers_help(installed):
    words = [w for _, _, w in commands(cli)]
    answers = installed.each(*((*command[1:], "--help") for command in words))
    for command, answer in zip(words, answers):
        assert answer.stdout.startswith(f"Usage: {' '.join(command)} "), answer.stdout[:200]
        assert "Examples:" in answer.stdout, command
