"""Carrying out a run: stored before the work, environment and SMART around it, its steps executed, disklab's test
files never left behind, what its schedule concluded kept, and its status recorded whatever happens; resuming one."""

from contextlib import AbstractContextManager, contextmanager
from typing import Callable, Sequence

import disklab
from disklab.env.capture import record_environment, record_smart
from disklab.errors import DisklabError, UserError
from disklab.fio.executor import SubprocessExecutor
from disklab.fio.features import FioInfo
from disklab.plan.build import Plan
from disklab.run.execute import Execution, ProgressListener, execute_schedule
from disklab.run.prepare import Elsewhere
from disklab.run.schedule import Finished, Schedule, Step
from disklab.store.records import PGBENCH_ENGINE, RunRecord, StoredTest
from disklab.store.repository import NewRun, Store
from disklab.suite.loader import parse_suite
from disklab.suite.model import Suite, TestSpec
from disklab.system.host import host_identity
from disklab.system.signals import interrupt_on_termination
from disklab.targets.purge import purge
from disklab.targets.target import Target, leave_test_files

# Shows a run's progress: given the plan, the bytes of the test file to lay out, the steps expected and those done.
ProgressDisplay = Callable[[Plan, int, int, int], AbstractContextManager[ProgressListener]]


def start_run(store: Store, plan: Plan, target: Target, fio: FioInfo, schedule: Schedule, params: dict,
              destroy_data: bool, force: bool, say: Callable[[str], None]) -> int:
    """The run stored, after the purge its suite asks for: a refusal there (device in use) leaves no run behind."""
    purged = purge(target, destroy_data, force) if plan.suite.rounds and plan.suite.rounds.purge else None
    engines = ", ".join(sorted({t.engine for t in plan.tests}))
    run_id = store.create_run(new_run(plan.suite, target, fio.version_text, engines, params, schedule.expected_steps()))
    keep_warnings(store, run_id, target)
    if plan.engine_change:
        store.set_run_values("run_outcomes", run_id, {"engine": {"summary": plan.engine_change}})
    if purged:
        say(purged)
        store.set_run_values("run_outcomes", run_id, {"purge": {"summary": purged}})
    return run_id


def keep_warnings(store: Store, run_id: int, target: Target) -> None:
    """Why the disk under test may not be the one meant (targets/target.py), kept where show and the report say it."""
    if target.warnings:
        store.set_run_values("run_outcomes", run_id, {"target": {"summary": "\n".join(target.warnings)}})


def carry_out(
    store: Store, run_id: int, plan: Plan, target: Target, fio: FioInfo, schedule: Schedule,
    finished: Sequence[Finished], keep_file: bool, cache_bytes: int | None, progress: ProgressDisplay,
    say: Callable[[str], None], elsewhere: Elsewhere | None = None, observe: Callable[[], dict] | None = None,
) -> dict:
    """Execute, record the run's status whatever happens, never leave disklab's test files behind.

    `observe` reads the device's state before and after each test (an array's rebuild), kept with the run.
    Returns what the schedule concluded, stored as the run's outcomes of a run now complete.
    """
    engines = sorted({t.engine for t in plan.tests})
    layout = plan.single_file_bytes() if target.disklab_owns_file else 0
    execution = Execution(plan=plan, test_path=target.test_path, file_set_dir=target.file_set_dir, run_id=run_id)
    try:
        declared = {"declared_cache_bytes": cache_bytes}  # None: not given, shown as unknown
        with recorded(store, run_id, target.test_path, target.kind == "device", fio.version_text, engines, declared), \
                progress(plan, layout, schedule.expected_steps(), len(finished)) as listener:
            on_hosts = elsewhere.step_runner(fio) if elsewhere else None
            done = execute_schedule(execution, schedule, SubprocessExecutor(fio.path), store, listener, finished, on_hosts,
                                    observe)
    finally:
        if elsewhere:
            for line in elsewhere.clean_up(fio, keep_file):
                say(line)
        else:
            for line in leave_test_files(target, keep_file, run_id):
                say(line)
    outcomes = schedule.outcomes(done) if hasattr(schedule, "outcomes") else {}
    store.set_run_values("run_outcomes", run_id, outcomes)
    store.finish_run(run_id, "complete")
    return outcomes


@contextmanager
def recorded(store: Store, run_id: int, test_path: str, is_device: bool, fio_version: str | None, engines: list[str],
             declared: dict | None = None):
    """The environment (with what the user declared of it) and SMART around the work, and the run's status whatever
    happens to it."""
    disks = record_environment(store, run_id, test_path, is_device, fio_version, engines, declared or {})
    record_smart(store, run_id, disks, "before")
    try:
        with interrupt_on_termination():
            yield
    except KeyboardInterrupt:
        store.finish_run(run_id, "interrupted", "interrupted by the user or a signal")
        raise
    except DisklabError as exc:
        store.finish_run(run_id, "failed", str(exc))
        raise
    finally:
        record_smart(store, run_id, disks, "after")


def new_run(suite: Suite, target: Target, tool_version: str, engine: str, params: dict,
            expected_steps: int) -> NewRun:
    """tool_version and engine: fio's, or PostgreSQL's and 'pgbench' for a pgbench run."""
    host = host_identity()
    options = {k: v for k, v in params.items() if v not in (None, False, ()) and k not in ("suite", "target", "name")}
    return NewRun(
        suite_name=suite.name, suite_source=suite.source, suite_text=suite.text, target=target.path,
        target_kind=target.kind, test_path=target.test_path, options=options, disklab_version=disklab.version(),
        fio_version=tool_version, fio_engine=engine, hostname=host.hostname, kernel=host.kernel,
        planned_tests=expected_steps, name=params.get("name"),
    )


def resumable(store: Store, run_ref: str) -> tuple[int, RunRecord, Suite]:
    """The run `run_ref` names and its suite; refused unless it can be continued here."""
    run_id = store.resolve_run_id(run_ref)
    record = store.get_run(run_id)
    if record.info.fio_engine == PGBENCH_ENGINE:
        raise UserError(f"run {run_id} is a pgbench run: its server and data set are gone, so it cannot be "
                        "resumed; run the suite again")
    if record.info.options.get("trace"):
        raise UserError(f"run {run_id} replays a trace in one fio run, which cannot continue where it stopped; "
                        "run the replay again")
    if "configuration" in record.info.options:
        label = record.info.options["configuration"].get("label")
        raise UserError(f"run {run_id} ran in a configuration set up for it ({label}) and undone when it stopped (a "
                        "file system remade by the next one, a write cache restored): run it again with the same options")
    if "imported_from" in record.info.options:
        raise UserError(f"run {run_id} was imported from {record.info.options['imported_from']}: fio ran it "
                        "elsewhere, so there is nothing to resume; import the file again once it is complete")
    if record.info.status not in ("interrupted", "failed"):
        raise UserError(f"run {run_id} is {record.info.status}; only interrupted or failed runs can be resumed")
    return run_id, record, parse_suite(record.suite_text, record.info.suite_source, f"run {run_id}'s suite")


def finished_steps(record: RunRecord) -> list[Finished]:
    """The steps a run already stored: a fresh schedule given them continues from the first one still missing."""
    return [Finished(Step(t.plan_index, t.attempt, _spec(t)), t.as_job()) for t in record.tests]


def _spec(test: StoredTest) -> TestSpec:
    return TestSpec(label=test.label, **test.params)
