"""Every fio JSON shape of tests/fixtures/fio/layouts/ parses, and every figure is fio's own, converted by the rules
of that folder's README. The expected figures are read here independently: json.loads on the lines between
column-0 braces, never through disklab's reader."""

import json
from pathlib import Path

import pytest

from disklab.errors import FioError
from disklab.fio.parse import PERCENTILES, latency_bins, parse_fio_output, parse_job, read_fio_document

LAYOUTS = Path(__file__).parents[1] / "fixtures" / "fio" / "layouts"
# Real fio 3.33 output, verbatim (README.md: how each was made).
REAL = sorted(p.name for p in LAYOUTS.iterdir() if p.suffix in (".json", ".txt")
              and not p.name.startswith(("layout-", "client-", "unified-")))


def text(name: str) -> str:
    return (LAYOUTS / name).read_text(encoding="utf-8")


def reports(raw: str) -> list[dict]:
    """fio's reports in its output: each runs from a line '{' to a line '}' (fio's writer puts both at column 0)."""
    found, start = [], None
    lines = raw.removeprefix("\ufeff").splitlines()
    for n, line in enumerate(lines):
        if line == "{" and start is None:
            start = n
        elif line == "}" and start is not None:
            found.append(json.loads("\n".join(lines[start:n + 1])))
            start = None
    return found


def expected_directions(entry: dict) -> list[tuple]:
    """fio 3.6+ fields as disklab keeps them: bytes, bytes/s and ns need no conversion."""
    rows = []
    for name in ("read", "write", "trim"):
        d = entry.get(name)
        if d and d["total_ios"] > 0:
            clat = d["clat_ns"]
            rows.append((name, d["io_bytes"], d["total_ios"], d["iops"], d["bw_bytes"], d["runtime"],
                         d["lat_ns"]["mean"], clat["mean"], clat["max"],
                         {ours: clat["percentile"][theirs] for theirs, ours in PERCENTILES.items()
                          if theirs in clat.get("percentile", {})}))
    sync = entry.get("sync", {})
    count = sync.get("total_ios", 0) or sync.get("lat_ns", {}).get("N", 0)
    if count and rows:
        lat = sync["lat_ns"]
        runtime = next((r for r in rows if r[0] == "write"), rows[-1])[5]
        rows.append(("sync", 0, count, count / (runtime / 1000), 0.0, runtime, lat["mean"], lat["mean"], lat["max"],
                     {ours: lat["percentile"][theirs] for theirs, ours in PERCENTILES.items()
                      if theirs in lat.get("percentile", {})}))
    return rows


def as_rows(job) -> list[tuple]:
    return [(d.direction, d.io_bytes, d.total_ios, d.iops, d.bw_bytes_per_s, d.runtime_ms, d.lat_mean_ns,
             d.clat_mean_ns, d.clat_max_ns, d.clat_percentiles_ns) for d in job.directions]


@pytest.mark.parametrize("name", REAL)
def test_every_real_fio_output_parses_to_fios_own_figures(name):
    raw = text(name)
    source = reports(raw)[-1]
    report = parse_fio_output(raw)
    assert report.fio_version == source["fio version"] == "fio-3.33"
    assert len(report.jobs) == len(source["jobs"])
    for job, entry in zip(report.jobs, source["jobs"]):
        assert (job.name, job.error) == (entry["jobname"], entry["error"])
        assert (job.usr_cpu_percent, job.sys_cpu_percent) == (entry["usr_cpu"], entry["sys_cpu"])
        assert as_rows(job) == expected_directions(entry)
        assert job.notes == ()  # fio 3.33 writes every figure; nothing is converted or derived


def test_the_corpus_covers_every_rw_mode_and_shape():
    directions = {name: {d.direction for j in parse_fio_output(text(name)).jobs for d in j.directions}
                  for name in REAL}
    assert directions["rw-trim.json"] == directions["rw-randtrim.json"] == {"trim"}
    assert directions["rw-trimwrite.json"] == directions["rw-randtrimwrite.json"] == {"trim", "write"}
    for mode in ("rw", "readwrite", "randrw"):
        assert directions[f"rw-{mode}.json"] == {"read", "write"}
    assert directions["sync-fdatasync.json"] == directions["sync-fsync.json"] == {"write", "sync"}
    assert "steadystate" in reports(text("steadystate.json"))[-1]["jobs"][0]
    assert len(parse_fio_output(text("numjobs4-ungrouped.json")).jobs) == 4
    assert len(parse_fio_output(text("numjobs4-grouped.json")).jobs) == 1


