"""Which run wins overall (M2, M4: a ranking, not 32 verdicts): each run's overview figure (overview.py: the
geometric mean of its per-test throughput ratios to the baseline), beside how many of those figures the spread
calls better, worse, within noise or cannot tell. The order is the ratios'; the counts say how much of it the data
supports."""

from dataclasses import dataclass

from disklab.analysis.compare import Comparison
from disklab.analysis.overview import overview, primary_rows
from disklab.analysis.verdict import BETTER, INCONCLUSIVE, NO_VERDICT, WITHIN_NOISE, WORSE

VERDICTS = (BETTER, WORSE, WITHIN_NOISE, INCONCLUSIVE, NO_VERDICT)


@dataclass(frozen=True)
class Standing:
    run: int  # index into Comparison.runs (0: the baseline)
    geomean_ratio: float  # 1.0 for the baseline
    figures: int  # the throughput figures it rests on
    verdicts: tuple[tuple[str, int], ...]  # (verdict, count) against the baseline, in VERDICTS order


def standings(comparison: Comparison) -> list[Standing]:
    """Every run but the baseline with a throughput figure in common, best first; the baseline at 1.0 among them."""
    rows = primary_rows(comparison)
    found = []
    for relative in overview(comparison):
        cells = [row.cells[relative.run] for row in rows] if relative.run else []
        counts = {verdict: sum(c.verdict == verdict for c in cells if c.ratio) for verdict in VERDICTS}
        found.append(Standing(relative.run, relative.ratio, 0 if relative.run == 0 else relative.tests,
                              tuple((v, n) for v, n in counts.items() if n)))
    return sorted(found, key=lambda s: -s.geomean_ratio)
