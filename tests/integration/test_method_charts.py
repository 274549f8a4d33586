"""Method charts of real runs: a short saturation search, steady-state and write-saturation rounds with real fio on
a small file, then `disklab report`; the charts are read back off the SVGs and held against what analysis
concluded (pgbench's charts: tests/unit/test_method_charts.py and test_pgbench.py)."""

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from disklab.analysis.saturation import Level, Probe, knee
from disklab.analysis.steady import window_figures
from tests.integration.conftest import NEEDS_FIO, Disklab
from tests.integration.test_report_browser import chart_titles
from tests.run_kinds import SATURATE_SUITE, STEADY_SUITE, WRITE_SATURATION_SUITE

pytestmark = [pytest.mark.integration, NEEDS_FIO]
NS = {"svg": "http://www.w3.org/2000/svg"}

# The run kinds' small suites (tests/run_kinds.py): a saturation search, steady-state and write-saturation rounds.
SATURATE, STEADY, WRITE_SATURATION = SATURATE_SUITE, STEADY_SUITE, WRITE_SATURATION_SUITE


def run_and_report(disklab: Disklab, tmp_path: Path, suite_text: str) -> tuple[dict, dict[str, ET.Element]]:
    """The run's outcomes, and its report's SVGs by title."""
    suite, target, report = tmp_path / "suite.toml", tmp_path / "target", tmp_path / "report.html"
    suite.write_text(suite_text)
    target.mkdir()
    result = disklab("run", str(suite), "--target", str(target))
    assert result.returncode == 0, result.stderr
    (run,) = disklab.runs()
    assert disklab("report", str(run["id"]), "-o", str(report)).returncode == 0
    svgs = [ET.fromstring(svg) for svg in re.findall(r"<svg .*?</svg>", report.read_text(), re.S)]
    assert chart_titles(report) == [svg.find("svg:title", NS).text for svg in svgs], "every chart drawn in Chromium"
    outcomes = {row["key"]: json.loads(row["value_json"])
                for row in disklab.query("SELECT key, value_json FROM run_outcomes WHERE run_id = ?", (run["id"],))}
    return outcomes, {svg.find("svg:title", NS).text: svg for svg in svgs}


def series_values(svg: ET.Element, chart_id: str, i: int) -> list[float]:
    """The figures of a series, from its markers' tooltips ('name · x: 1,234', then ' · ⚑ flag: ...' where flagged)."""
    group = svg.find(f".//svg:g[@id='{chart_id}-series-{i}']", NS)
    return [float(use.find("svg:title", NS).text.partition(" · ⚑")[0].rpartition(": ")[2].replace(",", ""))
            for use in group.findall("svg:use", NS)]


def references(svg: ET.Element) -> list[tuple[str, float, str]]:
    return [(g.get("data-axis"), float(g.get("data-value")), g.find("svg:text", NS).text)
            for g in svg.iter(f"{{{NS['svg']}}}g") if g.get("class") == "reference"]


def test_a_saturate_report_draws_latency_over_iops_with_the_knee_and_the_bound(disklab: Disklab, tmp_path: Path):
    outcomes, svgs = run_and_report(disklab, tmp_path, SATURATE)
    saturation = outcomes["saturation"]
    levels = saturation["levels"]
    assert [lv["percent"] for lv in levels] == list(range(10, 101, 10))
    svg = svgs["saturate: IOPS vs latency percentiles · run 1"]
    for i, key in enumerate(("p50_ns", "p99_ns", "p99_9_ns")):  # a line per percentile, a point per level, in µs
        assert series_values(svg, "saturate-1", i) == pytest.approx([lv[key] / 1e3 for lv in levels], abs=0.5,
                                                                     rel=0.01)
    # The knee marked is the one analysis finds in the stored levels.
    found = knee([Level(lv["percent"], lv["target_iops"], Probe(lv["iodepth"], lv["jobs"], lv["iops"], lv["p50_ns"],
                                                                    lv["p99_ns"], lv["p99_9_ns"])) for lv in levels])
    marked = references(svg)
    knee_lines = [(at, label) for axis, at, label in marked if axis == "x"]
    if found is None:
        assert saturation["knee"] is None and knee_lines == []
    else:
        assert knee_lines == [(found.target_iops, f"knee: {found.percent} % of peak")]  # at the load it offered
    # The levels in the order of the load they offered: never a line running back where a level fell short.
    (line,) = [g.find("svg:path", NS) for g in svg.iter(f"{{{NS['svg']}}}g") if g.get("id") == "saturate-1-series-1"]
    xs = [float(point.split(",")[0]) for point in line.get("d").lstrip("M").split(" L")]
    assert xs == sorted(xs) and len(set(xs)) == len(levels)
    not_held = [g for g in svg.iter(f"{{{NS['svg']}}}g") if g.get("class") == "flagged"
                and "rate-not-held" in g.get("data-flags")]
    assert bool(not_held) == any(not lv["held"] for lv in levels)  # marked where a level fell short, else nowhere
    assert [(at, label) for axis, at, label in marked if axis == "y"] == [(1000.0, "p99 bound 1,000 µs")]


def test_a_steady_report_draws_its_rounds_and_the_verification_window_with_its_bands(disklab: Disklab,
                                                                                     tmp_path: Path):
    outcomes, svgs = run_and_report(disklab, tmp_path, STEADY)
    verdict = outcomes["steady_state"]
    rounds = [m["iops"] for t in disklab.tests(1) for m in disklab.metrics(t["id"])]
    assert verdict["rounds"] == len(rounds) in (3, 4)
    convergence = svgs["steady state: convergence per round · run 1"]
    assert series_values(convergence, "steady-rounds-1", 0) == pytest.approx(rounds, rel=0.01)
    y_label = convergence.find("svg:text[@class='y-label']", NS).text
    assert y_label == "IOPS" and "log" not in y_label  # linear, as SNIA's PTS plots convergence
    window = verdict["window"]
    assert series_values(convergence, "steady-rounds-1", 1) == pytest.approx(window, rel=0.01)

    verification = svgs["steady state: verification window · run 1"]
    assert series_values(verification, "steady-window-1", 0) == pytest.approx(window, rel=0.01)
    average = verdict["window_average"]
    marked = [(axis, at) for axis, at, _ in references(verification)]
    assert marked == [("y", pytest.approx(average * share)) for share in (1, 1.1, 0.9, 1.2, 0.8)]
    assert [label for *_, label in references(verification)][1:] == ["+10 %", "-10 %", "+20 %", "-20 %"]
    # The fitted line's change across the window, in % of the average, is the slope the verdict judged.
    start, end = series_values(verification, "steady-window-1", 1)
    assert abs(end - start) / average * 100 == pytest.approx(verdict["slope_percent"], rel=0.01, abs=0.05)
    assert window_figures(window)[1] == pytest.approx(verdict["slope_percent"])


def test_a_write_saturation_report_draws_every_round(disklab: Disklab, tmp_path: Path):
    outcomes, svgs = run_and_report(disklab, tmp_path, WRITE_SATURATION)
    values = outcomes["write_saturation"]["values"]
    assert len(values) == 4
    convergence = svgs["write saturation: convergence per round · run 1"]
    assert series_values(convergence, "steady-rounds-1", 0) == pytest.approx(values, rel=0.01)
    assert not any(title.startswith("write saturation: verification") for title in svgs)  # 4 rounds: no window of 5
