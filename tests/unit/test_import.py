"""`disklab import`: real fio output (every layout in tests/fixtures/fio/layouts, json, json+, client/server)
becomes a run with fio's own figures; one fio job is one test; failed jobs are failed tests."""

import json
import os
import re

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.errors import StoreError
from disklab.fio.clientstats import client_entries
from disklab.fio.parse import PERCENTILES, parse_fio_output, parse_job
from disklab.imports.fio_groups import APPROXIMATE_FLAG, COMBINED_FLAG
from disklab.imports.fio_output import FIO_ERROR_FLAG, read_fio_json, store_import
from disklab.report.table import run_label
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from tests.conftest import FIO_FIXTURES, fixture_json

STANDALONE = ("import-two-jobs.json.json", "import-two-jobs.jsonplus.json", "randrw-70-4k-4jobs.jsonplus.json",
              "psync-note-before-json.json", "write-4k-fsync.json.json")
CLIENT_SERVER = ("import-client-one-host.json", "import-client-two-hosts.json")
LAYOUTS = FIO_FIXTURES / "layouts"
# Every layout fixture disklab stores (the others are refused: unified_rw_reporting, fio 2.1 without total_ios);
# real fio 3.33 output unless named layout-fio-* (rewritten by the rule in the layouts README).
IMPORTED_LAYOUTS = sorted(
    p.name for p in LAYOUTS.iterdir()
    if p.suffix in (".json", ".txt") and not p.name.startswith(("unified-", "layout-fio-2.1."))
)


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
    "fio-2": (fio_2_output(), "read has neither 'lat_ns' (fio 3.x) nor 'lat' (fio 2.x)"),
    "bad-layout": (fio_3_output_without_latency(), "read has neither 'lat_ns'"),
    "mixed-only": ((LAYOUTS / "unified-mixed.json").read_text(), "unified_rw_reporting"),
    "fio-2.1": ((LAYOUTS / "layout-fio-2.1.randrw.json").read_text(), "lacks 'total_ios'"),
    "kb-base": (json.dumps({"jobs": [{"jobname": "k", "job options": {"kb_base": "1001"}}]}), "kb_base=1001"),
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


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_batch_imports_every_good_file_names_each_refused_one_and_exits_2(case, tmp_path):
    """Import checks each whole file before it writes: a refused file leaves no run behind, and no longer keeps
    the good files of its batch out (a batch with one refused file imported nothing)."""
    import_and_read("import-two-jobs.json.json")
    before = runs_in_store()
    content, message = REFUSALS[case]
    path = tmp_path / f"{case}.json"
    if content is not None:
        path.write_text(content)
    other = tmp_path / "other.json"
    other.write_text("[]")
    good = [str(FIO_FIXTURES / n) for n in ("import-two-jobs.json.json", "import-client-one-host.json")]
    result = invoke("import", good[0], str(path), good[1], str(other))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[-1] == f"disklab: error: 2 of 4 files imported; refused: {path}, {other}"
    assert f"refused: {path}: " in result.stderr and message in result.stderr
    assert sum(line.startswith("refused: ") for line in lines) == 2
    after = runs_in_store()
    assert len(after) == len(before) + 2 and all(status == "complete" for _, status, _ in after)


def runs_in_store() -> list[tuple]:
    with Store(default_store_path()) as store:
        return [(r.id, r.status, r.finished_tests) for r in store.list_runs()]


def test_an_unreadable_option_is_refused_before_anything_is_stored(tmp_path):
    data = fixture_json("import-two-jobs.json.json")
    data["jobs"][1]["job options"]["bsrange"] = "4k-16k"
    path = tmp_path / "bsrange.json"
    path.write_text(json.dumps(data))
    result = invoke("import", str(FIO_FIXTURES / "import-two-jobs.json.json"), str(path))
    assert result.exit_code == 2 and "bsrange=4k-16k" in result.output
    assert [status for _, status, _ in runs_in_store()] == ["complete"]  # the good file alone; nothing of the other


