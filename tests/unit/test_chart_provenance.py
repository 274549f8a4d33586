"""Every chart of a report carries its provenance (a footer line), which way its metric axis is better, and legends
that name runs by their name or disk; a CrystalDiskMark-style run also gets its grid as an SVG.

The runs are real captured fio output replayed into a store (tests/unit/test_best_of.py, test_html_report.py); the
disks' models are written into the stored environment by hand, in the keys env/collect.py records them under.
"""

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest
from click.testing import CliRunner

from disklab.analysis.compare import compare_runs
from disklab.analysis.history import device_history, group_devices, run_group
from disklab.cli.main import cli
from disklab.report.compare import format_value, shown, to_json
from disklab.report.html.grid import GRID_UNITS, grid_charts
from disklab.report.html.model import build_report
from disklab.report.html.provenance import footer, parameters
from disklab.report.html.render import render_html
from disklab.report.labels import device_name
from disklab.report.metrics import REGISTRY, better
from disklab.store.db import default_store_path
from disklab.units import format_capacity
from disklab.web.history import _chart
from tests.unit.test_best_of import CDM_ROWS, quick_run
from tests.unit.test_html_report import BLOCKSIZE, QUICK, records

SVG = "{http://www.w3.org/2000/svg}"
SAMSUNG = {"devices": "nvme0n1", "device.nvme0n1.model": "Samsung SSD 990 PRO 2TB",
           "device.nvme0n1.size_bytes": 2_000_398_934_016, "fs_type": "ext4"}
WD = {"devices": "sda", "device.sda.model": "WDC WD20EFRX-68EUZN0", "device.sda.size_bytes": 2_000_398_934_016,
      "fs_type": "xfs"}


def figures(html: str) -> dict[str, ET.Element]:
    """Each chart's figure id -> its inline SVG, parsed as XML."""
    found = re.findall(r'<figure class="chart" id="([^"]+)"[^>]*>\s*(<svg.*?</svg>)', html, re.S)
    return {figure_id: ET.fromstring(svg) for figure_id, svg in found}


def texts(svg: ET.Element, cls: str) -> list[str]:
    return ["".join(t.itertext()) for t in svg.iter(f"{SVG}text") if t.get("class") == cls]


def legend(svg: ET.Element) -> list[str]:
    """The entries' whole names (each entry's tooltip); a grid has no legend."""
    groups = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "legend"]
    return [t.find(f"{SVG}title").text for group in groups for t in group.iter(f"{SVG}text")]


def test_every_chart_svg_holds_the_provenance_footer_and_a_direction_on_its_metric_axis(tmp_path):
    runs = [replace(r, env=SAMSUNG) for r in records(tmp_path, QUICK, BLOCKSIZE)]
    model = build_report(runs, "2026-01-01T00:00:00+00:00")
    svgs = figures(render_html(model))
    assert list(svgs) == [chart.id for chart in model.charts] and len(svgs) == 9  # with the exceedance charts
    for chart_id, svg in svgs.items():
        line = " ".join(texts(svg, "chart-provenance"))
        assert "Samsung SSD 990 PRO 2TB 1.82 TiB" in line and "fio-3.33 io_uring" in line, chart_id
        assert "ext4" in line and "disklab 0.1.0" in line and runs[0].info.started_at[:10] in line
        (direction,) = texts(svg, "axis-direction")
        y_label = next(c.y_label for c in model.charts if c.id == chart_id)
        expected = ("lower is better" if "latency" in y_label or "µs" in y_label or "slower" in y_label
                    else "higher is better")  # an exceedance curve: fewer I/Os slower is better
        assert direction.endswith(expected), (chart_id, y_label, direction)
    # One test's chart names its parameters; a chart over many tests, their range.
    quick = " ".join(texts(svgs["quick-random"], "chart-provenance"))
    assert "bs 4KiB · QD1-32 · 1 job" in quick and "size 1GiB" in quick
    blocksize = " ".join(texts(svgs["blocksize-iops-1"], "chart-provenance"))
    assert "bs 4KiB-1MiB" in blocksize
    # A chart of one run's tests names that run's disk and fio alone, not the other run's.
    latency = [chart for chart in model.charts if chart.id.startswith("latency")]
    assert len(latency) == 2 and all(chart.footer.count("fio-3.33") == 1 for chart in latency)