def test_a_failed_job_keeps_fios_error_number():
    for name in ("failed-dev-full.json", "failed-dev-full.stdout+stderr.txt"):
        (job,) = parse_fio_output(text(name)).jobs
        assert job.error == 28  # ENOSPC: fio wrote to /dev/full


@pytest.mark.parametrize("name, note", [
    ("bom-randread.json", "skipped a UTF-8 byte-order mark"),
    ("terse-json.txt", "skipped 1 line(s) of fio's terse output"),
    ("json-terse.txt", "skipped 1 line(s) of fio's terse output"),
    ("status-interval.txt", "kept the last of 4 JSON reports (fio --status-interval)"),
    ("trailing-fio-line-randread.txt", "skipped 1 line(s) of text that is not JSON, the first: 'fio: file hash"),
    ("failed-dev-full.stdout+stderr.txt", "skipped 2 line(s) of text that is not JSON, the first: 'fio: io_u error"),
])
def test_the_reader_says_what_it_skipped_or_chose(name, note):
    document = read_fio_document(text(name))
    assert any(n.startswith(note) for n in document.notes), document.notes
    assert document.data == reports(text(name))[-1]
    assert parse_fio_output(text(name)).notes == document.notes


def test_status_interval_keeps_the_final_report_not_an_interim_one():
    interim = reports(text("status-interval.txt"))
    (job,) = parse_fio_output(text("status-interval.txt")).jobs
    counts = [report["jobs"][0]["read"]["total_ios"] for report in interim]
    assert job.directions[0].total_ios == counts[-1] > counts[0]


@pytest.mark.parametrize("name", ["client-one-host.json", "client-one-host.jsonplus.json"])
def test_client_server_entries_parse_one_by_one(name):
    source = reports(text(name))[-1]
    document = read_fio_document(text(name))
    assert document.data == source
    for entry in source["client_stats"]:
        job = parse_job(entry)
        assert job.name == entry["jobname"]
        assert as_rows(job) == expected_directions(entry)


def test_unified_rw_reporting_is_refused_not_read_as_no_io():
    with pytest.raises(FioError, match="unified_rw_reporting"):
        parse_fio_output(text("unified-mixed.json"))


# Layouts of fio versions that do not run here, derived from one real 3.33 json+ run (README.md).
SOURCE = reports(text("jsonplus-randrw.jsonplus.json"))[-1]["jobs"][0]


@pytest.mark.parametrize("name", ["layout-fio-3.1.randrw.json", "layout-fio-3.1.randrw.jsonplus.json"])
def test_fio_3_0_to_3_5_without_bw_bytes_read_exactly_as_the_run_they_came_from(name):
    old = reports(text(name))[-1]
    assert "bw_bytes" not in old["jobs"][0]["read"] and "io_kbytes" in old["jobs"][0]["read"]
    (job,) = parse_fio_output(text(name)).jobs
    assert as_rows(job) == [r for r in expected_directions(SOURCE) if r[0] != "sync"]
    assert any("1000 x io_bytes // runtime" in n for n in job.notes)


def test_fio_3_36_job_start_changes_nothing():
    (job,) = parse_fio_output(text("layout-fio-3.36.randread.json")).jobs
    assert as_rows(job) == expected_directions(reports(text("rw-randread.json"))[-1]["jobs"][0])


