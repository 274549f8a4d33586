"""Discarding a whole device: SNIA's purge before steady-state tests (every round starts from the same state), and
the full discard before a configuration that needs a fresh device (`run --condition fresh`, `--overprovision`)."""

import shutil
import subprocess

from disklab.errors import UserError
from disklab.system.commands import run_checked
from disklab.targets.blockdev import check_device_writable, disk_directory
from disklab.targets.target import Target

COMMAND_TIMEOUT_S = 3600  # discarding a large HDD-sized range can take long; a hung device still ends in a line


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


def check_discard(target: Target, option: str, sysfs_root: str = "/sys") -> None:
    """The device discards (a full discard is what makes the flash fresh, or spare area spare), and blkdiscard is
    there; `option` names what needs it in the refusal."""
    device = target.device
    try:
        discard_max = int((disk_directory(device, sysfs_root) / "queue" / "discard_max_bytes").read_text())
    except (OSError, ValueError):
        discard_max = 0
    if discard_max == 0:
        raise UserError(f"{option}: {device.path} does not support discard (queue/discard_max_bytes is 0), so "
                        f"discarding it would not free its flash; run without {option}")
    if shutil.which("blkdiscard") is None:
        raise UserError(f"{option}: blkdiscard is not installed (Debian: apt-get install util-linux)")


def discard_command(target: Target) -> list[str]:
    """--force: the user's consent was checked before the first configuration."""
    return ["blkdiscard", "--force", target.test_path]


def discard_whole(target: Target) -> str:
    """The whole device discarded; the command, for the run's record."""
    run_checked(discard_command(target), "discarding the whole device", COMMAND_TIMEOUT_S)
    return " ".join(discard_command(target))
