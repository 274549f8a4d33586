"""A run's findings (analysis/findings.py) as a table: in the terminal after the run's results, and in the HTML
report and serve's run page."""

from collections.abc import Sequence

from rich.text import Text

from disklab.analysis.findings import BEYOND_INTERFACE, Figure, Finding
from disklab.report.terminal import terminal_text

HEADINGS = ("Finding", "Test", "What the figures say", "Verdict", "Basis", "Figures")
TITLE = "Findings"
_STYLES = {"not representative": "yellow", "misses the spec": "red", "reaches the spec": "green",
           BEYOND_INTERFACE: "yellow", "no verdict": "dim"}


def figure_text(figure: Figure) -> str:
    if figure.unit == "B":
        gib = figure.value >= 2**30
        return f"{figure.name} {figure.value / 2 ** (30 if gib else 20):,.1f} {'GiB' if gib else 'MiB'}"
    number = f"{figure.value:,.1f}" if figure.unit == "MB/s" else f"{figure.value:,.0f}" if figure.value >= 10 \
        else f"{figure.value:g}"
    return f"{figure.name} {number} {figure.unit}"


def finding_cells(finding: Finding) -> tuple[str, ...]:
    return (finding.kind, finding.subject, finding.statement, finding.verdict, finding.basis,
            "; ".join(figure_text(figure) for figure in finding.figures))


def findings_lines(found: Sequence[Finding]) -> list[Text]:
    """One line each, for the terminal: what, on which test, the figures and what the verdict rests on."""
    lines = [Text(TITLE, style="bold")] if found else []
    for finding in found:
        figures = "; ".join(figure_text(figure) for figure in finding.figures)
        line = Text(terminal_text(f"- {finding.subject}: {finding.statement} [{figures}; basis: {finding.basis}]"))
        line.stylize(_STYLES.get(finding.verdict, ""))
        lines.append(line)
    return lines
