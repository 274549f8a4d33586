"""Time series for real: fio's logs collected from its working folder, parsed, stored and shown again."""

import json
from dataclasses import replace

import pytest

from disklab.fio.executor import SubprocessExecutor
from disklab.fio.features import choose_engine, detect_fio
from disklab.plan.jobfile import render_jobfile
from disklab.fio.logs import KINDS
from disklab.plan.build import expand_suite
from disklab.suite.loader import load_suite
from tests.integration.conftest import NEEDS_FIO, table_rows

pytestmark = [pytest.mark.integration, NEEDS_FIO]

SUITE = """
name = "logged"
[defaults]
runtime = "3s"
size = "64M"
log_interval = "1s"
[[group]]
name = "mixed"
label = "RND4K mixed"
pattern = "random"
bs = "4k"
iodepth = 8
jobs = 2
rwmixread = 70
"""


def test_a_run_with_log_interval_stores_a_point_per_second(tmp_path, disklab):
    target = tmp_path / "target"
    target.mkdir()
    suite = tmp_path / "logged.toml"
    suite.write_text(SUITE)
    result = disklab("run", str(suite), "--target", str(target))
    assert result.returncode == 0, result.stderr
    assert list(target.iterdir()) == []
    (test,) = json.loads(disklab("show", "last", "--format", "json").stdout)["tests"]
    assert set(test["series"]) == set(KINDS)
    for kind, by_direction in test["series"].items():
        assert set(by_direction) == {"read", "write"}, kind
        for direction, points in by_direction.items():
            assert len(points) >= 2, (kind, direction)
            assert [t for t, _ in points] == sorted({t for t, _ in points}) and all(t % 1000 == 0 for t, _ in points)
            assert all(value > 0 for _, value in points)
    shown = disklab("show", "last", "--series")
    assert shown.returncode == 0, shown.stderr
    rows = table_rows(shown.stdout)
    assert len(rows) >= 2 and all(len(row) == 7 for row in rows)


def test_the_executor_collects_one_log_per_kind_and_job(tmp_path):
    fio = detect_fio()
    (test, *_) = expand_suite(load_suite("quick"))
    test = replace(test, engine=choose_engine(fio), runtime=1, ramp=0, size=16 * 1024**2, jobs=4, log_interval=0.5)
    run = SubprocessExecutor(fio.path).run(render_jobfile(test, str(tmp_path / "f"), str(tmp_path), "s"))
    assert set(run.logs) == {f"disklab_{log}.{job}.log" for log in ("iops", "bw", "lat", "clat", "slat") for job in range(1, 5)}
    assert all(run.logs[f"disklab_iops.{job}.log"].strip() for job in range(1, 5))
    assert list(tmp_path.iterdir()) == [tmp_path / "f"], "fio's logs belong in the executor's private folder"
