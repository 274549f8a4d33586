"""Steady state against spare area (M4) as a table: one row per over-provisioning level of a series, its steady
figure and its verdict against the least over-provisioned level that reached steady state. Plain text cells, for
`compare` in the terminal and for the HTML report."""

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

from disklab.analysis.overprovision import SpareAreaLevel
from disklab.analysis.stats import TOO_WIDE_PERCENT
from disklab.analysis.verdict import DEFAULT_TOLERANCE_PERCENT
from disklab.report.compare import VERDICT_STYLES
from disklab.report.metrics import REGISTRY
from disklab.report.table import format_spread
from disklab.report.terminal import terminal_text
from disklab.units import format_size

TITLE = "Steady state by spare area (over-provisioning, NVMe in a NAS, M4)"


@dataclass(frozen=True)
class SpareAreaTable:
    title: str
    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    verdicts: tuple[str | None, ...]  # per row, the verdict its last cell writes out (None: the baseline)
    notes: tuple[str, ...]


def spare_area_table(levels: Sequence[SpareAreaLevel],
                     tolerance_percent: float = DEFAULT_TOLERANCE_PERCENT) -> SpareAreaTable:
    unit = REGISTRY[levels[0].metric].unit if levels else "IOPS"
    base = next((level for level in levels if level.steady), None)
    rows = []
    for level in levels:
        steady = level.steady
        figure = "-" if steady is None else f"{REGISTRY[level.metric].format(steady.mean)} ±{format_spread(steady)}"
        judged = level.judgement
        rows.append((
            f"OP {level.percent} %", f"run {level.run_id}", format_size(level.used_bytes), str(len(level.rounds)),
            "yes" if steady else "no", figure, "" if level.ratio is None else f"{level.ratio:.2f}x",
            "baseline" if judged is None else judged.verdict,
        ))
    notes = [f"steady {unit}: the mean of the steady window's rounds (the last rounds, as SNIA judges them), ± its "
             f"95 % confidence interval; ! wider than {TOO_WIDE_PERCENT:g} %"]
    if base is not None:
        notes.append(f"ratio and verdict against OP {base.percent} %, the least over-provisioned level that reached "
                     f"steady state; better / worse: more than {tolerance_percent:g} % apart and supported by the "
                     "windows' spread (Welch's t-test)")
    for level in levels:
        judged = level.judgement
        if judged is not None and judged.reason:
            notes.append(f"OP {level.percent} %: {judged.verdict}: {judged.reason}")
        if level.steady is None:
            notes.append(f"OP {level.percent} %: {level.summary}")
    return SpareAreaTable(
        TITLE, ("Level", "Run", "Written region", "Rounds", "Steady", f"Steady {unit}", "ratio", "verdict"),
        tuple(rows), tuple(None if level.judgement is None else level.judgement.verdict for level in levels),
        tuple(notes),
    )


def spare_area_renderables(table: SpareAreaTable) -> list:
    """The table for the terminal, its verdicts coloured as compare colours them (and written out)."""
    rendered = Table(title=table.title, title_justify="left")
    for i, heading in enumerate(table.headings):
        rendered.add_column(heading, justify="left" if i < 2 else "right")
    for row, verdict in zip(table.rows, table.verdicts):
        rendered.add_row(*row[:-1], Text(row[-1], style=VERDICT_STYLES.get(verdict, "")))
    return [rendered, *(Text(terminal_text(note)) for note in table.notes)]

