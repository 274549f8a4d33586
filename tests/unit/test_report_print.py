"""The report on paper and on narrow pages (issue 42): tables that wrap within the page and go on over the next, the
PDF's paper from the option or the locale. Real Chromium prints and lays the pages out in
tests/integration/test_report_print.py; here, the page's markup and styles, and the choice of paper.

The runs are real captured fio output replayed into a store (test_html_report.py).
"""

import re
from dataclasses import replace

import pytest
from click.testing import CliRunner
from markupsafe import Markup

import disklab.report.html.pdf as pdf_module
from disklab.cli.main import cli
from disklab.report.html.model import build_report
from disklab.report.html.paper import locale_paper
from disklab.report.html.render import breakable, render_html
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from tests.unit.test_html_report import QUICK, records, store_run


def test_a_long_word_may_break_after_its_separators_and_a_short_one_never():
    assert breakable("complete") == "complete" and breakable("RND4K Q32T1 read") == "RND4K Q32T1 read"
    assert breakable("output_format table, passes_share_runtime True") == (
        "output_<wbr>format table, passes_<wbr>share_<wbr>runtime True")
    assert breakable("/var/tmp/tmp.nd3o78UZo1 (directory)") == "/<wbr>var/<wbr>tmp/<wbr>tmp.<wbr>nd3o78UZo1 (directory)"
    # Escaped piece by piece, written out as every cell is (a control character as \x1b), markup left as it is.
    assert breakable('/mnt/<b>"x"</b>_and_more') == (
        "/<wbr>mnt/<wbr>&lt;b&gt;&#34;x&#34;&lt;/<wbr>b&gt;_<wbr>and_<wbr>more")
    assert breakable("/very/long/\x1b[31mpath") == "/<wbr>very/<wbr>long/<wbr>\\x1b[31mpath"
    assert breakable(Markup("<svg/>")) == Markup("<svg/>") and breakable(12) == 12


def test_the_reports_tables_offer_breaks_in_long_words_and_may_go_on_over_a_page_in_print(tmp_path):
    run, again = records(tmp_path, QUICK, QUICK)
    target = "/srv/disks/samsung_990_pro/benchmark_directory"
    run = replace(run, info=replace(run.info, target=target))
    page = render_html(build_report([run, again], "now"))
    tested = re.search(r'<section id="tested">.*?</section>', page, re.S).group(0)
    assert "<td>/<wbr>srv/<wbr>disks/<wbr>samsung_<wbr>990_<wbr>pro/<wbr>benchmark_<wbr>directory (directory)</td>" \
        in tested
    assert "<td>complete</td>" in tested
    assert not re.search(r"\b(th|td)\b[^{}]*\{[^}]*nowrap", page)  # no header or figure cell is kept from wrapping
    # In print a table may go on over the next page, between its rows: none is kept whole.
    print_styles = re.sub(r"/\*.*?\*/", "", page[page.index("@media print"):page.index("</style>")], flags=re.S)
    assert "tr, figure.chart { break-inside: avoid;" in print_styles and not re.search(r"\btable\b", print_styles)


@pytest.mark.parametrize("environ, paper", [
    ({}, "a4"),
    ({"LANG": "C.UTF-8"}, "a4"),
    ({"LANG": "en_US.UTF-8"}, "letter"),
    ({"LANG": "de_DE.UTF-8"}, "a4"),
    ({"LANG": "en_GB.UTF-8", "LC_PAPER": "en_CA.UTF-8"}, "letter"),  # LC_PAPER before LANG
    ({"LANG": "es_MX.UTF-8", "LC_PAPER": "es_ES.UTF-8"}, "a4"),
    ({"LC_ALL": "fr_FR.UTF-8", "LC_PAPER": "en_US.UTF-8"}, "a4"),  # LC_ALL before every category
    ({"LC_ALL": "", "LC_PAPER": "", "LANG": "fil_PH"}, "letter"),  # empty is unset
    ({"LANG": "es_CL.ISO-8859-1"}, "letter"), ({"LANG": "es_VE@euro"}, "letter"), ({"LANG": "es_CO"}, "letter"),
    ({"LANG": "en_AU.UTF-8"}, "a4"), ({"LANG": "es_419.UTF-8"}, "a4"), ({"LANG": "USA"}, "a4"),
])
def test_the_papers_default_is_letter_where_glibcs_lc_paper_is(environ, paper):
    assert locale_paper(environ) == paper


def test_the_paper_is_the_options_else_the_locales_and_a_bad_one_is_one_line(monkeypatch):
    with Store(default_store_path()) as store:
        store_run(store, QUICK)
    printed = []
    monkeypatch.setattr(pdf_module, "print_pdf", lambda html, paper: printed.append(paper) or b"%PDF-")
    for variable in ("LC_ALL", "LC_PAPER", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    for args, environ in ((["--paper", "LETTER"], {}), ([], {"LANG": "en_US.UTF-8"}), ([], {"LANG": "de_DE.UTF-8"}),
                          (["--paper", "a4"], {"LC_PAPER": "en_US.UTF-8"})):
        result = CliRunner().invoke(cli, ["report", "1", "--pdf", "-o", "-", *args], env=environ)
        assert result.exit_code == 0 and result.stdout_bytes == b"%PDF-", result.output
    assert printed == ["letter", "letter", "a4", "a4"]
    for args, message in ((["--pdf", "--paper", "b5"], "'b5' is not one of 'a4', 'letter'"),
                          (["--paper", "a4"], "sets the PDF's paper: give --pdf with it")):
        result = CliRunner().invoke(cli, ["report", "1", *args])
        assert result.exit_code == 2 and message in result.stderr and len(result.stderr.splitlines()) == 1
