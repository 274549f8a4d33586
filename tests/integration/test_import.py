"""`disklab import` on real fio output: a json+ run on a small file, and a client/server pair on loopback."""

import json
import subprocess

import pytest

from tests.fixtures.capture_fio_output import fio_server
from tests.integration.conftest import NEEDS_FIO, table_rows

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
