"""A run's findings from real fio on a loop device: the same test at the start and the end of the device, a capped
test that did not cover its region, and the spec sheet, each with its figures and the basis of its verdict."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, NEEDS_LOOP_DEVICES, Disklab

pytestmark = [pytest.mark.integration, *NEEDS_LOOP_DEVICES, NEEDS_FIO]

# M1's shape, small: one test on the first and on the last 16 MiB of the device, and a once-over test capped at 1 s
# that a rate limit keeps from covering its 64 MiB region.
M1_STYLE = """
name = "m1-style"
[defaults]
pattern = "sequential"
direction = "read"
bs = "1M"
time_based = false
runtime = "1s"
ramp = "0s"
[[group]]
name = "ends"
label = "SEQ1M {region}"
metric = "mb_per_s"
region = ["first:16MiB", "last:16MiB"]
[[group]]
name = "capped"
label = "capped whole"
size = "all"
rate = "8m"
"""
DRIVE = """
name = "my-drive"
description = "a drive file of the user's own"
kind = "ssd"
interface = "sata-6g"
capacity = "64MB"
seq_read_mbps = 1
seq_write_mbps = 1
rand_read_iops = 100
rand_write_iops = 100
[source]
performance = "a spec sheet this test makes up, rated low so that a loop device must reach it"
"""


def test_an_m1_style_run_states_its_findings_with_figures_and_basis(disklab: Disklab, attach_loop: Callable[..., str],
                                                                    tmp_path: Path) -> None:
    device = attach_loop(size_bytes=64 * 1024 * 1024)
    suite, drive = tmp_path / "m1-style.toml", tmp_path / "my-drive.toml"
    suite.write_text(M1_STYLE)
    drive.write_text(DRIVE)
    result = disklab("run", str(suite), "--target", device, "--repeat", "3")
    assert result.returncode == 0, result.stderr
    shown = disklab("show", "last", "--spec", str(drive))
    assert shown.returncode == 0, shown.stderr
    assert "Findings" in shown.stdout.splitlines()
    document = json.loads(disklab("show", "last", "--spec", str(drive), "-f", "json").stdout)
    by_kind = {}
    for finding in document["findings"]:
        by_kind.setdefault(finding["kind"], []).append(finding)
        assert finding["figures"] and finding["basis"], finding
    (ends,) = by_kind["start-vs-end"]
    assert ends["subject"] == "SEQ1M first:16MiB / SEQ1M last:16MiB"
    assert [f["name"] for f in ends["figures"]] == ["first 16MiB", "last 16MiB"]
    assert ends["basis"].startswith("t-test on n = 3 and 3") or ends["verdict"] == "inconclusive"
    (capped,) = by_kind["capped"]
    moved, one_pass, cap = (f["value"] for f in capped["figures"])
    tests = {t["label"]: t for t in document["tests"]}
    assert capped["verdict"] == "not representative" and one_pass == 64 * 1024 * 1024 and cap == 1
    assert moved == min(t["metrics"]["read"]["io_bytes"] for t in document["tests"] if t["label"] == "capped whole")
    assert moved < one_pass and "capped whole" in tests
    (read,) = [f for f in by_kind["spec"] if f["statement"].startswith("sequential read")]
    measured, rated = read["figures"]
    assert rated == {"name": "rated", "value": 1.0, "unit": "MB/s"}
    if measured["value"] > 600:  # faster than the drive file's SATA link carries: a cache answered, not the drive
        assert read["verdict"] == "beyond the interface", read
        assert "faster than sata-6g carries (600 MB/s): a cache answered" in read["basis"], read
    else:
        assert read["verdict"] in ("reaches the spec", "cannot tell"), read  # a loop device reads far above 1 MB/s

    # The spec given to show is not stored: without it, no spec finding; given to run, it is kept with the run
    plain = json.loads(disklab("show", "last", "-f", "json").stdout)
    assert "spec" not in {f["kind"] for f in plain["findings"]}
    assert disklab("run", str(suite), "--target", device, "--repeat", "2", "--spec", str(drive)).returncode == 0
    kept = json.loads(disklab("show", "last", "-f", "json").stdout)
    assert kept["run"]["options"]["spec"]["name"] == "my-drive"
    assert "spec" in {f["kind"] for f in kept["findings"]}
