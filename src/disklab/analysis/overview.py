"""One relative figure per run (OpenBenchmarking's overview of a multi-drive review): the geometric mean of each
test's throughput ratio to the baseline, with its 95 % interval from the repeats.

One ratio per test and direction: its IOPS, else its MB/s, else its TPS (IOPS and MB/s of one test move together,
so counting both would weigh that test twice); latency is left out (it mirrors throughput). The geometric mean
treats a test twice as fast and one half as fast as cancelling out, whatever their scales. The interval: each
log ratio's variance from both runs' repeats (delta method: (sd / mean)^2 / n of each), the mean of the k log
ratios has variance sum / k^2, and mean +/- t standard errors is taken back through exp, t Student's at the fewest
repeats' degrees of freedom (5 passes: 2.78, not the normal's 1.96). Without repeats on every figure, or where a
flag withholds verdicts on a figure (other work beside the test, a test fio did not finish), there is no interval,
and the reason says so: an interval from figures the spread of other work made is a verdict they have not earned.
"""

import math
from dataclasses import dataclass

from disklab.analysis.compare import Cell, Comparison
from disklab.analysis.stats import t_975

PRIMARY = ("iops", "mb_per_s", "tps")  # a test's throughput figure, the first it has
METHOD = ("geometric mean of each shared test's throughput ratio to the baseline (its IOPS, else MB/s, else TPS), "
          "95 % interval from the repeats (delta method on the log ratios, Student's t)")


@dataclass(frozen=True)
class Relative:
    run: int  # index into Comparison.runs (0: the baseline)
    ratio: float  # the geometric mean of the per-test ratios; 1.0 for the baseline
    low: float | None  # the 95 % interval; None: no interval (why_no_interval says why)
    high: float | None
    tests: int  # the tests it rests on
    why_no_interval: str | None = None


def overview(comparison: Comparison) -> list[Relative]:
    """Every run with a throughput figure in common with the baseline, in the comparison's order; empty when no
    run but the baseline has one."""
    primary = primary_rows(comparison)
    found = []
    for index in range(1, len(comparison.runs)):
        pairs = [(row.cells[0], row.cells[index]) for row in primary]
        pairs = [(base, cell) for base, cell in pairs if _usable(base) and _usable(cell)]
        if pairs:
            found.append(_relative(index, pairs))
    if not found:
        return []
    return [Relative(0, 1.0, None, None, max(r.tests for r in found)), *found]


def primary_rows(comparison: Comparison) -> list:
    """Per test and direction, the row of its first PRIMARY metric."""
    chosen: dict[tuple, object] = {}
    for row in comparison.rows:
        if row.metric not in PRIMARY:
            continue
        key = (row.key, row.direction)
        if key not in chosen or PRIMARY.index(row.metric) < PRIMARY.index(chosen[key].metric):
            chosen[key] = row
    return list(chosen.values())


def _usable(cell: Cell) -> bool:
    return cell.summary is not None and cell.summary.mean > 0


def _relative(index: int, pairs: list[tuple[Cell, Cell]]) -> Relative:
    logs = [math.log(cell.summary.mean / base.summary.mean) for base, cell in pairs]
    mean = math.fsum(logs) / len(logs)
    ratio = math.exp(mean)
    single = sum(1 for base, cell in pairs if base.summary.n < 2 or cell.summary.n < 2)
    if single:
        return Relative(index, ratio, None, None, len(pairs),
                        f"{single} of {len(pairs)} figures are single runs (--repeat 3 or more gives an interval)")
    flagged = [base.withheld_by or cell.withheld_by for base, cell in pairs if base.withheld_by or cell.withheld_by]
    if flagged:
        return Relative(index, ratio, None, None, len(pairs),
                        f"{len(flagged)} of {len(pairs)} figures rest on tests whose verdicts are withheld: {flagged[0]}")
    variance = math.fsum(_relative_variance(base) + _relative_variance(cell) for base, cell in pairs)
    degrees = min(min(base.summary.n, cell.summary.n) for base, cell in pairs) - 1
    half = t_975(degrees) * math.sqrt(variance) / len(pairs)
    return Relative(index, ratio, math.exp(mean - half), math.exp(mean + half), len(pairs))


def _relative_variance(cell: Cell) -> float:
    """The variance of the log of a mean of repeats: (sd / mean)^2 / n."""
    s = cell.summary
    return (s.stdev / s.mean) ** 2 / s.n
