"""Suite -> ordered list of fully resolved tests, fitted to the target, with notes and a duration estimate."""

import itertools
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from disklab.errors import UserError
from disklab.suite.model import Group, Suite, TestSpec
from disklab.suite.params import PARAMS
from disklab.units import format_size, human_size, parse_size

if TYPE_CHECKING:
    from disklab.plan.estimate import Estimate

# Regions and job slices start on this boundary (direct I/O needs aligned offsets).
ALIGNMENT = 1024**2
# fio allocates a buffer for every queued I/O of every job; deeper queues of huge blocks are cut to fit this.
MAX_IN_FLIGHT_BYTES = 1024**3
# SNIA's workload-independent preconditioning: 128 KiB sequential writes, the region written twice over.
PRECONDITION_GROUP = "precondition"
PRECONDITION_BS = 128 * 1024
PRECONDITION_IODEPTH = 32
# Tests one run may hold unless --max-tests raises it: a few lists in a small suite can multiply into millions.
DEFAULT_MAX_TESTS = 10_000


@dataclass(frozen=True)
class Overrides:
    """Options given on the command line; they win over every suite value."""

    runtime: float | None = None
    ramp: float | None = None
    pause: float | None = None
    size: int | None = None
    engine: str | None = None
    scale: float | None = None  # shrinks file sets (and the data set) by this factor
    max_tests: int | None = None  # the most tests a run may hold (default DEFAULT_MAX_TESTS)

    def replacements(self) -> dict:
        """The overrides that replace test parameters."""
        return {k: v for k, v in self.__dict__.items() if v is not None and k not in ("scale", "max_tests")}


@dataclass(frozen=True)
class Plan:
    suite: Suite
    tests: tuple[TestSpec, ...]
    skipped: tuple[tuple[str, str], ...] = ()  # (test label, why it cannot run on this target)
    notes: tuple[str, ...] = ()  # how the plan was adapted to this target
    left_out_writes: int = 0  # writing tests left out by --read-only
    engine_change: str | None = None  # why the engine chosen for this machine was not the one that ran (an array's)

    @property
    def writes(self) -> bool:
        return any(t.writes for t in self.tests)

    def single_file_bytes(self) -> int:
        """How large the one test file grows (fio extends it to the furthest region)."""
        return max((t.offset + t.size for t in self.tests if not t.file_set and t.size), default=0)

    def file_set_bytes(self) -> int:
        """File sets are kept until the run ends; tests of the same set share its files."""
        sets = {file_set_name(t): t.nrfiles * t.filesize for t in self.tests if t.file_set}
        return sum(sets.values())

    def estimate(self, layout_bytes: int = 0, passes: int = 1) -> "Estimate":
        """How long the run takes as its schedule carries it out (plan/estimate.py): every step a search or rounds
        may take, every pass. Loaded here: show and report read plans without estimating them."""
        from disklab.plan.estimate import plan_estimate

        return plan_estimate(self.suite, self.tests, layout_bytes, passes)

    def estimated_seconds(self, layout_bytes: int = 0) -> float:
        """One pass; for suites run in rounds, the longest it may take: every round the suite allows."""
        return self.estimate(layout_bytes).seconds


def file_set_name(test: TestSpec) -> str:
    """A set is its shape: the tests that write and then read N files of a size share the same files."""
    return f"set-{test.nrfiles}x{test.filesize}"


def build_plan(suite: Suite, overrides: Overrides = Overrides(), read_only: bool = False) -> Plan:
    if suite.pgbench is not None:
        raise UserError(f"{suite.where} runs pgbench against a private PostgreSQL, not fio tests; run it with "
                        f"'disklab run {suite.name} --target DIR' (--dry-run shows its steps)")
    if overrides.scale is not None and overrides.scale > 1:
        raise UserError(f"--scale {overrides.scale:g}: for a fio suite --scale shrinks file sets and data sets by a "
                        "factor above 0 and at most 1, e.g. 0.01 (a whole number is pgbench's scale factor, for a "
                        "pgbench suite)")
    check_test_count(suite, overrides.max_tests)
    tests = [_with_overrides(t, overrides, suite.where) for t in expand_suite(suite)]
    for test in tests:
        if test.size is not None and test.bs > test.size and not test.file_set:
            raise UserError(
                f"{suite.where}: test {test.label!r}: block size {human_size(test.bs)} is larger than its data set "
                f"{human_size(test.size)}; raise --size or lower bs"
            )
        _check_as_written(test, suite.where)
    if suite.mode != "fixed" and len(tests) != 1:
        raise UserError(f"{suite.where}: mode {suite.mode!r} runs one test in steps; the suite expands to {len(tests)}")
    if suite.rounds is not None:
        tests = _with_preconditioning(suite, tests)
    kept = [t for t in tests if not (read_only and t.writes)]
    if not kept:
        raise UserError(f"{suite.where}: no test is read-only, so --read-only leaves nothing to run")
    return Plan(suite=suite, tests=tuple(kept), notes=suite.notes, left_out_writes=len(tests) - len(kept))


