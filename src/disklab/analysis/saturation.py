"""Saturation: what a step measured, and latency at fractions of the peak (the knee, the p99 bound). Pure logic; the
search for the peak: peak_search.py."""

import math
from dataclasses import dataclass
from typing import Sequence

from disklab.fio.parse import JobResult


@dataclass(frozen=True)
class Probe:
    """One measured point: settings and what they gave."""

    iodepth: int
    jobs: int
    iops: float
    p50_ns: float | None
    p99_ns: float | None
    p99_9_ns: float | None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def probe_of(iodepth: int, jobs: int, job: JobResult) -> Probe:
    """IOPS of all directions; each percentile the worst of the directions (percentiles cannot be added)."""
    def worst(key: str) -> float | None:
        values = [d.clat_percentiles_ns[key] for d in job.directions if key in d.clat_percentiles_ns]
        return max(values) if values else None

    return Probe(iodepth, jobs, sum(d.iops for d in job.directions), worst("p50"), worst("p99"), worst("p99_9"))


def level_rate_per_job(peak_probe: Probe, percent: int) -> int:
    """fio's rate_iops applies to each job: the target split evenly across the jobs."""
    return max(math.ceil(peak_probe.iops * percent / 100 / peak_probe.jobs), 1)


# A load level whose achieved IOPS fall short of its target by more than this did not hold its rate.
HELD_FRACTION = 0.9


@dataclass(frozen=True)
class Level:
    percent: int
    target_iops: float
    probe: Probe

    @property
    def held(self) -> bool:
        return self.probe.iops >= HELD_FRACTION * self.target_iops

    def as_dict(self) -> dict:
        return {"percent": self.percent, "target_iops": self.target_iops, "held": self.held, **self.probe.as_dict()}


def knee(levels: Sequence[Level], factor: float = 2.0) -> Level | None:
    """The last level before p99 first exceeds `factor` times the lowest p99 of the lighter levels, or None.

    The lowest, not the first: one disturbed light level must not hide the knee.
    """
    measured = [lv for lv in levels if lv.probe.p99_ns]
    if not measured:
        return None
    base = measured[0].probe.p99_ns
    previous = measured[0]
    for level in measured[1:]:
        if level.probe.p99_ns > factor * base:
            return previous
        base = min(base, level.probe.p99_ns)
        previous = level
    return None


def best_under(levels: Sequence[Level], bound_ns: float) -> Level | None:
    """The level with the highest IOPS whose p99 stays at or under the bound."""
    under = [lv for lv in levels if lv.probe.p99_ns is not None and lv.probe.p99_ns <= bound_ns]
    return max(under, key=lambda lv: lv.probe.iops, default=None)
