import pytest
from hypothesis import given
from hypothesis import strategies as st

from disklab.errors import FioError
from disklab.fio.parse import parse_fio_output
from tests.conftest import fixture_json, fixture_text

CASES = ["randread-4k-q32", "seqwrite-1m-q8", "randrw-70-4k-4jobs"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("form", ["json", "jsonplus"])
def test_parsed_figures_are_fios_own(case, form):
    name = f"{case}.{form}.json"
    raw = fixture_json(name)["jobs"][0]
    report = parse_fio_output(fixture_text(name))
    assert report.fio_version.startswith("fio-3.")
    (job,) = report.jobs
    assert job.name == raw["jobname"]
    assert job.usr_cpu_percent == raw["usr_cpu"] and job.sys_cpu_percent == raw["sys_cpu"]
    assert [d.direction for d in job.directions] == [d for d in ("read", "write") if raw[d]["total_ios"] > 0]
    for d in job.directions:
        theirs = raw[d.direction]
        assert d.iops == theirs["iops"]
        assert d.bw_bytes_per_s == theirs["bw_bytes"]
        assert d.io_bytes == theirs["io_bytes"]
        assert d.lat_mean_ns == theirs["lat_ns"]["mean"]
        assert d.clat_percentiles_ns["p99"] == theirs["clat_ns"]["percentile"]["99.000000"]
        assert d.clat_percentiles_ns["p99_9"] == theirs["clat_ns"]["percentile"]["99.900000"]
        assert d.iops > 0 and d.bw_bytes_per_s > 0


def test_mixed_test_reports_both_directions_with_the_requested_read_share():
    (job,) = parse_fio_output(fixture_text("randrw-70-4k-4jobs.json.json")).jobs
    read, write = job.directions
    share = read.total_ios / (read.total_ios + write.total_ios)
    assert 0.65 < share < 0.75


def test_notes_printed_before_the_json_are_skipped():
    text = fixture_text("psync-note-before-json.json")
    assert not text.startswith("{")
    (job,) = parse_fio_output(text).jobs
    assert job.directions[0].direction == "read"


@pytest.mark.parametrize("text", ["", "fio: some failure\n", "{ not json", '{"fio version": "fio-3.33"}'])
def test_unreadable_output_is_a_fio_error(text):
    with pytest.raises(FioError):
        parse_fio_output(text)


@pytest.mark.parametrize("sync", ["fsync", "fdatasync"])
def test_flushes_after_writes_are_a_sync_direction_with_their_own_latency(sync):
    name = f"write-4k-{sync}.jsonplus.json"
    raw = fixture_json(name)["jobs"][0]
    (job,) = parse_fio_output(fixture_text(name)).jobs
    write, flush = job.directions
    assert (write.direction, flush.direction) == ("write", "sync")
    assert flush.total_ios == raw["sync"]["lat_ns"]["N"] > 0  # fio leaves total_ios 0 for fdatasync
    assert abs(flush.total_ios - write.total_ios) <= 1  # one flush per write
    assert flush.clat_percentiles_ns["p99"] == raw["sync"]["lat_ns"]["percentile"]["99.000000"]


def test_latency_bins_of_each_direction_from_one_parse_are_the_document_s_and_read_only():
    """A report asks a test's bins direction by direction, a device's history each pass's several times; the
    document is parsed once, the bins made once, and no caller can change what another caller gets."""
    from disklab.fio.parse import latency_bins

    text = fixture_text("randrw-70-4k-4jobs.jsonplus.json")
    raw = fixture_json("randrw-70-4k-4jobs.jsonplus.json")
    for direction in ("read", "write"):
        expected: dict[float, int] = {}
        for job in raw["jobs"]:
            for value, count in job[direction]["clat_ns"]["bins"].items():
                expected[float(value)] = expected.get(float(value), 0) + count
        first = latency_bins(text, direction)
        assert first == expected and sum(first.values()) == sum(j[direction]["total_ios"] for j in raw["jobs"])
        with pytest.raises(TypeError):
            first[1.0] = 1
        assert latency_bins(text, direction) is first and first == expected


@given(bins=st.dictionaries(st.integers(0, 10**12).map(float), st.sampled_from([0, 1, 2, 7, 10**12]), max_size=60))
def test_the_percentiles_of_a_histogram_are_each_shares_first_bin_to_reach_it(bins):
    """All five from one sort and a running count, as the first bin that reaches each share one by one would give."""
    from disklab.fio.histogram import histogram_percentile, histogram_percentiles
    from disklab.fio.parse import PERCENTILES

    one_by_one = {ours: histogram_percentile(bins, float(theirs) / 100) for theirs, ours in PERCENTILES.items()}
    assert histogram_percentiles(bins) == {key: value for key, value in one_by_one.items() if value is not None}


@given(histograms=st.lists(st.dictionaries(st.integers(0, 10**6).map(float), st.sampled_from([0, 1, 3, 10**9]),
                                           max_size=20), max_size=4))
def test_histograms_pooled_have_the_percentiles_of_their_sum(histograms):
    """The passes of a test pooled without adding their bins first: a value in several counted as their sum."""
    from disklab.fio.histogram import histogram_percentiles

    summed: dict[float, int] = {}
    for bins in histograms:
        for value, count in bins.items():
            summed[value] = summed.get(value, 0) + count
    assert histogram_percentiles(*histograms) == histogram_percentiles(summed)
