"""Layouts side by side before the hardware exists: predictions per workload, crossovers, capacity and costs.

Workloads are suite tests (the M2 suites `blocksize` and `mixed` by default), so a planned array and a
measured one answer the same questions. Crossovers are found as for stored runs (analysis/compare.py); a
model's figures carry no noise, so any lead counts.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from disklab.analysis.compare import Cell, Crossover, Row, TestKey, find_crossovers, match_params
from disklab.analysis.stats import summarize
from disklab.capacity.cost import Costs, Money, costs
from disklab.capacity.layout import Layout
from disklab.capacity.model import Ceilings, Prediction, ceilings_for, predict, workload_from_test
from disklab.errors import UserError
from disklab.plan.build import check_test_count, expand_suite
from disklab.suite.loader import load_suite
from disklab.suite.model import TestSpec

DEFAULT_WORKLOADS = ("blocksize", "mixed")  # study M2's sweep and its mixed block sizes
# The direction of a predicted row: the model gives reads and writes together.
TOTAL = "read + write"


@dataclass(frozen=True)
class PlannedArray:
    layout: Layout
    ceilings: Ceilings
    predictions: tuple[Prediction, ...]  # one per test of the plan
    costs: Costs


@dataclass(frozen=True)
class ArrayPlan:
    tests: tuple[TestSpec, ...]
    arrays: tuple[PlannedArray, ...]
    crossovers: tuple[Crossover, ...]
    headline: int  # the test whose IOPS price the arrays (cost per 1,000 IOPS)
    money: Money


def workload_tests(names: Sequence[str]) -> tuple[TestSpec, ...]:
    """The fio tests of the named suites (or suite files) that the model can take: random or sequential reads
    and writes, without file sets."""
    tests = []
    for name in names:
        suite = load_suite(name)
        check_test_count(suite, None)
        usable = [t for t in expand_suite(suite) if t.pattern in ("random", "sequential") and not t.file_set
                  and t.direction in ("read", "write", "mixed")]
        if not usable:
            raise UserError(f"suite {suite.name!r} has no fio test of reads or writes without file sets for the model "
                            "to predict")
        tests += usable
    return tuple(tests)


def plan_arrays(layouts: Sequence[Layout], tests: Sequence[TestSpec], money: Money,
                controller_bytes_per_s: float | None = None, host_bytes_per_s: float | None = None,
                given_power_w: Sequence[float] = ()) -> ArrayPlan:
    """Each layout under each test, with the links given or each layout's defaults. The headline is the last test."""
    headline = len(tests) - 1
    arrays = []
    for i, layout in enumerate(layouts):
        limits = ceilings_for(layout, controller_bytes_per_s, host_bytes_per_s)
        predictions = tuple(predict(layout, workload_from_test(t), limits) for t in tests)
        power = given_power_w[i] if i < len(given_power_w) else None
        priced = costs(layout, money, predictions[headline].iops, power)
        arrays.append(PlannedArray(layout, limits, predictions, priced))
    return ArrayPlan(tuple(tests), tuple(arrays), _crossovers(tests, arrays), headline, money)


def _crossovers(tests: Sequence[TestSpec], arrays: Sequence[PlannedArray]) -> tuple[Crossover, ...]:
    """Along block size (or any swept parameter) in MB/s; IOPS at one block size have the same leader."""
    return crossovers_in_mb_per_s(tests, [[p.bw_bytes_per_s for p in a.predictions] for a in arrays])


def crossovers_in_mb_per_s(tests: Sequence[TestSpec], series: Sequence[Sequence[float]]) -> tuple[Crossover, ...]:
    """Where the lead changes between arrays, given each array's bytes/s per test (predicted or published); found
    as for stored runs (analysis/compare.py), where figures without noise make any lead count."""
    rows = [
        Row(test.label, TestKey(match_params(test.params())), TOTAL, "mb_per_s",
            tuple(Cell(summarize([figures[i] / 1e6])) for figures in series))
        for i, test in enumerate(tests)
    ]
    return find_crossovers(rows, tolerance_percent=0.0, exact=True)
