"""Preparing a run: the plan fitted to its target, the schedule its options ask for, and every check that can refuse
it, all before anything is stored or written."""

from dataclasses import replace
from pathlib import Path
from typing import Callable, Protocol

from disklab.errors import FioError, UserError
from disklab.fio.features import FioInfo, choose_engine, detect_fio, device_engine_error
from disklab.plan.build import Overrides, Plan, build_plan, fit_to_target, resolve_engines
from disklab.run.execute import StepRunner
from disklab.run.precision import PrecisionSchedule, default_max_seconds
from disklab.run.saturate import SaturateSchedule
from disklab.run.schedule import FixedSchedule, Schedule
from disklab.run.steady import SteadySchedule
from disklab.store.db import default_store_path
from disklab.suite.model import Suite
from disklab.targets.md import is_md_array
from disklab.targets.target import Target, check_target, remove_stale_test_files


class Elsewhere(Protocol):
    """Where a run's tests go when not to this machine (--hosts: fio servers on many hosts, which own the target)."""

    def refuse_unsupported(self, plan: Plan) -> None: ...
    def require_ready(self, fio: FioInfo) -> None: ...
    def step_runner(self, fio: FioInfo) -> StepRunner: ...
    def clean_up(self, fio: FioInfo, keep_file: bool) -> list[str]: ...


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


def prepare(
    plan: Plan, target: Target, destroy_data: bool, force: bool, say: Callable[[str], None],
    elsewhere: Elsewhere | None = None,
) -> tuple[Plan, FioInfo]:
    """Everything that can refuse a run does so before anything is stored or written; `say` prints a line."""
    for line in plan_remarks(plan) + list(target.warnings):
        say(line)
    if elsewhere is not None:
        elsewhere.refuse_unsupported(plan)
    else:
        check_target(target, plan.single_file_bytes() + plan.file_set_bytes(), plan.writes, destroy_data, force,
                     direct=any(t.direct for t in plan.tests))
        if target.kind == "directory":
            for stale in remove_stale_test_files(target.path):
                say(f"removed files left by a killed run: {stale}")
    fio = detect_fio(cache=_feature_cache())
    if elsewhere is not None:
        # The target lives on the hosts: their fio servers answer for it (reachable, same fio, directory there).
        elsewhere.require_ready(fio)
    resolved = resolve_engines(plan, lambda wanted: choose_engine(fio, wanted))
    if elsewhere is None and target.kind == "device" and is_md_array(target.test_path):
        resolved = engine_on_array(plan, resolved, target.test_path,
                                   lambda engine: device_engine_error(fio, engine, target.test_path, plan.writes), say)
    return resolved, fio


def engine_on_array(asked: Plan, resolved: Plan, device: str, failure: Callable[[str], str | None],
                    say: Callable[[str], None]) -> Plan:
    """io_uring tried on the array itself where it was chosen for this machine (not asked for by name): where it
    fails there and libaio works, the tests run with libaio, said and kept with the run (never a run of errors or
    zeros); where both fail, one FioError naming both."""
    chosen = [t.engine == "auto" and r.engine == "io_uring" for t, r in zip(asked.tests, resolved.tests)]
    if not any(chosen):
        return resolved
    error = failure("io_uring")
    if error is None:
        return resolved
    other = failure("libaio")
    if other is not None:
        raise FioError(f"fio's engines fail on {device}: io_uring: {error}; libaio: {other}")
    change = (f"io_uring failed on {device} ({error}); its tests ran with libaio, which works there (io_uring on md "
              "RAID5: fio issues 1374 and 1401)")
    say(f"note: {change}")
    return replace(resolved, engine_change=change, tests=tuple(
        replace(test, engine="libaio") if switch else test for test, switch in zip(resolved.tests, chosen)))


def _feature_cache() -> Path:
    """fio's answers (version, engines, which engine works) kept across runs beside the default results store."""
    return default_store_path().parent / "fio-features.json"
