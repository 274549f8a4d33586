"""Each flag a test can carry, said in a few words: what a chart's legend says beside a marked bar or point. The
flag's own message (what the test saw) is longer; it stays in the run's flag lines and the mark's tooltip."""

from disklab.analysis.contention import BUSY_MACHINE
from disklab.analysis.saturation import HELD_FRACTION
from disklab.analysis.traps import BUFFERED_FACTOR
from disklab.analysis.withheld import SHORT_FLAG, STOPPED_FLAG
from disklab.hosts.steps import SLOWEST_HOST_FLAG
from disklab.imports.fio_groups import APPROXIMATE_FLAG, COMBINED_FLAG
from disklab.imports.fio_output import FIO_ERROR_FLAG, LAYOUT_FLAG
from disklab.run.replay import FIDELITY_FLAG

RATE_NOT_HELD = "rate-not-held"  # not stored on a test: a saturation level's outcome (analysis/saturation.py)

REASONS = {
    BUSY_MACHINE: "other processes used CPU or disk I/O during the test: its figures are partly theirs",
    "memory-target": "the target keeps its data in RAM: memory's figures, not a disk's",
    "page-cache": "buffered I/O on a data set under twice the RAM: the page cache can serve it",
    "device-cache": "the data set fits the drive or controller cache declared with --cache",
    "beyond-interface": "faster than the device's interface carries: a cache delivered it",
    "faster-than-direct": f"buffered and over {BUFFERED_FACTOR:g}x the same pattern with direct I/O: the page cache",
    "compressing-fs": "the file system compresses or deduplicates: figures depend on the data",
    STOPPED_FLAG: "fio was stopped before the test ended: its figures are partial",
    SHORT_FLAG: "fio ran far shorter than the test asked: its figures are partial",
    FIO_ERROR_FLAG: "fio reported an error for the job",
    LAYOUT_FLAG: "figures converted from an older fio output layout",
    COMBINED_FLAG: "jobs reported without group_reporting, summed",
    APPROXIMATE_FLAG: "no json+ latency bins: percentiles approximate",
    SLOWEST_HOST_FLAG: "one host was much slower than the others",
    FIDELITY_FLAG: "the replay fell short of the trace it replays",
    RATE_NOT_HELD: f"the level delivered under {HELD_FRACTION * 100:g} % of the load offered by fio's rate limit",
}


def flag_reason(flag: str) -> str:
    """The flag's few words; a flag this version does not know (a newer disklab's) points at the run's flag lines."""
    return REASONS.get(flag, "see the run's flags for what the test saw")
