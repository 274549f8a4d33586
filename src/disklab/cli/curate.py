"""`disklab rename` and `disklab delete`: keeping the store's runs named and free of mistakes."""

import sys

import click

from disklab.cli.common import converter, open_store, stderr_console
from disklab.cli.completion import complete_run
from disklab.cli.helptext import examples
from disklab.errors import UserError
from disklab.report.runs import counted_tests
from disklab.store.curation import still_running
from disklab.store.names import run_name
from disklab.store.records import RunInfo
from disklab.store.filters import RunFilter


@click.command(epilog=examples(
    'disklab rename 3 "new array"',
    "disklab rename last \"$(hostname) nightly\"",
    "disklab rename 3 --clear                 # remove the name"))
@click.argument("run_ref", metavar="RUN", shell_complete=complete_run)
@click.argument("name", required=False, callback=converter(run_name))
@click.option("--clear", is_flag=True, help="Remove the run's name (it is then shown as 'run N').")
@click.pass_context
def rename(ctx, run_ref, name, clear):
    """Name RUN (a number, 'last' or 'last~N') NAME, shown in lists, comparisons, charts and legends."""
    if clear == (name is not None):
        raise click.UsageError("give a NAME, or --clear to remove the name" if not clear else
                               "a NAME and --clear exclude each other")
    with open_store(ctx, write=True) as store:
        run_id = store.resolve_run_id(run_ref)
        store.rename_run(run_id, name)
    _say(f"run {run_id} is now named {name!r}" if name else f"run {run_id} has no name now")


@click.command(epilog=examples(
    "disklab delete 4 5           # asks first",
    "disklab delete last --yes    # in scripts"))
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True, shell_complete=complete_run)
@click.option("--yes", "-y", is_flag=True, help="Delete without asking (needed without a terminal, e.g. in scripts).")
@click.pass_context
def delete(ctx, run_refs, yes):
    """Delete RUNs (numbers, 'last' or 'last~N') and everything stored with them; asks first unless --yes."""
    if not yes and not _interactive():
        raise UserError("delete asks for confirmation on a terminal: add --yes to delete without asking")
    with open_store(ctx, write=True) as store:
        run_ids = list(dict.fromkeys(store.resolve_run_id(ref) for ref in run_refs))
        infos = sorted(store.list_runs(None, RunFilter(ids=tuple(run_ids))), key=lambda info: info.id)
        for info in infos:  # the store refuses too, inside its transaction; before asking, it spares a question
            if info.status == "running":
                raise still_running(info.id, info.hostname)
        if not yes:
            for info in infos:
                _say(f"  {_described(info)}")
            them = "it" if len(infos) == 1 else "them"
            if not _confirmed(f"delete {_runs(len(infos))} and everything stored with {them}?"):
                _say("nothing deleted")
                return
        store.delete_runs(run_ids)
        _say(f"deleted {_runs(len(infos))} ({', '.join(str(i) for i in sorted(run_ids))}) from {store.name}")


def _interactive() -> bool:
    """A person can answer: input and the question's output (stderr) are a terminal."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def _confirmed(question: str) -> bool:
    """Yes only when answered yes; no, Ctrl-D and Ctrl-C at the question keep the runs."""
    try:
        return click.confirm(question, err=True)
    except click.Abort:
        click.echo(err=True)  # the answer's line was never ended
        return False


def _described(info: RunInfo) -> str:
    name = f" {info.name!r}" if info.name else ""
    return (f"run {info.id}{name} · {info.suite_name} · {info.shown_target} · {counted_tests(info)} "
            f"· {info.status} · started {info.started_at}")


def _runs(count: int) -> str:
    return f"{count} run{'' if count == 1 else 's'}"


def _say(line: str) -> None:
    stderr_console().print(line, highlight=False)
