"""`fio --server` bound where the user says: fio's server has no authentication and runs whatever it is sent."""

import ipaddress
import socket
import subprocess

from disklab.errors import FioError
from disklab.fio.executor import die_with_parent
from disklab.hosts.hosts import Host


def server_command(fio_path: str, bind: Host) -> list[str]:
    family = "ip6" if ":" in bind.address else "ip"
    return [fio_path, f"--server={family}:{bind.address},{bind.port}"]


def beyond_loopback(address: str) -> bool:
    """True when any address the name resolves to is not a loopback address (or it cannot be resolved)."""
    try:
        resolved = {info[4][0] for info in socket.getaddrinfo(address, None)}
    except socket.gaierror:
        return True
    return any(not ipaddress.ip_address(a.split("%")[0]).is_loopback for a in resolved)


def serve(fio_path: str, bind: Host) -> int:
    """fio's server in the foreground until it ends or Ctrl-C; its exit code."""
    try:
        return subprocess.run(server_command(fio_path, bind), stdin=subprocess.DEVNULL, preexec_fn=die_with_parent).returncode
    except OSError as exc:
        raise FioError(f"cannot start {fio_path}: {exc.strerror or exc}") from None
