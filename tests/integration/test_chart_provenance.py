"""The real thing: a `run quick --best-of 2` with real fio on a small file, then `report`: every chart's SVG says which
disk, file system and fio made it and which way is better, and CrystalDiskMark's grid holds each test's best pass."""

import pytest

from disklab.report.labels import device_name
from disklab.report.metrics import REGISTRY
from disklab.store.repository import Store
from tests.integration.conftest import NEEDS_FIO
from tests.integration.test_best_of import TINY
from tests.integration.test_run_quick import disklab
from tests.unit.test_best_of import CDM_ROWS
from tests.unit.test_chart_provenance import SVG, figures, legend, texts
from tests.integration.test_report_browser import chart_titles

pytestmark = [pytest.mark.integration, NEEDS_FIO]


def test_a_best_of_runs_report_carries_provenance_directions_and_the_grid_of_best_passes(tmp_path):
    target, home = tmp_path / "target", tmp_path / "home"
    target.mkdir()
    disklab("run", "quick", "--target", str(target), "--best-of", "2", *TINY, home=home)
    with Store(home / "results.db") as store:
        record = store.get_run(1)
    disk = device_name(record.env) or device_name(record.env, unnamed=True)
    assert disk, "the run recorded the disk under its target"
    for unit, metric in (("MB/s", "mb_per_s"), ("IOPS", "iops")):
        report = tmp_path / f"report-{metric}.html"
        disklab("report", "last", "-o", str(report), "--grid-unit", unit, home=home)
        svgs = figures(report.read_text())
        assert "grid-run-1" in svgs and "quick-sequential" in svgs and "quick-random" in svgs
        drawn = chart_titles(report)  # as Chromium draws the page: every chart, the grid first
        assert len(drawn) == len(svgs) and drawn[0].endswith(f"quick · best of 2 passes · {unit}"), drawn
        for chart_id, svg in svgs.items():
            line = " ".join(texts(svg, "chart-provenance"))
            assert disk in line and f"{record.info.fio_version} {record.info.fio_engine}" in line, chart_id
            assert record.env["fs_type"] in line and "best of 2 passes" in line
            (direction,) = texts(svg, "axis-direction")
            assert direction.endswith(("higher is better", "lower is better")), chart_id
            assert not any(str(target) in name for name in legend(svg))
        grid = svgs["grid-run-1"]
        values = {t.get("id"): float(t.get("data-value")) for t in grid.iter(f"{SVG}text")
                  if t.get("class") == "grid-value"}
        for i, row in enumerate(CDM_ROWS):
            for j, direction in enumerate(("read", "write")):
                passes = [REGISTRY[metric].compute([t]) for t in record.tests if t.label == f"{row} {direction}"]
                assert len(passes) == 2 and values[f"grid-run-1-cell-{i}-{j}"] == max(passes)