def test_store_import_leaves_nothing_when_the_store_refuses_a_test(tmp_path):
    """One file is one transaction: the run and its first test go with the second test the store refused."""
    imported = read_fio_json(FIO_FIXTURES / "import-two-jobs.json.json")
    with Store(tmp_path / "r.db") as store:
        store.conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON tests WHEN NEW.seq = 1 "
                           "BEGIN SELECT RAISE(ABORT, 'disk full'); END")
        with pytest.raises(StoreError, match="disk full"):
            store_import(store, imported, None)
        assert store.list_runs() == []
        assert store.conn.execute("SELECT COUNT(*) FROM tests").fetchone()[0] == 0


def source_entries(name: str) -> list[dict]:
    """The job entries of a layout fixture, as fio/parse.py finds the report in the file."""
    from disklab.fio.parse import read_fio_document
    data = read_fio_document((LAYOUTS / name).read_text()).data
    return client_entries(data) if "client_stats" in data else data["jobs"]


@pytest.mark.parametrize("name", IMPORTED_LAYOUTS)
def test_every_layout_imports_with_the_figures_fio_wrote(name):
    """Each stored figure equals the parser's reading of the source entry (fio 3.33 files: fio's own fields)."""
    record = import_and_read(f"layouts/{name}")
    entries = source_entries(name)
    if name.startswith("numjobs4-ungrouped"):
        return  # one test for the four entries: see the combining tests below
    assert len(record.tests) == len(entries)
    for test, entry in zip(record.tests, entries):
        job = parse_job(entry)
        if job.error:
            assert test.metrics == () and dict(test.flags)[FIO_ERROR_FLAG].startswith(f"fio error {job.error} ")
            continue
        assert test.metrics == job.directions != ()
        if "bw_bytes" in entry.get("read", {}):  # fio 3.33's own fields, no conversion
            assert stored_figures(test) == fio_figures(entry)
        assert (test.usr_cpu_percent, test.sys_cpu_percent) == (entry["usr_cpu"], entry["sys_cpu"])
    assert record.info.status == ("failed" if name.startswith("failed-") else "complete")


def test_what_the_reader_skipped_is_kept_with_the_run():
    record = import_and_read("layouts/status-interval.txt")
    assert record.info.options["import_notes"] == ["kept the last of 4 JSON reports (fio --status-interval)"]
    older = import_and_read("layouts/layout-fio-2.20.randrw.json").tests[0]
    assert "usec" in dict(older.flags)["fio_layout"]


def test_jobs_of_one_group_without_group_reporting_are_one_test_combined_as_fio_would():
    entries = source_entries("numjobs4-ungrouped.json")
    assert len(entries) == 4 and len({e["groupid"] for e in entries}) == 1
    (test,) = import_and_read("layouts/numjobs4-ungrouped.json").tests
    (read,) = test.metrics
    parts = [e["read"] for e in entries]
    total_ios = sum(p["total_ios"] for p in parts)
    assert (test.label, test.params["jobs"]) == ("numjobs4-ungrouped", 4)
    assert read.iops == sum(p["iops"] for p in parts)
    assert read.bw_bytes_per_s == sum(p["bw_bytes"] for p in parts)
    assert (read.io_bytes, read.total_ios) == (sum(p["io_bytes"] for p in parts), total_ios)
    assert read.runtime_ms == max(p["runtime"] for p in parts)
    assert read.lat_mean_ns == sum(p["lat_ns"]["mean"] * p["total_ios"] for p in parts) / total_ios
    assert read.clat_max_ns == max(p["clat_ns"]["max"] for p in parts)
    # json without bins: each percentile is the jobs' highest, and the test says so.
    assert read.clat_percentiles_ns == {
        ours: max(p["clat_ns"]["percentile"][theirs] for p in parts) for theirs, ours in PERCENTILES.items()}
    flags = dict(test.flags)
    assert "highest of the 4 jobs'" in flags[APPROXIMATE_FLAG]
    assert flags[COMBINED_FLAG].startswith("4 fio jobs written without group_reporting")
    assert all(f"read {p['iops']:g} IOPS" in flags[COMBINED_FLAG] for p in parts)
    # Each job's figures stay stored: the test's fio output holds the four entries, re-read by the parser.
    assert [j.directions for j in parse_fio_output(test.fio_output).jobs] == [parse_job(e).directions for e in entries]


