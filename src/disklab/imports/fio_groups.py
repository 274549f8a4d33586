"""One group's job entries, written by fio without group_reporting (numjobs=N, identical jobs), as one test: summed as
group_reporting would, with flags saying how."""

import math
from dataclasses import replace
from pathlib import Path

from disklab.errors import UserError
from disklab.fio.figures import MAX_COUNT
from disklab.fio.parse import DirectionMetrics, JobResult, latency_bins
from disklab.hosts.aggregate import combine_jobs

# Flags on imported tests (store test_flags; shown by show, the JSON export and the HTML report).
COMBINED_FLAG = "combined_jobs"  # one group's jobs without group_reporting, summed; each job's figures in the message
APPROXIMATE_FLAG = "percentiles_approximate"  # combined without json+ bins: percentiles are the jobs' highest
Flags = tuple[tuple[str, str], ...]  # (flag, message) as the store keeps them


def combine_group(path: Path, label: str, jobs: tuple[JobResult, ...], fio_output: str) -> tuple[JobResult, Flags]:
    """One job's result, or one group's jobs summed as fio's group_reporting would, with flags saying how."""
    if len(jobs) == 1:
        return jobs[0], ()
    names = {d.direction for j in jobs for d in j.directions}
    bins = {name: latency_bins(fio_output, name) for name in names}
    combined = combine_jobs(label, jobs, bins)
    for d in combined.directions:  # each job's figures fit; their sum may not
        if max(d.io_bytes, d.total_ios) > MAX_COUNT or not all(map(math.isfinite, _floats(d))):
            raise UserError(f"{path}: job {label!r}: the {d.direction} figures of its {len(jobs)} entries, summed as "
                            "group_reporting would, are too large to store")
    flags = [(COMBINED_FLAG, f"{len(jobs)} fio jobs written without group_reporting, combined as group_reporting "
                             "would (IOPS and bandwidth summed, mean latency weighted by I/O count); each job: "
                             + "; ".join(_job_figures(j) for j in jobs))]
    unbinned = [name for name in names if bins[name] is None]
    if unbinned:
        directions = tuple(
            replace(d, clat_percentiles_ns=_highest_percentiles(jobs, d.direction)) if d.direction in unbinned else d
            for d in combined.directions
        )
        combined = replace(combined, directions=directions)
        flags.append((APPROXIMATE_FLAG, f"fio wrote no json+ latency bins ({', '.join(sorted(unbinned))}): each "
                                        f"percentile is the highest of the {len(jobs)} jobs' (the group's own lies "
                                        "between their lowest and highest); run fio with --output-format=json+"))
    return combined, tuple(flags)


def _floats(d: DirectionMetrics) -> tuple[float, ...]:
    return (d.iops, d.bw_bytes_per_s, d.lat_mean_ns, d.clat_mean_ns, d.clat_max_ns, *d.clat_percentiles_ns.values())


def _highest_percentiles(jobs: tuple[JobResult, ...], direction: str) -> dict[str, float]:
    """An upper bound of a mixture's percentile: no job's share of I/Os below it falls short, so neither does theirs."""
    per_job = [d.clat_percentiles_ns for j in jobs for d in j.directions if d.direction == direction]
    keys = set.intersection(*(set(p) for p in per_job)) if per_job else set()
    return {key: max(p[key] for p in per_job) for key in keys}


def _job_figures(job: JobResult) -> str:
    return ", ".join(f"{d.direction} {d.iops:g} IOPS {d.bw_bytes_per_s:g} B/s" for d in job.directions) or "no I/O"
