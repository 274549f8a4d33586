"""`disklab runs`: the stored runs, newest first, filtered and paged; it reads the runs table and nothing else."""

import re
from datetime import datetime, timedelta, timezone

import click
from rich.table import Table

from disklab.cli.common import converter, open_store, stdout_console, write_output
from disklab.cli.helptext import examples
from disklab.report.runs import FORMATS, RUNS_EXPORTERS, RUNS_HEADINGS, run_cells
from disklab.report.terminal import terminal_text
from disklab.store.filters import RUN_STATUSES, RunFilter

DEFAULT_RUNS_SHOWN = 20
_AGO = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str) -> str:
    """'2026-11-01', an ISO time (UTC unless it says otherwise) or '7d' / '12h' / '30m' / '2w' ago, as stored."""
    ago = re.fullmatch(r"(\d{1,6})([mhdw])", text.strip())
    try:
        if ago:
            moment = datetime.now(timezone.utc) - timedelta(**{_AGO[ago[2]]: int(ago[1])})
        else:
            moment = datetime.fromisoformat(text.strip())
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
        return moment.astimezone(timezone.utc).isoformat(timespec="seconds")
    except (ValueError, OverflowError):
        raise ValueError(f"{text!r} is not a time: use a date (2026-11-01), an ISO time (2026-11-01T08:00, UTC "
                         "unless it has an offset) or an age such as 7d, 12h, 30m, 2w") from None


def _utf8(text: str) -> str:
    """Stored names are UTF-8: bytes that are not (a mistyped argument) would match nothing, so say so."""
    try:
        text.encode()
    except UnicodeEncodeError:
        raise ValueError(f"{text!r} is not UTF-8 text") from None
    return text


@click.command(epilog=examples(
    "disklab runs --suite quick --since 7d",
    "disklab runs --name array --status complete    # names that contain 'array', any case",
    "disklab runs --host lab-07 --user alice        # a shared store: one machine's runs, one user's",
    "disklab runs --all -f csv -o runs.csv"))
@click.option("--limit", "-n", type=click.IntRange(min=1),
              help=f"Show the newest N runs (default {DEFAULT_RUNS_SHOWN}).")
@click.option("--all", "show_all", is_flag=True, help="Show every run that matches.")
@click.option("--suite", callback=converter(_utf8), help="Only runs of this suite (its name).")
@click.option("--target", callback=converter(_utf8), help="Only runs on this target (as given to run, or as listed).")
@click.option("--host", callback=converter(_utf8),
              help="Only runs made on this machine (its name as listed), or with a test on this fio server.")
@click.option("--user", callback=converter(_utf8), help="Only runs this user made (the login name; sudo's user).")
@click.option("--since", callback=converter(parse_since), metavar="WHEN",
              help="Only runs started then or later: a date, an ISO time (UTC unless it has an offset), or 7d, 12h ...")
@click.option("--name", callback=converter(_utf8), help="Only runs whose name contains this text (any case).")
@click.option("--status", type=click.Choice(RUN_STATUSES), help="Only runs in this state.")
@click.option("--format", "-f", "output_format", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--output", "-o", help="Write to FILE ('-' for stdout, the default).")
@click.pass_context
def runs(ctx, limit, show_all, suite, target, host, user, since, name, status, output_format, output):
    """List stored runs, newest first; how many matched is said under the list."""
    if show_all and limit:
        raise click.UsageError("--all and --limit exclude each other")
    if output_format == "table" and output not in (None, "-"):
        raise click.UsageError("a table goes to the terminal; use --format json, csv or markdown with --output")
    targets = _as_given_and_absolute(target) if target else ()
    where = RunFilter(suite=suite, targets=targets, host=host, user=user, since=since, name=name, status=status)
    wanted = None if show_all else limit or DEFAULT_RUNS_SHOWN
    with open_store(ctx) as store:
        infos = store.list_runs(wanted, where)
        # A list shorter than asked for holds every match.
        matched = len(infos) if wanted is None or len(infos) < wanted else store.count_runs(where)
    filtered = where != RunFilter()
    if output_format != "table":
        write_output(RUNS_EXPORTERS[output_format](infos, matched), output)
        if len(infos) < matched:
            click.echo(_counted(len(infos), matched, filtered), err=True)
        return
    if not infos:
        click.echo("no stored run matches" if filtered else f"no runs stored yet in {terminal_text(store.name)}; "
                   "start one with 'disklab run quick --target DIR'")
        return
    table = Table()
    for heading in RUNS_HEADINGS:
        table.add_column(heading)
    for info in infos:
        table.add_row(*run_cells(info))
    stdout_console().print(table)
    click.echo(_counted(len(infos), matched, filtered))


def _as_given_and_absolute(target: str) -> tuple[str, ...]:
    """A target as typed and as run stored it; the targets package (sysfs, mounts) loads only for --target."""
    from disklab.targets.target import absolute_path

    return tuple(dict.fromkeys((target, str(absolute_path(target)))))


def _counted(shown: int, matched: int, filtered: bool) -> str:
    """'20 of 10,000 runs; --all or --limit N for more' under a list that is cut short."""
    runs = f"{'matching ' if filtered else ''}run{'' if matched == 1 else 's'}"
    if shown == matched:
        return f"{matched:,} {runs}"
    return f"{shown:,} of {matched:,} {runs}; --all or --limit N for more"
