"""Flags that inform on the charts (issue 42): a flagged bar hatched, a flagged point ringed, a line flagged all along
dashed, each with its footnote mark, and a note per flag saying which and why; charts without flags carry none of it.
Runs are replayed from real captured fio output (test_html_report.py) and flagged as the run flags them."""

import xml.etree.ElementTree as ET

from disklab.analysis.contention import busy_machine
from disklab.report.flag_reasons import REASONS, flag_reason
from disklab.report.html.charts import SeriesSpec
from disklab.report.html.heatmap import render_heatmap
from disklab.report.html.svg import render_svg
from disklab.store.repository import Store
from disklab.system.contention import Contention
from tests.unit.test_html_report import BLOCKSIZE, QUICK, charts_by_id, store_run
from tests.unit.test_precision import job
from tests.unit.test_svg import NS, chart, markers

BUSY = "other processes used CPU or disk I/O during the test: its figures are partly theirs"


def flagged(svg: ET.Element) -> list[ET.Element]:
    return [e for e in svg.iter() if e.get("class") == "flagged"]


def notes(svg: ET.Element) -> list[str]:
    return [g.find("svg:text", NS).text for g in svg.iter(f"{{{NS['svg']}}}g")
            if g.get("class") == "flag-note"]


def flagged_runs(tmp_path, suite: str, flags: dict[str, list[tuple[str, str]]]):
    """The suite's run replayed, unflagged; and again in a store of its own (run 1 too), each test whose label is in
    `flags` given those flags."""
    with Store(tmp_path / "plain.db") as store:
        plain = store.get_run(store_run(store, suite))
    with Store(tmp_path / "flagged.db") as store:
        marked = store_run(store, suite)
        for test in store.get_run(marked).tests:
            for flag, message in flags.get(test.label, []):
                store.add_flag(test.id, flag, message)
        return plain, store.get_run(marked)


def busy(cpus: float) -> tuple[str, str]:
    """The flag a run stores for a test that other work ran beside (analysis/contention.py), from what was seen."""
    ((flag, message),) = busy_machine(Contention(1.0, cpus, 2e6), job(1000.0), ("vda",))
    return flag, message


def test_flagged_bars_are_hatched_with_their_mark_and_the_legend_says_which_flag_and_why(tmp_path):
    plain, marked = flagged_runs(tmp_path, QUICK, {
        "RND4K Q32T1 read": [busy(0.8)], "RND4K Q1T1 write": [busy(1.2), ("device-cache", "the cache answered")]})
    chart_id = "quick-random"
    spec = charts_by_id([marked])[chart_id]
    svg = ET.fromstring(render_svg(spec))
    hatched = {e.get("data-flags") for e in flagged(svg)}
    assert len(flagged(svg)) == 2 and hatched == {"busy-machine", "busy-machine device-cache"}
    assert all(e.get("fill") == f"url(#{chart_id}-flag-hatch)" for e in flagged(svg))
    labels = [t.text for t in svg.find(".//svg:g[@class='bar-labels']", NS)]
    categories = [label for _, label in spec.x_ticks]
    assert labels[categories.index("RND4K Q32T1 read")].endswith(" ⚑1")
    assert labels[categories.index("RND4K Q1T1 write")].endswith(" ⚑1,2")
    assert sum("⚑" in label for label in labels) == 2  # the other bars unmarked
    assert notes(svg) == [f"⚑1 hatched: busy-machine: {BUSY}",
                          f"⚑2 hatched: device-cache: {flag_reason('device-cache')}"]
    bar = svg.find(f".//svg:rect[@id='{chart_id}-series-0-bar-{categories.index('RND4K Q32T1 read')}']", NS)
    assert "· ⚑ busy-machine: other work ran beside this test: 0.80 CPUs of other" in bar.find(
        "svg:title", NS).text
    sequential = render_svg(charts_by_id([marked])["quick-sequential"])  # no flagged test: drawn as without flags
    assert sequential == render_svg(charts_by_id([plain])["quick-sequential"]) and "flag" not in sequential


def test_a_flagged_point_is_ringed_and_a_line_flagged_all_along_is_dashed_with_one_mark(tmp_path):
    _, marked = flagged_runs(tmp_path, BLOCKSIZE, {"random mixed bs=64KiB": [busy(0.5)]})
    spec = next(c for c in charts_by_id([marked]).values() if c.id.startswith("blocksize-iops"))
    svg = ET.fromstring(render_svg(spec))
    (ring,) = flagged(svg)
    x, y = (float(ring.find("svg:circle", NS).get(k)) for k in ("cx", "cy"))
    assert (x, y) == markers(svg, spec, 0)[1] and ring.find("svg:text", NS).text == "⚑"  # 64KiB: the second
    assert notes(svg) == [f"⚑ ringed: busy-machine: {BUSY}"]
    line = chart(series=[SeriesSpec("run 1", ((1.0, 10.0), (2.0, 12.0), (3.0, 11.0)), flags=((busy(0.5),),) * 3)])
    drawn = ET.fromstring(render_svg(line))
    path = drawn.find(".//svg:g[@id='c-series-0']/svg:path", NS)
    assert path.get("stroke-dasharray") and len(flagged(drawn)) == 1  # one mark at the line's end, no rings
    assert notes(drawn) == [f"⚑ dashed: busy-machine: {BUSY}"]


def test_a_flagged_heat_map_cell_is_hatched_with_its_mark():
    spec = chart(kind="heatmap", y_label="queue depth · IOPS", x_ticks=((0.0, "1 job"), (1.0, "2 jobs")),
                 series=[SeriesSpec("QD1", ((0.0, 100.0), (1.0, 180.0)), flags=((), (busy(0.4),)))])
    svg = ET.fromstring(render_heatmap(spec))
    (cell,) = flagged(svg)
    assert cell.get("x") == svg.find(".//svg:rect[@id='c-series-0-cell-1']", NS).get("x")
    assert [t.text for t in svg.iter(f"{{{NS['svg']}}}text") if t.get("class") == "cell-value"] == ["100", "180 ⚑"]
    assert notes(svg) == [f"⚑ hatched: busy-machine: {BUSY}"]


def test_every_reason_fits_a_chart_and_an_unknown_flag_still_gets_one():
    assert all(len(f"⚑9 hatched: {flag}: {why}") <= 120 for flag, why in REASONS.items())
    assert "flags" in flag_reason("from-a-newer-disklab")
