"""disklab's test files on the hosts: one per host in the target directory, made and removed by fio on that host.

The target directory is a path on the hosts (shared storage, or the same local path on each), so disklab never
touches it itself: fio lays the files out, and a tiny fio job with `unlink` removes them afterwards.
"""

import os
import re
import subprocess
import tempfile
from pathlib import Path, PurePosixPath

from disklab.errors import UserError
from disklab.hosts.hosts import Host
from disklab.targets.target import DEFAULT_LOGICAL_BLOCK_SIZE, Target

# Removing a file is quick; a host that went away must not keep the run from ending.
REMOVAL_TIMEOUT_S = 15.0


class HostsTarget(Target):
    """A directory on the hosts; its device is not local, so the common sector size is assumed."""

    @property
    def logical_block_size(self) -> int:
        return DEFAULT_LOGICAL_BLOCK_SIZE


def hosts_target(directory: str) -> HostsTarget:
    if not directory.startswith("/"):
        raise UserError(f"--target {directory}: with --hosts the target is a directory on the hosts; "
                        "give its absolute path")
    path = str(PurePosixPath(directory))
    return HostsTarget("directory", path, host_test_file(path, None), True, None, None)


def host_test_file(directory: str, host: Host | None) -> str:
    """Each host its own test file, named after it and this disklab process, so hosts sharing storage never collide."""
    who = "hosts" if host is None else re.sub(r"[^A-Za-z0-9.]+", "_", host.name)
    return str(PurePosixPath(directory) / f"disklab-on-{who}-{os.getpid()}.testfile")


def removal_job(path: str) -> str:
    """Reads one block and unlinks the file: fio removing a test file on its own host."""
    return f"[disklab-remove]\nfilename={path}\nrw=read\nsize=4k\nunlink=1\n"


def clean_up_on_hosts(fio_path: str, hosts: tuple[Host, ...], directory: str, keep: bool) -> list[str]:
    """Lines to tell the user: what was kept or could not be removed. Never raises: the run's results come first."""
    if keep:
        return [f"test files kept on the hosts: {host_test_file(directory, h)}" for h in hosts]
    lines = []
    for host in hosts:
        path = host_test_file(directory, host)
        try:
            with tempfile.TemporaryDirectory(prefix="disklab-remove-") as folder:
                job = Path(folder) / "remove.fio"
                job.write_text(removal_job(path))
                done = subprocess.run([fio_path, f"--client={host.fio_client}", str(job)], capture_output=True,
                                      text=True, stdin=subprocess.DEVNULL, timeout=REMOVAL_TIMEOUT_S, cwd=folder)
            failed = done.returncode != 0
        except subprocess.TimeoutExpired:
            failed = True
        if failed:
            lines.append(f"host {host.name}: could not remove {path} through its fio server; remove it there")
    return lines
