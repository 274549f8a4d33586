"""How long a run takes, modelled on what it does: each step's pause, ramp and measured time, fio's start-up around
every step, the test file's layout, and how many steps a schedule that decides its own (a saturation search, rounds
until steady) may take.

What fio is told (pause, ramp, runtime) is exact; fio's start-up and the speed of a test that runs once over its data
are figures measured on a 2-core VM (bench/estimates.py prints estimate against wall time for the suites).
"""

from dataclasses import dataclass

from disklab.suite.model import Suite, TestSpec
from disklab.suite.settings import SaturationSettings

# fio's start-up and exit around each step (fork, job file, opening the file, the JSON report) and disklab's own work
# between steps (the job file written, the result parsed and committed): 0.35-0.45 s a step on the VM, busy or not.
STEP_START_S = 0.4
# Each job process beyond the first that fio sets up: matrix's 64-job tests start about 0.1 s later than 1-job ones.
PER_JOB_START_S = 0.002
# Once per run: fio's features, the environment and SMART before and after, the store's run row.
RUN_START_S = 1.5
# Speed assumed for laying out files and for tests that run once over their data (runtime only caps them): the VM's
# virtio disk moves 1-1.8 GB/s in 1 MiB blocks ...
ASSUMED_BYTES_PER_S = 1e9
# ... and small blocks at this many IOPS per I/O in flight, up to MAX_PARALLEL of them (4 KiB at QD1: 6,400-28,000).
ASSUMED_IOPS = 20_000
MAX_PARALLEL = 4


@dataclass(frozen=True)
class Estimate:
    """A run's expected duration, and the least and most it may take where its schedule decides its steps."""

    seconds: float
    low_s: float
    high_s: float
    steps: int  # the steps expected (what the progress bar counts to until the schedule knows better)
    low_steps: int
    high_steps: int

    @property
    def exact_steps(self) -> bool:
        return self.low_steps == self.high_steps


def step_seconds(test: TestSpec) -> float:
    """One step: its pause, ramp and measured time, and fio's start-up around it."""
    if test.time_based or test.size is None:  # a whole device is estimated at its runtime cap
        measured = test.runtime
    else:
        measured = min(test.runtime, data_seconds(test)) if test.runtime else data_seconds(test)
    return test.pause + test.ramp + measured + STEP_START_S + (test.jobs - 1) * PER_JOB_START_S


def data_seconds(test: TestSpec) -> float:
    """How long one pass over the test's data takes, at the assumed speed (frame tests: at their frame rate).

    Parallel random jobs each cover the whole region; sequential ones share it in slices (plan/build.py)."""
    if test.frame_size:
        return test.size / test.frame_bytes / test.fps
    data = test.size * (test.jobs if test.pattern == "random" else 1)
    return data / min(ASSUMED_BYTES_PER_S, ASSUMED_IOPS * test.bs * min(test.iodepth * test.jobs, MAX_PARALLEL))


def layout_seconds(layout_bytes: int) -> float:
    return layout_bytes / ASSUMED_BYTES_PER_S


def fixed_estimate(tests: tuple[TestSpec, ...], layout_bytes: int, passes: int = 1) -> Estimate:
    """Every test `passes` times, the file laid out once."""
    seconds = RUN_START_S + layout_seconds(layout_bytes) + passes * sum(step_seconds(t) for t in tests)
    steps = passes * len(tests)
    return Estimate(seconds, seconds, seconds, steps, steps, steps)


def search_steps(s: SaturationSettings) -> tuple[int, int, int]:
    """(least, expected, most) steps of a saturation search (analysis/peak_search.py) and its load levels.

    The least: queue depth 1 and 4, one jobs step that gains nothing, the winner measured to `repeats` passes. The
    most: every depth and jobs step measured `repeats` times. Typically a setting or two more are tried and one
    that might be the peak is measured again: 6 to 10 search steps on the 2-core VM, so least + `repeats` is expected.
    """
    depth_most, jobs_most = s.max_iodepth.bit_length(), (s.max_jobs.bit_length() - 1)
    least = min(2, depth_most) + s.repeats - 1 + min(1, jobs_most)
    most = (depth_most + jobs_most) * s.repeats
    levels = len(s.levels)
    return least + levels, min(least + s.repeats, most) + levels, most + levels


def round_steps(suite: Suite) -> tuple[int, int]:
    """(least, most) rounds of a rounds suite: steady state needs a full window; enough written may take one."""
    rounds = suite.rounds
    return (rounds.criteria.window if suite.mode == "steady" else 1), rounds.criteria.max_rounds


def plan_estimate(suite: Suite, tests: tuple[TestSpec, ...], layout_bytes: int, passes: int = 1) -> Estimate:
    """The run of these tests (a plan's, fitted to the target) as the suite's schedule would carry it out."""
    if suite.saturation is not None and tests:
        least, expected, most = search_steps(suite.saturation)
        per_step = step_seconds(tests[0])
        start = RUN_START_S + layout_seconds(layout_bytes)
        return Estimate(start + expected * per_step, start + least * per_step, start + most * per_step,
                        expected, least, most)
    if suite.rounds is not None and tests:
        *before, workload = tests
        fixed = fixed_estimate(tuple(before), layout_bytes)
        per_round = step_seconds(workload)
        least, most = round_steps(suite)
        low, high = fixed.seconds + least * per_round, fixed.seconds + most * per_round
        if suite.rounds.time_limit:
            high = min(high, fixed.seconds + suite.rounds.time_limit + per_round)
        return Estimate(high, low, high, len(before) + most, len(before) + least, len(before) + most)
    return fixed_estimate(tests, layout_bytes, passes)
