"""The `disklab` command group: options shared by every command, and errors mapped to one line and an exit code."""

import sys
import traceback
from pathlib import Path

import click

from disklab import __version__
from disklab.errors import DisklabError

EXIT_INTERRUPTED = 130
EXIT_INTERNAL = 70


class DisklabGroup(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DisklabError as exc:
            _report(ctx, f"disklab: error: {exc}")
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            _report(ctx, "disklab: interrupted")
            ctx.exit(EXIT_INTERRUPTED)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:  # the promise: never a traceback unless --debug
            _report(ctx, f"disklab: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
            ctx.exit(EXIT_INTERNAL)


def _report(ctx: click.Context, line: str) -> None:
    if ctx.obj and ctx.obj.get("debug"):
        traceback.print_exc()
    click.echo(line, err=True)


@click.group(cls=DisklabGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="disklab")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), envvar="DISKLAB_DB",
              help="Results store (default: $DISKLAB_HOME/results.db or ~/.local/share/disklab/results.db).")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, db: Path | None, debug: bool) -> None:
    """Storage benchmarks driven by fio, with every result kept for later.

    Exit codes: 0 success, 1 run failed, 2 bad input, 3 refused for safety,
    4 fio missing or failed, 5 results store unusable, 6 PostgreSQL or pgbench
    missing or failed, 130 interrupted.
    """
    ctx.obj = {"db": db, "debug": debug}


from disklab.cli import capacity, compare, doctor, export, hosts, importer, report, run, show, suites  # noqa: E402  (commands need the group's helpers first)

for command in (run.run, run.resume, show.runs, show.show, suites.suites, export.export, doctor.doctor, compare.compare,
                importer.import_run, report.report, capacity.capacity, hosts.hosts):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="disklab")


if __name__ == "__main__":
    sys.exit(main())
