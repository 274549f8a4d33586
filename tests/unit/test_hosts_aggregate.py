"""Two hosts' real fio json+ output (client mode, fio 3.33): split by host, and the aggregate computed from it."""

import json
from dataclasses import replace

import pytest

from disklab.errors import FioError
from disklab.hosts.client import HostFailed, split_by_host
from disklab.fio.parse import latency_bins, parse_fio_output
from disklab.hosts.aggregate import HostResult, aggregate_job, histogram_percentiles, slowest_host
from disklab.hosts.hosts import Host
from disklab.hosts.steps import slowest_line
from tests.conftest import fixture_json, fixture_text

HOSTS = (Host("10.209.1.2"), Host("10.209.2.2"))


def split():
    return split_by_host(fixture_text("hosts-two-hosts.jsonplus.json"), "", HOSTS, 0)


def host_results(run) -> tuple[HostResult, ...]:
    return tuple(HostResult(name, parse_fio_output(output).jobs[0]) for name, output in run.per_host.items())


def test_each_host_gets_its_own_entry_and_fios_all_clients_sum_is_left_out():
    run = split()
    stats = fixture_json("hosts-two-hosts.jsonplus.json")["client_stats"]
    entries = {e["hostname"]: e for e in stats if e["jobname"] != "All clients"}
    assert set(run.per_host) == {"10.209.1.2", "10.209.2.2"}
    for name, output in run.per_host.items():
        (job,) = parse_fio_output(output).jobs
        assert job.directions[0].total_ios == entries[name]["read"]["total_ios"]
    assert [j["hostname"] for j in json.loads(run.combined)["jobs"]] == ["10.209.1.2", "10.209.2.2"]


def test_the_aggregate_sums_throughput_and_merges_percentiles_from_the_hosts_bins():
    run = split()
    results = host_results(run)
    merged = aggregate_job("randread-4k", results, {"read": latency_bins(run.combined, "read")})
    (read,) = merged.directions
    parts = [r.job.directions[0] for r in results]
    assert read.iops == pytest.approx(sum(p.iops for p in parts))
    assert read.bw_bytes_per_s == pytest.approx(sum(p.bw_bytes_per_s for p in parts))
    assert read.total_ios == sum(p.total_ios for p in parts)
    weighted = sum(p.lat_mean_ns * p.total_ios for p in parts) / read.total_ios
    assert read.lat_mean_ns == pytest.approx(weighted)
    for key in ("p50", "p99", "p99_9"):
        low, high = sorted(p.clat_percentiles_ns[key] for p in parts)
        assert low <= read.clat_percentiles_ns[key] <= high


def test_percentiles_from_one_hosts_bins_are_fios_own():
    """Reading a histogram the way the aggregate does gives fio's percentiles back for a single host."""
    run = split()
    for output in run.per_host.values():
        (job,) = parse_fio_output(output).jobs
        assert histogram_percentiles(latency_bins(output, "read")) == job.directions[0].clat_percentiles_ns


def test_the_slowest_host_is_the_one_with_the_fewest_iops():
    results = host_results(split())
    expected = min(results, key=lambda r: r.job.directions[0].iops)
    assert slowest_host(results).host == expected.host


def test_hosts_tied_on_iops_are_told_apart_by_the_higher_p99_not_by_their_order():
    """Whole I/O counts over fio's whole-millisecond runtime tie now and then: with 10.209.2.2 given 10.209.1.2's count
    (the same 1,001 ms), the flag names 10.209.2.2, the later host with the higher p99, in either order."""
    first, second = host_results(split())
    (fewer,), (more,) = first.job.directions, second.job.directions
    assert fewer.runtime_ms == more.runtime_ms and fewer.total_ios < more.total_ios
    assert fewer.clat_percentiles_ns["p99"] < more.clat_percentiles_ns["p99"]
    tied = HostResult(second.host, replace(second.job, directions=(
        replace(more, total_ios=fewer.total_ios, iops=fewer.iops),)))
    for results in ((first, tied), (tied, first)):
        assert slowest_host(results).host == "10.209.2.2"
        assert slowest_line(results) == "10.209.2.2: 3,534 of the 7,069 IOPS summed over 2 hosts"


def test_a_host_that_disconnected_mid_test_fails_it_by_name():
    with pytest.raises(HostFailed, match=r"^host 10\.209\.2\.2: fio server stopped responding"):
        split_by_host(fixture_text("hosts-one-disconnected.jsonplus.json"), "", HOSTS, 1)


def test_a_host_fio_could_no_longer_reach_is_named_with_the_reason():
    with pytest.raises(HostFailed, match=r"^host 10\.209\.3\.2: fio server stopped responding \(connect: Connection refused\)$"):
        split_by_host("", "fio: connect: Connection refused\nfio: failed to connect to 10.209.3.2:8765\n",
                      (Host("10.209.3.2"),), 1)


def test_output_without_json_is_a_fio_error():
    with pytest.raises(FioError):
        split_by_host("fio: something else\n", "", HOSTS, 1)
