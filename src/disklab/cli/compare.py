"""`disklab compare`: stored runs side by side, each figure marked better, worse, within noise or inconclusive."""

import click

from disklab.analysis.compare import compare_runs
from disklab.analysis.overprovision import spare_area_levels
from disklab.analysis.verdict import DEFAULT_TOLERANCE_PERCENT
from disklab.capacity.measured_render import as_data, renderables
from disklab.capacity.member_runs import held_to_members
from disklab.cli.common import converter, open_store, stdout_console, write_output
from disklab.cli.completion import complete_run
from disklab.cli.helptext import examples
from disklab.errors import UserError
from disklab.report.choices import metric_names
from disklab.report.compare import EXPORTERS, FORMATS, compare_renderables, refusal_text, shown, to_json
from disklab.report.labels import run_labels
from disklab.report.metrics import REGISTRY
from disklab.report.spare_area import spare_area_renderables, spare_area_table
from disklab.units import parse_percent
from disklab.store.series import resolve_refs


def parse_tolerance(text: str) -> float:
    try:
        return parse_percent(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a tolerance: a percentage above 0 and below 100, with its unit, "
                         "e.g. 10%") from None


@click.command(epilog=examples(
    "disklab compare 12 15 19                     # side by side, baseline = the first",
    "disklab compare last~1 last --only-changed   # leave out the rows within noise",
    "disklab compare 15 19 --baseline 12 --tolerance 5% --format markdown -o compare.md",
    "disklab compare series:last --member 11        # arrays beside the planner's prediction from run 11's member"))
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True, shell_complete=complete_run)
@click.option("--baseline", "-b", metavar="RUN",
              help="The run the others are judged against (default: the first RUN; added when not among them).")
@click.option("--only-changed", is_flag=True,
              help="Leave out the rows within noise: keep those better, worse or inconclusive.")
@click.option("--tolerance", callback=converter(parse_tolerance), default=f"{DEFAULT_TOLERANCE_PERCENT:g}%",
              show_default=True, metavar="PERCENT",
              help="The least difference that counts; up to this much is within noise (inconclusive if a "
                   "repeated figure's 95 % interval is wider). One disk varies 5 % or more from run to run; with "
                   "repeats (run --repeat 3) a larger difference must also clear the figures' 95 % intervals, or "
                   "the verdict is inconclusive.")
@click.option("--metrics", callback=converter(metric_names), metavar="LIST",
              help=f"Only the rows of these metrics (comma-separated): {', '.join(REGISTRY)}; the overview and the "
                   "ranking still weigh every test's throughput.")
@click.option("--member", metavar="RUN",
              help="Runs on arrays (run --array): the run of one member alone that the planner predicts each array "
                   "from (default: the latest run of the same suite on one of the array's members).")
@click.option("--format", "-f", "output_format", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--output", "-o", help="Write to FILE ('-' for stdout, the default).")
@click.pass_context
def compare(ctx, run_refs, baseline, only_changed, tolerance, metrics, member, output_format, output):
    """Compare stored runs (numbers, 'last', 'last~N', series:RUN for a series' runs), test by test: each run's figures, the ratio to the baseline
    and a verdict the figures' spread supports; where the leading run changes along a swept parameter; differences
    of environment."""
    with open_store(ctx) as store:
        ids = resolve_refs(store, run_refs)
        if baseline is not None:
            first = store.resolve_run_id(baseline)
            ids = [first] + [i for i in ids if i != first]
        if len(set(ids)) != len(ids):
            raise UserError(f"a run is named twice: {' '.join(map(str, ids))}")
        if len(ids) < 2:
            raise UserError("compare needs at least two runs, e.g. 'disklab compare last~1 last'")
        records = store.get_runs(ids)
        held = held_to_members(store, records, member)
    comparison = compare_runs(records, tolerance)
    if not comparison.rows and comparison.refused:
        labels = run_labels(comparison.runs)
        part = next((r for r in comparison.refused if r.part_of), comparison.refused[0])
        raise UserError(f"runs {', '.join(map(str, ids))}: nothing to compare; "
                        + refusal_text(part, labels).removeprefix("not compared, "))
    empty = [r.info for r in records if not any(t.metrics for t in r.tests)]
    if not comparison.rows and empty:
        raise UserError(f"runs {', '.join(map(str, ids))}: nothing to compare: " + "; ".join(
            f"run {info.id} {info.status}" + (f" ({info.error})" if info.error else "") + " and holds no figures"
            for info in empty))
    if not comparison.rows:
        raise UserError(f"runs {', '.join(map(str, ids))} have no test in common (tests match by their parameters: "
                        "pattern, direction, block size, queue depth, jobs ...)")
    view = shown(comparison, only_changed, metrics or ())
    if output_format == "table":
        if output not in (None, "-"):
            raise click.UsageError("a table goes to the terminal; use --format json, csv or markdown with --output")
        levels = spare_area_levels(records, tolerance)
        if len(levels) > 1:  # an over-provisioning series: its levels' steady state first
            for item in spare_area_renderables(spare_area_table(levels, tolerance)):
                stdout_console().print(item)
        for item in compare_renderables(view) + (renderables(held) if held else []):
            stdout_console().print(item)
    elif output_format == "json":
        write_output(to_json(view, as_data(held) if held else None), output)
    else:
        write_output(EXPORTERS[output_format](view), output)
