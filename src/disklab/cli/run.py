"""`disklab run` and `disklab resume`: options turned into calls of the run layer (run/prepare.py, run/session.py),
the plan, progress and results printed.

A pgbench suite takes its own path (cli/run_pgbench.py), so that PostgreSQL's modules load only for one; so does the
replay of a trace (`disklab run replay --trace FILE`, cli/run_replay.py).
"""

from contextlib import contextmanager

import click

from disklab.cli.adhoc import fio_test_options, suite_or_test
from disklab.cli.common import converter, open_store, stderr_console, stdout_console, write_output
from disklab.cli.estimate import estimate_line
from disklab.cli.completion import complete_run, complete_suite
from disklab.cli.helptext import RESUME_EXAMPLES, RUN_EXAMPLES, ListsSuites
from disklab.cli.spec import spec_by_model, spec_option
from disklab.suite.settings import parse_latency_ns
from disklab.cli.configuration_options import configuration_options
from disklab.cli.options import WholeNumber, overrides_from, plan_options
from disklab.cli.progress import RunProgress, quiet_progress
from disklab.suite.pgbench import KEYS as PGBENCH_KEYS, client_counts, duration_s, parse_pg_set
from disklab.errors import UserError
from disklab.env.collect import collect_target
from disklab.hosts.files import hosts_target
from disklab.hosts.hosts import Host, parse_hosts
from disklab.plan.build import Overrides, Plan, build_plan, check_test_count
from disklab.report.parts import Parts
from disklab.report.runs import FORMATS
from disklab.plan.passes import DEFAULT_PASSES, MIN_PASS_SECONDS, default_passes, in_passes, passes_line
from disklab.run.prepare import plan_for_target, plan_remarks, prepare, schedule_for
from disklab.run.session import carry_out, finished_steps, resumable, start_run
from disklab.store.names import run_name
from disklab.store.repository import Store
from disklab.suite.model import Suite
from disklab.targets.target import Target, resolve_target
from disklab.trace import REPLAY_SUITE
from disklab.units import parse_duration, parse_percent, parse_size


@click.command(cls=ListsSuites, epilog=RUN_EXAMPLES)
@click.argument("suite", required=False, shell_complete=complete_suite)
@fio_test_options
@click.option("--target", "-t", type=click.Path(), help="Directory (a test file is made there), file, or block device.")
@click.option("--new-file", is_flag=True,
              help="Make a test file at --target, a path that does not exist yet (in a folder that does); without "
                   "it a missing target is refused, so that a typo or a disk not mounted is never benchmarked.")
@click.option("--hosts", callback=converter(parse_hosts),
              help="Run every test on these fio servers at once: H1,H2:PORT or @FILE; --target is a directory there.")
@plan_options
@click.option("--repeat", type=WholeNumber(1, 1000), envvar="DISKLAB_REPEAT", show_envvar=True,
              help=f"Run every test N times (1 to 1000; at most --max-tests tests in all), interleaved across tests "
                   f"(with --precision: at least N times). Default: {DEFAULT_PASSES} interleaved passes that share "
                   f"each test's runtime (at least {MIN_PASS_SECONDS:g} s each), so that every figure has a measured "
                   "spread; --repeat 1 runs one pass, whose figures compare cannot judge (no verdict).")
@click.option("--precision", callback=converter(parse_percent),
              help="Repeat each test until the 95 % confidence interval of its figure is within this percentage "
                   "of its mean, written with its unit: 2% (a bare 2 is refused).")
@click.option("--best-of", type=WholeNumber(2, 1000),
              help="Run every test N times, as --repeat does, and show each cell of the suite's view as its best pass, "
                   "as CrystalDiskMark does (its default: 5); every pass is stored, and the mean and +/- still shown.")
@click.option("--max-time", callback=converter(parse_duration),
              help="Time budget of --precision, e.g. 10m (default: 10 times the plan's estimated duration).")
@click.option("--p99", callback=converter(parse_latency_ns),
              help="With a saturate suite: report the highest IOPS whose p99 stays under this, e.g. 1ms, 500us.")
@click.option("--destroy-data", is_flag=True, help="Allow tests that write to a device or an existing file.")
@click.option("--force", is_flag=True, help="With --destroy-data: write even over a file system or partition table signature.")
@configuration_options
@spec_option
@click.option("--cache", "cache_bytes", callback=converter(parse_size),
              help="The drive's or RAID controller's own cache, from its spec sheet (e.g. 2GiB): tests whose data set "
                   "fits in it are flagged (device-cache).")
