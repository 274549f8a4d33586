"""`run --condition`: the device brought to a state before the suite, and what was done and checked kept with the run.

full[:N]: the whole device written N times over by fio with 128 KiB sequential writes, the job SNIA's
preconditioning passes run (plan/build.py), so the drive starts the suite with every block mapped: study M1's worst
case. Each pass's figures and the job file are kept.

fresh: the whole device discarded or erased by the drive (targets/condition.py), then read back (targets/readback.py):
a drive may ignore a discard, and a format says no more than that it succeeded. The record says what the read-back
showed and what no read can show; an erase that left the marker is an error, a discard that left it is recorded.
"""

import shlex
from collections.abc import Callable
from dataclasses import asdict

from disklab.errors import UserError
from disklab.fio.executor import SubprocessExecutor
from disklab.fio.parse import parse_fio_output
from disklab.plan.build import Overrides, precondition_pass
from disklab.plan.jobfile import render_jobfile
from disklab.run.execute import single_job
from disklab.run.prepare import plan_for_target, prepare
from disklab.suite.loader import parse_suite
from disklab.system.commands import run_checked
from disklab.targets.condition import Condition, erase_command
from disklab.targets.readback import ReadBack, mark, read_back
from disklab.targets.target import Target

ERASE_TIMEOUT_S = 3600  # a drive's own erase of a large device takes long; a hung one still ends in a line

# The device as one region; precondition_pass makes it the preconditioning job (whole region, no time cap).
_WHOLE_DEVICE = """
name = "condition full"
[[group]]
name = "whole device"
pattern = "sequential"
direction = "write"
size = "all"
"""


def condition_device(condition: Condition, device: Target, say: Callable[[str], None]) -> dict:
    """The device brought to the condition; what the run records of it."""
    if condition.state == "full":
        return {"label": condition.label, **fill_device(device, condition.passes, say)}
    return {"label": condition.label, **_made_fresh(condition, device, say)}


def _made_fresh(condition: Condition, device: Target, say: Callable[[str], None]) -> dict:
    """Discarded or erased, then read back."""
    command = erase_command(condition, device)
    marked = mark(device.test_path, device.capacity_bytes, device.device.logical_block_size)
    say(f"condition {condition.label}: {shlex.join(command)}")
    run_checked(command, f"--condition {condition.label}", ERASE_TIMEOUT_S)
    found = read_back(marked)
    action = "format" if condition.method == "secure-erase" else "discard"
    verified = (f"{found.blocks} blocks of {found.block_bytes:,} bytes spread over {device.test_path}, written with a "
                f"marker before the {action} and read back after it (O_DIRECT): {_held(found)}")
    if condition.method == "secure-erase":
        if found.marker:
            raise UserError(f"--condition {condition.label}: {found.marker} of {found.blocks} blocks written with a "
                            f"marker before {shlex.join(command)} still held it after: the drive did not erase them")
        not_verified = ("how the drive erased: a format reports success and no more, not whether the erase was "
                        "cryptographic nor whether it reached flash outside the namespace's addresses (spare, retired)")
    elif found.marker:
        say(f"condition {condition.label}: {found.marker} of {found.blocks} blocks read back still hold what was "
            "written before the discard: the device ignored or deferred it")
        not_verified = "that the device is fresh: it did not drop every discarded block (a drive may ignore a discard)"
    else:
        not_verified = ("when the drive frees the flash behind the discarded blocks: reading them shows only that its "
                        "map dropped them")
    return {"state": "fresh", "method": condition.method, "command": shlex.join(command), "read_back": asdict(found),
            "verified": verified, "not_verified": not_verified}


def _held(found: ReadBack) -> str:
    """'all read as zeros', '3 read as zeros, 13 still held the marker'."""
    counts = [(found.zeros, "read as zeros"), (found.marker, "still held the marker"),
              (found.other, "held neither zeros nor the marker (the drive's own fill)")]
    parts = [f"{'all' if n == found.blocks else n} {what}" for n, what in counts if n]
    return ", ".join(parts) or "none was read"


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
