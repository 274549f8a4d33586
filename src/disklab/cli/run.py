"""`disklab run`: load suite -> plan -> check target -> detect fio -> execute -> store -> summarise.

A pgbench suite takes its own path: steps -> target directory -> private PostgreSQL -> pgbench -> store -> summarise.
"""

import signal
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Sequence

import click

from disklab import __version__
from disklab.cli.common import converter, open_store, stderr_console, stdout_console
from disklab.run.precision import PrecisionSchedule, default_max_seconds, parse_percent
from disklab.analysis.saturation import parse_latency_ns
from disklab.cli.options import WholeNumber, overrides_from, plan_options
from disklab.cli.progress import RunProgress
from disklab.database.settings import KEYS as PGBENCH_KEYS, PGBENCH_ENGINE, client_counts, duration_s, parse_pg_set
from disklab.env.capture import record_environment, record_smart
from disklab.system.host import host_identity
from disklab.errors import DisklabError, UserError
from disklab.run.execute import Execution, execute_schedule
from disklab.fio.executor import SubprocessExecutor
from disklab.fio.features import FioInfo, choose_engine, detect_fio
from disklab.hosts.files import clean_up_on_hosts, hosts_target
from disklab.hosts.hosts import Host, parse_hosts
from disklab.plan.build import Overrides, Plan, build_plan, check_test_count, fit_to_target, resolve_engines
from disklab.report.environment import flag_lines
from disklab.report.table import plan_table, run_results
from disklab.run.schedule import Finished, FixedSchedule, Schedule, Step
from disklab.run.saturate import SaturateSchedule
from disklab.run.steady import SteadySchedule
from disklab.store.db import default_store_path
from disklab.store.repository import NewRun, Store, StoredTest
from disklab.suite.loader import load_suite, parse_suite
from disklab.suite.model import Suite, TestSpec
from disklab.targets.purge import purge
from disklab.targets.target import (
    Target, check_target, keep_test_file, remove_stale_test_files, remove_test_file, resolve_target,
)
from disklab.units import format_duration, parse_duration, parse_size


@click.command()
@click.argument("suite")
@click.option("--target", "-t", help="Directory (a test file is made there), file, or block device.")
@click.option("--hosts", callback=converter(parse_hosts),
              help="Run every test on these fio servers at once: H1,H2:PORT or @FILE; --target is a directory there.")
@plan_options
@click.option("--repeat", type=WholeNumber(1, 1000), default=1, show_default=True,
              help="Run every test N times (1 to 1000; at most --max-tests tests in all), interleaved across tests "
                   "(with --precision: at least N times).")
@click.option("--precision", callback=converter(parse_percent),
              help="Repeat each test until the 95 % confidence interval of its figure is within this, e.g. 2%.")
@click.option("--max-time", callback=converter(parse_duration),
              help="Time budget of --precision, e.g. 10m (default: 10 times the plan's estimated duration).")
@click.option("--p99", callback=converter(parse_latency_ns),
              help="With a saturate suite: report the highest IOPS whose p99 stays under this, e.g. 1ms, 500us.")
@click.option("--destroy-data", is_flag=True, help="Allow tests that write to a device or an existing file.")
@click.option("--force", is_flag=True, help="With --destroy-data: write even over a file system or partition table signature.")
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
              help="pgbench suites: keep the PostgreSQL cluster (stopped) for inspection, as disklab-runN.pgcluster.")
