"""What the file system under a SQLite store lets SQLite do.

SQLite's write-ahead log keeps its index in memory that every process using the store maps (the -shm file), so they
must all be on one machine (https://www.sqlite.org/wal.html). On a file system machines share, the store keeps a
rollback journal instead, which needs only POSIX locks, held by the server for every client. Where those locks never
leave this machine, another machine could write the store at the same moment and damage it: writing is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from disklab.system.mounts import NETWORK_FS_TYPES, Mount, mount_of

# A fix for a store that cannot stay where it is, said at the end of each refusal.
ELSEWHERE = ("keep the store on a local disk (--store FILE, or DISKLAB_HOME) or use a PostgreSQL store "
             "(--store postgresql://...)")


@dataclass(frozen=True)
class StoreFileSystem:
    mount: Mount | None  # None: not found (the store is then taken as local)

    @property
    def shared(self) -> bool:
        """Served to other machines (9p over any transport: over virtio its other side is the hypervisor's host)."""
        return self.mount is not None and (self.mount.fs_type in NETWORK_FS_TYPES or self.mount.fs_type == "9p")

    @property
    def journal_mode(self) -> str:
        return "DELETE" if self.shared else "WAL"

    @property
    def named(self) -> str:
        """nfs4 (127.0.0.1:/): the type and the source, as mountinfo gives them."""
        return f"{self.mount.fs_type} ({self.mount.source})" if self.mount else "an unknown file system"

    def local_locks(self) -> str | None:
        """Why the locks this file system takes stay on this machine; None where the server holds them."""
        if not self.shared:
            return None
        fs_type, options = self.mount.fs_type, self.mount.option_values
        if fs_type in ("nfs", "nfs4") and ("nolock" in options or options.get("local_lock") in ("all", "posix")):
            return f"mounted with local_lock={options.get('local_lock', 'all')} (nolock): its locks stay on this machine"
        if fs_type in ("cifs", "smb3", "smbfs") and "nobrl" in options:
            return "mounted with nobrl: its locks stay on this machine"
        if fs_type == "fuse.sshfs":
            return "whose protocol (SFTP) has no locks: they stay on this machine"
        if fs_type == "afs":
            return "whose byte-range locks stay on this machine"
        if fs_type == "9p":
            return "whose servers need not hold locks (QEMU's grants every lock without taking it)"
        return None

    def refusal(self, path: Path) -> str | None:
        """One line saying why no run may be stored at `path`, and what to do; None where one may."""
        why = self.local_locks()
        if why is None:
            return None
        return (f"the results store {path} is on {self.named}, {why}, so SQLite cannot keep another machine from "
                f"writing it at the same moment; nothing is stored there: {ELSEWHERE}")

    def notice(self, path: Path) -> str:
        """Said once, when the store is made or moved to a rollback journal: what it does there and what is better."""
        return (f"the results store {path} is on {self.named}, where SQLite's write-ahead log cannot work: it keeps "
                "a rollback journal there (several machines may write it; each commit takes longer); a lab's "
                "machines share a PostgreSQL store better (--store postgresql://...)")


def store_file_system(folder: Path, proc: str = "/proc") -> StoreFileSystem:
    """The file system of the store's folder, or of its nearest existing parent when the folder is still to be made."""
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("/"))
    return StoreFileSystem(mount_of(str(existing), proc))
