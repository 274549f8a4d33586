"""Every built-in suite runs end to end on a small file, and exported job files are the ones disklab runs."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from disklab.plan.build import build_plan
from disklab.suite.loader import builtin_names, load_suite
from tests.integration.conftest import NEEDS_FIO, Disklab
from tests.integration.test_estimates import SUITES as ESTIMATED

pytestmark = [pytest.mark.integration, NEEDS_FIO]

# Each test short: the suites' plans, not their figures, are what this checks (their estimates: test_estimates.py,
# which runs quick, saturate, matrix and database-quick with the README's flags and checks them as here too).
SMALL = ["--runtime", "300ms", "--ramp", "0", "--pause", "0"]
# File-set suites shrink by --scale (their sets are many files); the rest by --size.
SHRINK = {"smallfiles": ["--scale", "0.001"], "video": ["--scale", "0.004"]}


# pgbench: test_pgbench; suites run once per configuration of a device (overprovision): test_file_systems
@pytest.mark.parametrize("name", [n for n in builtin_names() if n not in ESTIMATED
                                  and load_suite(n).pgbench is None and load_suite(n).configurations is None])
def test_each_builtin_suite_runs_on_a_small_file(disklab: Disklab, tmp_path: Path, name: str) -> None:
    target = tmp_path / "target"
    target.mkdir()
    shrink = SHRINK.get(name, ["--size", "128M"])
    result = disklab("run", name, "--target", str(target), *SMALL, *shrink)
    ran_whole(disklab, name, result, target)


def ran_whole(disklab: Disklab, name: str, result, target: Path) -> None:
    """The run is stored complete with every planned test (a search or rounds: at least those), each with figures,
    and disklab's test files and file sets are gone from the target."""
    assert result.returncode == 0, result.stderr
    document = json.loads(disklab("show", "last", "--format", "json").stdout)
    assert document["run"]["status"] == "complete"
    expected = len(build_plan(load_suite(name)).tests) - sum("skipped:" in line for line in result.stderr.splitlines())
    if load_suite(name).mode == "fixed":
        assert len(document["tests"]) == expected
    else:  # rounds until steady or enough written, or a search: the planned tests are where it starts
        assert len(document["tests"]) >= expected
    for test in document["tests"]:
        data = {d: m for d, m in test["metrics"].items() if d != "sync"}
        assert data, test["label"]
        assert all(m["iops"] > 0 and m["bw_bytes_per_s"] > 0 for m in data.values()), test["label"]
    assert list(target.iterdir()) == [], "disklab's test files and file sets are removed"


def test_exported_job_files_are_the_ones_a_run_executes_and_fio_runs_them(disklab: Disklab, tmp_path: Path) -> None:
    target, exported = tmp_path / "target", tmp_path / "exported"
    target.mkdir()
    options = ["--runtime", "1", "--ramp", "0", "--size", "64M"]
    assert disklab("run", "quick", "--target", str(target), *options).returncode == 0
    stored = [row["jobfile"] for row in disklab.tests(disklab.runs()[0]["id"])]
    result = disklab("export", "quick", "--fio", str(exported), "--target", str(target), *options)
    assert result.returncode == 0, result.stderr
    files = sorted(exported.glob("*.fio"))
    assert len(files) == len(stored) == 8
    same_file = re.compile(r"disklab-[^/\n]+\.testfile")
    for path, jobfile in zip(files, stored):
        assert same_file.sub("TESTFILE", path.read_text()) == same_file.sub("TESTFILE", jobfile)
    # fio alone: the placeholder form, with the target named in the environment.
    placeholder = tmp_path / "placeholder"
    assert disklab("export", "quick", "--fio", str(placeholder), *options).returncode == 0
    env = {**disklab.env, "DISKLAB_TARGET": str(target / "alone.dat")}
    job = sorted(placeholder.glob("*.fio"))[4]  # RND4K Q32T1 read
    output = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True, text=True, env=env,
                            check=True).stdout
    assert json.loads(output)["jobs"][0]["read"]["iops"] > 0
    assert (placeholder / "run-all.sh").stat().st_mode & 0o111


def test_dry_run_of_a_suite_shows_its_fitted_plan_and_notes(disklab: Disklab, tmp_path: Path) -> None:
    result = disklab("run", "matrix", "--target", str(tmp_path), "--size", "256M", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "note: 6. Throughput, sequential, last 5 GB read 1j: region last:5GB scaled down" in result.stdout
    assert "estimated duration" in result.stdout and list(tmp_path.iterdir()) == []



def test_file_copies_show_each_sets_elapsed_time_and_mb_per_s_as_the_mean_of_three_passes(
        disklab: Disklab, tmp_path: Path) -> None:
    result = disklab("run", "smallfiles", "--target", str(tmp_path), *SMALL, "--scale", "0.0005")
    assert result.returncode == 0, result.stderr
    document = json.loads(disklab("show", "last", "--format", "json").stdout)
    view = document["view"]
    headings = [column["heading"] for column in view["columns"]]
    assert headings == ["write MB/s", "write elapsed s", "read MB/s", "read elapsed s"]
    for set_label, row in (("100 x 1GB", "100 x 1 GB"), ("102400 x 1MB", "102,400 x 1 MB")):
        passes = [t["metrics"]["write"] for t in document["tests"] if t["label"].startswith(f"{set_label} write pass")]
        assert len(passes) == 3
        mb_per_s, elapsed_s, read_mb_per_s, _ = view["cells"][view["rows"].index(row)]
        assert elapsed_s["value"] == pytest.approx(sum(p["runtime_ms"] for p in passes) / 3 / 1000)
        assert elapsed_s["value"] > 0
        assert mb_per_s["value"] == pytest.approx(sum(p["bw_bytes_per_s"] for p in passes) / 3 / 1e6)
        assert read_mb_per_s["value"] is None  # copies are written only
    assert "elapsed: fio's runtime of a test's I/O, its closing flush included" in " ".join(view["notes"])