@click.option("--dry-run", is_flag=True, help="Show the plan and its estimated duration; run nothing.")
@click.pass_context
def run(ctx, suite, target, hosts, overrides, read_only, repeat, precision, max_time, p99, destroy_data, force, cache_bytes,
        keep_file, clients, transactions, time_s, pg_set, keep_cluster, dry_run):
    """Run SUITE (a built-in name or a .toml file) against a target and store every result."""
    loaded = load_suite(suite)
    _refuse_options_of_the_other_kind(loaded, ctx.params, overrides)
    if loaded.pgbench is not None:
        from disklab.cli.run_pgbench import run_pgbench  # PostgreSQL's modules load only for pgbench suites

        run_pgbench(ctx, loaded, target, overrides.scale, clients, transactions, time_s, pg_set, keep_cluster, dry_run)
        return
    check_test_count(loaded, overrides.max_tests, repeat)
    if target is None:
        if not dry_run:
            raise click.UsageError("--target is required: a directory, a file or a block device")
        _print_plan(build_plan(loaded, overrides, read_only), None)
        return
    resolved = hosts_target(target) if hosts else resolve_target(target)
    plan = plan_for_target(loaded, overrides, read_only, resolved)
    if dry_run:
        _print_plan(plan, resolved)
        return
    plan, fio = _prepare(plan, resolved, destroy_data, force, hosts or ())
    with open_store(ctx, write=True) as store:
        schedule = schedule_for(plan, repeat, precision, max_time, p99)
        # Purged before the run is created, so that a refusal (device in use) leaves no run behind.
        purged = purge(resolved, destroy_data, force) if plan.suite.rounds and plan.suite.rounds.purge else None
        engines = ", ".join(sorted({t.engine for t in plan.tests}))
        params = {**ctx.params, "hosts": [h.name for h in hosts] if hosts else None}
        run_id = store.create_run(new_run(plan.suite, resolved, fio.version_text, engines, params,
                                           schedule.expected_steps()))
        if purged:
            stderr_console().print(purged)
            store.set_run_values("run_outcomes", run_id, {"purge": {"summary": purged}})
        _carry_out(store, run_id, plan, resolved, fio, schedule, (), keep_file, hosts or (), cache_bytes)


_PGBENCH_OPTIONS = ("clients", "transactions", "time_s", "pg_set", "keep_cluster")
_FIO_OPTIONS = ("read_only", "repeat", "precision", "max_time", "p99", "destroy_data", "force", "keep_file", "hosts",
                "cache_bytes")


def _refuse_options_of_the_other_kind(suite: Suite, params: dict, overrides: Overrides) -> None:
    """pgbench suites and fio suites take different options; one given to the wrong kind is an error, not ignored."""
    def flag(name: str) -> str:
        return "--time" if name == "time_s" else f"--{name.replace('_', '-')}"

    def given_options(names: tuple[str, ...]) -> list[str]:
        unset = {"repeat": 1}  # the only one of them whose default is not empty
        return [flag(n) for n in names if params.get(n) not in (None, False, ()) and params.get(n) != unset.get(n)]

    if suite.pgbench is not None:
        given = [flag(name) for name in overrides.replacements()] + given_options(_FIO_OPTIONS)
        if given:
            raise UserError(f"{', '.join(given)}: not for suite {suite.name!r}, which runs pgbench; its options "
                            "are --scale, --clients, --transactions, --time, --pg-set and --keep-cluster")
    else:
        given = given_options(_PGBENCH_OPTIONS)
        if given:
            raise UserError(f"{', '.join(given)}: only for pgbench suites (e.g. 'disklab run pgbench'); "
                            f"suite {suite.name!r} runs fio")


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.pass_context
def resume(ctx, run_ref):
    """Continue an interrupted or failed RUN from its first unfinished test, with the same parameters."""
    with open_store(ctx, write=True) as store:
        run_id = store.resolve_run_id(run_ref)
        record = store.get_run(run_id)
        if record.info.fio_engine == PGBENCH_ENGINE:
            raise UserError(f"run {run_id} is a pgbench run: its server and data set are gone, so it cannot be "
                            "resumed; run the suite again")
        if "imported_from" in record.info.options:
            raise UserError(f"run {run_id} was imported from {record.info.options['imported_from']}: fio ran it "
                            "elsewhere, so there is nothing to resume; import the file again once it is complete")
        if record.info.status not in ("interrupted", "failed"):
            raise UserError(f"run {run_id} is {record.info.status}; only interrupted or failed runs can be resumed")
        options = record.info.options
        suite = parse_suite(record.suite_text, record.info.suite_source, f"run {run_id}'s suite")
        hosts = parse_hosts(",".join(options["hosts"])) if options.get("hosts") else ()
        resolved = hosts_target(record.info.target) if hosts else resolve_target(record.info.target)
        plan = plan_for_target(suite, overrides_from(options), options.get("read_only", False), resolved)
        plan, fio = _prepare(plan, resolved, options.get("destroy_data", False), options.get("force", False), hosts)
        finished = [Finished(Step(t.plan_index, t.attempt, _spec(t)), t.as_job()) for t in record.tests]
        stderr_console().print(f"resuming run {run_id}: {len(finished)} tests already stored")
        store.reopen_run(run_id)
        schedule = schedule_for(plan, options.get("repeat", 1), options.get("precision"), options.get("max_time"),
                                options.get("p99"))
        _carry_out(store, run_id, plan, resolved, fio, schedule, finished, options.get("keep_file", False), hosts,
                   options.get("cache_bytes"))


