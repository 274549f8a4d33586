"""Render one test as a plain fio job file that anyone can run with fio alone."""

import re

from disklab import __version__
from disklab.suite.model import TestSpec
from disklab.units import fio_size


def job_section_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "test"


def render_jobfile(test: TestSpec, filename: str, suite_name: str) -> str:
    """fio's options are written out in full, including the ones disklab relies on."""
    lines = [
        f"; disklab {__version__}, suite {suite_name!r}, test {test.label!r}",
        "; reproduce with: fio --output-format=json+ THIS_FILE",
        "[global]",
        f"ioengine={test.engine}",
        f"direct={int(test.direct)}",
        f"filename={_escape_filename(filename)}",
        f"size={fio_size(test.size)}",
        "time_based=1",
        f"runtime={_seconds(test.runtime)}",
        f"ramp_time={_seconds(test.ramp)}",
        "group_reporting=1",
        # Jobs as threads of one fio process: killing it (or disklab dying) stops every job.
        "thread=1",
        # Different random offsets for every job and every run, so jobs don't hit each other's cached blocks.
        "randrepeat=0",
        "",
        f"[{job_section_name(test.label)}]",
        f"rw={test.fio_rw}",
        f"bs={fio_size(test.bs)}",
        f"iodepth={test.iodepth}",
        f"numjobs={test.jobs}",
    ]
    if test.direction == "mixed":
        lines.append(f"rwmixread={test.rwmixread}")
    return "\n".join(lines) + "\n"


def _seconds(value: float) -> str:
    return f"{int(value)}" if value == int(value) else f"{int(value * 1000)}ms"


def _escape_filename(path: str) -> str:
    # fio splits filename on ':' (several files); a literal colon must be escaped.
    return path.replace(":", "\\:")
