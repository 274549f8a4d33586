"""`disklab capacity`: plan arrays before buying: the drive catalogue, layouts, predictions, power and money."""

import tomllib
from pathlib import Path

import click
from rich.table import Table

from disklab.capacity import measured_render, validation, validation_render
from disklab.capacity.calibrate import DriveFacts, fit_drive
from disklab.capacity.catalogue import (
    INTERFACE_BYTES_PER_S, MAX_FIGURE, MIN_FIGURE, drive_from_dict, drive_to_toml, find_drive, load_catalogue,
    user_drive_folder,
)
from disklab.capacity.cost import DEFAULT_PRICE_PER_KWH, DEFAULT_PUE, DEFAULT_YEARS, Money
from disklab.capacity.html import plan_report
from disklab.capacity.layout import DEFAULT_STRIP_BYTES, OPTIONS, parse_layout
from disklab.capacity.member_runs import held_to_members
from disklab.capacity.model import MODEL_NOTE, SAS3_WIDE_PORT_BYTES_PER_S
from disklab.capacity.path import LINKS, PROTOCOLS
from disklab.capacity.planning import DEFAULT_WORKLOADS, plan_arrays, workload_tests
from disklab.capacity.render import DRIVE_HEADINGS, EXPORTERS, FORMATS, drive_rows, renderables
from disklab.cli.common import converter, open_store, stderr_console, stdout_console, write_output
from disklab.cli.helptext import examples
from disklab.errors import UserError
from disklab.report.html.render import render_html
from disklab.store.db import now_iso
from disklab.store.series import resolve_refs
from disklab.system.outputs import checked_output, write_whole
from disklab.units import brief, format_size, parse_size


# The range of each option's figure: beyond any real one, and far from a float's limits once multiplied out.
MIN_LINK_MBPS, MAX_LINK_MBPS = 1.0, 1e7  # 1 MB/s, slower than any storage link; 10 TB/s, a hundred 800GbE links
MAX_ARRAY_WATTS = 1e6
MAX_PRICE_PER_KWH = 1000.0
MAX_PUE = 10.0  # 1 is the ideal (every watt reaches the IT equipment); real data centres run 1.1 to 2


def _number(least: float, most: float, least_allowed: bool = False):
    """A parser of a finite number from `least` (excluded unless `least_allowed`: 0 W or 0 EUR is a typo, not a
    figure) to `most`; 'nan', 'inf' and 1e309 are refused like any other number out of range."""
    def parse(text: str) -> float:
        value = float(text)
        if not (least <= value if least_allowed else least < value) or not value <= most:
            span = f"from {least:g} to {most:g}" if least_allowed else f"above {least:g} and at most {most:g}"
            raise ValueError(f"{brief(text)} is not a number {span}")
        return value
    return parse


def _strip(text: str) -> int:
    size = parse_size(text)
    if size < 512:
        raise ValueError(f"{text!r} is smaller than a sector (512 bytes)")
    return size


def _capacity(text: str) -> int:
    size = parse_size(text)
    if not size:
        raise ValueError("a drive holds more than 0 bytes")
    return size


def _mbps(text: str) -> float:
    """MB/s (10^6 bytes/s) as bytes/s."""
    return _number(MIN_LINK_MBPS, MAX_LINK_MBPS, least_allowed=True)(text) * 1e6


_drive_figure = _number(MIN_FIGURE, MAX_FIGURE, least_allowed=True)  # as a drive file takes it: calibrate writes one


drives_option = click.option(
    "--drives", "drive_files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A drive file (TOML) beside the catalogue and $DISKLAB_HOME/drives/; may be given more than once.")


