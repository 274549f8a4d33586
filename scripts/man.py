"""Write disklab's man pages, one per command (disklab.1, disklab-run.1, disklab-capacity-show.1 ...), from the CLI itself.

Each page is what `--help` says, in roff: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, COMMANDS (of a group), EXAMPLES (the
epilog's), SEE ALSO. It needs only click and disklab's own modules, so that the build (setup.py) writes the pages
that `pip install .` installs into share/man/man1; `make man` writes them to docs/man. Usage: man.py OUTDIR
"""

import inspect
import os
import re
import sys
import time
from pathlib import Path

import click

SOURCE = Path(__file__).resolve().parents[1] / "src"
if str(SOURCE) not in sys.path:  # the build imports the CLI from the source tree, before it is installed
    sys.path.insert(0, str(SOURCE))

import disklab  # noqa: E402
from disklab.cli.main import cli  # noqa: E402

SUMMARY_CHARS = 150  # a NAME line and a group's list of commands have room for a whole first sentence


def commands(command: click.Command, path: tuple[str, ...] = ("disklab",), parent: click.Context | None = None):
    """Every command with its words ('disklab', 'capacity', 'show') and context, through the lazily loaded groups."""
    ctx = click.Context(command, info_name=path[-1], parent=parent, **command.context_settings)
    yield path, command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            yield from commands(command.get_command(ctx, name), path + (name,), ctx)


def roff(text: str) -> str:
    """Text as roff reads it literally: backslashes, minus signs (options stay '-' in every output) and non-ASCII
    characters escaped, a line starting with a control character made plain text."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return "\n".join("\\&" + line if line.startswith((".", "'")) else line for line in text.split("\n"))


def paragraphs(text: str) -> list[str]:
    """Click's help text as roff paragraphs: a '\\b' paragraph kept as written, the others filled by roff."""
    out = []
    for block in re.split(r"\n\s*\n", inspect.cleandoc(text).strip()):
        if block.startswith("\b"):
            out.append(".nf\n" + roff(block.lstrip("\b").strip("\n")) + "\n.fi")
        else:
            out.append(roff(" ".join(line.strip() for line in block.splitlines())))
    return out


def epilog(command: click.Command, ctx: click.Context) -> tuple[list[str], list[str]]:
    """What `--help` prints after the options, as the command formats it (run's adds the built-in suites): the
    paragraphs before 'Examples:', and the example lines."""
    formatter = click.HelpFormatter(width=10_000)
    command.format_epilog(ctx, formatter)
    text = inspect.cleandoc(formatter.getvalue())
    before, _, lines = text.partition("Examples:")
    return ([roff(p.strip()) for p in re.split(r"\n\s*\n", before) if p.strip()],
            [line.strip() for line in lines.splitlines() if line.strip()])


def page(path: tuple[str, ...], command: click.Command, ctx: click.Context, date: str) -> str:
    name = "-".join(path)
    lines = [f'.TH "{name.upper()}" "1" "{date}" "disklab {disklab.version()}" "disklab manual"',
             ".nh", ".ad l",  # no word split, no stretched spaces: names and options stay as typed
             ".SH NAME", f"{roff(name)} \\- {roff(command.get_short_help_str(limit=SUMMARY_CHARS))}",
             ".SH SYNOPSIS", f".B {roff(' '.join(path))}", roff(" ".join(command.collect_usage_pieces(ctx)))]
    notes, examples = epilog(command, ctx)
    description = paragraphs(command.help or "") + notes
    if description:
        lines += [".SH DESCRIPTION", "\n.PP\n".join(description)]
    records = [r for p in command.get_params(ctx) if isinstance(p, click.Option) and (r := p.get_help_record(ctx))]
    if records:
        lines.append(".SH OPTIONS")
        for flags, help_text in records:
            lines += [".TP", f"\\fB{roff(flags)}\\fR", roff(help_text)]
    children = []
    if isinstance(command, click.Group):
        lines.append(".SH COMMANDS")
        for child in command.list_commands(ctx):
            sub = command.get_command(ctx, child)
            children.append(f"{name}-{child}")
            lines += [".TP", f"\\fB{roff(children[-1])}\\fR(1)", roff(sub.get_short_help_str(limit=SUMMARY_CHARS))]
    if examples:
        lines += [".SH EXAMPLES", ".nf", ".RS 4", *map(roff, examples), ".RE", ".fi"]
    see = ["-".join(path[:i]) for i in range(1, len(path))] + children
    lines += [".SH SEE ALSO", ", ".join(f"\\fB{roff(s)}\\fR(1)" for s in see + ["fio"]),
              ".PP", roff("The manual, one page per topic: docs/ in disklab's source tree, linked from its README.md.")]
    return "\n".join(lines) + "\n"


def write_pages(outdir: Path) -> list[Path]:
    """The pages written into OUTDIR, every other disklab*.1 there removed (a command that is gone leaves no page)."""
    outdir.mkdir(parents=True, exist_ok=True)
    date = time.strftime("%Y-%m-%d", time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))))
    pages = {f"{'-'.join(path)}.1": page(path, command, ctx, date) for path, command, ctx in commands(cli)}
    for old in outdir.glob("disklab*.1"):
        if old.name not in pages:
            old.unlink()
    for filename, text in pages.items():
        (outdir / filename).write_text(text)
    return sorted(outdir / filename for filename in pages)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: man.py OUTDIR")
    print(f"{len(write_pages(Path(sys.argv[1])))} man pages written to {sys.argv[1]}", file=sys.stderr)