def test_legends_name_runs_by_their_disk_not_their_mount_path(tmp_path):
    a, b = quick_run(tmp_path / "a", 1, None), quick_run(tmp_path / "b", 1, None)
    a = replace(a, info=replace(a.info, target="/mnt/fast"), env=SAMSUNG)
    b = replace(b, info=replace(b.info, id=2, target="/mnt/slow"), env=WD)
    svgs = figures(render_html(build_report([a, b], "now")))
    names = legend(svgs["quick-random"])
    assert names == ["Samsung SSD 990 PRO 2TB 1.82 TiB (run 1)", "WDC WD20EFRX-68EUZN0 1.82 TiB (run 2)"]
    assert not any("/mnt/" in name for svg in svgs.values() for name in legend(svg))
    foot = " ".join(texts(svgs["quick-random"], "chart-provenance"))
    assert "Samsung SSD 990 PRO 2TB 1.82 TiB (run 1): Samsung SSD 990 PRO 2TB 1.82 TiB · ext4" in foot
    assert "WDC WD20EFRX-68EUZN0 1.82 TiB (run 2): WDC WD20EFRX-68EUZN0 1.82 TiB · xfs" in foot
    # The same disk model twice: only the paths tell the runs apart, so the legend keeps them.
    same = figures(render_html(build_report([a, replace(b, env=SAMSUNG)], "now")))
    assert [n.split(" (")[1] for n in legend(same["quick-random"])] == ["run 1, /mnt/fast)", "run 2, /mnt/slow)"]
    # A named run goes by its name.
    named = replace(a, info=replace(a.info, name="desk"))
    assert legend(figures(render_html(build_report([named, b], "now")))["quick-random"])[0] == "desk (run 1)"


@pytest.mark.parametrize("unit", list(GRID_UNITS))
def test_a_best_of_runs_grid_svg_holds_each_tests_best_pass(tmp_path, unit):
    record = quick_run(tmp_path, passes=2, best_of=2)
    (grid,) = grid_charts([record], unit)
    metric, scale, _ = GRID_UNITS[unit]
    svg = figures(render_html(build_report([record], "now", grid_unit=unit)))[grid.id]
    assert "best of 2 passes" in svg.find(f"{SVG}title").text
    assert texts(svg, "grid-row") == list(CDM_ROWS)
    cells = {t.get("id"): t for t in svg.iter(f"{SVG}text") if t.get("class") == "grid-value"}
    assert len(cells) == 8
    for i, row in enumerate(CDM_ROWS):
        for j, direction in enumerate(("read", "write")):
            passes = [REGISTRY[metric].compute([t]) for t in record.tests if t.label == f"{row} {direction}"]
            best = (min if metric == "lat_mean_us" else max)(passes) * scale
            assert len(passes) == 2 and len(set(passes)) == 2, "the two passes replay different captures"
            cell = cells[f"{grid.id}-cell-{i}-{j}"]
            assert float(cell.get("data-value")) == best
            assert cell.text == GRID_UNITS[unit][2].format(best)
    assert "fio-3.33 io_uring · best of 2 passes" in " ".join(texts(svg, "chart-provenance"))


def test_without_best_of_the_grid_is_the_mean_and_the_report_charts_use_the_best_pass(tmp_path):
    mean_run = quick_run(tmp_path / "mean", passes=2, best_of=None)
    (grid,) = grid_charts([mean_run])
    assert "mean of 2 passes" in grid.title
    best_run = quick_run(tmp_path / "best", passes=2, best_of=2)
    model = build_report([best_run], "now")
    bars = next(c for c in model.charts if c.id == "quick-sequential")
    assert bars.series[0].name == "run 1 · best of 2" and not any(bars.series[0].spreads)
    (grid,) = [c for c in model.charts if c.kind == "grid"]
    assert [y for _, y in bars.series[0].points] == [grid.series[j].points[i][1] for i in (0, 1) for j in (0, 1)]


def test_the_direction_follows_the_metric_and_parameters_name_one_value_or_the_range():
    assert [better(label) for label in ("IOPS", "MB/s (10^6 bytes/s, log scale)", "TPS", "GB/s",
                                        "latency (µs, log scale)", "µs", "read share (%)")] == [
        "higher is better", "higher is better", "higher is better", "higher is better", "lower is better",
        "lower is better", ""]
    assert parameters([{"bs": 4096, "iodepth": 32, "jobs": 1, "runtime": 5.0, "size": 2**30}]) == [
        "bs 4KiB", "QD32", "1 job", "runtime 5s", "size 1GiB"]
    assert parameters([{"bs": 4096, "iodepth": 1, "jobs": 4}, {"bs": 2**20, "iodepth": 32, "jobs": 16},
                       {"bssplit": "4k/50:64k/50", "iodepth": 8, "jobs": 4}]) == [
        "bs various", "QD1-32", "jobs 4-16"]
    assert device_name({"devices": "sda, sdb", "device.sda.model": "ST4000", "device.sda.size_bytes": 4 * 10**12,
                        "device.sdb.model": "ST4000", "device.sdb.size_bytes": 4 * 10**12}) == "2 x ST4000 3.64 TiB"
    assert device_name({"devices": "sda, sdb", "device.sda.model": "ST4000", "device.sdb.model": "ST4000",
                        "device.array.model": "md raid1, 2 members"}) == "md raid1, 2 members of 2 x ST4000"
    assert device_name({"devices": "vda", "device.vda.size_bytes": 274877906944}) is None
    assert device_name({"devices": "vda", "device.vda.size_bytes": 274877906944}, unnamed=True) == "vda 256.0 GiB"
    assert footer([]) == ""


