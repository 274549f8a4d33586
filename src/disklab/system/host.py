"""Facts about this host that every run records."""

import os
from pathlib import Path
from dataclasses import dataclass


@dataclass(frozen=True)
class HostIdentity:
    hostname: str
    kernel: str


def host_identity() -> HostIdentity:
    """From uname(2), as socket.gethostname and platform.release read it, without loading either module."""
    uname = os.uname()
    return HostIdentity(hostname=uname.nodename, kernel=uname.release)


def process_alive(pid: int) -> bool:
    """A zombie (killed, not yet reaped by a parent that may never reap it) is not alive."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process; a number no process can have
        return False
    except PermissionError:
        pass
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def login_name() -> str:
    """Who runs disklab: the user behind sudo (root-capable runs are usually started through it), else the account of
    this process, else its number."""
    sudo_user = os.environ.get("SUDO_USER")
    if sudo_user:
        return sudo_user
    import pwd  # loaded only when a run is stored

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid without an account (a container's)
        return str(os.getuid())
