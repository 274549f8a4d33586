"""The real thing: disklab runs fio on a small file, and its stored figures match fio run alone."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path

import pytest

from disklab import version
from disklab.fio.parse import read_fio_document

pytestmark = pytest.mark.integration

# Runs of the same job differ by about 5 % on a quiet machine, and by up to 2x on a 2-core one busy with other work
# (plan/passes.py). What this bound is for is far beyond that: a figure read in the wrong unit (KiB for bytes: 1024x),
# or another job than the one shown (the Q32 test at depth 1: 5x here). Closer agreement is a benchmark's (bench/).
AGREEMENT_FACTOR = 3


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
    result = disklab("run", "quick", "--target", str(target), "--runtime", "1", "--ramp", "0", "--size", "64M",
                     "--repeat", "1", home=home)
    assert "SEQ1M Q8T1" in result.stdout and "MB/s" in result.stdout
    assert list(target.iterdir()) == []
    document = json.loads(disklab("show", "last", "--format", "json", home=home).stdout)
    assert document["run"]["status"] == "complete" and document["run"]["fio_version"].startswith("fio-3")
    assert document["run"]["disklab_version"] == version()  # this checkout's commit, as git names it now
    tests = document["tests"]
    assert len(tests) == 8
    for test in tests:
        (direction,) = test["metrics"]
        assert direction == test["params"]["direction"]
        m = test["metrics"][direction]
        assert m["iops"] > 0 and m["bw_bytes_per_s"] > 0 and m["lat_mean_ns"] > 0
        assert m["bw_bytes_per_s"] == pytest.approx(m["iops"] * test["params"]["bs"], rel=0.01)
        assert 0.5 < m["runtime_ms"] / 1000 < 3
    # Each queue depth is the one asked for, as fio saw it (the share of I/Os issued at each depth). Which of the two
    # is faster is the machine's to say: another test suite beside this one can slow either.
    depths = {label: output["jobs"][0]["iodepth_level"] for label, output in fio_outputs(home, document["run"]["id"])}
    assert depths["RND4K Q1T1 read"]["1"] == 100, depths
    assert depths["RND4K Q32T1 read"]["32"] > 90, depths


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
    """disklab stores fio's own figures of the job it shows, and fio alone given that job runs the same job. Their
    figures are compared only roughly: they take turns (disklab, fio, disklab, fio), but another test suite on the
    machine moves either."""
    target, home = tmp_path / "target", tmp_path / "home"
    target.mkdir()
    suite = tmp_path / "agree.toml"
    suite.write_text(SUITE)
    result = disklab("run", str(suite), "--target", str(target), "--keep-file", "--repeat", "1", home=home)
    (kept,) = target.iterdir()
    assert kept.name.startswith("disklab-run") and str(kept) in result.stderr
    first = json.loads(disklab("show", "last", "--format", "json", home=home).stdout)
    jobfiles = disklab("show", "last", "--jobfile", home=home).stdout.split("; disklab ")[1:]
    alone_first = [fio_alone(tmp_path, jobfile, first["run"]["test_path"], kept) for jobfile in jobfiles]
    disklab("run", str(suite), "--target", str(kept), "--repeat", "1", home=home)  # reads only: the file is kept as is
    second = json.loads(disklab("show", "last", "--format", "json", home=home).stdout)
    alone_second = [fio_alone(tmp_path, jobfile, first["run"]["test_path"], kept) for jobfile in jobfiles]
    ran = [output for _, output in fio_outputs(home, first["run"]["id"])]
    assert len(ran) == len(jobfiles) == len(alone_first) == 2
    for n, test in enumerate(first["tests"]):
        assert test["metrics"]["read"]["iops"] == ran[n]["jobs"][0]["read"]["iops"], "fio's own figure, stored"
        assert job_options(alone_first[n]) == job_options(ran[n]), "fio alone ran the job disklab ran"
        stored = (test["metrics"]["read"]["iops"] + second["tests"][n]["metrics"]["read"]["iops"]) / 2
        alone = (alone_first[n]["jobs"][0]["read"]["iops"] + alone_second[n]["jobs"][0]["read"]["iops"]) / 2
        assert alone / AGREEMENT_FACTOR < stored < alone * AGREEMENT_FACTOR, (test["label"], stored, alone)


def fio_alone(tmp_path, jobfile, test_path, kept) -> dict:
    job_path = tmp_path / "alone.fio"
    job_path.write_text("; disklab " + jobfile.replace(test_path, str(kept)))
    output = subprocess.run(["fio", "--output-format=json", str(job_path)], capture_output=True, text=True,
                            check=True).stdout
    return json.loads(output)


def job_options(output: dict) -> dict:
    """The options fio says it ran the job with, but the file it ran on."""
    options = {**output["global options"], **output["jobs"][0]["job options"]}
    options.pop("filename")
    return options


def fio_outputs(home, run_id: int) -> list[tuple[str, dict]]:
    """(label, fio's JSON document) of each test of a run, as stored."""
    with closing(sqlite3.connect(f"file:{home / 'results.db'}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT label, fio_output FROM tests WHERE run_id = ? ORDER BY seq", (run_id,)).fetchall()
    return [(label, read_fio_document(output).data) for label, output in rows]


def _one_line(stderr: str) -> str:
    """stderr with the terminal's line wrapping undone."""
    return " ".join(stderr.split())


@pytest.mark.skipif(shutil.which("findmnt") is None, reason="findmnt (util-linux) is not installed")
def test_the_header_and_the_stored_run_name_the_root_disk_a_directory_lives_on(tmp_path):
    """Issue 23: which block device, model, file system and mount the target is on, said before anything runs."""
    root_source, root_type = subprocess.run(["findmnt", "-n", "-o", "SOURCE,FSTYPE", "/"], capture_output=True,
                                            text=True, check=True).stdout.split()
    home, target = tmp_path / "home", Path(tempfile.mkdtemp(prefix="disklab-test-", dir="/var/tmp"))
    try:
        on_root = subprocess.run(["findmnt", "-n", "-o", "TARGET", "--target", str(target)], capture_output=True,
                                 text=True, check=True).stdout.strip() == "/"
        if not on_root:
            pytest.skip("/var/tmp is not on the root file system here")
        result = disklab("run", "quick", "--target", str(target), "--runtime", "1s", "--ramp", "0", "--size", "16MiB",
                         "--repeat", "1", home=home)
        assert list(target.iterdir()) == []
    finally:
        shutil.rmtree(target, ignore_errors=True)
    said = _one_line(result.stderr)
    header = said[said.index("suite quick: 8 tests on "):]
    assert f"(directory), a new test file on {root_source} (" in header, header
    assert f"), {root_type} mounted at /; estimated duration" in header, header
    on = header[header.index("a new test file on ") + len("a new test file on "):header.index("; estimated")]
    shown = disklab("show", "last", home=home).stdout
    assert shown.splitlines()[0] == f"disk under test: {on}"
    stored = json.loads(disklab("show", "last", "--format", "json", home=home).stdout)
    assert stored["environment"]["target_on"] == on


ONE_TEST = """
name = "one"
[defaults]
runtime = "1s"
ramp = "0s"
size = "16M"
[[group]]
name = "RND4K"
label = "RND4K read"
pattern = "random"
bs = "4k"
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder in /mnt needs root")
def test_a_new_file_in_an_empty_folder_under_mnt_is_run_with_a_warning_kept_with_the_run(tmp_path):
    """--new-file asks for a test file where nothing is; an empty /mnt folder on the root disk is likely a disk not
    mounted: said before the run, kept with it, said again by show."""
    home, suite = tmp_path / "home", tmp_path / "one.toml"
    suite.write_text(ONE_TEST)
    folder = Path(tempfile.mkdtemp(prefix="disklab-test-", dir="/mnt"))
    try:
        if subprocess.run(["findmnt", "-n", "-o", "TARGET", "--target", str(folder)], capture_output=True,
                          text=True).stdout.strip() != "/":
            pytest.skip("/mnt is not on the root file system here")
        refused = disklab("run", str(suite), "--target", str(folder / "bench.dat"), "--repeat", "1", home=home,
                          check=False)
        assert refused.returncode == 2 and "give --new-file" in refused.stderr
        result = disklab("run", str(suite), "--target", str(folder / "bench.dat"), "--new-file", "--repeat", "1",
                         home=home)
        assert list(folder.iterdir()) == []  # made, then removed
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    said = _one_line(result.stderr)
    warning = f"warning: {folder} is an empty directory on the root file system: if a disk belongs there"
    assert said.index(warning) < said.index("suite one: 1 tests on") < said.index("run 1 started")
    assert f"{folder / 'bench.dat'} (file), a new test file on " in said
    assert warning in _one_line(disklab("show", "1", home=home).stdout)
