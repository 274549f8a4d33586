"""Facts about this host that every run records."""

import os
import platform
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class HostIdentity:
    hostname: str
    kernel: str


def host_identity() -> HostIdentity:
    return HostIdentity(hostname=socket.gethostname(), kernel=platform.release())


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
