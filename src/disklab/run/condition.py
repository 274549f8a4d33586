"""`run --condition full[:N]`: before the suite, the whole device written N times over by fio with 128 KiB
sequential writes, the job SNIA's preconditioning passes run (plan/build.py), so the drive starts the suite with
every block mapped: study M1's worst case. Each pass's figures and the job file are kept with the run."""

from collections.abc import Callable

from disklab.fio.executor import SubprocessExecutor
from disklab.fio.parse import parse_fio_output
from disklab.plan.build import Overrides, precondition_pass
from disklab.plan.jobfile import render_jobfile
from disklab.run.execute import single_job
from disklab.run.prepare import plan_for_target, prepare
from disklab.suite.loader import parse_suite
from disklab.targets.target import Target

# The device as one region; precondition_pass makes it the preconditioning job (whole region, no time cap).
_WHOLE_DEVICE = """
name = "condition full"
[[group]]
name = "whole device"
pattern = "sequential"
direction = "write"
size = "all"
"""


def fill_device(device: Target, passes: int, say: Callable[[str], None]) -> dict:
    """The device written `passes` times over; what the run records of it. The user's consent was checked before the
    first configuration: what an earlier configuration made on the device (a file system) is disklab's own."""
    suite = parse_suite(_WHOLE_DEVICE, source="built-in", where="--condition full")
    plan, fio = prepare(plan_for_target(suite, Overrides(), False, device), device, True, True, lambda line: None)
    (whole,) = plan.tests
    executor = SubprocessExecutor(fio.path)
    written = []
    for n in range(1, passes + 1):
        test = precondition_pass(whole, n)
        jobfile = render_jobfile(test, device.test_path, "", suite.name)
        say(f"condition full: pass {n} of {passes}: writing all of {device.path} with 128 KiB sequential writes")
        job = single_job(parse_fio_output(executor.run(jobfile).output), test.label)
        (write,) = job.directions
        written.append({"pass": n, "bytes": write.io_bytes, "mb_per_s": write.bw_bytes_per_s / 1e6,
                        "seconds": write.runtime_ms / 1000})
    return {"state": "full", "passes": passes, "jobfile": jobfile, "written": written}
