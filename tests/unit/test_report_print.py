"""The report on paper and on narrow pages (issue 42): tables that wrap within the page and go on over the next.
Here, the page's markup and styles.

The runs are real captured fio output replayed into a store (test_html_report.py).
"""

import re
from dataclasses import replace

from markupsafe import Markup

from disklab.report.html.model import build_report
from disklab.report.html.render import breakable, render_html
from tests.unit.test_html_report import QUICK, records


def test_a_long_word_may_break_after_its_separators_and_a_short_one_never():
    assert breakable("complete") == "complete" and breakable("RND4K Q32T1 read") == "RND4K Q32T1 read"
    assert breakable("output_format table, passes_share_runtime True") == (
        "output_<wbr>format table, passes_<wbr>share_<wbr>runtime True")
    assert breakable("/var/tmp/tmp.nd3o78UZo1 (directory)") == "/<wbr>var/<wbr>tmp/<wbr>tmp.<wbr>nd3o78UZo1 (directory)"
    # Escaped piece by piece, written out as every cell is (a control character as \x1b), markup left as it is.
    assert breakable('/mnt/<b>"x"</b>_and_more') == "/<wbr>mnt/<wbr>&lt;b&gt;&#34;x&#34;&lt;/<wbr>b&gt;_<wbr>and_<wbr>more"
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
