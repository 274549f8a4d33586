"""fio's JSON (json and json+) -> typed results. Pure: text in, values out."""

import json
from dataclasses import dataclass

from disklab.errors import FioError

DIRECTIONS = ("read", "write", "trim")
# fio's percentile keys, and the names disklab stores them under.
PERCENTILES = {"50.000000": "p50", "90.000000": "p90", "99.000000": "p99", "99.900000": "p99_9", "99.990000": "p99_99"}


@dataclass(frozen=True)
class DirectionMetrics:
    direction: str
    io_bytes: int
    total_ios: int
    iops: float
    bw_bytes_per_s: float
    runtime_ms: int
    lat_mean_ns: float
    clat_mean_ns: float
    clat_max_ns: float
    clat_percentiles_ns: dict[str, float]  # keys from PERCENTILES' values; absent when fio gave none


@dataclass(frozen=True)
class JobResult:
    name: str
    error: int
    usr_cpu_percent: float
    sys_cpu_percent: float
    directions: tuple[DirectionMetrics, ...]  # only the directions that did I/O


@dataclass(frozen=True)
class FioReport:
    fio_version: str
    timestamp: int
    jobs: tuple[JobResult, ...]


def extract_json(output: str) -> dict:
    """fio may print warning lines before its JSON; the document starts at the first line opening with '{'."""
    start = 0 if output.startswith("{") else output.find("\n{") + 1
    if start == 0 and not output.startswith("{"):
        raise FioError("fio produced no JSON output")
    try:
        return json.loads(output[start:])
    except json.JSONDecodeError as exc:
        raise FioError(f"fio's JSON output cannot be read: {exc}") from exc


def parse_fio_output(output: str) -> FioReport:
    data = extract_json(output)
    try:
        jobs = tuple(_job(job) for job in data["jobs"])
        return FioReport(fio_version=data.get("fio version", ""), timestamp=int(data.get("timestamp", 0)), jobs=jobs)
    except (KeyError, TypeError, ValueError) as exc:
        raise FioError(f"fio's JSON output lacks an expected field: {exc}") from exc


def _job(job: dict) -> JobResult:
    directions = tuple(_direction(name, job[name]) for name in DIRECTIONS if job.get(name, {}).get("total_ios", 0) > 0)
    if _sync_count(job.get("sync", {})) > 0 and directions:
        write = next((d for d in directions if d.direction == "write"), directions[-1])
        directions += (_sync(job["sync"], write),)
    return JobResult(
        name=job["jobname"],
        error=int(job.get("error", 0)),
        usr_cpu_percent=float(job.get("usr_cpu", 0.0)),
        sys_cpu_percent=float(job.get("sys_cpu", 0.0)),
        directions=directions,
    )


def _sync_count(sync: dict) -> int:
    """fio 3.33 counts fsync calls in total_ios but leaves it 0 for fdatasync; its latency N counts both."""
    return int(sync.get("total_ios", 0)) or int(sync.get("lat_ns", {}).get("N", 0))


def _sync(sync: dict, write: DirectionMetrics) -> DirectionMetrics:
    """fsync/fdatasync calls: their count over the write phase's runtime, and their own latency."""
    lat = sync["lat_ns"]
    percentiles = lat.get("percentile", {})
    count = _sync_count(sync)
    return DirectionMetrics(
        direction="sync",
        io_bytes=0,
        total_ios=count,
        iops=count / (write.runtime_ms / 1000) if write.runtime_ms else 0.0,
        bw_bytes_per_s=0.0,
        runtime_ms=write.runtime_ms,
        lat_mean_ns=float(lat["mean"]),
        clat_mean_ns=float(lat["mean"]),
        clat_max_ns=float(lat["max"]),
        clat_percentiles_ns={ours: float(percentiles[theirs]) for theirs, ours in PERCENTILES.items() if theirs in percentiles},
    )


def count_slower_than(output: str, direction: str, threshold_ns: float) -> int | None:
    """I/Os whose completion took longer than a deadline, from json+ latency bins (None without bins)."""
    bins = latency_bins(output, direction)
    if bins is None:
        return None
    return sum(count for value, count in bins.items() if value > threshold_ns)


def latency_bins(output: str, direction: str) -> dict[float, int] | None:
    """json+'s completion latency histogram (ns -> I/O count), summed over the document's jobs; None without bins."""
    jobs = extract_json(output).get("jobs", [])
    bins = [_histogram(job, direction) for job in jobs]
    if not bins or any(b is None for b in bins):
        return None
    summed: dict[float, int] = {}
    for histogram in bins:
        for value, count in histogram.items():
            summed[float(value)] = summed.get(float(value), 0) + int(count)
    return summed


def _histogram(job: dict, direction: str) -> dict | None:
    """fsync/fdatasync calls keep their histogram under 'sync' as lat_ns; I/O directions under clat_ns."""
    latency = job.get("sync", {}).get("lat_ns", {}) if direction == "sync" else job.get(direction, {}).get("clat_ns", {})
    return latency.get("bins")


def _direction(name: str, d: dict) -> DirectionMetrics:
    clat = d.get("clat_ns", {})
    percentiles = clat.get("percentile", {})
    return DirectionMetrics(
        direction=name,
        io_bytes=int(d["io_bytes"]),
        total_ios=int(d["total_ios"]),
        iops=float(d["iops"]),
        bw_bytes_per_s=float(d["bw_bytes"]),
        runtime_ms=int(d["runtime"]),
        lat_mean_ns=float(d["lat_ns"]["mean"]),
        clat_mean_ns=float(clat.get("mean", 0.0)),
        clat_max_ns=float(clat.get("max", 0.0)),
        clat_percentiles_ns={ours: float(percentiles[theirs]) for theirs, ours in PERCENTILES.items() if theirs in percentiles},
    )
