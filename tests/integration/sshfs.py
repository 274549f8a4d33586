"""A real network target on one machine: a private sshd on 127.0.0.1 and an sshfs mount of a folder through it.

This machine's kernel has no NFS, CIFS or 9p client, but it has FUSE, and sshfs over TCP is a network file system
like those: a server named by the mount's source, a route to it, a link. The mount and the server are both
children of the test (sshfs in the foreground), unmounted and ended in a finalizer even when the test fails, and
they die with the test process if it is killed.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.children import Children
from tests.integration.conftest import wait_for

SSHD = "/usr/sbin/sshd"
NEEDS_SSHFS = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a private sshd and a FUSE mount need root"),
    pytest.mark.skipif(shutil.which("sshfs") is None, reason="sshfs is not installed"),
    pytest.mark.skipif(not os.access(SSHD, os.X_OK), reason="openssh-server (sshd) is not installed"),
    pytest.mark.skipif(not os.path.exists("/dev/fuse"), reason="this machine has no /dev/fuse"),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def mounted(point: Path) -> bool:
    return any(line.split(" ")[4] == str(point) for line in Path("/proc/self/mountinfo").read_text().splitlines())


def sshfs_mount(folder: Path, children: Children, request: pytest.FixtureRequest) -> Path:
    """folder/export mounted at folder/mnt through sshfs over 127.0.0.1; the mount point."""
    keys, export, point = folder / "keys", folder / "export", folder / "mnt"
    for made in (keys, export, point):
        made.mkdir(parents=True)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    shutil.copy(keys / "client_key.pub", keys / "authorized_keys")
    port = free_port()
    config = keys / "sshd_config"
    config.write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {keys / 'host_key'}\nPidFile none\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
        "Subsystem sftp internal-sftp\n")
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder (tmpfiles makes it at boot)
    sshd = children.start([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if not wait_for(lambda: _listening(port) or sshd.poll() is not None, seconds=30) or sshd.poll() is not None:
        pytest.fail(f"the private sshd did not start: {sshd.stderr.read() if sshd.poll() is not None else 'no port'}")
    options = (f"port={port},IdentityFile={keys / 'client_key'},StrictHostKeyChecking=no,"
               "UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR")
    sshfs = children.start(["sshfs", "-f", f"{getpass.getuser()}@127.0.0.1:{export}", str(point), "-o", options],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    request.addfinalizer(lambda: _unmount(point))
    if not wait_for(lambda: mounted(point) or sshfs.poll() is not None, seconds=30) or not mounted(point):
        pytest.fail(f"sshfs did not mount: {sshfs.stderr.read() if sshfs.poll() is not None else 'no mount'}")
    return point


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _unmount(point: Path) -> None:
    # Before the children are ended: sshfs leaves its mount behind when it is killed rather than unmounted.
    if mounted(point):
        subprocess.run(["umount", "-l", str(point)], capture_output=True)
