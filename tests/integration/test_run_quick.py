"""The real thing: disklab runs fio on a small file, and its stored figures match fio run alone."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

# Runs of the same job differ by about 5 % on these machines; allow a wide margin for a 2-core box under load.
TOLERANCE = 0.30


def disklab(*args, home, check=True):
    env = {**os.environ, "DISKLAB_HOME": str(home)}
    result = subprocess.run([sys.executable, "-m", "disklab", *args], capture_output=True, text=True, env=env,
                            stdin=subprocess.DEVNULL, timeout=600)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_quick_stores_eight_plausible_tests_and_leaves_nothing_behind(tmp_path):
    target, home = tmp_path / "target", tmp_path / "home"
    target.mkdir()
    result = disklab("run", "quick", "--target", str(target), "--runtime", "1", "--ramp", "0", "--size", "64M", home=home)
    assert "SEQ1M Q8T1" in result.stdout and "MB/s" in result.stdout
    assert list(target.iterdir()) == []
    document = json.loads(disklab("show", "last", "--format", "json", home=home).stdout)
    assert document["run"]["status"] == "complete" and document["run"]["fio_version"].startswith("fio-3")
    tests = document["tests"]
    assert len(tests) == 8
    for test in tests:
        (direction,) = test["metrics"]
        assert direction == test["params"]["direction"]
        m = test["metrics"][direction]
        assert m["iops"] > 0 and m["bw_bytes_per_s"] > 0 and m["lat_mean_ns"] > 0
        assert m["bw_bytes_per_s"] == pytest.approx(m["iops"] * test["params"]["bs"], rel=0.01)
        assert 0.5 < m["runtime_ms"] / 1000 < 3
    q1 = next(t for t in tests if t["label"] == "RND4K Q1T1 read")["metrics"]["read"]
    q32 = next(t for t in tests if t["label"] == "RND4K Q32T1 read")["metrics"]["read"]
    assert q32["iops"] > q1["iops"], "a deeper queue should deliver more random-read IOPS on this disk"


SUITE = """
name = "agree"
[defaults]
runtime = "2s"
size = "256M"
[[group]]
name = "RND4K"
label = "RND4K Q{iodepth} read"
pattern = "random"
bs = "4k"
iodepth = [1, 32]
"""


def test_stored_figures_agree_with_the_same_job_run_by_fio_alone(tmp_path):
    """disklab and fio alone take turns (disklab, fio, disklab, fio), so that drift on a noisy host cancels out."""
    target, home = tmp_path / "target", tmp_path / "home"
    target.mkdir()
    suite = tmp_path / "agree.toml"
    suite.write_text(SUITE)
    result = disklab("run", str(suite), "--target", str(target), "--keep-file", home=home)
    (kept,) = target.iterdir()
    assert kept.name.startswith("disklab-run") and str(kept) in result.stderr
    first = json.loads(disklab("show", "last", "--format", "json", home=home).stdout)
    jobfiles = disklab("show", "last", "--jobfile", home=home).stdout.split("; disklab ")[1:]
    alone_first = [fio_alone_iops(tmp_path, jobfile, first["run"]["test_path"], kept) for jobfile in jobfiles]
    disklab("run", str(suite), "--target", str(kept), home=home)  # reads only: the kept file is not touched
    second = json.loads(disklab("show", "last", "--format", "json", home=home).stdout)
    alone_second = [fio_alone_iops(tmp_path, jobfile, first["run"]["test_path"], kept) for jobfile in jobfiles]
    for n, test in enumerate(first["tests"]):
        stored = (test["metrics"]["read"]["iops"] + second["tests"][n]["metrics"]["read"]["iops"]) / 2
        alone = (alone_first[n] + alone_second[n]) / 2
        assert stored == pytest.approx(alone, rel=TOLERANCE), test["label"]


def fio_alone_iops(tmp_path, jobfile, test_path, kept) -> float:
    job_path = tmp_path / "alone.fio"
    job_path.write_text("; disklab " + jobfile.replace(test_path, str(kept)))
    output = subprocess.run(["fio", "--output-format=json", str(job_path)], capture_output=True, text=True,
                            check=True).stdout
    return json.loads(output)["jobs"][0]["read"]["iops"]
