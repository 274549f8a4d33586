"""Which run wins overall (M2, M4: a ranking, not 32 verdicts): each run's geometric mean of its throughput ratios
to the baseline (IOPS, MB/s, TPS: higher is better; latency left out, it mirrors them), beside how many of those
figures the spread calls better, worse, within noise or cannot tell. The order is the ratios'; the counts say how
much of it the data supports."""

import math
from dataclasses import dataclass

from disklab.analysis.compare import Comparison
from disklab.analysis.verdict import BETTER, INCONCLUSIVE, NO_VERDICT, WITHIN_NOISE, WORSE

THROUGHPUT = ("iops", "mb_per_s", "tps")
VERDICTS = (BETTER, WORSE, WITHIN_NOISE, INCONCLUSIVE, NO_VERDICT)


@dataclass(frozen=True)
class Standing:
    run: int  # index into Comparison.runs (0: the baseline)
    geomean_ratio: float  # 1.0 for the baseline
    figures: int  # the throughput figures it rests on
    verdicts: tuple[tuple[str, int], ...]  # (verdict, count) against the baseline, in VERDICTS order


def standings(comparison: Comparison) -> list[Standing]:
    """Every run but the baseline with a throughput figure in common, best first; the baseline at 1.0 among them."""
    found = [Standing(0, 1.0, 0, ())]
    for index in range(1, len(comparison.runs)):
        cells = [row.cells[index] for row in comparison.rows if row.metric in THROUGHPUT]
        ratios = [c.ratio for c in cells if c.ratio is not None and c.ratio > 0]
        if not ratios:
            continue
        counts = {verdict: sum(c.verdict == verdict for c in cells if c.ratio) for verdict in VERDICTS}
        found.append(Standing(index, math.exp(math.fsum(map(math.log, ratios)) / len(ratios)), len(ratios),
                              tuple((v, n) for v, n in counts.items() if n)))
    if len(found) < 2:
        return []
    return sorted(found, key=lambda s: -s.geomean_ratio)