def _plan_options(command):
    options = (
        click.option("--workload", "-w", "workloads", multiple=True, metavar="SUITE",
                     help=f"Suite (name or file) whose random tests are predicted; more than once for several "
                          f"(default: {' and '.join(DEFAULT_WORKLOADS)}, study M2's sweep and mixed block sizes). "
                          "Costs per 1,000 IOPS use the last test."),
        click.option("--strip", callback=converter(_strip), default=format_size(DEFAULT_STRIP_BYTES),
                     show_default=True, help="Strip per drive of hardware RAID, for layouts without strip=."),
        click.option("--via", default="local", show_default=True, metavar="PROTOCOL:LINK",
                     help="The path from host to array for layouts without via=, e.g. iscsi:25GbE, nfs:10GbE, "
                          f"nvme-tcp:100GbE ({', '.join(PROTOCOLS)}; links {', '.join(l.name for l in LINKS.values())}"
                          "; :jumbo for a 9000-byte MTU)."),
        click.option("--controller-mbps", callback=converter(_mbps), metavar="MB/s",
                     help=f"The controller's link to the drives (default: SAS/SATA drives "
                          f"{SAS3_WIDE_PORT_BYTES_PER_S / 1e6:,.0f}, one SAS3 12G x4 wide port; NVMe none)."),
        click.option("--host-mbps", callback=converter(_mbps), metavar="MB/s",
                     help="The host's link to the array, e.g. 3125 for 25 GbE (default: none)."),
        click.option("--watts", callback=converter(lambda v: tuple(map(_number(0, MAX_ARRAY_WATTS), v))),
                     multiple=True, metavar="W", help="Measured or quoted power of each array in order (default: "
                                                      "the drives' active power from the catalogue)."),
        # Given as text, so that a refusal quotes what was typed (1e309), not the float it became (inf).
        click.option("--price-kwh", type=str, callback=converter(_number(0, MAX_PRICE_PER_KWH)),
                     default=DEFAULT_PRICE_PER_KWH, show_default=True, metavar="EUR",
                     help="Electricity price per kWh (EUR)."),
        click.option("--pue", type=str, callback=converter(_number(1, MAX_PUE, least_allowed=True)),
                     default=DEFAULT_PUE, show_default=True, metavar="N",
                     help="Power usage effectiveness of the data centre (1 to 10)."),
        click.option("--years", type=click.IntRange(1, 50), default=DEFAULT_YEARS, show_default=True,
                     help="Years of operation in the total cost."),
        click.option("--format", "-f", "output_format", type=click.Choice(FORMATS), default="table",
                     show_default=True),
        click.option("--output", "-o", help="Write to FILE ('-' for stdout, the default)."),
        click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
                     help="Also write the plan as an HTML report with charts over block size."),
        drives_option,
    )
    for option in reversed(options):
        command = option(command)
    return command


@click.group(epilog=examples(
    'disklab capacity show "8 x sata-ssd-1.6t raid6"',
    'disklab capacity compare "24 x sas-hdd-10k-2.4t raid10" "8 x sata-ssd-1.6t raid6"',
    'disklab capacity drives'))
def capacity():
    """Plan arrays before buying: capacity, predicted performance, power and cost (a model, not a measurement)."""


@capacity.command(epilog=examples(
    "disklab capacity drives                       # the catalogue",
    "disklab capacity drives sata-ssd-1.6t         # every figure of one drive and where it comes from",
    "disklab capacity drives my-nvme               # a drive 'capacity calibrate' saved"))
@click.argument("name", required=False)
@drives_option
def drives(name, drive_files):
    """The drive catalogue; with NAME, every figure of that drive and where it comes from."""
    catalogue = load_catalogue(drive_files)
    console = stdout_console()
    if name:
        drive = find_drive(catalogue, name)
        for heading, text in zip(DRIVE_HEADINGS, drive_rows([drive])[0]):
            console.print(f"{heading}: {text}")
        console.print(f"Description: {drive.description}")
        for topic, source in drive.sources:
            console.print(f"Source of {topic}: {source}")
        console.print(f"File: {drive.origin}")
        return
    table = Table(title="drive catalogue · MB/s = 10^6 bytes/s · TB = 10^12 bytes", title_justify="left")
    for heading in DRIVE_HEADINGS:
        table.add_column(heading)
    for row in drive_rows(sorted(catalogue.values(), key=lambda d: d.name)):
        table.add_row(*row)
    console.print(table)
    console.print("figures: spec sheets or typical for the class; 'disklab capacity drives NAME' names the source")


LAYOUT_HELP = ("A layout is 'N x DRIVE LEVEL[/GROUPS] [OPTION=VALUE ...]'. Options: "
               + "; ".join(f"{name}= {text}" for name, text in OPTIONS.items()) + ".")


@capacity.command(short_help="One array: capacity, failures it survives, predictions, power and cost.",
                  epilog=LAYOUT_HELP + "\n\n" + examples(
                      'disklab capacity show "8 x sata-ssd-1.6t raid6"',
                      'disklab capacity show "6 x nvme-u3-3.84t raidz2" -w profile --price-kwh 0.30 --years 5',
                      'disklab capacity show "4 x nl-sas-7.2k-12t raid5 cache=none via=iscsi:25GbE"'))
@click.argument("spec", metavar="LAYOUT")
@_plan_options
def show(spec, **options):
    """One array, e.g. "8 x sata-ssd-1.6t raid6": capacity, drives that may fail, predicted IOPS and MB/s per
    workload, power and cost."""
    _plan_and_write([spec], **options)


