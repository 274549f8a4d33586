"""Replaying a trace as a run: the plan of its one test fitted to the target, the iolog rewritten for it, and each
replay's fidelity kept as the run's outcome (and flagged on the test when it falls short)."""

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from disklab.plan.build import Plan
from disklab.fio.executor import Executor
from disklab.plan.jobfile import job_section_name, render_layout_jobfile
from disklab.run.schedule import Finished, FixedSchedule
from disklab.store.repository import Store
from disklab.system.leftovers import owned_prefix, remove_leftovers
from disklab.targets.target import Target
from disklab.trace.leftovers import REPLAY_PREFIX, replay_leftovers, replay_parent
from disklab.trace.replay import (TraceFacts, check_fits, describe_fidelity, fit_to_fio, replay_fidelity, replay_suite,
                                  replay_test, rewrite_for_target)

# Flag on a replayed test whose fidelity falls short (slower than the trace, or other I/O counts).
FIDELITY_FLAG = "replay-fidelity"


def replay_plan(facts: TraceFacts, speed: str, target: Target, wrap: bool) -> Plan:
    """A test file disklab makes is sized to the trace's footprint; a device or an existing file is used whole."""
    capacity = None if target.disklab_owns_file else target.capacity_bytes
    notes = check_fits(facts, capacity, wrap, target.logical_block_size, direct=True)
    if wrap and capacity is None:
        notes.append("--wrap: nothing to fold, the test file is made as large as the trace's footprint")
    test = replay_test(facts, speed, facts.footprint if capacity is None else capacity)
    return Plan(suite=replay_suite(facts), tests=(test,), notes=tuple(notes))


def for_fio(plan: Plan, fio_version: tuple[int, ...]) -> Plan:
    """The replay as this fio can run it without misreporting (trace/replay.py: fit_to_fio)."""
    test, note = fit_to_fio(plan.tests[0], fio_version)
    return replace(plan, tests=(test,), notes=plan.notes + ((note,) if note else ()))


def iolog_name(test_label: str) -> str:
    """The rewritten iolog's file name, beside the job file of the same test when exported."""
    return f"{job_section_name(test_label)}.iolog"


def with_iolog(plan: Plan, facts: TraceFacts, target: Target, wrap: bool, folder: Path) -> Plan:
    """The trace rewritten into `folder` for this target, and named by the plan's test."""
    capacity = None if target.disklab_owns_file else target.capacity_bytes
    (test,) = plan.tests
    out = folder / iolog_name(test.label)
    rewrite_for_target(facts, out, target.test_path, capacity, wrap)
    return replace(plan, tests=(replace(test, iolog=str(out)),))


@contextmanager
def iolog_folder() -> Iterator[Path]:
    """Where a run's rewritten iolog lives while fio reads it; what killed replays left is removed first."""
    remove_leftovers(replay_leftovers())
    folder = Path(tempfile.mkdtemp(prefix=owned_prefix(REPLAY_PREFIX), dir=replay_parent()))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def lay_out(plan: Plan, target: Target, executor: Executor) -> None:
    """A test file disklab makes is written in full by fio before the replay reads from it (plan/jobfile.py says
    why); the caller removes it if anything fails before the run's own clean-up takes over."""
    if target.disklab_owns_file:
        executor.run(render_layout_jobfile(plan.tests[0], target.test_path))


class ReplaySchedule(FixedSchedule):
    """The replay `repeat` times (fio cannot loop a replay: each pass is a fresh fio run); its outcome is fidelity."""

    def __init__(self, plan: Plan, facts: TraceFacts, repeat: int = 1):
        super().__init__(plan, repeat)
        self.facts = facts

    def outcomes(self, finished: Sequence[Finished]) -> dict:
        replays = [{"plan_index": f.step.plan_index, "attempt": f.step.attempt,
                    **replay_fidelity(self.facts, f.step.test.speed, f.job)} for f in finished]
        return {"replay": {"trace": self.facts.identity, "path": self.facts.path, "replays": replays,
                           "summary": "\n".join(describe_fidelity(r) for r in replays)}}


def flag_unfaithful(store: Store, run_id: int, outcomes: dict) -> None:
    """Each replayed test whose fidelity warns carries the warning as a flag, shown wherever flags are."""
    record = store.get_run(run_id)
    by_step = {(t.plan_index, t.attempt): t.id for t in record.tests}
    for replay in outcomes.get("replay", {}).get("replays", ()):
        test_id = by_step.get((replay["plan_index"], replay["attempt"]))
        if replay["warnings"] and test_id is not None:
            store.add_flag(test_id, FIDELITY_FLAG, "; ".join(replay["warnings"]))
