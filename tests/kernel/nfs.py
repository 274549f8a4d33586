"""An NFS server in the guest, serving a RAM folder to the guest itself over 127.0.0.1: the kernel's nfsd, with
rpcbind, rpc.mountd and rpc.statd (NFS 3's locks) started in the foreground as children, and the grace periods cut
to their least (10 s) so that the first opens and locks wait less. Mounted with the client's own `mount -t nfs`.

Used by the checks (checks/check_network_fs.py) and by tests/fixtures/env/capture_guest_mounts.py.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from tests.children import Children
from tests.integration.conftest import run, wait_for

NFSD = Path("/proc/fs/nfsd")
EXPORT_OPTIONS = "rw,no_root_squash,no_subtree_check,insecure,fsid=0"  # fsid=0: the export is NFS 4's root, "/"


@contextmanager
def nfs_server(export: Path) -> Iterator[None]:
    """`export` (made a 256 MiB tmpfs: 9p and overlay cannot be exported) served over NFS 3 and 4 to 127.0.0.1."""
    children = Children()
    with ExitStack() as undo:
        run("modprobe", "nfsd")
        run("mount", "-t", "nfsd", "nfsd", str(NFSD))
        undo.callback(run, "umount", str(NFSD))
        Path("/proc/sys/fs/nfs/nlm_grace_period").write_text("10\n")
        export.mkdir(parents=True, exist_ok=True)
        run("mount", "-t", "tmpfs", "-o", "size=256M", "tmpfs", str(export))
        undo.callback(run, "umount", str(export))
        Path("/etc/exports").write_text(f"{export} 127.0.0.1({EXPORT_OPTIONS})\n")
        undo.callback(children.end_all)
        children.start(["rpcbind", "-f", "-w"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for(lambda: subprocess.run(["rpcinfo", "-p", "127.0.0.1"], capture_output=True).returncode == 0,
                        seconds=30):
            raise TimeoutError("rpcbind did not answer on 127.0.0.1 within 30 s")
        run("exportfs", "-ra")
        undo.callback(run, "exportfs", "-ua")
        children.start(["rpc.mountd", "-F"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        children.start(["rpc.statd", "-F", "--no-notify"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run("rpc.nfsd", "-G", "10", "-L", "10", "2")  # grace and lease times
        undo.callback(run, "rpc.nfsd", "0")
        try:
            yield
        finally:
            if " - nfs" in Path("/proc/self/mountinfo").read_text():
                undo.pop_all()  # a check that failed left a mount: it keeps its server, or it would hang for good


@contextmanager
def nfs_mount(point: Path, source: str, options: str) -> Iterator[Path]:
    """`mount -t nfs -o OPTIONS 127.0.0.1:SOURCE POINT`, unmounted afterwards."""
    point.mkdir(parents=True, exist_ok=True)
    run("mount", "-t", "nfs", "-o", options, f"127.0.0.1:{source}", str(point))
    try:
        yield point
    finally:
        run("umount", str(point))

