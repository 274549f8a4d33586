"""Suite -> ordered list of fully resolved tests, with the options of this run and a duration estimate."""

import itertools
from dataclasses import dataclass, replace
from typing import Callable

from disklab.errors import UserError
from disklab.suite.model import Group, Suite, TestSpec
from disklab.suite.params import PARAMS
from disklab.units import format_size

# Time fio needs around each test (start-up, file open, result output), for the ETA.
PER_TEST_OVERHEAD_S = 0.5
# Assumed write speed for laying out a fresh test file, for the ETA only.
LAYOUT_BYTES_PER_S = 500e6


@dataclass(frozen=True)
class Overrides:
    """Options given on the command line; they win over every suite value."""

    runtime: float | None = None
    ramp: float | None = None
    size: int | None = None
    engine: str | None = None

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Plan:
    suite: Suite
    tests: tuple[TestSpec, ...]
    skipped_writes: int  # tests left out by --read-only

    @property
    def writes(self) -> bool:
        return any(t.writes for t in self.tests)

    @property
    def data_set_bytes(self) -> int:
        return max(t.size for t in self.tests)

    def estimated_seconds(self, layout_bytes: int = 0) -> float:
        return sum(estimate_test_seconds(t) for t in self.tests) + layout_bytes / LAYOUT_BYTES_PER_S


def estimate_test_seconds(test: TestSpec) -> float:
    return test.runtime + test.ramp + PER_TEST_OVERHEAD_S


def build_plan(suite: Suite, overrides: Overrides = Overrides(), read_only: bool = False) -> Plan:
    tests = [replace(t, **overrides.as_dict()) for t in expand_suite(suite)]
    for test in tests:
        if test.bs > test.size:
            raise UserError(
                f"test {test.label!r}: block size {format_size(test.bs)} is larger than its data set "
                f"{format_size(test.size)}; raise --size or lower bs"
            )
    kept = [t for t in tests if not (read_only and t.writes)]
    if not kept:
        raise UserError(f"suite {suite.name!r} has no read-only tests to run with --read-only")
    return Plan(suite=suite, tests=tuple(kept), skipped_writes=len(tests) - len(kept))


def expand_suite(suite: Suite) -> list[TestSpec]:
    """Every group's lists become a grid, in file order: the first list varies slowest."""
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
        tests.append(TestSpec(label=_label(group, values, varying), **values))
    return tests


def _label(group: Group, values: dict, varying: dict) -> str:
    shown = {k: format_size(v) if k in ("bs", "size") else v for k, v in values.items()}
    if group.label:
        return group.label.format(**shown)
    parts = [group.name]
    for key in varying:
        parts.append(str(shown[key]) if key in ("direction", "pattern") else f"{key}={shown[key]}")
    return " ".join(parts)


def resolve_engines(plan: Plan, choose: Callable[[str], str]) -> Plan:
    """Each distinct engine a test asks for ('auto' or a name) is checked once and fixed in the plan."""
    chosen = {wanted: choose(wanted) for wanted in {t.engine for t in plan.tests}}
    return replace(plan, tests=tuple(replace(t, engine=chosen[t.engine]) for t in plan.tests))


def limit_sizes(plan: Plan, max_size: int | None) -> Plan:
    """A device or an existing file is tested over at most its own size."""
    if max_size is None:
        return plan
    return replace(plan, tests=tuple(replace(t, size=min(t.size, max_size)) for t in plan.tests))
