"""Where a run's private PostgreSQL keeps its parts, and so which of its I/O the target sees.

By default the whole cluster (data directory, WAL and catalog) is one folder in the target directory. With
--tablespace-only, as the SSD review (M3) did, the cluster is a folder off the target ($TMPDIR, else /var/tmp: on the
machine's own disk, where /tmp is often RAM) and the target holds only a tablespace, where `pgbench -i` puts its
tables and indexes. Each folder is named by host and PID (targets/target.py), so that a killed run's are known
(database/leftovers.py).
"""

import os
from dataclasses import dataclass
from pathlib import Path

from disklab.env.collect import disks_under
from disklab.errors import UserError
from disklab.system.mounts import MEMORY_FS_TYPES
from disklab.targets.target import disklab_entry

CLUSTER_KIND = "pgcluster"
TABLESPACE_KIND = "pgtablespace"
TABLESPACE = "disklab"  # the tablespace's name inside the cluster
# Where the cluster goes with --tablespace-only when TMPDIR is not set.
OFF_TARGET_DEFAULT = "/var/tmp"


@dataclass(frozen=True)
class Placement:
    target_dir: Path
    off_target: Path | None = None  # --tablespace-only: the folder the cluster is made in; None: the target
    off_target_disks: tuple[str, ...] = ()  # the whole disks under it, said with the run

    @property
    def cluster(self) -> Path:
        """This process's cluster folder: its data directory (WAL and catalog inside) and the server's log."""
        return disklab_entry(self.off_target or self.target_dir, CLUSTER_KIND)

    @property
    def tablespace(self) -> Path | None:
        return None if self.off_target is None else disklab_entry(self.target_dir, TABLESPACE_KIND)

    @property
    def on_target(self) -> Path:
        """What the run makes on the target: the cluster, or only its tablespace."""
        return self.tablespace or self.cluster

    def description(self) -> str:
        if self.off_target is None:
            return "data directory, WAL and catalog on the target"
        disks = f" ({', '.join(self.off_target_disks)})" if self.off_target_disks else ""
        return f"tablespace on the target; WAL and catalog off it: {self.off_target}{disks}"

    def out_of_space(self, output: str = "") -> tuple[str, Path]:
        """Which folder ran out of space, by the file PostgreSQL names: with --tablespace-only only the tables' and
        indexes' files (pg_tblspc/...) lie on the target."""
        if self.off_target is None or "pg_tblspc/" in output:
            return "the target", self.target_dir
        return "the folder off the target", self.off_target

    def kept(self, run_id: int) -> tuple[Path, Path | None]:
        """The names --keep-cluster gives the cluster and the tablespace: no clean-up of a killed run's matches them."""
        cluster = self.cluster.with_name(f"disklab-run{run_id}.{CLUSTER_KIND}")
        tablespace = self.tablespace
        return cluster, None if tablespace is None else tablespace.with_name(f"disklab-run{run_id}.{TABLESPACE_KIND}")

    def keep(self, run_id: int) -> None:
        """The stopped cluster and its tablespace renamed; the cluster's link to its tablespace follows it (PostgreSQL
        finds a tablespace by the link in pg_tblspc)."""
        cluster, tablespace = self.kept(run_id)
        if self.cluster.exists():
            os.replace(self.cluster, cluster)
        if tablespace is not None and self.tablespace.exists():
            os.replace(self.tablespace, tablespace)
            for link in tablespace_links(cluster / "data"):
                if Path(os.readlink(link)) == self.tablespace:
                    link.unlink()
                    link.symlink_to(tablespace)

    def kept_lines(self, run_id: int) -> list[str]:
        cluster, tablespace = self.kept(run_id)
        if tablespace is None:
            return [f"cluster kept (server stopped): {cluster}"]
        return [f"cluster kept (server stopped): {cluster} (data directory, WAL and catalog; off the target)",
                f"its tablespace kept: {tablespace} (tables and indexes; on the target)"]


def tablespace_links(data_dir: Path) -> list[Path]:
    """pg_tblspc's links, one per tablespace, to where each lies."""
    folder = data_dir / "pg_tblspc"
    return sorted(link for link in folder.iterdir() if link.is_symlink()) if folder.is_dir() else []


def off_target_parent() -> Path:
    return Path(os.environ.get("TMPDIR") or OFF_TARGET_DEFAULT).absolute()


def place_off_target(target_dir: Path) -> tuple[Placement, tuple[str, ...]]:
    """--tablespace-only: the cluster's folder off the target, refused where it shares the target's file system or
    disk (the option would then change nothing); a warning where it lies in RAM."""
    parent = off_target_parent()
    try:
        device = parent.stat().st_dev if parent.is_dir() else None
    except OSError:  # a name too long, a folder that may not be entered: no folder to use either
        device = None
    if device is None:
        raise UserError(f"--tablespace-only keeps the cluster in $TMPDIR (else {OFF_TARGET_DEFAULT}), and "
                        f"{str(parent)[:80]} is not a directory disklab can use; set TMPDIR to a directory on the "
                        "machine's own disk")
    mount, disks = disks_under(str(parent))
    _, target_disks = disks_under(str(target_dir))
    shared = [disk for disk in disks if disk in target_disks]
    if device == target_dir.stat().st_dev or shared:
        same = "file system" if device == target_dir.stat().st_dev else f"disk ({', '.join(shared)})"
        raise UserError(f"--tablespace-only: {parent} ($TMPDIR, else {OFF_TARGET_DEFAULT}), where the cluster and its "
                        f"WAL would go, is on the same {same} as the target {target_dir}, so the WAL would reach the "
                        "disk under test anyway; set TMPDIR to a directory on another disk")
    warnings = ()
    if mount is not None and mount.fs_type in MEMORY_FS_TYPES:
        warnings = (f"warning: --tablespace-only keeps the cluster and its WAL in {parent}, which is {mount.fs_type} "
                    "(RAM): a commit costs no disk flush there, where the SSD review's (M3) WAL was on a disk; set "
                    "TMPDIR to a directory on the machine's own disk",)
    return Placement(target_dir, parent, tuple(disks)), warnings