@click.option("--keep-file", is_flag=True, help="Keep the test file (and file sets) made in a target directory.")
@click.option("--clients", callback=converter(client_counts),
              help=f"pgbench suites: {PGBENCH_KEYS['clients'].help.replace('[1, 10, 50, 100]', '1,10,50,100')}.")
@click.option("--transactions", type=click.IntRange(1), help=f"pgbench suites: {PGBENCH_KEYS['transactions'].help}.")
@click.option("--time", "time_s", callback=converter(duration_s), help=f"pgbench suites: {PGBENCH_KEYS['time'].help}.")
@click.option("--pg-set", multiple=True, callback=converter(lambda values: tuple(parse_pg_set(v) for v in values)),
              help="pgbench suites: a postgresql.conf setting of the private server, NAME=VALUE (repeatable).")
@click.option("--keep-cluster", is_flag=True,
              help="pgbench suites: keep the PostgreSQL cluster (stopped) for inspection, as disklab-runN.pgcluster "
                   "(with --tablespace-only: off the target, its tablespace as disklab-runN.pgtablespace on it).")
@click.option("--tablespace-only", is_flag=True,
              help="pgbench suites: only a tablespace (tables and indexes) on the target, the cluster with its WAL "
                   "and catalog in $TMPDIR (else /var/tmp), which must be on another disk; as the SSD review (M3) did.")
@click.option("--trace", help="With 'replay' as SUITE: the trace to replay (from 'disklab capture' or 'disklab trace "
                                "import'); a trace with writes is a writing test.")
@click.option("--speed", help="replay: the trace's own timing (1x, the default), a factor of it (2x, 0.5x), or max "
                                "(as fast as fio can).")
@click.option("--wrap", is_flag=True, help="replay: fold offsets beyond the target into it (modulo its size, aligned to "
                                           "4 KiB; changes the trace's locality) instead of refusing.")
@click.option("--fio", "fio_folder", help="replay with --dry-run: write its fio job file and rewritten iolog here.")
@click.option("--dry-run", is_flag=True, help="Show the plan and its estimated duration; run nothing.")
@click.option("--name", callback=converter(run_name),
              help="A name for the run, shown beside its number (e.g. \"old array\"); 'disklab rename' changes it.")
@click.option("--quiet", "-q", is_flag=True,
              help="For scripts: nothing on stderr but an error (or the interrupt line) and the last line, "
                   "'stored as run N in DB (complete)'; stdout as without it.")
@click.option("--format", "-f", "output_format", type=click.Choice(FORMATS), default="table", show_default=True,
              help="What stdout gets once the run is stored: its tables, or the stored run exactly as "
                   "'disklab show N --format FORMAT' prints it.")
