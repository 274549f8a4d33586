"""`disklab import`: real fio 3.33 output (json, json+, client/server) becomes a run with fio's own figures."""

import json

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.fio.parse import PERCENTILES, parse_fio_output
from disklab.importer import read_fio_json, store_import
from disklab.report.table import run_label
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from tests.conftest import FIO_FIXTURES, fixture_json

STANDALONE = ("import-two-jobs.json.json", "import-two-jobs.jsonplus.json", "randrw-70-4k-4jobs.jsonplus.json",
              "psync-note-before-json.json", "write-4k-fsync.json.json")
CLIENT_SERVER = ("import-client-one-host.json", "import-client-two-hosts.json")


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def import_and_read(name: str, *options: str):
    result = invoke("import", str(FIO_FIXTURES / name), *options)
    assert result.exit_code == 0, result.output
    with Store(default_store_path()) as store:
        return store.get_run(store.resolve_run_id("last"))


def fio_figures(entry: dict) -> dict:
    """What fio itself says of each direction that did I/O, read straight from its JSON."""
    figures = {}
    for direction in ("read", "write", "trim"):
        d = entry[direction]
        if d["total_ios"] == 0:
            continue
        percentiles = d["clat_ns"].get("percentile", {})
        figures[direction] = (
            d["iops"], d["bw_bytes"], d["io_bytes"], d["total_ios"], d["runtime"], d["lat_ns"]["mean"],
            d["clat_ns"]["mean"], d["clat_ns"]["max"],
            {ours: percentiles[theirs] for theirs, ours in PERCENTILES.items() if theirs in percentiles},
        )
    return figures


def stored_figures(test) -> dict:
    return {
        m.direction: (m.iops, m.bw_bytes_per_s, m.io_bytes, m.total_ios, m.runtime_ms, m.lat_mean_ns, m.clat_mean_ns,
                      m.clat_max_ns, m.clat_percentiles_ns)
        for m in test.metrics if m.direction != "sync"
    }


@pytest.mark.parametrize("name", STANDALONE)
def test_each_job_becomes_a_test_with_fios_own_figures(name):
    record = import_and_read(name)
    jobs = fixture_json(name)["jobs"]
    assert [t.label for t in record.tests] == [j["jobname"] for j in jobs]
    for test, job in zip(record.tests, jobs):
        assert stored_figures(test) == fio_figures(job) != {}
        assert test.host is None
        assert (test.usr_cpu_percent, test.sys_cpu_percent) == (job["usr_cpu"], job["sys_cpu"])
    assert record.info.status == "complete" and record.info.suite_name == "import"
    assert record.info.fio_version == "fio-3.33" and record.info.hostname == "unknown"


@pytest.mark.parametrize("name", CLIENT_SERVER)
def test_client_server_output_stores_each_hosts_jobs_with_the_host_and_not_fios_aggregate(name):
    record = import_and_read(name)
    entries = [e for e in fixture_json(name)["client_stats"] if e["jobname"] != "All clients"]
    assert len(record.tests) == len(entries) and "All clients" not in {t.label for t in record.tests}
    for test, entry in zip(record.tests, entries):
        assert test.host == f"{entry['hostname']}:{entry['port']}"
        assert stored_figures(test) == fio_figures(entry) != {}
    hosts = list(dict.fromkeys(t.host for t in record.tests))
    assert len(hosts) == (2 if "two-hosts" in name else 1)
    assert record.info.hostname == ", ".join(hosts)


def test_job_options_become_the_params_native_tests_store_with_fios_defaults():
    first, second = import_and_read("import-two-jobs.json.json").tests
    assert {k: first.params[k] for k in ("pattern", "direction", "bs", "iodepth", "jobs", "rwmixread", "size")} == {
        "pattern": "random", "direction": "read", "bs": 4096, "iodepth": 1, "jobs": 1, "rwmixread": 50,
        "size": 16 * 1024**2}
    assert (second.params["pattern"], second.params["direction"], second.params["bs"], second.params["iodepth"]) == (
        "sequential", "write", 64 * 1024, 4)
    assert (first.params["engine"], first.params["runtime"], first.params["direct"]) == ("psync", 1.0, False)
    mixed = import_and_read("randrw-70-4k-4jobs.jsonplus.json").tests[0].params
    assert (mixed["direction"], mixed["rwmixread"], mixed["jobs"], mixed["iodepth"]) == ("mixed", 70, 4, 32)
    assert "[randread-4k]" in first.jobfile and "rw=randread" in first.jobfile and "ioengine=psync" in first.jobfile


def test_the_stored_output_reads_back_as_the_same_job():
    for test in import_and_read("import-client-two-hosts.json").tests:
        (job,) = parse_fio_output(test.fio_output).jobs
        assert job.directions == test.metrics


def test_a_name_labels_the_run_and_the_file_time_is_when_it_ran():
    record = import_and_read("import-two-jobs.jsonplus.json", "--name", "old array")
    assert record.info.name == "old array" and run_label(record.info) == f"old array (run {record.info.id})"
    assert record.info.started_at.startswith("2026-") and record.info.started_at.endswith("+00:00")
    listing = invoke("runs")
    assert "old array" in listing.output


