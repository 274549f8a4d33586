"""Run a schedule's steps one by one through fio and commit each result to the store as soon as it exists."""

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Protocol, Sequence

from disklab.analysis.contention import busy_machine, fio_bytes_in_window
from disklab.analysis.traps import cache_traps
from disklab.errors import FioError
from disklab.fio.executor import Executor
from disklab.plan.jobfile import log_avg_msec, render_jobfile
from disklab.fio.logs import parse_logs
from disklab.fio.parse import JobResult, parse_fio_output
from disklab.fio.status import LiveFigures, status_interval_s
from disklab.plan.build import Plan
from disklab.plan.estimate import step_seconds
from disklab.run.saturate import SaturateSchedule
from disklab.run.schedule import Finished, Schedule, Step
from disklab.run.steady import SteadySchedule
from disklab.store.db import now_iso
from disklab.store.repository import Store
from disklab.suite.model import TestSpec
from disklab.system.contention import contention, snapshot


class ProgressListener(Protocol):
    # Whether it shows live() figures: only then does fio write a report every second for them (a script or a
    # pipe gets the measurement without that extra work).
    wants_live: bool

    def test_started(self, seq: int, test: TestSpec, stage: str = "", steps: int | None = None) -> None:
        """`stage`: where the step stands in its schedule ("steady-state round 3 of at most 25"), or ""; `steps`: how
        many the schedule now expects in all (a search knows once it ends)."""

    def tick(self) -> None: ...

    def live(self, figures: LiveFigures) -> None:
        """Every second of a test run here: its phase (pause, ramp, measuring) and fio's figures of that second."""

    def test_finished(self, seq: int, test: TestSpec, job: JobResult) -> None: ...


@dataclass(frozen=True)
class Execution:
    plan: Plan
    test_path: str
    file_set_dir: str
    run_id: int


class StepRunner(Protocol):
    """Runs a step somewhere other than on this machine (hosts/steps.py: on many hosts) and stores its result."""

    def __call__(self, execution: Execution, step: Step, store: Store, on_tick: Callable[[], None]) -> JobResult: ...


def execute_schedule(
    execution: Execution, schedule: Schedule, executor: Executor, store: Store, progress: ProgressListener,
    finished: Sequence[Finished] = (), run_elsewhere: StepRunner | None = None,
    observe: Callable[[], dict] | None = None,
) -> list[Finished]:
    """Raises on the first failing test; the tests finished before it are already stored.

    `finished` holds the steps of this run that are already stored (a resumed run continues after them).
    `observe` reads the device's state (an array's rebuild progress) before and after each test: kept with the run
    as each test is stored (its outcome 'device_states'), so that an interrupted run keeps those of its tests.
    """
    done = list(finished)
    states: list[dict] = []
    env = store.run_values("run_env", execution.run_id)
    devices = tuple(d for d in (env.get("devices") or "").split(", ") if d)
    while (step := schedule.next_step(done)) is not None:
        seq = len(done)
        test = step.test
        stage = stage_of(schedule, step, seq)
        steps = schedule.expected_steps(done)
        if run_elsewhere is not None:
            progress.test_started(seq, test, stage, steps)
            job = run_elsewhere(execution, step, store, progress.tick)
            done.append(Finished(step, job))
            progress.test_finished(seq, test, job)
            continue
        jobfile = render_jobfile(test, execution.test_path, execution.file_set_dir, execution.plan.suite.name)
        if test.file_set:
            Path(execution.file_set_dir).mkdir(exist_ok=True)
        progress.test_started(seq, test, stage, steps)
        started_at = now_iso()
        on_status = (lambda f, t=test: progress.live(_named(f, t))) if progress.wants_live else None
        before, laid_out = snapshot(devices), file_bytes(execution.test_path)
        state_before = observe() if observe else None
        try:
            fio_run = executor.run(jobfile, on_tick=progress.tick, on_status=on_status,
                                   status_interval_s=status_interval_s(step_seconds(test)))
        except FioError as exc:  # the run's one line and its stored error say which test failed
            raise FioError(f"test {test.label!r}: {exc}") from exc
        after, laid_out = snapshot(devices), file_bytes(execution.test_path) - laid_out
        state_after = observe() if observe else None
        job = single_job(parse_fio_output(fio_run.output), test.label)
        series = parse_logs(fio_run.logs, log_avg_msec(test)) if test.log_interval else ()
        seen = contention(before, after, fio_bytes_in_window(test, job) + max(0, laid_out))
        flags = cache_traps(test, job, env, [(f.step.test, f.job) for f in done]) + busy_machine(seen, job, devices)
        if observe:
            states.append({"seq": seq, "label": test.label, "before": state_before, "after": state_after})
        with store.transaction():  # one commit (one sync to disk) per test, its flags and device states with it
            test_id = store.add_test(
                execution.run_id, seq, test.label, test.params(), jobfile, fio_run.output, fio_run.stderr, started_at,
                job, series=series, plan_index=step.plan_index, attempt=step.attempt,
            )
            for flag, message in flags:
                store.add_flag(test_id, flag, message)
            if observe:
                store.set_run_values("run_outcomes", execution.run_id, {"device_states": states})
        done.append(Finished(step, job))
        progress.test_finished(seq, test, job)
    return done


def file_bytes(path: str) -> int:
    """The test file's size: fio lays it out in the first test that uses it, writing that much beside its figures."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _named(figures: LiveFigures, test: TestSpec) -> LiveFigures:
    """Before its first I/O a test with a pause is idling in it (fio's startdelay)."""
    return replace(figures, phase="pause") if figures.phase == "starting" and test.pause else figures


def stage_of(schedule: Schedule, step: Step, seq: int) -> str:
    """Where a step stands in a schedule that decides its own steps, or in the repeats of a test."""
    if isinstance(schedule, SteadySchedule):
        if step.plan_index != schedule.workload:
            return "preconditioning"
        return f"steady-state round {step.attempt} of at most {schedule.settings.criteria.max_rounds}"
    if isinstance(schedule, SaturateSchedule):
        return f"saturation step {seq + 1}"
    return f"repeat {step.attempt}" if step.attempt > 1 else ""


def single_job(report, label: str) -> JobResult:
    """disklab's job files use group_reporting, so fio reports exactly one job per test."""
    if len(report.jobs) != 1:
        raise FioError(f"test {label!r}: fio reported {len(report.jobs)} jobs where disklab expects one")
    job = report.jobs[0]
    if job.error:
        raise FioError(f"test {label!r}: fio reported error {job.error} ({os.strerror(job.error)})")
    if not job.directions:
        raise FioError(f"test {label!r}: fio completed no I/O")
    return job