def test_a_grouped_and_an_ungrouped_import_of_the_same_job_are_the_same_workload():
    grouped = import_and_read("layouts/numjobs4-grouped.json").tests[0]
    ungrouped = import_and_read("layouts/numjobs4-ungrouped.json").tests[0]
    keys = ("pattern", "direction", "bs", "iodepth", "jobs", "size", "engine")
    assert {k: grouped.params[k] for k in keys} == {k: ungrouped.params[k] for k in keys}
    assert COMBINED_FLAG not in dict(grouped.flags)
    result = invoke("compare", "last~1", "last")
    assert result.exit_code == 0 and "numjobs4-grouped" in result.output and "no test in common" not in result.output


def test_json_plus_bins_give_the_combined_percentiles_exactly(tmp_path):
    """Combining reuses hosts/aggregate.py: percentiles from the jobs' summed json+ bins, no approximation."""
    from disklab.hosts.aggregate import histogram_percentiles
    data = fixture_json("randrw-70-4k-4jobs.jsonplus.json")
    entry = data["jobs"][0]
    twin = {**entry, "read": {**entry["read"], "iops": entry["read"]["iops"] / 2}}
    data["jobs"] = [entry, twin]  # two entries of one job: what fio writes for numjobs=2 without group_reporting
    path = tmp_path / "twin.json"
    path.write_text(json.dumps(data))
    (test,) = read_fio_json(path).tests
    read = next(d for d in test.job.directions if d.direction == "read")
    bins = {float(k): 2 * v for k, v in entry["read"]["clat_ns"]["bins"].items()}
    assert read.clat_percentiles_ns == histogram_percentiles(bins)
    assert read.iops == entry["read"]["iops"] * 1.5
    assert APPROXIMATE_FLAG not in dict(test.flags)


FAILED = "layouts/failed-dev-full.stdout+stderr.txt"


def test_a_file_of_failed_jobs_is_a_failed_run_with_fios_error():
    record = import_and_read(FAILED)
    (test,) = record.tests
    message = f"fio error 28 ({os.strerror(28)})"
    assert record.info.status == "failed"
    assert record.info.error.startswith(f"fio reported an error for every job: {message}")
    assert test.metrics == ()  # a failed job's counters are no measurement
    flag = dict(test.flags)[FIO_ERROR_FLAG]
    assert flag.startswith(message) and "fio: pid=" in flag and "err=28/file:io_u.c" in flag
    assert "failed (fio reported an error)" in invoke("import", str(FIO_FIXTURES / FAILED)).output


def test_one_failed_job_among_good_ones_is_a_failed_test_of_a_complete_run(tmp_path):
    failed = source_entries("failed-dev-full.json")[0]
    data = fixture_json("import-two-jobs.json.json")
    data["jobs"].append(failed)  # as fio writes a job file whose third job fails
    path = tmp_path / "three.json"
    path.write_text(json.dumps(data))
    result = invoke("import", str(path))
    assert result.exit_code == 0 and "3 tests, 1 failed" in result.output
    with Store(default_store_path()) as store:
        record = store.get_run(store.resolve_run_id("last"))
    assert record.info.status == "complete"
    assert [FIO_ERROR_FLAG in dict(t.flags) for t in record.tests] == [False, False, True]