@capacity.command(name="compare", short_help="Arrays side by side, with the crossover block size.",
                  epilog=LAYOUT_HELP + "\n\n" + examples(
                      'disklab capacity compare "24 x sas-hdd-10k-2.4t raid10" "8 x sata-ssd-1.6t raid6"',
                      'disklab capacity compare "12 x nl-sas-7.2k-12t raid60/2" "6 x nvme-u3-3.84t raidz2" '
                      '--host-mbps 3125 --html plan.html',
                      'disklab capacity compare "4 x nvme-u3-3.84t raid0 via=iscsi:25GbE" '
                      '"4 x nl-sas-7.2k-12t raid5 cache=none" -w profile'))
@click.argument("specs", metavar="LAYOUT...", nargs=-1, required=True)
@_plan_options
def compare_layouts(specs, **options):
    """Arrays side by side, e.g. "24 x sas-hdd-10k-2.4t raid10" "8 x sata-ssd-1.6t raid6": per workload the
    IOPS and MB/s of each, the crossover block size, capacity, power and cost."""
    if len(specs) < 2:
        raise UserError('compare needs at least two layouts, e.g. '
                        '\'disklab capacity compare "24 x sas-hdd-10k-2.4t raid10" "8 x sata-ssd-1.6t raid6"\'')
    _plan_and_write(list(specs), **options)


def _plan_and_write(specs, workloads, strip, via, controller_mbps, host_mbps, watts, price_kwh, pue, years,
                    output_format, output, html_path, drive_files):
    _check_outputs(output, html_path)
    catalogue = load_catalogue(drive_files)
    layouts = [parse_layout(spec, catalogue, strip, via) for spec in specs]
    powers = list(watts)
    if len(powers) > len(layouts):
        raise UserError(f"--watts given {len(powers)} times for {len(layouts)} layouts")
    plan = plan_arrays(layouts, workload_tests(workloads or DEFAULT_WORKLOADS), Money(price_kwh, pue, years),
                       controller_mbps, host_mbps, powers)
    if output_format == "table":
        if output not in (None, "-"):
            raise click.UsageError("a table goes to the terminal; use --format json, csv or markdown with --output")
        for item in renderables(plan):
            stdout_console().print(item)
    else:
        write_output(EXPORTERS[output_format](plan), output)
    if html_path:
        write_whole(html_path, render_html(plan_report(plan, generated_at=now_iso())), "HTML report")
        click.echo(f"written to {html_path}", err=True)


def _check_outputs(*paths) -> None:
    """Outputs named by mistake (a device node, a FIFO) are refused before anything is computed or written."""
    for path in paths:
        if path not in (None, "-"):
            checked_output(path)


@capacity.command(name="calibrate", epilog=examples(
    "disklab capacity calibrate 12 14 --as my-nvme --capacity 3.84TB --interface nvme-pcie4-x4",
    'disklab capacity show "12 x my-nvme raid6"    # the calibrated drive, from $DISKLAB_HOME/drives'))
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option("--as", "name", required=True, help="Name of the drive model, used in layouts: '12 x NAME raid6'.")
@click.option("--capacity", "capacity_bytes", required=True, callback=converter(_capacity),
              help="The drive's capacity, e.g. 3.84TB.")
@click.option("--interface", type=click.Choice(sorted(INTERFACE_BYTES_PER_S)), required=True,
              help="The drive's interface (its link caps the drive in arrays).")
@click.option("--watts-idle", callback=converter(_drive_figure), help="Idle power, W.")
@click.option("--watts-active", callback=converter(_drive_figure), help="Power under load, W.")
@click.option("--price", callback=converter(_drive_figure), help="Price (EUR).")
@click.option("--rated-read-iops", callback=converter(_drive_figure), metavar="IOPS",
              help="The spec sheet's 4 KiB random read rating: warns when the fit claims more.")
@click.option("--rated-write-iops", callback=converter(_drive_figure), metavar="IOPS",
              help="The spec sheet's 4 KiB random write rating: warns when the fit claims more.")
