"""A test that ran beside other work is flagged (busy-machine), and compare gives its figures no better/worse.

On a shared machine the figures of one configuration move by 2x as other work comes and goes; a run's passes stay
tight around its own figure, so the spread inside each run cannot tell that the two runs saw different machines.
What other processes did beside each test (system/contention.py) can: beyond these limits the difference between
two runs may be the other work's, and the verdict says so instead of calling it the disk's.
"""

from disklab.fio.parse import JobResult
from disklab.suite.model import TestSpec
from disklab.system.contention import Contention

BUSY_MACHINE = "busy-machine"
# Other processes' CPU time beside a test, in CPUs (0.25: a quarter of one CPU, on average over the test). A quiet
# VM shows under 0.05; one pytest or fio beside the run shows 0.5 to 1.
OTHER_CPUS_LIMIT = 0.25
# Other I/O on the target's disks: a quarter of the test's own bytes/s, and at least this much. Measured over the
# whole fio run, ramp included, against fio's own bytes scaled to that time, so small differences are not I/O.
OTHER_IO_SHARE = 0.25
OTHER_IO_FLOOR_BYTES_PER_S = 4e6


def fio_bytes_in_window(test: TestSpec, job: JobResult) -> int:
    """fio's bytes over the whole run it was watched for: its reported bytes cover the measured time only, and the
    ramp moved bytes at about the same rate."""
    measured_s = max((d.runtime_ms for d in job.directions), default=0) / 1000
    io_bytes = sum(d.io_bytes for d in job.directions)
    return int(io_bytes * (1 + test.ramp / measured_s)) if measured_s else io_bytes


def busy_machine(seen: Contention | None, job: JobResult, devices: tuple[str, ...]) -> list[tuple[str, str]]:
    """The busy-machine flag with what was seen, or nothing."""
    if seen is None:
        return []
    own_rate = sum(d.bw_bytes_per_s for d in job.directions)
    io_limit = max(OTHER_IO_SHARE * own_rate, OTHER_IO_FLOOR_BYTES_PER_S)
    busy_cpu = seen.other_cpus >= OTHER_CPUS_LIMIT
    busy_io = seen.other_io_bytes_per_s is not None and seen.other_io_bytes_per_s >= io_limit
    if not (busy_cpu or busy_io):
        return []
    what = [f"{seen.other_cpus:.2f} CPUs of other processes' time"]
    if seen.other_io_bytes_per_s is not None:
        what.append(f"{seen.other_io_bytes_per_s / 1e6:,.1f} MB/s of other I/O on {', '.join(devices)}")
    return [(BUSY_MACHINE, f"other work ran beside this test: {' and '.join(what)} over its {seen.seconds:.1f} s "
                           f"(limits: {OTHER_CPUS_LIMIT:g} CPUs, {io_limit / 1e6:,.1f} MB/s); its figures are partly "
                           "the other work's, so compare calls no difference on them: run on a quiet machine")]
