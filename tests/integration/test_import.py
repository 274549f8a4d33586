"""`disklab import` on real fio output: a json+ run on a small file, and a client/server pair on loopback."""

import json
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.capture_fio_output import fio_server
from tests.integration.conftest import NEEDS_FIO, NEEDS_LOOP_DEVICES, table_rows

pytestmark = [pytest.mark.integration, NEEDS_FIO]

JOBFILE = """[global]
ioengine=psync
filename={target}
size=8m
runtime=1
time_based
[reads]
rw=randread
bs=4k
[mixed]
stonewall
rw=randrw
rwmixread=70
bs=8k
"""


def run_fio(tmp_path, *args: str) -> str:
    job = tmp_path / "job.fio"
    job.write_text(JOBFILE.format(target=tmp_path / "testfile"))
    return subprocess.run(["fio", *args, str(job)], capture_output=True, text=True, check=True, timeout=120,
                          cwd=tmp_path).stdout


def assert_import_equals_fio(disklab, path, entries: list[dict], hosts: set[str | None]) -> None:
    """Stored figures, the JSON export and the table all carry fio's numbers for every job and direction."""
    result = disklab("import", str(path), "--name", path.stem)
    assert result.returncode == 0, result.stderr
    exported = json.loads(disklab("show", "last", "--format", "json").stdout)
    assert exported["run"]["name"] == path.stem and exported["run"]["suite_name"] == "import"
    run_id = exported["run"]["id"]
    tests = disklab.tests(run_id)
    assert len(tests) == len(entries) and {t["host"] for t in tests} == hosts
    for test, entry in zip(tests, entries):
        stored = {m["direction"]: m for m in disklab.metrics(test["id"])}
        fio = {d: entry[d] for d in ("read", "write") if entry[d]["total_ios"] > 0}
        assert set(stored) == set(fio)
        for direction, figures in fio.items():
            m = stored[direction]
            assert (m["iops"], m["bw_bytes_per_s"], m["lat_mean_ns"], m["clat_p99_ns"]) == (
                figures["iops"], figures["bw_bytes"], figures["lat_ns"]["mean"],
                figures["clat_ns"]["percentile"]["99.000000"])
    exported_iops = [{d: m["iops"] for d, m in t["metrics"].items()} for t in exported["tests"]]
    assert exported_iops == [{d: e[d]["iops"] for d in ("read", "write") if e[d]["total_ios"] > 0} for e in entries]
    table = disklab("show", "last")
    assert table.returncode == 0
    rows = table_rows(table.stdout)
    assert [(r[1], r[3]) for r in rows] == [
        (d, f"{e[d]['iops']:,.0f}") for e in entries for d in ("read", "write") if e[d]["total_ios"] > 0]


def test_a_json_plus_run_imports_with_fios_figures(tmp_path, disklab):
    output = tmp_path / "local.json"
    output.write_text(run_fio(tmp_path, "--output-format=json+"))
    entries = json.loads(output.read_text()[output.read_text().index("{"):])["jobs"]
    assert "bins" in entries[0]["read"]["clat_ns"]
    assert_import_equals_fio(disklab, output, entries, {None})
    (run,) = disklab.runs()
    assert (run["hostname"], run["target"], run["status"]) == ("unknown", str(tmp_path / "testfile"), "complete")


def test_client_server_output_imports_per_host(tmp_path, disklab):
    with fio_server("fio") as first, fio_server("fio") as second:
        hosts_file = tmp_path / "hosts"
        hosts_file.write_text(f"{first}\n{second}\n")
        text = run_fio(tmp_path, f"--client={hosts_file}", "--output-format=json")
    output = tmp_path / "remote.json"
    output.write_text(text)
    stats = json.loads(text[text.index("{"):])["client_stats"]
    entries = [e for e in stats if e["jobname"] != "All clients"]
    hosts = {f"127.0.0.1:{address.rpartition(',')[2]}" for address in (first, second)}
    assert_import_equals_fio(disklab, output, entries, hosts)
    listing = disklab("runs")
    assert "remote" in listing.stdout


def fio_json(tmp_path, name: str, *options: str, check: bool = True) -> Path:
    """fio's output of one command-line job in tmp_path, stdout and stderr in one file as users save it (2>&1)."""
    result = subprocess.run(["fio", f"--name={name}", *options], capture_output=True, text=True, timeout=120,
                            cwd=tmp_path)
    assert result.returncode == 0 or not check, result.stderr
    path = tmp_path / f"{name}.json"
    path.write_text(result.stderr + result.stdout)
    return path


