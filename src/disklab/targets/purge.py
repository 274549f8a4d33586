"""SNIA's purge before steady-state tests: discard the whole device, so every round starts from the same state."""

import shutil
import subprocess

from disklab.targets.blockdev import check_device_writable
from disklab.targets.target import Target


def purge(target: Target, destroy_data: bool, force: bool) -> str:
    """Discards the whole device with blkdiscard when allowed; otherwise says why not. Returns a note for the run.

    The device passes the same safety checks as a writing test first (never while in use; signatures need --force).
    """
    if target.kind != "device":
        return f"purge skipped: {target.path} is a {target.kind}, not a device (only a whole device can be discarded)"
    if not destroy_data:
        return "purge skipped: discarding the device needs --destroy-data"
    check_device_writable(target.device, destroy_data=True, force=force)
    blkdiscard = shutil.which("blkdiscard")
    if blkdiscard is None:
        return "purge skipped: blkdiscard (util-linux) is not installed"
    command = [blkdiscard, *(["--force"] if force else []), target.test_path]
    done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        message = done.stderr.strip() or f"exit {done.returncode}"
        return f"purge failed, continuing without it: blkdiscard {target.test_path}: {message}"
    return f"purged: the whole of {target.test_path} discarded with blkdiscard"
