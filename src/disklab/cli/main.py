"""The `disklab` command group: options shared by every command, and errors mapped to one line and an exit code."""

import gc
import importlib
import os
import sys
from pathlib import Path

import click

import disklab
from disklab.cli.helptext import examples
from disklab.errors import DisklabError
from disklab.report.terminal import terminal_text

EXIT_INTERRUPTED = 130
EXIT_PIPE_CLOSED = 141  # as a shell reports a program that SIGPIPE ended (128 + 13)
EXIT_INTERNAL = 70


class DisklabGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in _COMMANDS:
            return None
        module, attribute = _COMMANDS[name]
        return getattr(importlib.import_module(module), attribute)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DisklabError as exc:
            _report(ctx, f"disklab: error: {exc}")
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt as exc:  # a run's carries its id and the command that continues it
            _report(ctx, f"disklab: interrupted: {exc}" if str(exc) else "disklab: interrupted")
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # `disklab runs | head`: the reader has all it wants
            _silence_stdout()
            ctx.exit(EXIT_PIPE_CLOSED)
        except (click.exceptions.Exit, click.Abort, click.exceptions.NoArgsIsHelpError):
            raise
        except click.ClickException as exc:
            _report_usage(ctx, exc)
        except Exception as exc:  # the promise: never a traceback unless --debug
            _report(ctx, f"disklab: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
            ctx.exit(EXIT_INTERNAL)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.exceptions.NoArgsIsHelpError:  # 'disklab' alone shows the help
            raise
        except click.UsageError as exc:  # the group's own options (--db) and a missing command
            _report_usage(ctx, exc)


def _silence_stdout() -> None:
    """What is left in Python's buffer would fail again when it is flushed at exit: send it nowhere."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _report(ctx: click.Context, line: str) -> None:
    if ctx.obj and ctx.obj.get("debug"):
        import traceback  # only with --debug: it loads the tokenizer

        traceback.print_exc()
    # One line, even when a message quotes a multi-line value; the controls of a quoted name shown, not obeyed.
    click.echo(" ".join(terminal_text(line, keep_lines=True).splitlines()), err=True)


def _report_usage(ctx: click.Context, exc: click.ClickException) -> None:
    """click's usage errors as one line too, naming the help to read, with click's exit code (2)."""
    where = getattr(exc, "ctx", None) or _innermost_context(exc) or ctx
    hint = f" (see '{where.command_path} --help')" if isinstance(exc, click.UsageError) else ""
    _report(ctx, f"disklab: error: {exc.format_message()}{hint}")
    ctx.exit(exc.exit_code)


def _innermost_context(exc: BaseException) -> click.Context | None:
    """click raises some usage errors (an option missing its value) without the context of the command whose
    arguments it was parsing; that context is the `ctx` of the innermost click frame the error passed through."""
    found, tb = None, exc.__traceback__
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("ctx")
        if isinstance(candidate, click.Context):
            found = candidate
        tb = tb.tb_next
    return found


def _print_version(ctx: click.Context, _: click.Parameter, asked: bool) -> None:
    """click's --version, but with the version worked out only when asked for: it may read git (disklab.version)."""
    if asked and not ctx.resilient_parsing:
        click.echo(f"disklab, version {disklab.version()}")
        ctx.exit()


@click.group(cls=DisklabGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=examples(
    "disklab run quick --target /var/tmp     # CrystalDiskMark's four tests, read and write",
    "disklab compare 1 2                     # better, worse, within noise or inconclusive, test by test",
    "disklab report 1 2 -o report.html       # one offline HTML file: tables and charts"))
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
@click.option("--store", metavar="FILE|URL", envvar="DISKLAB_STORE",
              help="Results store: a SQLite file or a postgresql:// URL a lab shares (default: the config file's "
                   "store line, else $DISKLAB_HOME/results.db or ~/.local/share/disklab/results.db).")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), envvar="DISKLAB_DB",
              help="Results store file (as --store FILE).")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, store: str | None, db: Path | None, debug: bool) -> None:
    """Storage benchmarks driven by fio, with every result kept for later.

    Exit codes: 0 success, 1 run failed (or output written with a part not drawn), 2 bad input, 3 refused for safety,
    4 fio missing or failed, 5 results store unusable, 6 PostgreSQL or pgbench
    missing or failed, 130 interrupted, 141 output pipe closed.
    """
    ctx.obj = {"store": chosen_store(ctx, store, db), "debug": debug}


def chosen_store(ctx: click.Context, store: str | None, db: Path | None) -> Path | str | None:
    """--store or --db, given on the command line before either in the environment; None: the config's or default."""
    from click.core import ParameterSource

    given = [value for name, value in (("store", store), ("db", db))
             if value is not None and ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE]
    if len(given) > 1:
        raise click.UsageError("give --store or --db, not both")
    if db is not None:
        from disklab.store.locations import store_file

        db = store_file(db)
    chosen = given[0] if given else (store if store is not None else db)
    if isinstance(chosen, str):
        from disklab.store.locations import parse_location

        return parse_location(chosen)
    return chosen


# Each command's module is imported only when that command runs (or help lists it): `disklab runs` must not pay
# for what `disklab report` or `disklab capacity` import.
_COMMANDS = {
    "capacity": ("disklab.cli.capacity", "capacity"), "compare": ("disklab.cli.compare", "compare"),
    "capture": ("disklab.cli.capture", "capture_command"),
    "delete": ("disklab.cli.curate", "delete"),
    "doctor": ("disklab.cli.doctor", "doctor"), "export": ("disklab.cli.export", "export"),
    "export-run": ("disklab.cli.bundles", "export_run"),
    "hosts": ("disklab.cli.hosts", "hosts"), "import": ("disklab.cli.importer", "import_run"),
    "note": ("disklab.cli.note", "note"),
    "publish": ("disklab.cli.publish", "publish"), "rename": ("disklab.cli.curate", "rename"),
    "report": ("disklab.cli.report", "report"), "resume": ("disklab.cli.run", "resume"),
    "run": ("disklab.cli.run", "run"), "runs": ("disklab.cli.runs", "runs"), "show": ("disklab.cli.show", "show"),
    "serve": ("disklab.cli.serve", "serve"), "store": ("disklab.cli.bundles", "store_group"),
    "suites": ("disklab.cli.suites", "suites"),
    "trace": ("disklab.cli.trace", "trace"),
}


def main() -> None:
    # A page, a comparison or a report builds tens of thousands of objects the collector tracks and keeps them until it
    # is drawn: at Python's default (a collection of the young ones every 700) they are traversed again and again, and
    # everything the command loaded once more per page (a device's history page at 100,000 runs: 26 of its 200 ms).
    # Collected less often, cycles (rare here) all the same.
    gc.set_threshold(10_000, 10, 10)
    try:
        cli(prog_name="disklab")
    finally:
        # Python's exit collects every object of the hundreds of modules a command loaded, only for the process to end
        # (40-60 ms of a run's overhead here); frozen, they are left to that end. atexit, stdio flushing and closing
        # what the command opened (the store, fio's folder, the test file) happen as before: they never waited on it.
        gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