def test_a_grouped_and_an_ungrouped_run_of_the_same_job_compare_as_the_same_workload(tmp_path, disklab):
    """numjobs=4, each job capped at 200 IOPS on a file already in the page cache: both ways fio reports ~800."""
    target = tmp_path / "capped"
    target.write_bytes(b"\1" * 8 * 1024**2)
    job = [f"--filename={target}", "--size=8m", "--bs=4k", "--rw=randread", "--ioengine=psync", "--numjobs=4",
           "--rate_iops=200", "--time_based", "--runtime=1", "--output-format=json+"]
    grouped = fio_json(tmp_path, "capped", *job, "--group_reporting")
    grouped = grouped.rename(tmp_path / "grouped.json")
    ungrouped = fio_json(tmp_path, "capped", *job)
    entries = json.loads(ungrouped.read_text()[ungrouped.read_text().index("{"):])["jobs"]
    assert len(entries) == 4
    for path in (grouped, ungrouped):
        assert disklab("import", str(path)).returncode == 0
    tests = [disklab.tests(run["id"]) for run in disklab.runs()]
    assert [len(t) for t in tests] == [1, 1]
    (combined,) = disklab.metrics(disklab.tests(2)[0]["id"])
    assert combined["iops"] == sum(e["read"]["iops"] for e in entries)
    assert combined["total_ios"] == sum(e["read"]["total_ios"] for e in entries)
    compared = json.loads(disklab("compare", "1", "2", "--format", "json").stdout)
    rows = {row["metric"]: row for row in compared["rows"]}
    assert {row["test"] for row in compared["rows"]} == {"capped"} and rows["iops"]["params"]["jobs"] == 4
    for metric in ("iops", "mb_per_s"):  # matched, and the ratio says the same; one fio run each: no verdict
        value = rows[metric]["values"][1]
        assert (value["verdict"], value["basis"]) == ("no verdict", "single runs") and 0.9 < value["ratio"] < 1.1, value
    flags = disklab.query("SELECT flag FROM test_flags WHERE test_id = ?", (disklab.tests(2)[0]["id"],))
    assert [f["flag"] for f in flags] == ["combined_jobs"]  # json+: percentiles from the merged bins, exact


def test_a_failed_fio_job_is_a_failed_run_every_command_can_show(tmp_path, disklab):
    """/dev/full refuses writes with ENOSPC: fio reports error 28 and prints its reason before the JSON."""
    path = fio_json(tmp_path, "full", "--filename=/dev/full", "--rw=write", "--size=64k", "--output-format=json",
                    check=False)
    result = disklab("import", str(path))
    assert result.returncode == 0 and "1 failed (fio reported an error)" in result.stderr
    (run,) = disklab.runs()
    assert run["status"] == "failed" and run["error"].startswith("fio reported an error for every job: fio error 28")
    (test,) = disklab.tests(run["id"])
    assert disklab.metrics(test["id"]) == [] and "err=28" in test["fio_stderr"]
    shown = disklab("show", "last")
    assert shown.returncode == 0 and "fio error 28 (No space left on device)" in shown.stdout
    report = ("report", "last", "-o", str(tmp_path / "r.html"))
    for args in (("show", "last", "--format", "json"), ("show", "last", "--format", "csv"),
                 ("show", "last", "--format", "markdown"), ("runs",), report):
        assert disklab(*args).returncode == 0, args
    assert disklab("compare", "last", "last").returncode == 2  # one run named twice: a usage error, one line


@pytest.mark.parametrize("size", ["1MiB", "1MB", "64KiB", "64Ki", "3k", "1.5k", "0x1000"])
@pytest.mark.parametrize("base", ["1024", "1000"])
def test_sizes_are_read_as_the_local_fio_reads_them(size, base, tmp_path):
    """fio writes exactly `size` bytes with bs=1 on the null engine: fio/sizes.py must say the same number."""
    from disklab.fio.sizes import parse_fio_size
    path = fio_json(tmp_path, "sized", "--ioengine=null", f"--kb_base={base}", f"--size={size}", "--bs=1",
                    "--rw=write", "--output-format=json")
    text = path.read_text()
    (job,) = json.loads(text[text.index("{"):])["jobs"]
    assert parse_fio_size(size, int(base)) == job["write"]["io_bytes"]


@pytest.mark.parametrize("mode", [pytest.param(mode, marks=NEEDS_LOOP_DEVICES)
                                  for mode in ("trim", "randtrim", "trimwrite", "randtrimwrite")])
def test_every_trim_mode_on_a_loop_device_imports_with_fios_figures(mode, tmp_path, disklab, attach_loop):
    device = attach_loop(size_bytes=16 * 1024**2)
    path = fio_json(tmp_path, mode, f"--rw={mode}", f"--filename={device}", "--size=8m", "--bs=64k",
                    "--runtime=1", "--output-format=json")
    (entry,) = json.loads(path.read_text()[path.read_text().index("{"):])["jobs"]
    assert disklab("import", str(path)).returncode == 0
    (test,) = disklab.tests(1)
    assert json.loads(test["params_json"])["direction"] == ("trimwrite" if "write" in mode else "trim")
    stored = {m["direction"]: m for m in disklab.metrics(test["id"])}
    fio = {d: entry[d] for d in ("read", "write", "trim") if entry[d]["total_ios"] > 0}
    assert set(stored) == set(fio) == ({"trim", "write"} if "write" in mode else {"trim"})
    for direction, figures in fio.items():
        m = stored[direction]
        assert (m["iops"], m["bw_bytes_per_s"], m["io_bytes"], m["lat_mean_ns"], m["clat_p99_ns"]) == (
            figures["iops"], figures["bw_bytes"], figures["io_bytes"], figures["lat_ns"]["mean"],
            figures["clat_ns"]["percentile"]["99.000000"])
    rows = table_rows(disklab("show", "last").stdout)
    assert [(r[1], r[3]) for r in rows] == [(d, f"{f['iops']:,.0f}") for d, f in fio.items()]


def test_a_trim_of_a_file_is_a_failed_test_with_fios_reason(tmp_path, disklab):
    """psync trims only block devices: on a file fio 3.33 reports error 25 (ENOTTY) for the trim."""
    path = fio_json(tmp_path, "filetrim", "--rw=trim", f"--filename={tmp_path / 'file'}", "--size=1m", "--bs=64k",
                    "--output-format=json", check=False)
    result = disklab("import", str(path))
    assert result.returncode == 0 and "1 failed (fio reported an error)" in result.stderr
    (run,) = disklab.runs()
    assert run["status"] == "failed" and "fio error 25 (Inappropriate ioctl for device)" in run["error"]
    assert disklab("show", "last").returncode == 0
