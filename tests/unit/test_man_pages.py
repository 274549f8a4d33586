"""The man pages (scripts/man.py, run by the build and by `make man`): a page for every command, each naming every
option the CLI has, its examples and the pages around it, read by groff without a warning; and a wheel built from the
source installs them into share/man/man1."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import click
import pytest

from disklab.cli.main import cli

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "scripts" / "man.py"


def commands(command: click.Command, words: tuple[str, ...] = ("disklab",)):
    """Every command of the CLI with its page name and its words (`export-run` is one), through the lazily loaded
    groups too."""
    yield "-".join(words), command, words
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=words[-1])
        for name in command.list_commands(ctx):
            yield from commands(command.get_command(ctx, name), (*words, name))


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("man")
    (folder / "disklab-gone.1").write_text("a page of a command that no longer exists")
    subprocess.run([sys.executable, str(SCRIPT), str(folder)], check=True, capture_output=True, timeout=120)
    return folder


def rendered(page: Path) -> str:
    """The page as `man` shows it, in plain ASCII (no overstriking), with groff's warnings on stderr."""
    # Lines long enough and no hyphenation, so that no name is split across lines.
    result = subprocess.run(["groff", "-man", "-ww", "-Tascii", "-P", "-cbou", "-rLL=1000n", "-rHY=0", str(page)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout


def test_one_page_per_command_and_no_other(pages):
    expected = {f"{path}.1" for path, _, _ in commands(cli)}
    assert {"disklab.1", "disklab-run.1", "disklab-capacity-show.1", "disklab-hosts-serve.1"} <= expected
    assert {p.name for p in pages.glob("*.1")} == expected


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff (Debian's groff-base, which man-db needs) is missing")
def test_every_page_names_its_command_every_option_its_examples_and_the_pages_around_it(pages):
    for path, command, words in commands(cli):
        text = rendered(pages / f"{path}.1")
        assert f"{path} - " in text.split("SYNOPSIS")[0], path  # the NAME line
        assert " ".join(words) in text.split("SYNOPSIS")[1], path  # the synopsis: "disklab capacity show"
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for flag in param.opts + param.secondary_opts:
                    assert flag in text, (path, flag)
        examples = text.split("\nEXAMPLES\n")[1].split("\nSEE ALSO\n")[0]
        assert [line for line in examples.splitlines() if line.strip()], path
        assert all(line.strip().startswith(("disklab ", "sudo disklab ")) for line in examples.splitlines()
                   if line.strip()), (path, examples)
        see_also = text.split("\nSEE ALSO\n")[1]
        parent = "-".join(words[:-1])
        assert "fio(1)" in see_also and (path == "disklab" or f"{parent}(1)" in see_also), (path, see_also)
        if isinstance(command, click.Group):
            for name in command.list_commands(click.Context(command)):
                assert f"{path}-{name}(1)" in text, (path, name)  # the group's page points to each command's


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is missing")
def test_run_page_lists_the_built_in_suites(pages):
    from disklab.suite.loader import builtin_names

    description = rendered(pages / "disklab-run.1").split("\nDESCRIPTION\n")[1].split("\nOPTIONS\n")[0]
    assert all(name in description for name in builtin_names())


@pytest.mark.integration
def test_a_wheel_built_from_the_source_installs_the_pages(tmp_path):
    """What `pip install .` does, without the network: the build runs setup.py, which writes the pages from the CLI
    and lists them as data files for share/man/man1 (a copy of the tree, so that the checkout gets no build/)."""
    tree = tmp_path / "tree"
    for name in ("src", "scripts", "setup.py", "pyproject.toml", "README.md", "MANIFEST.in"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, tree / name, **({"ignore": shutil.ignore_patterns("*.egg-info", "__pycache__")}
                                          if (ROOT / name).is_dir() else {}))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q", "-w",
                    str(tmp_path / "dist"), str(tree)], check=True, capture_output=True, timeout=300)
    (wheel,) = (tmp_path / "dist").glob("disklab-*.whl")
    installed = {Path(name).name for name in zipfile.ZipFile(wheel).namelist() if "/data/share/man/man1/" in name}
    assert installed == {f"{path}.1" for path, _, _ in commands(cli)}
