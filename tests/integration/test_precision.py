"""--precision with real fio: a stable test stops once its interval is narrow enough, long before the budget."""

import json
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, Disklab, table_rows

pytestmark = [pytest.mark.integration, NEEDS_FIO]

SUITE = """
name = "stable"
description = "one short random-read test"

[[group]]
name = "RND4K Q32"
metric = "iops"
pattern = "random"
direction = "read"
bs = "4k"
iodepth = 32
runtime = "1s"
size = "64M"
rate_iops = 5000  # far below what any disk does at QD32: stable even while other tests share the disk
"""


def test_precision_stops_a_stable_test_early_and_reports_its_interval(disklab: Disklab, tmp_path: Path) -> None:
    suite, target = tmp_path / "stable.toml", tmp_path / "target"
    suite.write_text(SUITE)
    target.mkdir()
    result = disklab("run", str(suite), "--target", str(target), "--precision", "5%", "--max-time", "60s")
    assert result.returncode == 0, result.stderr
    (run,) = disklab.runs()
    assert json.loads(run["options_json"])["precision"] == 5.0 and json.loads(run["options_json"])["max_time"] == 60.0
    (outcome,) = disklab.query("SELECT value_json FROM run_outcomes WHERE run_id = ? AND key = 'precision'",
                               (run["id"],))
    (test,) = json.loads(outcome["value_json"])["tests"]
    runs = len(disklab.tests(run["id"]))
    # a 1 s test costs well over 1 s, so 60 s could never hold 60 runs; stopping by precision is stopping early
    assert test["stopped"] == "precision" and test["runs"] == runs and 3 <= runs < 60, (test, result.stdout)
    assert test["ci95_percent"] <= 5.0
    assert f"stopped: precision reached after {runs} runs" in result.stdout

    document = json.loads(disklab("show", "last", "--format", "json").stdout)
    assert len(document["tests"]) == runs
    (planned,) = document["planned"]
    iops = planned["summary"]["read"]["iops"]
    assert iops["n"] == runs and iops["stdev"] is not None and iops["ci95_percent"] == pytest.approx(test["ci95_percent"])
    assert iops["ci95_half_width"] == pytest.approx(iops["mean"] * iops["ci95_percent"] / 100)

    shown = disklab("show", "last")
    ((label, direction, n, *_),) = table_rows(shown.stdout)
    assert (label, direction, n) == ("RND4K Q32", "read", str(runs))
    assert f"stopped: precision reached after {runs} runs" in shown.stdout
    assert list(target.iterdir()) == []


def test_a_budget_too_short_for_the_precision_says_so(disklab: Disklab, tmp_path: Path) -> None:
    suite, target = tmp_path / "stable.toml", tmp_path / "target"
    suite.write_text(SUITE.replace("rate_iops = 5000", ""))
    target.mkdir()
    # no real disk repeats to +/- 0.01 % within the 3 or 4 runs that fit into 3 s
    result = disklab("run", str(suite), "--target", str(target), "--precision", "0.01%", "--max-time", "3s")
    assert result.returncode == 0, result.stderr
    runs = len(disklab.tests(disklab.runs()[0]["id"]))
    assert runs >= 1
    assert "RND4K Q32: stopped: time budget ran out at +/- " in result.stdout and f"after {runs} runs" in result.stdout
