"""`disklab report`: stored runs as one self-contained HTML file, tables and charts, readable offline and in print."""

from pathlib import Path

import click

from disklab.cli.common import open_store, write_output
from disklab.cli.completion import complete_run
from disklab.cli.spec import spec_option, with_spec
from disklab.errors import UserError
from disklab.report.html.model import build_report
from disklab.report.html.render import render_html
from disklab.store.db import now_iso
from disklab.store.series import resolve_refs


@click.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1, shell_complete=complete_run)
@click.option("--output", "-o",
              help="Write to FILE ('-' for stdout; default: disklab-report-run12-15.html for runs 12 and 15).")
@spec_option
@click.pass_context
def report(ctx, run_refs, output, spec):
    """Write RUNs (numbers, 'last', 'last~N' or series:RUN; default: last) as one HTML report with tables and charts."""
    with open_store(ctx) as store:
        run_ids = list(dict.fromkeys(resolve_refs(store, run_refs or ("last",))))
        records = [with_spec(store.get_run(run_id), spec) for run_id in run_ids]
    output = output or f"disklab-report-run{'-'.join(str(i) for i in run_ids)}.html"
    if output != "-" and not Path(output).parent.is_dir():
        raise UserError(f"cannot write {output}: the directory {Path(output).parent} does not exist")
    html = render_html(build_report(records, generated_at=now_iso()))
    try:
        write_output(html, output)
    except OSError as exc:
        raise UserError(f"cannot write {output}: {exc.strerror}") from exc
