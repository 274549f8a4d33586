"""A system tool run to its end for its effect (mkfs, mount, blkdiscard, hdparm ...): its output, or one UserError
saying what failed and how, also when it is missing or hangs."""

import shlex
import subprocess

from disklab.errors import UserError


def run_checked(command: list[str], what: str, timeout_s: float) -> str:
    """The command's stdout; `what` begins the error line ("mkfs.xfs /dev/sdb", "setting the write cache ...")."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise UserError(f"{what}: {shlex.join(command)} took over {timeout_s:g} s; the device is hung") from None
    except OSError as exc:
        raise UserError(f"{what}: cannot run {command[0]}: {exc.strerror or exc}") from None
    if done.returncode != 0:
        reason = " ".join((done.stderr or done.stdout).split()) or f"exit {done.returncode}"
        raise UserError(f"{what} failed: {shlex.join(command)}: {reason}")
    return done.stdout
