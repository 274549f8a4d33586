"""Write disklab's man pages, one per command (disklab.1, disklab-run.1, disklab-capacity-show.1 ...), from the CLI itself.

click-man renders them from Click's own help data; `make man` runs this into docs/man/. Usage: man.py OUTDIR
"""

import re
import sys
import tempfile
from functools import partial
from pathlib import Path

import click
from click_man import core

from disklab import __version__
from disklab.cli.main import cli

# click-man cuts each command's summary at 45 characters ("Storage benchmarks driven by fio, with..."); a page's NAME
# line and its list of commands have room for the whole first sentence.
core.get_short_help_str = partial(core.get_short_help_str, limit=150)


def eager(group: click.Group) -> click.Group:
    """disklab loads each command's module only when it runs; click-man walks `group.commands`, so load them all."""
    ctx = click.Context(group, info_name="disklab")
    for name in group.list_commands(ctx):
        group.add_command(group.get_command(ctx, name), name)
    return group


def _page_references(text: str) -> str:
    """click-man refers a nested group's commands as 'disklab capacity-show(1)'; their page is disklab-capacity-show."""
    return re.sub(r"\\fB(disklab [^\\(]*)\(1\)", lambda m: "\\fB" + m.group(1).replace(" ", "-") + "(1)", text)


def main(outdir: str) -> None:
    folder = Path(outdir)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as fresh:  # a CLI that fails to load leaves the old pages as they were
        core.write_man_pages("disklab", eager(cli), version=__version__, target_dir=fresh)
        for old in folder.glob("disklab*.1"):  # a command that is gone leaves no page behind
            old.unlink()
        for page in Path(fresh).glob("disklab*.1"):
            (folder / page.name).write_text(_page_references(page.read_text()))
    print(f"{len(list(folder.glob('disklab*.1')))} man pages written to {folder}", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: man.py OUTDIR")
    main(sys.argv[1])
