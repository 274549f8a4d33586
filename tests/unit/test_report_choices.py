"""`disklab report`'s choices: --title, --notes (Markdown, sanitised), --label, --tests, --metrics, and --pdf's
refusal without a browser. Runs are the quick suite's plan replayed from real captured fio output."""

import re
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.report.choices import ReportChoices
from disklab.report.html.markdown import markdown_html
from disklab.store.repository import Store
from tests.unit.test_html_report import QUICK, store_run

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("choices") / "results.db"
    with Store(path) as store:
        store_run(store, QUICK)
        store_run(store, QUICK)
    return path


def report(db, tmp_path, *args) -> str:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["--db", str(db), "report", "1", "2", "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    return out.read_text()


def chart_ids(html: str) -> set[str]:
    return set(re.findall(r'<figure class="chart" id="([^"]+)"', html))


def table(html: str, caption: str) -> tuple[list[str], list[list[str]]]:
    """The headings and rows of the table captioned `caption`, as text."""
    part = html[html.index(f"<caption>{caption}</caption>"):]
    part = part[:part.index("</table>")]
    headings = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", part)
    body = part[part.index("<tbody>"):]
    rows = [re.findall(r"<td(?: [^>]*)?>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", body)]
    return headings, rows


def test_title_and_notes_head_the_report_and_the_notes_markdown_cannot_run_or_fetch(db, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("## Set-up\n\n*Drives* at **61 %** fill.\n\n<script>alert(1)</script>\n\n"
                     "<img src=x onerror=alert(1)> ![pixel](https://example.com/p.png) [bad](javascript:alert(1)) "
                     "[good](https://example.com/)\n")
    html = report(db, tmp_path, "--title", "Two SSDs, one review", "--notes", f"@{notes}")
    assert "<title>Two SSDs, one review</title>" in html and "<h1>Two SSDs, one review</h1>" in html
    section = html[html.index('<section id="notes"'):html.index('<section id="tested"')]
    assert "<h2>Set-up</h2>" in section and "<em>Drives</em>" in section and "<strong>61 %</strong>" in section
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in section and "<script" not in section
    assert "<img" not in section and "onerror=" not in section.replace("&lt;img src=x onerror=", "")
    assert 'href="javascript' not in section and '<a href="https://example.com/">good</a>' in section
    assert html.count("<script>") == 1  # the report's own (chart downloads), no other


def test_notes_markdown_writes_controls_out():
    assert markdown_html("a\x1b[31m red \u202e b") == "<p>a\\x1b[31m red \\u202e b</p>\n"


def test_labels_name_the_runs_in_tables_headings_and_legends(db, tmp_path):
    html = report(db, tmp_path, "--label", "1=990 PRO", "--label", "last=870 EVO")
    assert "990 PRO (run 1)" in html and "870 EVO (run 2)" in html
    headings, _ = table(html, "990 PRO (run 1) · every test")
    assert headings[0] == "Test"
    svg = ET.fromstring(re.search(r'<figure class="chart" id="quick-sequential".*?(<svg.*?</svg>)', html, re.S).group(1))
    legend = [t.text for t in svg.iter(f"{SVG}text") if t.text]
    assert "990 PRO (run 1)" in legend and "870 EVO (run 2)" in legend
    with Store(db, read_only=True) as store:  # the report's names, not the runs'
        assert store.get_run(1).info.name is None


def test_tests_keep_only_the_matching_tests_everywhere_and_say_so(db, tmp_path):
    every = report(db, tmp_path)
    html = report(db, tmp_path, "--tests", "seq1m*", "--tests", "RND4K Q32T1 read")
    _, rows = table(html, "run 1 · every test")
    assert {row[0] for row in rows} == {"SEQ1M Q8T1 read", "SEQ1M Q8T1 write", "SEQ1M Q1T1 read",
                                        "SEQ1M Q1T1 write", "RND4K Q32T1 read"}
    _, all_rows = table(every, "run 1 · every test")
    assert len(all_rows) == 8
    assert "Shown: tests matching seq1m*, RND4K Q32T1 read" in html
    assert "Q1T1 write" not in "".join(re.findall(r'<figure class="chart" id="quick-random".*?</figure>', html, re.S))
    comparison = html[html.index('<section id="comparison"'):html.index('<section id="charts"')]
    assert "RND4K Q1T1" not in comparison and "SEQ1M Q1T1" in comparison


def test_metrics_choose_the_comparisons_rows_the_charts_and_the_tables_columns(db, tmp_path):
    every = report(db, tmp_path)
    latency_charts = {i for i in chart_ids(every) if i.startswith(("latency", "exceedance"))}
    assert {"quick-sequential", "quick-random"} <= chart_ids(every) and latency_charts
    html = report(db, tmp_path, "--metrics", "iops")
    assert chart_ids(html) == {"quick-random"}
    headings, rows = table(html, "run 1 · every test")
    assert headings == ["Test", "Dir", "IOPS"] and all(len(row) == 3 for row in rows)
    _, compared = table(html, "run 1 vs run 2 · baseline run 1")
    assert compared and {row[2] for row in compared} == {"IOPS"}
    latency = report(db, tmp_path, "--metrics", "clat_p99_us,mb_per_s")
    assert chart_ids(latency) == {"quick-sequential", "grid-run-1", "grid-run-2"} | latency_charts  # grids: MB/s
    headings, _ = table(latency, "run 1 · every test")
    assert headings == ["Test", "Dir", "MB/s", "p50 µs", "p99 µs", "p99.9 µs", "p99.99 µs"]


def test_the_choices_keep_the_store_as_it_was():
    choices = ReportChoices(metrics=("iops",))
    assert choices.shows("iops") and not choices.shows("mb_per_s") and choices.shows("")
    assert choices.columns(("Test", "n", "MB/s", "+/-", "IOPS", "+/-"), [("a", "3", "1", "2", "3", "4")]) == (
        ("Test", "n", "IOPS", "+/-"), (("a", "3", "3", "4"),))


@pytest.mark.parametrize("args, fragment", [
    (("--metrics", "iops,nope"), "'nope' is not a metric: choose among iops, mb_per_s"),
    (("--metrics", ""), "is not a metric"),
    (("--label", "9=x"), "there is no run 9"),
    (("--label", "1=x", "--label", "1=y"), "run 1 is labelled twice"),
    (("--label", "1="), "a run's name cannot be empty"),
    (("--label", "nothing"), "is not RUN=TEXT"),
    (("--label", "1=a\nb"), "cannot hold a control character"),
    (("--tests", "NVME*"), "--tests 'NVME*' matches no test of runs 1, 2; their tests: SEQ1M Q8T1 read"),
    (("--tests", ""), "a test pattern cannot be empty"),
    (("--notes", "@/nonexistent/notes.md"), "cannot read notes file /nonexistent/notes.md"),
    (("--notes", "@/dev/zero"), "not a regular file"),
    (("--notes", "  "), "--notes: the notes are empty"),
    (("--title", ""), "a report's title cannot be empty"),
    (("--title", "x" * 201), "at most 200 characters"),
    (("--title", "a\u202eb"), "a bidirectional text control"),
])
def test_bad_choices_are_one_line_exit_2_and_nothing_written(db, tmp_path, args, fragment):
    before = db.read_bytes()
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["--db", str(db), "report", "1", "2", "-o", str(out), *args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("disklab: error: ") and fragment in lines[0], result.stderr
    assert not out.exists() and db.read_bytes() == before


def test_pdf_without_a_browser_is_one_line_exit_2(db, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-browsers-here"))
    result = CliRunner().invoke(cli, ["--db", str(db), "report", "1", "--pdf", "-o", str(tmp_path / "r.pdf")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "--pdf prints the report through Chromium, and none was found" in lines[0]
    assert not (tmp_path / "r.pdf").exists()