def _check_as_written(test: TestSpec, where: str) -> None:
    """fio's options handed on as written agree with the test's parameters, which its figures are read by."""
    given = test.fio_options
    rw = given.get("rw", given.get("readwrite"))
    mode = rw.partition(":")[0].strip() if rw is not None else None
    if mode is not None and {"readwrite": "rw"}.get(mode, mode) != test.fio_rw:  # fio's two names of one mode
        raise UserError(f"{where}: test {test.label!r}: fio's rw={rw} is not the test's {test.fio_rw} (its pattern and "
                        "direction); give the same mode")
    if test.region != "whole" and {"offset", "offset_increment"} & set(given):
        raise UserError(f"{where}: test {test.label!r}: its region sets fio's offset; give the region or an offset "
                        "in fio's options, not both")


def _with_preconditioning(suite: Suite, tests: list[TestSpec]) -> list[TestSpec]:
    """A rounds suite has one workload test; SNIA's workload-independent preconditioning comes first, as two tests."""
    if not suite.rounds.precondition:
        return tests
    (workload,) = tests
    if workload.file_set:
        raise UserError(f"{suite.where}: mode {suite.mode!r} preconditions one test file or device, not a file set; "
                        "set precondition = false")
    return [precondition_pass(workload, n) for n in (1, 2)] + tests


def precondition_pass(workload: TestSpec, n: int) -> TestSpec:
    """The workload's region written once over with 128 KiB sequential writes, however long that takes."""
    return replace(
        workload, label=f"precondition pass {n}", group=PRECONDITION_GROUP, metric="mb_per_s", pattern="sequential",
        direction="write", bs=PRECONDITION_BS, bssplit=None, iodepth=PRECONDITION_IODEPTH, jobs=1, time_based=False,
        runtime=0.0, ramp=0.0, pause=0.0, rate=None, rate_iops=None, sync="none", log_interval=None,
    )


def count_tests(suite: Suite) -> int:
    """How many tests the suite expands to, counted without expanding it."""
    return sum(g.repeat * math.prod(len(v) for _, v in g.values if isinstance(v, tuple)) for g in suite.groups)


def check_test_count(suite: Suite, max_tests: int | None, repeat: int = 1, why: str = "--repeat") -> None:
    """Refused before anything is expanded, so a suite of millions of tests costs nothing but this line."""
    limit = max_tests or DEFAULT_MAX_TESTS
    count = count_tests(suite) * repeat
    if count > limit:
        times = f" run {repeat} times ({why})" if repeat > 1 else ""
        raise UserError(f"{suite.where}{times} expands to {count:,} tests, more than the limit of {limit:,} per run; "
                        f"shorten its lists, or allow it with --max-tests {count} (run, export)")


def expand_suite(suite: Suite) -> list[TestSpec]:
    """Every group's lists become a grid, in file order: the first list varies slowest; repeats run in a row."""
    base = {name: param.default for name, param in PARAMS.items()}
    base.update(suite.defaults)
    tests = []
    for group in suite.groups:
        tests.extend(_expand_group(group, base))
    return tests


def _expand_group(group: Group, base: dict) -> list[TestSpec]:
    axes = [(k, v) for k, v in group.values if isinstance(v, tuple)]
    fixed = {k: v for k, v in group.values if not isinstance(v, tuple)}
    if "rwmixread" in fixed or any(k == "rwmixread" for k, _ in axes):
        fixed.setdefault("direction", "mixed")
    tests = []
    for combination in itertools.product(*(values for _, values in axes)):
        values = {**base, **fixed, **dict(zip((k for k, _ in axes), combination))}
        varying = {k: values[k] for k, _ in axes}
        for n in range(1, group.repeat + 1):
            label = _label(group, values, varying, n)
            tests.append(TestSpec(label=label, group=group.name, metric=group.metric, **values))
    return tests


def _label(group: Group, values: dict, varying: dict, n: int) -> str:
    shown = {k: format_size(v) if k in ("bs", "size", "filesize") and v else v for k, v in values.items()}
    if shown.get("fio"):
        shown["fio"] = shown["fio"].replace("\n", " ")  # one line of a label: the options as a command line lists them
    if group.label:
        return group.label.format(**shown, **{"pass": n})
    parts = [group.name]
    for key in varying:
        parts.append(str(shown[key]) if key in ("direction", "pattern") else f"{key}={shown[key]}")
    if group.repeat > 1:
        parts.append(f"pass {n}")
    return " ".join(parts)


def _with_overrides(test: TestSpec, overrides: Overrides, where: str) -> TestSpec:
    test = _split_size(replace(test, **overrides.replacements()), where)
    if overrides.size and (test.nrfiles > 1 or test.filesize):
        test = _fit_file_set(test, overrides.size)  # --size of a file set is the set's total
    return _as_file_set(_scaled(test, overrides.scale))


def _scaled(test: TestSpec, scale: float | None) -> TestSpec:
    if not scale:
        return test
    if test.nrfiles > 1 or test.filesize:
        total = max(int(test.nrfiles * (test.filesize or test.size or 0) * scale), 1)
        return _fit_file_set(test, total)
    return replace(test, size=max(int((test.size or 0) * scale), test.bs) if test.size else None)


