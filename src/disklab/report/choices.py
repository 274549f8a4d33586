"""What the user of `disklab report` chose to show: a title, notes, each run's label, the tests and the metrics.

Checked once, early, into one frozen object; the report model applies it and says in the page what was chosen, so
a report of a few tests cannot pass for one of every test.
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

from disklab.errors import UserError
from disklab.report.metrics import REGISTRY
from disklab.store.names import checked_text, run_name
from disklab.store.records import RunRecord

MAX_TITLE_CHARS = 200
# The per-test tables' columns by the metric (report/metrics.py) each shows; '+/-' goes with the column before it,
# a column not listed (test, direction, n) always stays.
_COLUMN_METRICS = {
    "MB/s": "mb_per_s", "IOPS": "iops", "TPS": "tps", "TPS incl. conn.": "tps", "Mean lat µs": "lat_mean_us",
    "Mean lat ms": "lat_mean_us", "p50 µs": "clat_p99_us", "p99 µs": "clat_p99_us", "p99.9 µs": "clat_p99_us",
    "p99.99 µs": "clat_p99_us", "p50 ms": "clat_p99_us", "p99 ms": "clat_p99_us",
}
_SPREAD_HEADING = "+/-"


@dataclass(frozen=True)
class ReportChoices:
    title: str | None = None  # None: runs and suites
    notes: str | None = None  # Markdown (report/html/markdown.py renders it, raw HTML shown as text)
    labels: tuple[tuple[int, str], ...] = ()  # (run id, the name it goes by in this report)
    tests: tuple[str, ...] = ()  # globs of test labels; none: every test
    metrics: tuple[str, ...] = ()  # names in report/metrics.py's REGISTRY; none: every metric

    def applied(self, records: Sequence[RunRecord]) -> list[RunRecord]:
        """The runs with their labels as names and only the chosen tests; a pattern matching no test is refused."""
        names = dict(self.labels)
        records = [replace(r, info=replace(r.info, name=names[r.info.id])) if r.info.id in names else r
                   for r in records]
        if not self.tests:
            return records
        for pattern in self.tests:
            if not any(_matches(pattern, t.label) for r in records for t in r.tests):
                labels = list(dict.fromkeys(t.label for r in records for t in r.tests))
                shown = ", ".join(labels[:8]) + (f" and {len(labels) - 8} more" if len(labels) > 8 else "")
                raise UserError(f"--tests {pattern!r} matches no test of runs "
                                f"{', '.join(str(r.info.id) for r in records)}; their tests: {shown or 'none'}")
        return [replace(r, tests=tuple(t for t in r.tests if any(_matches(p, t.label) for p in self.tests)))
                for r in records]

    def shows(self, metric: str | None) -> bool:
        """Whether a figure of `metric` is shown; one tied to no metric (None, '') always is."""
        return not self.metrics or not metric or metric in self.metrics

    def columns(self, headings: Sequence[str], rows: Sequence[Sequence[str]]) -> tuple[tuple, tuple]:
        """A per-test table's headings and rows without the columns of metrics not chosen."""
        kept, previous = [], None
        for i, heading in enumerate(headings):
            metric = previous if heading == _SPREAD_HEADING else _COLUMN_METRICS.get(heading)
            previous = metric
            if self.shows(metric):
                kept.append(i)
        return tuple(headings[i] for i in kept), tuple(tuple(row[i] for i in kept) for row in rows)

    def described(self) -> str:
        """What was chosen, for the page: '' when everything is shown."""
        parts = [f"tests matching {', '.join(self.tests)}"] * bool(self.tests)
        parts += [f"metrics {', '.join(self.metrics)}"] * bool(self.metrics)
        return "Shown: " + " · ".join(parts) if parts else ""


def _matches(pattern: str, label: str) -> bool:
    """A shell glob over the test's label, in any case: 'SEQ1M*', '*Q1T1*', 'RND4K Q32T1 read'."""
    return fnmatchcase(label.casefold(), pattern.casefold())


def report_title(text: str) -> str:
    return checked_text(text, "a report's title", MAX_TITLE_CHARS)


def tests_pattern(text: str) -> str:
    return checked_text(text, "a test pattern", MAX_TITLE_CHARS)


def metric_names(text: str) -> tuple[str, ...]:
    """'iops,mb_per_s' -> the names, each once, in the order given; ValueError naming the ones that exist."""
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",")))
    unknown = [name for name in names if name not in REGISTRY]
    if unknown or not names:
        raise ValueError(f"{', '.join(map(repr, unknown)) or repr(text)} is not a metric: choose among "
                         f"{', '.join(REGISTRY)} (comma-separated)")
    return names


def run_label(text: str) -> tuple[str, str]:
    """'RUN=TEXT' -> (RUN as given, TEXT checked as a run's name)."""
    ref, equals, label = text.partition("=")
    if not equals or not ref.strip():
        raise ValueError(f"{text!r} is not RUN=TEXT (e.g. 3=\"990 PRO\")")
    return ref.strip(), run_name(label)
