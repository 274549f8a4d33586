"""Facts about this host that every run records."""

import os
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
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