@click.option("--output", "-o", help="Write the drive file here (default: $DISKLAB_HOME/drives/NAME.toml).")
@click.pass_context
def calibrate(ctx, run_refs, name, capacity_bytes, interface, watts_idle, watts_active, price, rated_read_iops,
              rated_write_iops, output):
    """Fit a drive model to stored runs of one drive (block-size and queue-depth sweeps) and save it as a
    drive file, so that "12 x NAME raid6" plans with measured figures. Shows each fit's goodness (R^2, each
    block size's error); refuses rates faster than the interface (a cache answered). Power and price not given
    stay unknown."""
    if not name.replace("-", "").replace(".", "").replace("_", "").isalnum():
        raise UserError(f"{name!r} is not a drive name: letters, digits, '-', '.' and '_' only")
    _check_outputs(output)
    with open_store(ctx) as store:
        records = [store.get_run(store.resolve_run_id(ref)) for ref in run_refs]
    facts = DriveFacts(name, capacity_bytes, interface, watts_idle, watts_active, price, rated_read_iops,
                       rated_write_iops)
    result = fit_drive(records, facts)
    console = stdout_console()
    for fit in result.fits:
        console.print(f"{fit.direction}: time per I/O = {fit.access_s * 1e6:,.1f} µs + size / "
                      f"{fit.bytes_per_s / 1e6:,.0f} MB/s, fitted to {len(fit.points)} block sizes")
        console.print(f"  goodness of fit: R² {fit.r_squared:.3f} (relative errors, as fitted); IOPS error "
                      f"median {fit.median_error_percent:.1f} %, max {fit.max_error_percent:.1f} %")
        for (size, seconds), error in zip(fit.points, fit.errors_percent):
            console.print(f"  {format_size(size):>8}: measured {1 / seconds:,.0f} IOPS, fit "
                          f"{1 / fit.time_s(size):,.0f} IOPS ({error:+.1f} %)")
    for note in result.notes:
        console.print(f"note: {note}")
    for warning in result.warnings:
        stderr_console().print(f"warning: {warning}", highlight=False)
    path = Path(output) if output else user_drive_folder() / f"{name}.toml"
    if not output:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot make the drive folder {path.parent}: {exc.strerror or exc}") from None
    text = drive_to_toml(result.drive)
    drive_from_dict(tomllib.loads(text), str(path))  # never hand out a file the catalogue would refuse to read
    write_whole(path, text, "drive file")
    elsewhere = path.parent.resolve() != user_drive_folder().resolve()
    console.print(f"drive {name!r} written to {path}; use it as e.g. \"12 x {name} raid6\""
                  + f" with --drives {path}" * elsewhere + f" · {MODEL_NOTE}")


@capacity.command(name="validate", short_help="The model against every published table disklab ships, or your runs.",
                  epilog=examples("disklab capacity validate",
                                  "disklab capacity validate -f markdown -o validation.md",
                                  "disklab capacity validate --runs series:12   # arrays you measured, from a member",
                                  "disklab capacity validate --runs 14 --runs 15 --member 11 -f json"))
@click.option("--format", "-f", "output_format", type=click.Choice(validation_render.FORMATS), default="table",
              show_default=True)
@click.option("--output", "-o", help="Write to FILE ('-' for stdout, the default).")
@click.option("--drives", "drive_files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A drive file (TOML) that replaces the shipped drive of its name, e.g. your own sata-ssd-1.6t; "
                   "may be given more than once (without it: the shipped drives, not $DISKLAB_HOME/drives/).")
@click.option("--runs", "run_refs", multiple=True, metavar="RUN",
              help="Your own runs on arrays (run --members ... --array ...; numbers, 'last', series:RUN; repeatable): "
                   "each predicted from a run of one member alone and set beside what was measured, with the band "
                   "these runs support, instead of the published tables.")
@click.option("--member", metavar="RUN",
              help="With --runs: the run of one member alone to predict from (default: the latest run of the same "
                   "suite on one of each array's members).")
@click.pass_context
def validate(ctx, output_format, output, drive_files, run_refs, member):
    """Run the model against the published tables disklab ships (study M2's arrays over block size and mixed
    block sizes, M2's energy and cost arithmetic, M4's NVMe spec sheet) and print every point's error, each
    case's median and largest, the crossover block size, and the error bands `show` and `compare` print. With
    --runs, against arrays you built and measured, each predicted from one of its members measured alone."""
    _check_outputs(output)
    if member and not run_refs:
        raise click.UsageError("--member is the member run of the arrays --runs names")
    if run_refs:
        if drive_files:
            raise click.UsageError("--drives is for the published tables; --runs predicts from your member's run")
        _emit(_held_runs(ctx, run_refs, member), measured_render, output_format, output)
        return
    result = validation.validate(validation.validation_catalogue(drive_files))
    _emit(result, validation_render, output_format, output)


def _emit(result, render, output_format, output) -> None:
    """A table on the terminal, or an export (`render` a module with renderables and EXPORTERS) to --output."""
    if output_format == "table":
        if output not in (None, "-"):
            raise click.UsageError("a table goes to the terminal; use --format json, csv or markdown with --output")
        for item in render.renderables(result):
            stdout_console().print(item)
    else:
        write_output(render.EXPORTERS[output_format](result), output)


def _held_runs(ctx, run_refs, member):
    with open_store(ctx) as store:
        records = [store.get_run(i) for i in resolve_refs(store, run_refs)]
        held = held_to_members(store, records, member)
    if held is None:
        raise UserError(f"{' '.join(run_refs)}: none of these runs was made on an array (run --members ... --array "
                        "...): nothing to hold the planner to")
    return held