def _split_size(test: TestSpec, where: str) -> TestSpec:
    """nrfiles without a filesize splits the data set among the files, as fio does."""
    if test.nrfiles == 1 or test.filesize or test.frame_size:
        return test
    if test.size is None:
        raise UserError(f"{where}: test {test.label!r}: nrfiles = {test.nrfiles} splits the data set among the files; "
                        "give a size (not 'all') or a filesize")
    return replace(test, filesize=max(_down(test.size // test.nrfiles, test.bs), test.bs))


def _as_file_set(test: TestSpec) -> TestSpec:
    """Frame tests are file sets of frame-sized files; a --size on a file set sets the set's total size."""
    if test.frame_size:
        frame = test.frame_bytes
        frames = max((test.size or frame) // frame, 1)
        return replace(test, bs=frame, filesize=frame, nrfiles=frames, size=frames * frame, rate_iops=test.fps,
                       time_based=False)
    if test.filesize:
        return replace(test, size=test.nrfiles * test.filesize)
    return test


def _fit_file_set(test: TestSpec, total: int) -> TestSpec:
    """Fewer files first; a set already down to one file gets a smaller file (whole blocks, for direct I/O)."""
    filesize = max(_down(min(test.filesize or total, total), test.bs), test.bs)
    return replace(test, filesize=filesize, nrfiles=max(total // filesize, 1))


def fit_to_target(plan: Plan, capacity: int | None, logical_block_size: int, is_directory: bool) -> Plan:
    """Resolve regions against the real extent, skip what the device cannot do, and say what changed."""
    tests, skipped, notes = [], list(plan.skipped), list(plan.notes)
    for test in plan.tests:
        if test.file_set:
            if not is_directory:
                raise UserError(f"test {test.label!r} works on a set of files; give a directory as --target")
            tests.append(test)
            continue
        unaligned = [bs for bs in test.block_sizes if bs % logical_block_size]
        if test.direct and unaligned:
            skipped.append((test.label, f"block size {format_size(unaligned[0])} is not a whole number of the "
                                        f"target's {logical_block_size}-byte logical blocks, which direct I/O needs"))
            continue
        extent = _extent(test, capacity)
        offset, length, note = _region(test.region, extent, test.bs)
        if note:
            notes.append(f"{test.label}: {note}")
        tests.append(replace(test, offset=offset, size=length))
    tests = [_limit_in_flight(t, notes) for t in tests]
    if not tests:
        raise UserError(f"no test of suite {plan.suite.name!r} can run on this target: {skipped[0][1]}")
    return replace(plan, tests=tuple(tests), skipped=tuple(skipped), notes=tuple(dict.fromkeys(notes)))


def _limit_in_flight(test: TestSpec, notes: list[str]) -> TestSpec:
    per_io = max(test.block_sizes)
    depth = max(MAX_IN_FLIGHT_BYTES // (per_io * test.jobs), 1)
    if test.iodepth <= depth:
        return test
    notes.append(f"{test.label}: queue depth {test.iodepth} cut to {depth} so that at most "
                 f"{human_size(MAX_IN_FLIGHT_BYTES)} of {human_size(per_io)} buffers is in flight")
    return replace(test, iodepth=depth)


def _extent(test: TestSpec, capacity: int | None) -> int:
    if test.size is None:
        if capacity is None:
            raise UserError(f"test {test.label!r} covers the whole device; for a test file give --size (e.g. --size 32G)")
        return capacity
    return min(test.size, capacity) if capacity is not None else test.size


def _region(region: str, extent: int, bs: int) -> tuple[int, int, str | None]:
    """(offset, length, note) of a region such as 'first:10%' or 'last:5GB' within `extent` bytes."""
    align = max(bs, ALIGNMENT) if extent >= 4 * max(bs, ALIGNMENT) else bs
    if region == "whole":
        return 0, _down(extent, bs), None
    where, _, amount = region.partition(":")
    note = None
    if amount.endswith("%"):
        length = extent * int(amount[:-1]) // 100
    else:
        length = parse_size(amount)
        if 2 * length > extent:
            note = (f"region {region} scaled down to {where}:{human_size(_down(extent // 2, align))} "
                    f"because the target holds only {human_size(extent)}")
            length = extent // 2
    length = max(_down(length, align), bs)
    offset = 0 if where == "first" else _down(extent - length, align)
    return offset, length, note


def _down(n: int, multiple: int) -> int:
    return n // multiple * multiple


def resolve_engines(plan: Plan, choose: Callable[[str], str]) -> Plan:
    """Each distinct engine a test asks for ('auto' or a name) is checked once and fixed in the plan."""
    chosen = {wanted: choose(wanted) for wanted in {t.engine for t in plan.tests}}
    return replace(plan, tests=tuple(replace(t, engine=chosen[t.engine]) for t in plan.tests))


def sequential_job_slice(test: TestSpec) -> int | None:
    """Parallel sequential jobs each stream through their own slice of the region, not all over the same blocks."""
    if test.pattern != "sequential" or test.jobs == 1 or test.file_set:
        return None
    return max(_down(test.size // test.jobs, test.bs), test.bs)