@pytest.mark.parametrize("command", [
    ("show", "last"), ("show", "last", "--format", "json"), ("show", "last", "--format", "csv"),
    ("show", "last", "--format", "markdown"), ("show", "last", "--jobfile"), ("show", "last", "--env"),
    ("runs",), ("runs", "--format", "json"), ("report", "last", "-o", "{tmp}/r.html"),
    ("compare", "last~1", "last"), ("compare", "last", "last~1"),
])
def test_no_command_crashes_on_a_failed_run(command, tmp_path):
    import_and_read("layouts/rw-write.json")
    import_and_read(FAILED)
    result = invoke(*(part.format(tmp=tmp_path) for part in command))
    assert result.exit_code in (0, 2), result.output  # 2: compare finds no figure in common, in one line
    assert "internal error" not in result.output
    if command[:2] == ("show", "last") and len(command) == 2:
        assert "fio error 28" in result.output
    if "json" in command and command[0] == "show":
        exported = json.loads(result.output)
        assert exported["run"]["status"] == "failed" and FIO_ERROR_FLAG in exported["tests"][0]["flags"]


def with_options(tmp_path, **options) -> dict:
    """import-two-jobs' first job with other options (fio wrote the figures; only the options are read here)."""
    data = fixture_json("import-two-jobs.json.json")
    data["jobs"] = data["jobs"][:1]
    data["jobs"][0]["job options"].update(options)
    path = tmp_path / "options.json"
    path.write_text(json.dumps(data))
    return read_fio_json(path).tests[0].params


@pytest.mark.parametrize("options, expected", [
    ({"size": "50000Mi"}, {"size": 50000 * 1024**2}),
    ({"size": "1MiB"}, {"size": 1_000_000}),  # fio's default kb_base=1024: IEC prefixes are powers of 1000
    ({"size": "16MB"}, {"size": 16 * 1024**2}),  # ... and SI prefixes powers of 1024
    ({"kb_base": "1000", "size": "1MiB"}, {"size": 1024**2}),
    ({"kb_base": "1000", "size": "16MB"}, {"size": 16_000_000}),
    ({"size": "1MiB", "kb_base": "1000"}, {"size": 1_000_000}),  # fio reads options in order: kb_base came too late
    ({"size": "50%"}, {"size": None}),
    ({"bs": "4KiB"}, {"bs": 4000}),
    ({"bs": "4k,64k", "rw": "randwrite"}, {"bs": 65536}),  # writes use the second value
    ({"bs": "4k-64k", "rw": "randwrite"}, {"bs": 65536}),  # to fio's bs a '-' separates directions too
    ({"bs": ",64k", "rw": "randread"}, {"bs": 4096}),  # reads keep fio's default
    ({"bssplit": "4KB/50:64KiB/50"}, {"bssplit": "4k/50:64000/50", "bs": 4096}),
    ({"rate_iops": "1k"}, {"rate_iops": 1024}),
    ({"numjobs": "2", "iodepth": "8"}, {"jobs": 2, "iodepth": 8}),
])
def test_job_options_are_read_as_fio_reads_them(options, expected, tmp_path):
    params = with_options(tmp_path, **options)
    assert {k: params[k] for k in expected} == expected


@pytest.mark.parametrize("options, message", [
    ({"bs": "4k,64k", "rw": "randrw"}, "gives reads and writes different block sizes (4096, 65536 bytes)"),
    ({"bsrange": "4k-64k"}, "a range of block sizes"),
    ({"bssplit": "4k/50:64k"}, "leaves a share blank"),
    ({"rate": "1m,2m", "rw": "randrw"}, "rate=1m,2m differs between reads and writes"),
    ({"filesize": "1m-4m"}, "a range of file sizes"),
    ({"size": "(1+2)k"}, "arithmetic"),
])
def test_options_one_disklab_test_cannot_hold_are_refused_with_the_reason(options, message, tmp_path):
    with pytest.raises(Exception, match=re.escape(message)):
        with_options(tmp_path, **options)


def test_a_failed_import_is_not_resumed_and_says_why():
    import_and_read(FAILED)
    result = invoke("resume", "last")
    assert result.exit_code == 2
    assert "was imported from" in result.output and "nothing to resume" in result.output