def schedule_for(
    plan: Plan, repeat: int, precision: float | None = None, max_time: float | None = None, p99: float | None = None,
) -> Schedule:
    """Rounds suites (steady, write-saturation) and saturate searches decide their own steps; the rest run as planned."""
    if max_time is not None and precision is None:
        raise UserError("--max-time is the time budget of --precision; give --precision too")
    if plan.suite.saturation is not None:
        if precision is not None or repeat > 1:
            raise UserError(f"--precision and --repeat do not apply to suite {plan.suite.name!r}: it searches in steps")
        settings = plan.suite.saturation if p99 is None else replace(plan.suite.saturation, p99_bound_ns=p99)
        return SaturateSchedule(plan, settings)
    if p99 is not None:
        raise UserError("--p99 is the latency bound of a saturate suite, e.g. 'disklab run saturate --p99 1ms'")
    if plan.suite.rounds is not None:
        if precision is not None:
            raise UserError(f"--precision does not apply to suite {plan.suite.name!r}: it runs its test in rounds")
        if repeat > 1:
            raise UserError(f"--repeat does not apply to suite {plan.suite.name!r}: it runs its test in rounds")
        return SteadySchedule(plan)
    if precision is not None:
        return PrecisionSchedule(plan, precision, default_max_seconds(plan) if max_time is None else max_time, repeat)
    return FixedSchedule(plan, repeat)


def plan_for_target(suite: Suite, overrides: Overrides, read_only: bool, target: Target) -> Plan:
    plan = build_plan(suite, overrides, read_only)
    capacity = None if target.disklab_owns_file else target.capacity_bytes
    return fit_to_target(plan, capacity, target.logical_block_size, is_directory=target.kind == "directory")


def plan_remarks(plan: Plan) -> list[str]:
    lines = [f"note: {note}" for note in plan.notes]
    lines += [f"skipped: {label}: {reason}" for label, reason in plan.skipped]
    if plan.left_out_writes:
        lines.append(f"{plan.left_out_writes} writing tests left out by --read-only")
    return lines


def _prepare(plan: Plan, target: Target, destroy_data: bool, force: bool, hosts: tuple[Host, ...] = ()):
    """Everything that can refuse a run does so before anything is stored or written."""
    for line in plan_remarks(plan):
        stderr_console().print(line)
    if hosts:
        from disklab.hosts.check import check_hosts, require_ready  # fio's client mode loads only for --hosts
        from disklab.hosts.steps import refuse_unsupported

        # The target lives on the hosts: their fio servers answer for it (reachable, same fio, directory there).
        refuse_unsupported(plan)
        fio = detect_fio(cache=_feature_cache())
        require_ready(check_hosts(hosts, fio.path, fio.version_text, target.path))
        return resolve_engines(plan, lambda wanted: choose_engine(fio, wanted)), fio
    check_target(target, plan.single_file_bytes() + plan.file_set_bytes(), plan.writes, destroy_data, force,
                 direct=any(t.direct for t in plan.tests))
    if target.kind == "directory":
        for stale in remove_stale_test_files(target.path):
            stderr_console().print(f"removed files left by a killed run: {stale}")
    fio = detect_fio(cache=_feature_cache())
    return resolve_engines(plan, lambda wanted: choose_engine(fio, wanted)), fio


def _feature_cache() -> Path:
    """fio's answers (version, engines, which engine works) kept across runs beside the default results store."""
    return default_store_path().parent / "fio-features.json"


