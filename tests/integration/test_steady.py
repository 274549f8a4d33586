"""A real steady-state run on a small file: preconditioning passes, rounds, and the verdict stored and shown."""

import json
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, NEEDS_LOOP_DEVICES, Disklab

pytestmark = [pytest.mark.integration, NEEDS_FIO]


def test_steady_preconditions_then_runs_rounds_until_a_verdict(disklab: Disklab, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    result = disklab("run", "steady", "--target", str(target), "--size", "64M", "--runtime", "1")
    assert result.returncode == 0, result.stderr
    assert "purge skipped" in result.stderr
    run_id = disklab.runs()[0]["id"]
    tests = disklab.tests(run_id)
    assert [(t["label"], t["plan_index"], t["attempt"]) for t in tests[:2]] == [
        ("precondition pass 1", 0, 1), ("precondition pass 2", 1, 1)]
    for precondition in tests[:2]:
        (written,) = disklab.metrics(precondition["id"])
        assert written["direction"] == "write" and written["io_bytes"] == 64 * 1024**2
    rounds = tests[2:]
    assert [t["attempt"] for t in rounds] == list(range(1, len(rounds) + 1))
    assert {t["plan_index"] for t in rounds} == {2}
    assert 5 <= len(rounds) <= 25
    (row,) = disklab.query("SELECT value_json FROM run_outcomes WHERE run_id = ? AND key = 'steady_state'", (run_id,))
    verdict = json.loads(row["value_json"])
    assert verdict["rounds"] == len(rounds)
    assert verdict["reached"] == (len(rounds) < 25 or verdict["round"] == 25)
    assert verdict["summary"] in result.stdout
    shown = disklab("show", "last")
    assert verdict["summary"] in shown.stdout and "purge skipped" in shown.stdout
    assert list(target.iterdir()) == []


def needs_loop_devices(test):
    for mark in NEEDS_LOOP_DEVICES:
        test = mark(test)
    return test


@needs_loop_devices
def test_steady_on_a_device_purges_it_first_with_destroy_data(disklab: Disklab, attach_loop) -> None:
    device = attach_loop()
    refused = disklab("run", "steady", "--target", device, "--runtime", "1")
    assert refused.returncode == 3 and disklab.runs() == []
    result = disklab("run", "steady", "--target", device, "--runtime", "1", "--destroy-data")
    assert result.returncode == 0, result.stderr
    (row,) = disklab.query("SELECT value_json FROM run_outcomes WHERE key = 'purge'")
    assert json.loads(row["value_json"])["summary"].startswith(("purged: the whole of", "purge failed"))
