"""One figure for a test run on many hosts at once: throughput summed, latency merged from the hosts' histograms.

Averaging the hosts' percentiles would be wrong (a p99 of p99s is no p99); fio's json+ bins are summed and the
percentiles read from the merged histogram. Mean latencies are weighted by each host's I/O count.
"""

from dataclasses import dataclass
from typing import Mapping

from disklab.fio.histogram import histogram_percentiles
from disklab.fio.parse import DirectionMetrics, JobResult


@dataclass(frozen=True)
class HostResult:
    host: str  # as results name it (Host.name)
    job: JobResult


def aggregate_job(label: str, results: tuple[HostResult, ...], bins: Mapping[str, dict[float, int] | None]) -> JobResult:
    """The hosts' results as one; `bins` holds each direction's merged latency histogram (None: fio gave none)."""
    return combine_jobs(label, tuple(r.job for r in results), bins)


def combine_jobs(label: str, jobs: tuple[JobResult, ...], bins: Mapping[str, dict[float, int] | None]) -> JobResult:
    """Jobs that ran at once as one result, as fio's group_reporting sums them (hosts, or one group's jobs)."""
    names = list(dict.fromkeys(d.direction for j in jobs for d in j.directions))
    directions = tuple(
        merge_direction([d for j in jobs for d in j.directions if d.direction == name], bins.get(name))
        for name in names
    )
    return JobResult(
        name=label, error=0,
        usr_cpu_percent=sum(j.usr_cpu_percent for j in jobs) / len(jobs),
        sys_cpu_percent=sum(j.sys_cpu_percent for j in jobs) / len(jobs),
        directions=directions,
    )


def merge_direction(parts: list[DirectionMetrics], bins: dict[float, int] | None) -> DirectionMetrics:
    total_ios = sum(p.total_ios for p in parts)
    return DirectionMetrics(
        direction=parts[0].direction,
        io_bytes=sum(p.io_bytes for p in parts),
        total_ios=total_ios,
        iops=sum(p.iops for p in parts),
        bw_bytes_per_s=sum(p.bw_bytes_per_s for p in parts),
        runtime_ms=max(p.runtime_ms for p in parts),
        lat_mean_ns=_weighted(parts, total_ios, lambda p: p.lat_mean_ns),
        clat_mean_ns=_weighted(parts, total_ios, lambda p: p.clat_mean_ns),
        clat_max_ns=max(p.clat_max_ns for p in parts),
        clat_percentiles_ns=histogram_percentiles(bins) if bins else {},
    )


def slowest_host(results: tuple[HostResult, ...]) -> HostResult:
    """The host that held the others back: the fewest I/Os per second, then the highest p99."""
    return min(results, key=lambda r: (
        sum(d.iops for d in r.job.directions if d.direction != "sync"),
        -max((d.clat_percentiles_ns.get("p99", 0.0) for d in r.job.directions), default=0.0),
    ))


def _weighted(parts: list[DirectionMetrics], total_ios: int, value) -> float:
    if total_ios == 0:
        return sum(value(p) for p in parts) / len(parts)
    return sum(value(p) * p.total_ios for p in parts) / total_ios