@pytest.mark.parametrize("name", ["layout-fio-2.20.randrw.json", "layout-fio-2.20.randrw.jsonplus.json"])
def test_fio_2_x_usec_and_kib_fields_are_converted_by_the_documented_rules(name):
    entry = reports(text(name))[-1]["jobs"][0]
    (job,) = parse_fio_output(text(name)).jobs
    for d, source in zip(job.directions, [r for r in expected_directions(SOURCE) if r[0] != "sync"]):
        old = entry[d.direction]
        assert d.io_bytes == old["io_bytes"] * 1024 == (source[1] >> 10) * 1024
        assert d.bw_bytes_per_s == old["bw"] * 1024 == (source[4] // 1024) * 1024
        assert (d.total_ios, d.iops, d.runtime_ms) == (old["total_ios"], old["iops"], old["runtime"])
        assert (d.total_ios, d.iops, d.runtime_ms) == (source[2], source[3], source[5])
        assert d.lat_mean_ns == round(old["lat"]["mean"] * 1000, 3)
        assert abs(d.lat_mean_ns - source[6]) <= 0.0005  # the usec figure kept 6 decimals of the ns one / 1000
        assert d.clat_max_ns == old["clat"]["max"] * 1000 == source[8] // 1000 * 1000
        assert d.clat_percentiles_ns == {k: old["clat"]["percentile"][t] * 1000 for t, k in PERCENTILES.items()}
        for key, value in d.clat_percentiles_ns.items():  # fio 2.x's usec buckets hold the 3.33 figure
            assert abs(value - source[9][key]) <= value / 32 + 1000
    assert "read: fio wrote latencies in usec (fio 2.x): ns = usec x 1000" in job.notes


def test_fio_2_x_json_plus_bins_are_keyed_by_usec():
    bins = latency_bins(text("layout-fio-2.20.randrw.jsonplus.json"), "read")
    old = reports(text("layout-fio-2.20.randrw.jsonplus.json"))[-1]["jobs"][0]["read"]["clat"]["bins"]
    assert bins == {float(k) * 1000: v for k, v in old.items()}
    assert sum(bins.values()) == SOURCE["read"]["total_ios"]


def test_fio_2_1_without_total_ios_is_refused_naming_the_field():
    with pytest.raises(FioError, match="lacks 'total_ios'") as refused:
        parse_fio_output(text("layout-fio-2.1.randrw.json"))
    assert "\n" not in str(refused.value)


def test_a_missing_io_count_is_derived_from_one_fixed_block_size_and_said_so():
    """fio 2.1 wrote no job options; a layout that gives bs but no total_ios is read as io_bytes / bs."""
    data = reports(text("layout-fio-2.1.randrw.json"))[-1]
    data["jobs"][0]["job options"] = {"bs": "4k"}
    (job,) = parse_fio_output(json.dumps(data)).jobs
    assert [d.total_ios for d in job.directions] == [SOURCE["read"]["total_ios"], SOURCE["write"]["total_ios"]]
    assert any(n.startswith("read: fio wrote no 'total_ios'") and n.endswith("io_bytes / bs") for n in job.notes)


@pytest.mark.parametrize("raw, reason", [
    ("", "no JSON output"),
    ("fio: engine libaio not loadable\n", "no JSON output (it said: fio: engine libaio not loadable)"),
    ("[1, 2]\n", "no JSON output"),
    ("{" * 100_000, "cannot be read"),
    ('{"jobs": []}\n{"jobs": [{"jobname": "other"}]}\n', "2 JSON reports of different jobs"),
    ('{"fio version": "fio-3.33"}\n', "no 'jobs' list"),
    ('{"jobs": [{"jobname": "x", "read": {"io_bytes": 4096, "io_kbytes": 4, "runtime": 1, "total_ios": 1, '
     '"iops": 1000.0, "bw": "4", "lat_ns": {}}}]}', "'bw' is not a number"),
    ('{"jobs": [{"jobname": "x", "read": {"io_bytes": 4096, "runtime": 1, "total_ios": 1}}]}',
     "neither 'lat_ns' (fio 3.x) nor 'lat' (fio 2.x)"),
])
def test_unreadable_output_is_one_line_of_fio_error(raw, reason):
    with pytest.raises(FioError) as refused:
        parse_fio_output(raw)
    assert reason in str(refused.value) and "\n" not in str(refused.value)


def test_a_cut_off_final_report_is_refused_not_replaced_by_an_interim_one():
    raw = text("status-interval.txt")
    with pytest.raises(FioError, match="cannot be read"):
        read_fio_document(raw[: raw.rindex('"disk_util"')])
