"""`disklab run` and `disklab resume`: options turned into calls of the run layer (run/prepare.py, run/session.py),
the plan, progress and results printed.

A pgbench suite takes its own path (cli/run_pgbench.py), so that PostgreSQL's modules load only for one.
"""

import click

from disklab.cli.common import converter, open_store, stderr_console, stdout_console
from disklab.suite.settings import parse_latency_ns
from disklab.cli.options import WholeNumber, overrides_from, plan_options
from disklab.cli.progress import RunProgress
from disklab.suite.pgbench import KEYS as PGBENCH_KEYS, client_counts, duration_s, parse_pg_set
from disklab.errors import UserError
from disklab.hosts.files import hosts_target
from disklab.hosts.hosts import Host, parse_hosts
from disklab.plan.build import Overrides, Plan, build_plan, check_test_count
from disklab.report.plans import plan_table
from disklab.report.table import flag_lines, run_results
from disklab.run.prepare import plan_for_target, plan_remarks, prepare, schedule_for
from disklab.run.session import carry_out, finished_steps, resumable, start_run
from disklab.store.repository import Store
from disklab.suite.loader import load_suite
from disklab.suite.model import Suite
from disklab.targets.target import Target, resolve_target
from disklab.units import format_duration, parse_duration, parse_percent, parse_size


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
    elsewhere = on_hosts(hosts, resolved.path) if hosts else None
    plan, fio = prepare(plan, resolved, destroy_data, force, _say, elsewhere)
    with open_store(ctx, write=True) as store:
        schedule = schedule_for(plan, repeat, precision, max_time, p99)
        params = {**ctx.params, "hosts": [h.name for h in hosts] if hosts else None}
        run_id = start_run(store, plan, resolved, fio, schedule, params, destroy_data, force, _say)
        outcomes = carry_out(store, run_id, plan, resolved, fio, schedule, (), keep_file, cache_bytes, _progress, _say,
                             elsewhere)
        show_finished(store, run_id, outcomes)


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
        run_id, record, suite = resumable(store, run_ref)
        options = record.info.options
        hosts = parse_hosts(",".join(options["hosts"])) if options.get("hosts") else ()
        resolved = hosts_target(record.info.target) if hosts else resolve_target(record.info.target)
        plan = plan_for_target(suite, overrides_from(options), options.get("read_only", False), resolved)
        elsewhere = on_hosts(hosts, resolved.path) if hosts else None
        plan, fio = prepare(plan, resolved, options.get("destroy_data", False), options.get("force", False), _say,
                            elsewhere)
        finished = finished_steps(record)
        _say(f"resuming run {run_id}: {len(finished)} tests already stored")
        store.reopen_run(run_id)
        schedule = schedule_for(plan, options.get("repeat", 1), options.get("precision"), options.get("max_time"),
                                options.get("p99"))
        outcomes = carry_out(store, run_id, plan, resolved, fio, schedule, finished, options.get("keep_file", False),
                             options.get("cache_bytes"), _progress, _say, elsewhere)
        show_finished(store, run_id, outcomes)


def on_hosts(hosts: tuple[Host, ...], folder: str):
    """--hosts: fio's client mode loads only when hosts are named."""
    from disklab.hosts.elsewhere import OnHosts

    return OnHosts(hosts, folder)


def _say(line: str) -> None:
    stderr_console().print(line)


def _progress(plan: Plan, layout_bytes: int, steps: int, done_steps: int) -> RunProgress:
    return RunProgress(plan, stderr_console(), layout_bytes, steps, done_steps)


def show_finished(store: Store, run_id: int, outcomes: dict) -> None:
    """A complete run's results and what its schedule concluded."""
    record = store.get_run(run_id)
    for item in run_results(record):
        stdout_console().print(item)
    for line in flag_lines(record):
        stdout_console().print(line, style="yellow", markup=False, highlight=False)
    for outcome in outcomes.values():
        stdout_console().print(outcome["summary"])
    _say(f"stored as run {run_id} in {store.path} (complete)")


def _print_plan(plan: Plan, target: Target | None) -> None:
    """Without a target the plan is shown as the suite defines it; regions are fitted when a target is named."""
    layout = plan.single_file_bytes() if target and target.disklab_owns_file else 0
    where = f"on {target.test_path} ({target.kind})" if target else "(no target named: regions not fitted)"
    title = f"suite {plan.suite.name}: {len(plan.tests)} tests {where}"
    stdout_console().print(plan_table(plan, title))
    for line in plan_remarks(plan):
        stdout_console().print(line)
    stdout_console().print(f"estimated duration: {format_duration(plan.estimated_seconds(layout))}")