def test_show_prints_an_imported_run_in_every_format():
    import_and_read("import-client-two-hosts.json")
    table = invoke("show", "last")
    assert table.exit_code == 0 and "randread-4k @ 127.0.0.1:" in table.output
    exported = json.loads(invoke("show", "last", "--format", "json").output)
    assert len(exported["tests"]) == 4
    assert invoke("show", "last", "--format", "csv").exit_code == 0


def test_warning_lines_before_the_json_are_skipped():
    text = (FIO_FIXTURES / "import-two-jobs.json.json").read_text()
    assert text.startswith("note: ")
    assert len(read_fio_json(FIO_FIXTURES / "import-two-jobs.json.json").tests) == 2


def test_several_files_become_one_run_each(tmp_path):
    files = [str(FIO_FIXTURES / n) for n in ("import-two-jobs.json.json", "import-client-one-host.json")]
    result = invoke("import", *files)
    assert result.exit_code == 0, result.output
    with Store(default_store_path()) as store:
        assert [len(store.get_run(r.id).tests) for r in store.list_runs()] == [2, 2]


def fio_text_outputs() -> dict[str, str]:
    normal = (
        "rr: (g=0): rw=randread, bs=(R) 4096B-4096B, (W) 4096B-4096B, ioengine=psync, iodepth=1\nfio-3.33\n"
        "rr: (groupid=0, jobs=1): err= 0: pid=1: Sat Nov 21 22:41:41 2026\n"
        "  read: IOPS=11.2k, BW=43.7MiB/s (45.9MB/s)(43.8MiB/1001msec)\n"
        "Run status group 0 (all jobs):\n   READ: bw=43.7MiB/s (45.9MB/s)\n"
    )
    terse = "3;fio-3.33;rr;0;0;44844;44799;11199;1001;0;0;0.0;0.0;0;0;0.0;0.0\n"
    return {"normal": normal, "terse": terse}


def fio_2_output() -> str:
    return json.dumps({"fio version": "fio-2.2.10", "jobs": [{"jobname": "old", "read": {"io_bytes": 1, "bw": 1}}]})


def fio_3_output_without_latency() -> str:
    return json.dumps({"fio version": "fio-3.1", "jobs": [{"jobname": "odd", "read": {"io_bytes": 1, "total_ios": 1}}]})


REFUSALS = {
    "missing": (None, "no such file"),
    "empty": ("", "no readable JSON object; expected fio's"),
    "not-json": ("hello\nworld\n", "no readable JSON object; expected fio's"),
    "cut-off-json": ('{"jobs": [', "no readable JSON object (Expecting value: line 1 column 11"),
    "a-list": ("[1, 2]", "no readable JSON object"),
    "other-json": ('{"hello": 1}', "without 'jobs' or 'client_stats'"),
    "no-jobs": ('{"fio version": "fio-3.33", "jobs": []}', "holds no jobs"),
    "only-aggregate": ('{"client_stats": [{"jobname": "All clients"}]}', "holds no jobs"),
    "normal": (fio_text_outputs()["normal"], "fio's normal text output"),
    "terse": (fio_text_outputs()["terse"], "fio's terse output"),
    "fio-2": (fio_2_output(), "fio 3.x only"),
    "bad-layout": (fio_3_output_without_latency(), "not in fio 3.x's JSON layout"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_what_cannot_be_read_is_refused_in_one_line_with_exit_2(case, tmp_path):
    content, message = REFUSALS[case]
    path = tmp_path / f"{case}.json"
    if content is not None:
        path.write_text(content)
    result = invoke("import", str(path))
    assert result.exit_code == 2
    assert result.output.startswith(f"disklab: error: {path}: ") and message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not default_store_path().exists() or invoke("runs").output.startswith("no runs")


def test_an_unreadable_option_is_refused_before_anything_is_stored(tmp_path):
    data = fixture_json("import-two-jobs.json.json")
    data["jobs"][1]["job options"]["rw"] = "trimwrite"
    path = tmp_path / "trim.json"
    path.write_text(json.dumps(data))
    result = invoke("import", str(FIO_FIXTURES / "import-two-jobs.json.json"), str(path))
    assert result.exit_code == 2 and "rw=trimwrite" in result.output
    assert not default_store_path().exists() or invoke("runs").output.startswith("no runs")


def test_store_import_leaves_a_failed_run_when_the_store_refuses_a_test(tmp_path):
    imported = read_fio_json(FIO_FIXTURES / "import-two-jobs.json.json")
    with Store(tmp_path / "r.db") as store:
        store.conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON tests WHEN NEW.seq = 1 "
                           "BEGIN SELECT RAISE(ABORT, 'disk full'); END")
        with pytest.raises(Exception, match="disk full"):
            store_import(store, imported, None)
        (run,) = store.list_runs()
    assert run.status == "failed" and run.finished_tests == 1
