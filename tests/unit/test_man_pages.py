"""`make man` (scripts/man.py): a man page for every command, each naming every option the CLI has, read by groff."""

import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from disklab.cli.main import cli

SCRIPT = Path(__file__).parents[2] / "scripts" / "man.py"


def commands(command: click.Command, path: str = "disklab"):
    """Every command of the CLI with its page name, through the lazily loaded groups too."""
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path)
        for name in command.list_commands(ctx):
            yield from commands(command.get_command(ctx, name), f"{path}-{name}")


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
    expected = {f"{path}.1" for path, _ in commands(cli)}
    assert {"disklab.1", "disklab-run.1", "disklab-capacity-show.1", "disklab-hosts-serve.1"} <= expected
    assert {p.name for p in pages.glob("*.1")} == expected


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff (Debian's groff-base, which man-db needs) is missing")
def test_every_page_names_its_command_and_every_option(pages):
    for path, command in commands(cli):
        text = rendered(pages / f"{path}.1")
        assert f"{path} - " in text.split("SYNOPSIS")[0], path  # the NAME line
        assert " ".join(path.split("-")) in text.split("SYNOPSIS")[1], path  # the synopsis: "disklab capacity show"
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for flag in param.opts + param.secondary_opts:
                    assert flag in text, (path, flag)
        if isinstance(command, click.Group):
            for name in command.list_commands(click.Context(command)):
                assert f"{path}-{name}(1)" in text, (path, name)  # the group's page points to each command's
