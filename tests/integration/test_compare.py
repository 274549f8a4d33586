"""`disklab compare` on runs of real fio: a crossover set by rate caps, and repeats of one target within noise."""

import json
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, Disklab

pytestmark = [pytest.mark.integration, NEEDS_FIO]

KIB = 1024
BLOCK_SIZES = (4 * KIB, 16 * KIB, 64 * KIB)
RATE_IOPS = 100
RATE = 100 * 32 * KIB  # bytes/s: 3.3 MB/s, what 100 IOPS of 32 KiB would move

SWEEP = """
name = "{name}"
description = "random reads across block sizes, capped"

[defaults]
runtime = "{runtime}"
size = "16M"

[[group]]
name = "RND"
label = "RND {{bs}}"
pattern = "random"
direction = "read"
bs = [{sizes}]
{cap}
"""


def write_suite(path: Path, name: str, cap: str, sizes=BLOCK_SIZES, runtime: str = "1s") -> Path:
    sizes_text = ", ".join(f'"{bs // KIB}k"' for bs in sizes)
    path.write_text(SWEEP.format(name=name, sizes=sizes_text, cap=cap, runtime=runtime))
    return path


def run_suite(disklab: Disklab, suite: Path, target: Path, *options: str) -> None:
    result = disklab("run", str(suite), "--target", str(target), *options)
    assert result.returncode == 0, result.stderr


def test_compare_names_the_block_size_where_the_leader_changes(disklab: Disklab, tmp_path: Path) -> None:
    # The IOPS cap moves RATE_IOPS * bs bytes/s, the bandwidth cap RATE at every size: the first block size at which
    # the IOPS-capped run moves more is the crossover. The sizes sit 4x apart, so each side leads by 2x, far beyond
    # the noise of this disk; 2 s per test, so that a stall of the disk costs a capped run less.
    target = tmp_path / "target"
    target.mkdir()
    iops_capped = write_suite(tmp_path / "iops.toml", "iops-capped", f"rate_iops = {RATE_IOPS}", runtime="2s")
    run_suite(disklab, iops_capped, target)
    run_suite(disklab, write_suite(tmp_path / "bw.toml", "bandwidth-capped", f"rate = {RATE}", runtime="2s"), target)
    crossover = min(bs for bs in BLOCK_SIZES if RATE_IOPS * bs > RATE)

    result = disklab("compare", "1", "2", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    (mb,) = [x for x in document["crossovers"] if x["metric"] == "mb_per_s"]
    assert (mb["parameter"], mb["value"], mb["leader"], mb["previous_leader"]) == ("bs", crossover, 1, 2)
    assert {c["parameter"] for c in document["conditions"]} == {"rate", "rate_iops"}

    table = disklab("compare", "1", "2")
    assert table.returncode == 0, table.stderr
    assert f"from {crossover // KIB}KiB on, run 1 delivers more MB/s (run 2 leads below" in table.stdout
    assert "no repeats: the 10 % tolerance alone decides" in table.stdout


def test_repeated_runs_of_one_target_are_within_noise(disklab: Disklab, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    suite = write_suite(tmp_path / "capped.toml", "capped", "rate_iops = 200", sizes=(4 * KIB, 64 * KIB))
    run_suite(disklab, suite, target, "--repeat", "3")
    run_suite(disklab, suite, target, "--repeat", "3")

    document = json.loads(disklab("compare", "last~1", "last", "--format", "json").stdout)
    assert document["baseline"] == 1
    rows = document["rows"]
    assert {(r["test"], r["metric"]) for r in rows} >= {("RND 4KiB", "iops"), ("RND 64KiB", "mb_per_s")}
    assert all(r["values"][1]["n"] == 3 and r["values"][1]["basis"] == "t-test" for r in rows)
    # The cap holds IOPS and MB/s; latency is the disk's own and may really differ between runs.
    capped = [r for r in rows if r["metric"] in ("iops", "mb_per_s")]
    assert len(capped) == 4 and all(r["values"][1]["verdict"] == "within noise" for r in capped), capped

    changed = json.loads(disklab("compare", "1", "2", "--only-changed", "--format", "json").stdout)
    assert not [r for r in changed["rows"] if r["metric"] in ("iops", "mb_per_s")]
    assert changed["rows_hidden_within_noise"] >= 4
