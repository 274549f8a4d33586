"""A run killed with SIGKILL loses at most the test in flight; `resume` finishes it with no duplicate test."""

import json
import signal
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, Disklab, wait_for

pytestmark = [pytest.mark.integration, NEEDS_FIO]


def test_resume_after_kill_finishes_the_run_without_duplicates(disklab: Disklab, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    process = disklab.start("run", "quick", "--target", str(target), "--runtime", "1", "--ramp", "0", "--size", "64M",
                            "--repeat", "2")
    try:
        assert wait_for(lambda: disklab.count_tests() >= 5, seconds=120, interval=0.1)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    (run,) = disklab.runs()
    before = disklab.tests(run["id"])
    assert 5 <= len(before) < 16

    result = disklab("resume", "last")
    assert result.returncode == 0, result.stderr
    assert f"resuming run {run['id']}: {len(before)} tests already stored" in result.stderr
    (run,) = disklab.runs()
    assert run["status"] == "complete" and len(json.loads(run["options_json"])["resumed"]) == 1  # header: "resumed"
    after = disklab.tests(run["id"])
    steps = [(t["plan_index"], t["attempt"]) for t in after]
    assert len(after) == 16 and len(set(steps)) == 16, "each of 8 tests x 2 repeats exactly once"
    assert sorted(steps) == [(i, n) for i in range(8) for n in (1, 2)]
    assert [t["seq"] for t in after] == list(range(16))
    assert [t["id"] for t in after[: len(before)]] == [t["id"] for t in before], "finished tests kept as they were"
    assert list(target.iterdir()) == []


def test_a_complete_run_is_not_resumed(disklab: Disklab, tmp_path: Path) -> None:
    assert disklab("run", "quick", "--target", str(tmp_path), "--runtime", "1", "--ramp", "0", "--size", "64M",
                   "--read-only").returncode == 0
    result = disklab("resume", "last")
    assert result.returncode == 2 and "only interrupted or failed runs" in result.stderr