def _carry_out(
    store: Store, run_id: int, plan: Plan, target: Target, fio: FioInfo, schedule: Schedule,
    finished: Sequence[Finished], keep_file: bool, hosts: tuple[Host, ...] = (), cache_bytes: int | None = None,
) -> None:
    """Execute, record the run's status whatever happens, never leave disklab's test files behind, summarise."""
    engines = sorted({t.engine for t in plan.tests})
    layout = plan.single_file_bytes() if target.disklab_owns_file else 0
    execution = Execution(plan=plan, test_path=target.test_path, file_set_dir=target.file_set_dir, run_id=run_id)
    try:
        declared = {"declared_cache_bytes": cache_bytes}  # None: not given, shown as unknown
        with recorded(store, run_id, target.test_path, target.kind == "device", fio.version_text, engines, declared), \
                RunProgress(plan, stderr_console(), layout, schedule.expected_steps(), len(finished)) as progress:
            on_hosts = _hosts_step(fio.path, hosts, target.path) if hosts else None
            done = execute_schedule(execution, schedule, SubprocessExecutor(fio.path), store, progress, finished, on_hosts)
    finally:
        if hosts:
            for line in clean_up_on_hosts(fio.path, hosts, target.path, keep_file):
                stderr_console().print(line)
        elif keep_file and target.disklab_owns_file:
            for kept in keep_test_file(target, run_id):
                stderr_console().print(f"test file kept: {kept}")
        else:
            remove_test_file(target)
    outcomes = schedule.outcomes(done) if hasattr(schedule, "outcomes") else {}
    store.set_run_values("run_outcomes", run_id, outcomes)
    finish(store, run_id, outcomes)


def _hosts_step(fio_path: str, hosts: tuple[Host, ...], folder: str):
    """Each step on every host at once; fio's client mode loads only for --hosts."""
    from disklab.hosts.client import ClientExecutor
    from disklab.hosts.steps import HostsStep

    return HostsStep(ClientExecutor(fio_path), hosts, folder)


@contextmanager
def recorded(store: Store, run_id: int, test_path: str, is_device: bool, fio_version: str | None, engines: list[str],
              declared: dict | None = None):
    """The environment (with what the user declared of it) and SMART around the work, and the run's status whatever
    happens to it."""
    disks = record_environment(store, run_id, test_path, is_device, fio_version, engines, declared or {})
    record_smart(store, run_id, disks, "before")
    try:
        with _interrupt_on_termination():
            yield
    except KeyboardInterrupt:
        store.finish_run(run_id, "interrupted", "interrupted by the user or a signal")
        raise
    except DisklabError as exc:
        store.finish_run(run_id, "failed", str(exc))
        raise
    finally:
        record_smart(store, run_id, disks, "after")


def finish(store: Store, run_id: int, outcomes: dict) -> None:
    """The run complete, its results and what its schedule concluded printed."""
    store.finish_run(run_id, "complete")
    record = store.get_run(run_id)
    for item in run_results(record):
        stdout_console().print(item)
    for line in flag_lines(record):
        stdout_console().print(line, style="yellow", markup=False, highlight=False)
    for outcome in outcomes.values():
        stdout_console().print(outcome["summary"])
    stderr_console().print(f"stored as run {run_id} in {store.path} (complete)")


def _spec(test: StoredTest) -> TestSpec:
    return TestSpec(label=test.label, **test.params)


@contextmanager
def _interrupt_on_termination():
    """SIGTERM and SIGHUP end a run the way Ctrl-C does: fio stopped, finished tests kept, file removed."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def new_run(suite: Suite, target: Target, tool_version: str, engine: str, params: dict,
             expected_steps: int) -> NewRun:
    """tool_version and engine: fio's, or PostgreSQL's and 'pgbench' for a pgbench run."""
    host = host_identity()
    options = {k: v for k, v in params.items() if v not in (None, False, ()) and k not in ("suite", "target")}
    return NewRun(
        suite_name=suite.name, suite_source=suite.source, suite_text=suite.text, target=target.path,
        target_kind=target.kind, test_path=target.test_path, options=options, disklab_version=__version__,
        fio_version=tool_version, fio_engine=engine, hostname=host.hostname, kernel=host.kernel,
        planned_tests=expected_steps,
    )


def _print_plan(plan: Plan, target: Target | None) -> None:
    """Without a target the plan is shown as the suite defines it; regions are fitted when a target is named."""
    layout = plan.single_file_bytes() if target and target.disklab_owns_file else 0
    where = f"on {target.test_path} ({target.kind})" if target else "(no target named: regions not fitted)"
    title = f"suite {plan.suite.name}: {len(plan.tests)} tests {where}"
    stdout_console().print(plan_table(plan, title))
    for line in plan_remarks(plan):
        stdout_console().print(line)
    stdout_console().print(f"estimated duration: {format_duration(plan.estimated_seconds(layout))}")