def test_compare_and_the_device_history_show_a_best_of_runs_best_pass_labelled(tmp_path):
    disk = {**SAMSUNG, "device.nvme0n1.serial": "S6B0NL0T"}
    best = replace(quick_run(tmp_path / "best", passes=2, best_of=2), env=disk)
    mean = quick_run(tmp_path / "mean", passes=2, best_of=None)
    mean = replace(mean, info=replace(mean.info, id=2, started_at="2026-11-24T15:00:00+00:00"), env=disk)
    passes = [REGISTRY["mb_per_s"].compute([t]) for t in best.tests if t.label == "SEQ1M Q8T1 read"]
    row = next(r for r in compare_runs([best, mean]).rows
               if (r.test, r.direction, r.metric) == ("SEQ1M Q8T1 read", "read", "mb_per_s"))
    assert row.cells[0].best == max(passes) and row.cells[1].best is None
    assert format_value("mb_per_s", row.cells[0]).startswith(f"{max(passes):,.1f} best of 2 (mean ")
    document = json.loads(to_json(shown(compare_runs([best, mean]), only_changed=False)))
    assert max(passes) in [v["best"] for r in document["rows"] for v in r["values"]]
    (device,) = group_devices(run_group(r.info, r.env) for r in (best, mean))
    history = device_history(device, [best, mean])
    test = next(t for t in history.tests if t.label == "SEQ1M Q8T1 read")
    chart, svg = _chart(test, 1, "Samsung SSD 990 PRO 2TB")
    (line,) = chart.series
    x = next(x for x, e in enumerate(test.entries) if e.run.id == best.info.id)
    assert line.points[x] == (x, max(passes)) and line.spreads[x] is None and line.spreads[1 - x].n == 2
    assert "best of 2" in chart.caption and "Samsung SSD 990 PRO 2TB · fio-3.33 io_uring · bs 1MiB" in chart.footer
    assert "S6B0NL0T" not in svg and "higher is better" in svg


def test_report_draws_the_grid_in_the_unit_asked_and_refuses_another_in_one_line(tmp_path, monkeypatch):
    record = quick_run(tmp_path, passes=2, best_of=2)  # stored in tmp_path / "r.db"
    monkeypatch.setenv("DISKLAB_HOME", str(tmp_path))
    (tmp_path / "r.db").rename(default_store_path())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["report", str(record.info.id), "--grid-unit", "us", "-o", "r.html"])
    assert result.exit_code == 0, result.output
    grid = figures((tmp_path / "r.html").read_text())["grid-run-1"]
    assert "· µs" in grid.find(f"{SVG}title").text and texts(grid, "axis-direction") == ["µs · lower is better"]
    bad = CliRunner().invoke(cli, ["report", "last", "--grid-unit", "MiB/s"])
    assert bad.exit_code == 2 and len(bad.stderr.splitlines()) == 1 and "--grid-unit" in bad.stderr


def test_a_chart_of_one_run_names_that_run_alone_in_its_footer(tmp_path):
    runs = records(tmp_path, QUICK, QUICK)
    model = build_report(runs, "2026-01-01T00:00:00+00:00")
    grids = {chart.id: chart.footer for chart in model.charts if chart.kind == "grid"}
    assert set(grids) == {"grid-run-1", "grid-run-2"}
    for footer_text in grids.values():
        assert footer_text.count("fio-3.33") == 1 and "run 1" not in footer_text and "run 2" not in footer_text
    bars = next(chart.footer for chart in model.charts if chart.id == "quick-sequential")
    assert "run 1" in bars and "run 2" in bars, "a chart of both runs names both"


@pytest.mark.parametrize("size_bytes, said", [
    (274_877_906_944, "256.0 GiB"), (2_000_398_934_016, "1.82 TiB"), (500_107_862_016, "465.8 GiB"),
    (16 * 2**30, "16.0 GiB"), (512 * 2**20, "512MiB"),
])
def test_a_disks_capacity_is_said_the_same_in_the_footer_legend_and_environment(tmp_path, size_bytes, said):
    """The footer said 'vda 275 GB' where the environment said '256.0 GiB' for the same disk."""
    assert format_capacity(size_bytes) == said
    unnamed, named = records(tmp_path, QUICK, QUICK)
    unnamed = replace(unnamed, env={"devices": "vda", "device.vda.size_bytes": size_bytes, "fs_type": "ext4"})
    named = replace(named, env={"devices": "sda", "device.sda.model": "ST2000", "device.sda.size_bytes": size_bytes})
    report = build_report([unnamed, named], "now")
    environment = [dict(section.environment.rows) for section in report.runs]
    assert environment[0]["vda: size"].split(" (")[0] == said == environment[1]["sda: size"].split(" (")[0]
    foot = " ".join(texts(figures(render_html(report))["quick-random"], "chart-provenance"))
    assert f"vda {said} (model not recorded) · ext4" in foot and f"ST2000 {said} (run 2): ST2000 {said}" in foot
    assert not re.search(r"\d (GB|TB)\b", foot)
