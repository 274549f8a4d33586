"""How fio ended, read from its output: stopped by a signal, a job's process killed, or a job far short of its runtime.

Pure: fio's `fio: ...` lines and each job's figures in; why the run is interrupted and each test's flags out.

Interrupted or flagged: a signal makes the run *interrupted*, as a signal makes disklab's own runs: something outside
the benchmark ended fio (`fio: terminating on signal N`, Ctrl-C or kill) or one job's process (`fio: pid=N, got
signal=S`, the OOM killer's SIGKILL) before fio ran what the job file asks; each test it cut carries a flag saying
how far it got. A time_based job that ran far short of its runtime with no signal said is *flagged*, the run
complete: fio ended it by a rule of the job file (exitall, another job's error) or a message was not saved; fio ran the
job file to its end as fio saw it, and only that test covers less than it asked for. A job fio reports an error for is
a failed test (fio_output.py), flagged fio_error.

What a job asked for: `runtime` with time_based is the time it asked for; without time_based it is a cap, and a job
ending its I/O sooner (size x loops) is normal, so only a signal says such a job was cut. fio 3.33 writes no
`time_based` given without a value in its JSON, so such a job reads as not time_based: a signal still flags it. loops
never enter: fio's runtime caps the whole job, every loop together (fio 3.33: runtime=1 loops=3 ran 1 s).
"""

import re
import signal
from collections.abc import Sequence
from dataclasses import dataclass

from disklab.analysis.withheld import SHORT_FLAG, STOPPED_FLAG
from disklab.fio.parse import JobResult

# fio ends a time_based job within milliseconds of its runtime (the fixtures: 1000 to 1026 ms of 1 s, 5005 of 5 s).
REACHED_FRACTION = 0.9
_TERMINATED = re.compile(r"fio: terminating on signal (\d+)")  # fio's main process; it stops every job
_KILLED = re.compile(r"fio: pid=\d+, got signal=(\d+)")  # one job's process died of a signal; fio went on
Flags = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class JobEnd:
    """What one test's job is judged by."""

    label: str
    host: str | None  # the fio server; None: a local fio
    group: int  # fio's groupid: groups run one after another (stonewall), the jobs of one group together
    job: JobResult
    failed: bool  # fio reported an error for it
    runtime_s: float  # its runtime option; 0: none
    time_based: bool


@dataclass(frozen=True)
class Ending:
    interrupted: str | None  # why the run is interrupted; None: no signal stopped fio or a job
    flags: tuple[Flags, ...]  # per job, in order
    void: tuple[bool, ...]  # per job: fio never closed its figures (a killed process's), so none is a measurement


def fio_ending(messages: Sequence[str], jobs: Sequence[JobEnd]) -> Ending:
    stops = [int(m.group(1)) for line in messages if (m := _TERMINATED.fullmatch(line))]
    kills = [int(m.group(1)) for line in messages if (m := _KILLED.fullmatch(line))]
    stopped = f"fio was stopped by {_signal(stops[0])}" if stops else None
    killed = f"fio's process for this job was killed by {_signals(kills)}" if kills else None
    last_group = _last_groups(jobs)
    flags = [_flag(job, stopped, killed, last_group.get(job.host)) for job in jobs]
    return Ending(_interruption(stopped, kills, jobs, flags), tuple(flags), tuple(_unclosed(job) for job in jobs))


def _flag(job: JobEnd, stopped: str | None, killed: str | None, last_group: int | None) -> Flags:
    """The first that holds: fio never closed its figures; the signal cut it; it ran short of its time."""
    if _unclosed(job):
        return (_unclosed_flag(job, killed),)
    flag = (_stop_flag(job, stopped, last_group) if stopped else None) or _short_flag(job)
    return (flag,) if flag else ()


def _signal(number: int) -> str:
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


def _signals(numbers: list[int]) -> str:
    return " and ".join(_signal(n) for n in dict.fromkeys(numbers))


def _last_groups(jobs: Sequence[JobEnd]) -> dict[str | None, int]:
    """Per host, the last group that ran: the signal fell in it; earlier groups had ended, later ones never began."""
    last: dict[str | None, int] = {}
    for job in jobs:
        if job.job.directions or job.failed:
            last[job.host] = max(last.get(job.host, job.group), job.group)
    return last


def _seconds_run(job: JobEnd) -> float:
    """The time fio measured the job for: its longest direction (a group's is its longest job's)."""
    return max((d.runtime_ms for d in job.job.directions), default=0) / 1000


def _reached(job: JobEnd) -> bool:
    return job.runtime_s > 0 and _seconds_run(job) >= REACHED_FRACTION * job.runtime_s


def _unclosed(job: JobEnd) -> bool:
    """I/Os counted but neither time nor bytes: fio fills those in when the job's process ends, so it never did."""
    return not job.failed and bool(job.job.directions) and all(
        d.runtime_ms == 0 and d.io_bytes == 0 for d in job.job.directions)


def _unclosed_flag(job: JobEnd, killed: str | None) -> tuple[str, str]:
    ios = sum(d.total_ios for d in job.job.directions if d.direction != "sync")
    ended = killed or "fio's process for this job ended"
    return STOPPED_FLAG, (f"{ended} before fio closed its figures ({ios:,} I/Os counted, no time, no bytes): it has "
                          "no figures")


def _stop_flag(job: JobEnd, stopped: str, last_group: int | None) -> tuple[str, str] | None:
    if job.failed or (last_group is not None and job.group < last_group) or _reached(job):
        return None  # its error is its flag; it ended before the signal; it had run its time
    if not job.job.directions:
        return STOPPED_FLAG, f"{stopped} before this job did any I/O: it has no figures"
    ran = f"after {_seconds_run(job):.1f} s"
    if job.time_based and job.runtime_s:
        return STOPPED_FLAG, f"{stopped} {ran} of the {job.runtime_s:g} s the job asked for: its figures are partial"
    allowed = f" (its runtime allowed {job.runtime_s:g} s)" if job.runtime_s else ""
    return STOPPED_FLAG, f"{stopped} {ran}, before the job ended{allowed}: its figures are partial"


def _short_flag(job: JobEnd) -> tuple[str, str] | None:
    if job.failed or not (job.time_based and job.runtime_s) or not job.job.directions or _reached(job):
        return None
    return SHORT_FLAG, (f"fio ran this time_based job for {_seconds_run(job):.1f} s of the {job.runtime_s:g} s it "
                        "asked for and said nothing of why (exitall, another job's end or error, or fio's message "
                        "was not saved with its output): its figures cover less than the job asked for")


def _interruption(stopped: str | None, kills: list[int], jobs: Sequence[JobEnd], flags: list[Flags]) -> str | None:
    """The run's reason: the one test's own message, or how many tests the signal cut."""
    if not stopped and not kills:
        return None
    killed = f"a fio job's process was killed by {_signals(kills)}" if kills else None
    cause = " and ".join(c for c in (stopped, killed) if c)
    cut = [(job.label, message) for job, job_flags in zip(jobs, flags) for flag, message in job_flags
           if flag == STOPPED_FLAG]
    if len(jobs) == 1 and cut:
        return cut[0][1]
    if not cut and stopped:
        return f"{cause}; every job had ended or run its time: no figures are cut"
    if not cut:
        return f"{cause}; no job's figures show which (each has its time and bytes)"
    names = ", ".join(label for label, _ in cut)
    return f"{cause}: {len(cut)} of {len(jobs)} tests are partial or have no figures ({names}; see their flags)"