@click.pass_context
def run(ctx, suite, target, hosts, overrides, read_only, repeat, precision, best_of, max_time, p99, destroy_data, force,
        fs, write_cache, condition, overprovision, members, array, array_state, measure_member, spec, cache_bytes, keep_file, clients, transactions, time_s, pg_set,
        keep_cluster, tablespace_only, trace, speed, wrap, fio_folder, dry_run, name, quiet, output_format, new_file,
        fio_test):
    """Run SUITE (built-in, .toml, a fio JOB.fio, 'replay' with --trace; none: one test of --rw, --bs ...); store it."""
    if suite == REPLAY_SUITE:
        _replay(ctx)
        return
    if trace or wrap or fio_folder or speed:
        raise UserError("--trace, --speed, --wrap and --fio are for replays: 'disklab run replay --trace FILE --target T'")
    loaded = suite_or_test(suite, fio_test)
    _refuse_options_of_the_other_kind(loaded, ctx.params, overrides)
    _take_suite_configurations(ctx, loaded)
    if loaded.pgbench is not None:
        from disklab.cli.run_pgbench import run_pgbench  # PostgreSQL's modules load only for pgbench suites

        run_pgbench(ctx, loaded, target, overrides.scale, clients, transactions, time_s, pg_set, keep_cluster,
                    tablespace_only, dry_run)
        return
    if force and not destroy_data:
        raise click.UsageError("--force only widens --destroy-data (to write over a file system or partition table "
                               "signature); give both, or neither")
    if read_only and destroy_data:
        raise click.UsageError("--read-only runs no test that writes, so --destroy-data has nothing to allow; give one")
    if dry_run and output_format != "table":
        raise UserError("--format prints the run once it is stored; a dry run stores nothing (it prints the plan)")
    shared = repeat is None and best_of is None  # the default passes share each test's runtime
    if best_of is not None:
        repeat = _best_of_passes(ctx, loaded, best_of, precision)
    elif repeat is None:
        repeat = default_passes(loaded, precision)
    shared = shared and repeat > 1
    check_test_count(loaded, overrides.max_tests, repeat, "the default passes; --repeat 1 runs one" if shared else
                     "--repeat")
    if members:
        if target is not None:
            raise click.UsageError("--members are the devices the arrays are built from, and the array is the "
                                   "target: give --members or --target, not both")
        from disklab.cli.run_configured import run_per_configuration

        run_per_configuration(ctx, None, lambda on, recorded, observe: _run_on(ctx, loaded, on, repeat, shared,
                                                                               recorded, observe))
        return
    if target is None:
        if not dry_run:
            raise click.UsageError("--target is required: a directory, a file or a block device (or --members, "
                                   "with --array)")
        plan = in_passes(build_plan(loaded, overrides, read_only), repeat, shared)
        _print_plan(plan, None, schedule_for(plan, repeat, precision, max_time, p99))
        _print_passes(plan, repeat, shared, precision, best_of)
        if configured(ctx.params):
            from disklab.cli.run_configured import configuration_lines

            for line in configuration_lines(ctx.params):
                click.echo(line)
        return
    if hosts and new_file:
        raise UserError("--new-file makes a test file here; with --hosts the target is a directory on the hosts")
    resolved = hosts_target(target) if hosts else resolve_target(target, new_file)
    if configured(ctx.params):
        from disklab.cli.run_configured import run_per_configuration

        run_per_configuration(ctx, resolved, lambda on, recorded, observe: _run_on(ctx, loaded, on, repeat, shared,
                                                                                   recorded, observe))
        return
    _run_on(ctx, loaded, resolved, repeat, shared)


def _take_suite_configurations(ctx, suite: Suite) -> None:
    """A suite's [configurations] stand for --fs, --write-cache and --overprovision where run was not given them."""
    if suite.configurations is not None:
        from disklab.cli.run_configured import SUITE_CONFIGURATIONS

        for name, value in suite.configurations.as_options().items():
            if value and not ctx.params[name]:
                ctx.params[name] = value
                ctx.meta.setdefault(SUITE_CONFIGURATIONS, {})[name] = f"{suite.where} ([configurations])"


def configured(params: dict) -> bool:
    """Whether the suite runs once per configuration."""
    return any(params[name] for name in ("condition", "fs", "write_cache", "overprovision", "array", "array_state",
                                         "members", "measure_member"))


def _run_on(ctx, suite: Suite, resolved: Target, repeat: int, shared: bool, recorded: dict | None = None,
            observe=None) -> int | None:
    """The suite run on a resolved target and stored (printed only, with --dry-run); `recorded` is kept with the
    run beside its options (a configuration's name, what was made for it), `observe` reads the device's state
    before and after each test (an array's rebuild). Returns the run's number."""
    p = ctx.params
    precision, max_time, p99, best_of, hosts = p["precision"], p["max_time"], p["p99"], p["best_of"], p["hosts"]
    plan = in_passes(plan_for_target(suite, overrides_from(p), p["read_only"], resolved), repeat, shared)
    if p["dry_run"]:
        _print_plan(plan, resolved, schedule_for(plan, repeat, precision, max_time, p99))
        _print_passes(plan, repeat, shared, precision, best_of)
        return None
    say, progress = (_silent, quiet_progress) if p["quiet"] else (_say, _progress)
    schedule_for(plan, repeat, precision, max_time, p99)  # options that do not fit the suite: refused before probing
    elsewhere = on_hosts(hosts, resolved.path) if hosts else None
    plan, fio = prepare(plan, resolved, p["destroy_data"], p["force"], say, elsewhere)
    schedule = schedule_for(plan, repeat, precision, max_time, p99)  # of the plan with its engines resolved
    on = None if hosts else collect_target(resolved.test_path, resolved.kind == "device")  # refusals done: its disks
    say(_run_header(plan, resolved, schedule, on))
    passes = passes_line(plan, repeat, shared, precision, best_of)
    if passes:
        say(passes)
    spec = p["spec"] or (spec_by_model(on, say) if on else None)
    with open_store(ctx, write=True) as store:
        params = {**p, "repeat": repeat, "passes_share_runtime": shared, "spec": spec,
                  "hosts": [h.name for h in hosts] if hosts else None, **(recorded or {})}
        run_id = start_run(store, plan, resolved, fio, schedule, params, p["destroy_data"], p["force"], say)
        say(f"run {run_id} started: each test is stored as it finishes")
        with _resume_hint(store, run_id):
            outcomes = carry_out(store, run_id, plan, resolved, fio, schedule, (), p["keep_file"], p["cache_bytes"],
                                 progress, say, elsewhere, observe)
        show_finished(store, run_id, outcomes, p["output_format"])
    return run_id


