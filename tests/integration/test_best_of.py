"""The real thing: `run quick` ends with CrystalDiskMark's grid, and `--best-of` fills it with each test's best pass."""

import json

import pytest

from tests.integration.conftest import NEEDS_FIO
from tests.integration.test_run_quick import disklab

pytestmark = [pytest.mark.integration, NEEDS_FIO]

TINY = ("--runtime", "1s", "--size", "16MiB", "--ramp", "0s")


def test_quick_best_of_2_ends_with_the_grid_of_each_tests_best_pass(tmp_path):
    target, home = tmp_path / "target", tmp_path / "home"
    target.mkdir()
    result = disklab("run", "quick", "--target", str(target), "--best-of", "2", *TINY, home=home)
    grid = result.stdout[: result.stdout.index("Mean lat µs")]  # the grid comes before the per-test summary
    assert "best of 2 passes" in grid and "read MB/s (best of 2)" in grid and "write MB/s (best of 2)" in grid
    assert "best of 2: each cell is its test's best pass" in " ".join(grid.split())
    document = json.loads(disklab("show", "last", "--format", "json", home=home).stdout)
    assert document["run"]["options"]["repeat"] == 2 and len(document["tests"]) == 16
    view = document["view"]
    assert view["rows"] == ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"] and view["best_of"] == 2
    for row, cells in zip(view["rows"], view["cells"]):
        for direction, cell in zip(("read", "write"), cells):
            passes = [t["metrics"][direction]["bw_bytes_per_s"] / 1e6 for t in document["tests"]
                      if t["label"] == f"{row} {direction}"]
            assert len(passes) == 2 and cell["value"] == max(passes)
            assert f"{cell['value']:,.1f}" in grid
