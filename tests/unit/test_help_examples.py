"""Every command's `--help` ends with a few examples, and each example is a command line the CLI accepts: its
command exists and click parses its options and arguments (values through their converters), without running it.
`run --help` names every built-in suite."""

import shlex

import click
import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.suite.loader import builtin_names


def commands(command: click.Command = cli, path: tuple[str, ...] = ()):
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from commands(command.get_command(ctx, name), path + (name,))


def examples(path: tuple[str, ...]) -> list[str]:
    result = CliRunner().invoke(cli, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    tail = result.output.rstrip("\n").rsplit("\n  Examples:\n", 1)
    assert len(tail) == 2, f"'disklab {' '.join(path)} --help' does not end with examples"
    return [line.strip() for line in tail[1].splitlines()]


@pytest.mark.parametrize("path", [path for path, _ in commands()], ids=lambda path: " ".join(path) or "disklab")
def test_help_ends_with_examples_the_cli_accepts(path):
    lines = examples(path)
    assert 2 <= len(lines) <= 4, lines
    for line in lines:
        words = shlex.split(line, comments=True)
        words = words[1:] if words[0] == "sudo" else words
        assert words[0] == "disklab", line
        command, ctx, args = cli, None, words[1:]
        while isinstance(command, click.Group) and args and not args[0].startswith("-"):
            ctx = click.Context(command, info_name=command.name, parent=ctx)
            command, args = command.get_command(ctx, args[0]), args[1:]
            assert command is not None, line
        with command.make_context(command.name, list(args), parent=ctx):  # raises on an unknown option or value
            pass


def test_run_help_names_every_built_in_suite():
    result = CliRunner().invoke(cli, ["run", "--help"], terminal_width=1000)
    listed = result.output.split("Built-in suites")[1].split("Examples:")[0]
    assert {name.strip(" .\n") for name in listed.split(":", 1)[1].split(",")} == set(builtin_names())