def _replay(ctx) -> None:
    """A trace replayed on the target (cli/run_replay.py); an option it does not take is refused, not ignored."""
    from disklab.cli.run_replay import REPLAY_OPTIONS, run_replay

    given = [f"--{name.replace('_', '-')}" for name in ctx.params
             if name not in (*REPLAY_OPTIONS, "suite")
             and ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    say, progress = (_silent, quiet_progress) if ctx.params["quiet"] else (_say, _progress)
    run_replay(ctx, ctx.params, given, say, progress, _print_plan, show_finished)


_PGBENCH_OPTIONS = ("clients", "transactions", "time_s", "pg_set", "keep_cluster", "tablespace_only")
_FIO_OPTIONS = ("read_only", "repeat", "precision", "best_of", "max_time", "p99", "destroy_data", "force", "keep_file",
                "hosts", "cache_bytes", "quiet", "output_format", "new_file", "fs",
                "write_cache", "condition", "overprovision", "members", "array", "array_state", "measure_member",
                "spec")


def _best_of_passes(ctx, suite: Suite, best_of: int, precision: float | None) -> int:
    """--best-of N runs N passes as --repeat N would; the view, not the store, picks the best (report/views.py)."""
    from disklab.report.views import check_best_of

    if ctx.get_parameter_source("repeat") is click.core.ParameterSource.COMMANDLINE:
        raise UserError("--best-of runs every test N times itself: give --best-of or --repeat, not both")
    if precision is not None:
        raise UserError("--best-of and --precision: give one (--best-of picks the best of N passes, "
                        "--precision repeats until the mean is known to within a bound)")
    check_best_of(suite)
    return best_of


def _refuse_options_of_the_other_kind(suite: Suite, params: dict, overrides: Overrides) -> None:
    """pgbench suites and fio suites take different options; one given to the wrong kind is an error, not ignored."""
    def flag(name: str) -> str:
        return {"time_s": "--time", "output_format": "--format"}.get(name, f"--{name.replace('_', '-')}")

    def given_options(names: tuple[str, ...]) -> list[str]:
        unset = {"repeat": 1, "output_format": "table"}  # the only ones of them whose default is not empty
        return [flag(n) for n in names if params.get(n) not in (None, False, ()) and params.get(n) != unset.get(n)]

    if suite.pgbench is not None:
        given = [flag(name) for name in overrides.replacements()] + given_options(_FIO_OPTIONS)
        if given:
            raise UserError(f"{', '.join(given)}: not for suite {suite.name!r}, which runs pgbench; its options "
                            "are --scale, --clients, --transactions, --time, --pg-set, --keep-cluster and "
                            "--tablespace-only")
    else:
        given = given_options(_PGBENCH_OPTIONS)
        if given:
            raise UserError(f"{', '.join(given)}: only for pgbench suites (e.g. 'disklab run pgbench'); "
                            f"suite {suite.name!r} runs fio")


@click.command(epilog=RESUME_EXAMPLES)
@click.argument("run_ref", metavar="RUN", shell_complete=complete_run)
@click.pass_context
def resume(ctx, run_ref):
    """Continue an interrupted or failed RUN from its first unfinished test, with the same parameters."""
    with open_store(ctx, write=True) as store:
        run_id, record, suite = resumable(store, run_ref)
        options = record.info.options
        hosts = parse_hosts(",".join(options["hosts"])) if options.get("hosts") else ()
        resolved = (hosts_target(record.info.target) if hosts
                    else resolve_target(record.info.target, options.get("new_file", False)))
        plan = in_passes(plan_for_target(suite, overrides_from(options), options.get("read_only", False), resolved),
                          options.get("repeat", 1), options.get("passes_share_runtime", False))
        elsewhere = on_hosts(hosts, resolved.path) if hosts else None
        plan, fio = prepare(plan, resolved, options.get("destroy_data", False), options.get("force", False), _say,
                            elsewhere)
        finished = finished_steps(record)
        _say(f"resuming run {run_id}: {len(finished)} test{'' if len(finished) == 1 else 's'} already stored")
        store.reopen_run(run_id)
        schedule = schedule_for(plan, options.get("repeat", 1), options.get("precision"), options.get("max_time"),
                                options.get("p99"))
        with _resume_hint(store, run_id):
            outcomes = carry_out(store, run_id, plan, resolved, fio, schedule, finished, options.get("keep_file", False),
                                 options.get("cache_bytes"), _progress, _say, elsewhere)
        show_finished(store, run_id, outcomes)


def _print_passes(plan: Plan, passes: int, shared: bool, precision: float | None, best_of: int | None) -> None:
    line = passes_line(plan, passes, shared, precision, best_of)
    if line:
        stdout_console().print(line)


def on_hosts(hosts: tuple[Host, ...], folder: str):
    """--hosts: fio's client mode loads only when hosts are named."""
    from disklab.hosts.elsewhere import OnHosts

    return OnHosts(hosts, folder)


def _say(line: str) -> None:
    stderr_console().print(line)


def _silent(line: str) -> None:
    """--quiet: the run's remarks are not printed (errors still are, by the command group)."""


def _progress(plan: Plan, layout_bytes: int, steps: int, done_steps: int) -> RunProgress:
    return RunProgress(plan, stderr_console(), layout_bytes, steps, done_steps)


def _run_header(plan: Plan, target: Target, schedule, on: dict | None) -> str:
    """What is about to run, and on which disk, printed before anything else happens: a wrong disk is seen at once."""
    layout = plan.single_file_bytes() if target.disklab_owns_file else 0
    return (f"suite {plan.suite.name}: {len(plan.tests)} tests on {target.test_path} ({target.kind}), "
            f"{_disk_under_test(target, on)}; {estimate_line(plan, layout, schedule)}")


def _disk_under_test(target: Target, env: dict | None) -> str:
    """The block device, model, file system and mount the test file or device is on, in the words the run stores
    with its environment (`target_on`, env/where.py); `env`: collect_target's, None on hosts (not probed)."""
    if env is None:
        return "a test file on each host (their disks are not probed from here)"
    on = env["target_on"]
    if target.kind == "device":
        return on
    return f"a new test file on {on}" if target.disklab_owns_file else f"an existing file on {on}"


@contextmanager
def _resume_hint(store: Store, run_id: int):
    """An interrupted run's last line names it and the command that continues it (the command group prints it)."""
    try:
        yield
    except KeyboardInterrupt:
        info = store.get_run(run_id).info
        raise KeyboardInterrupt(f"run {run_id} stopped after {info.finished_tests} of {info.planned_tests} tests; "
                                f"continue with 'disklab resume {run_id}'") from None


def show_finished(store: Store, run_id: int, outcomes: dict, output_format: str = "table") -> None:
    """A complete run's results and what its schedule concluded; or, with --format, the stored run as 'show' gives it.

    The last line on stderr (with --quiet the only one) says where the run is stored."""
    record = store.get_run(run_id)
    parts = Parts()
    if output_format != "table":
        from disklab.report.export import EXPORTERS

        write_output(EXPORTERS[output_format](record, parts=parts), None)
    else:
        from disklab.cli.show import print_results

        print_results(record, outcomes, parts=parts)
    for undrawn in parts.undrawn:  # the run is stored whole; only its showing lacks a part
        stderr_console().print(f"disklab: warning: {undrawn}", markup=False, highlight=False)
    stderr_console().print(f"stored as run {run_id} in {store.name} (complete)", markup=False, highlight=False)


def _print_plan(plan: Plan, target: Target | None, schedule) -> None:
    """Without a target the plan is shown as the suite defines it; regions are fitted when a target is named.

    The schedule (built as the run would, so that its options are checked) sets how often each test runs."""
    layout = plan.single_file_bytes() if target and target.disklab_owns_file else 0
    where = f"on {target.test_path} ({target.kind})" if target else "(no target named: regions not fitted)"
    title = f"suite {plan.suite.name}: {len(plan.tests)} tests {where}"
    from disklab.report.plans import plan_table  # a dry run's table: a run does not pay for it

    stdout_console().print(plan_table(plan, title))
    for line in plan_remarks(plan):
        stdout_console().print(line)
    stdout_console().print(estimate_line(plan, layout, schedule))

