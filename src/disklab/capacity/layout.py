"""Array layouts: "24 x sas-hdd-10k-2.4t raid10", "12 x nl-sas-7.2k-12t raid60/2", "6 x nvme-u3-3.84t raidz2".

A layout knows how its drives are grouped and what a host I/O costs them (drive operations); it does not
know how fast a drive is (model.py) or what anything costs (cost.py).
"""

import math
import re
from dataclasses import dataclass

from disklab.capacity.catalogue import Drive, find_drive
from disklab.errors import UserError

# Per drive strip (hardware RAID "strip size", ZFS record share): common controllers default to 256 KiB.
DEFAULT_STRIP_BYTES = 256 * 1024


@dataclass(frozen=True)
class Level:
    name: str
    parity: int  # parity drives per group
    two_way_mirror: bool  # RAID10 and ZFS mirror vdevs (RAID1 mirrors across all its drives)
    min_group: int  # drives per group at least
    grouped: bool  # takes /GROUPS (RAID50/60, raidz vdevs)
    description: str


LEVELS = {level.name: level for level in (
    Level("raid0", 0, False, 1, False, "striping, no redundancy"),
    Level("raid1", 0, False, 2, False, "every drive holds a full copy"),
    Level("raid10", 0, True, 4, False, "striped two-way mirrors"),
    Level("mirror", 0, True, 2, False, "ZFS: striped two-way mirror vdevs"),
    Level("raid5", 1, False, 3, False, "striping with one rotating parity"),
    Level("raid6", 2, False, 4, False, "striping with two rotating parities"),
    Level("raid50", 1, False, 3, True, "RAID5 groups striped together"),
    Level("raid60", 2, False, 4, True, "RAID6 groups striped together"),
    Level("raidz1", 1, False, 2, True, "ZFS: vdevs with single parity"),
    Level("raidz2", 2, False, 3, True, "ZFS: vdevs with double parity"),
    Level("raidz3", 3, False, 4, True, "ZFS: vdevs with triple parity"),
)}


@dataclass(frozen=True)
class DriveOps:
    """What one host I/O costs the drives: accesses (seeks or commands) and bytes, per kind of operation."""

    read_accesses: float = 0.0
    read_bytes: float = 0.0
    write_accesses: float = 0.0
    write_bytes: float = 0.0
    # The largest single read and write one drive does for it, and whether the writes wait for reads first:
    # what the host waits for when the array is otherwise idle.
    largest_read: float = 0.0
    largest_write: float = 0.0
    read_then_write: bool = False


@dataclass(frozen=True)
class Layout:
    spec: str  # as the user wrote it
    count: int
    drive: Drive
    level: Level
    groups: int
    strip_bytes: int = DEFAULT_STRIP_BYTES

    @property
    def group_size(self) -> int:
        return self.count // self.groups

    @property
    def data_drives(self) -> float:
        """Drives' worth of net capacity."""
        if self.level.name == "raid1":
            return 1
        if self.level.two_way_mirror:
            return self.count / 2
        return self.groups * (self.group_size - self.level.parity)

    @property
    def net_capacity_bytes(self) -> float:
        return self.data_drives * self.drive.capacity_bytes

    @property
    def raw_capacity_bytes(self) -> int:
        return self.count * self.drive.capacity_bytes

    @property
    def failures_tolerated(self) -> int:
        """Drives that may fail, whichever they are."""
        if self.level.name == "raid1":
            return self.count - 1
        if self.level.two_way_mirror:
            return 1
        return self.level.parity

    @property
    def failures_tolerated_at_best(self) -> int:
        """Drives that may fail when each failure hits another mirror pair or group."""
        if self.level.name == "raid1":
            return self.count - 1
        if self.level.two_way_mirror:
            return self.count // 2
        return self.level.parity * self.groups

    @property
    def write_penalty(self) -> int:
        """Drive I/Os per small host write: the textbook figure (mirrors 2, single parity 4, double 6, triple 8)."""
        if self.level.two_way_mirror:
            return 2
        if self.level.name == "raid1":
            return self.count
        return 2 * (1 + self.level.parity) if self.level.parity else 1

    @property
    def stripe_width_bytes(self) -> int:
        """Data in one full stripe of a group: from this size on, writes need no read-modify-write."""
        return (self.group_size - self.level.parity) * self.strip_bytes

    def read_ops(self, size: int) -> DriveOps:
        """Reads spread over all drives (mirrors read either side, parity rotates); a read spanning several
        strips costs one access on each drive it touches."""
        spans = self.count if self.level.name != "raid1" else 1
        accesses = min(math.ceil(size / self.strip_bytes), spans)
        return DriveOps(read_accesses=accesses, read_bytes=size, largest_read=size / accesses)

    def write_ops(self, size: int) -> DriveOps:
        level = self.level
        strips = math.ceil(size / self.strip_bytes)
        if level.name == "raid1":
            return DriveOps(write_accesses=self.count, write_bytes=self.count * size, largest_write=size)
        if level.two_way_mirror:
            accesses = min(strips, self.count // 2)
            return DriveOps(write_accesses=2 * accesses, write_bytes=2 * size, largest_write=size / accesses)
        if level.parity == 0:
            accesses = min(strips, self.count)
            return DriveOps(write_accesses=accesses, write_bytes=size, largest_write=size / accesses)
        data = self.group_size - level.parity
        if size >= self.stripe_width_bytes:
            # Full stripes: data plus parity written, nothing read; each touched drive writes its run of strips.
            written = size * self.group_size / data
            accesses = min(math.ceil(written / self.strip_bytes), self.count)
            return DriveOps(write_accesses=accesses, write_bytes=written, largest_write=written / accesses)
        # Partial stripe: the cheaper of read-modify-write (read old data and parity) and reconstruct-write
        # (read the untouched data strips); either way the new data and parity are written.
        parity_bytes = level.parity * min(size, self.strip_bytes)
        modify_reads = (strips + level.parity, size + parity_bytes)
        reconstruct_reads = (data - strips, (data - strips) * self.strip_bytes)
        accesses, read_bytes = min(modify_reads, reconstruct_reads)
        return DriveOps(
            read_accesses=accesses, read_bytes=read_bytes, write_accesses=strips + level.parity,
            write_bytes=size + parity_bytes, largest_read=min(size, self.strip_bytes),
            largest_write=min(size, self.strip_bytes), read_then_write=True,
        )


_SPEC = re.compile(r"^\s*(\d+)\s*[x×*]\s*(\S+)\s+([a-z0-9]+)(?:/(\d+))?\s*$", re.IGNORECASE)


def parse_layout(spec: str, catalogue: dict[str, Drive], strip_bytes: int = DEFAULT_STRIP_BYTES) -> Layout:
    """'N x DRIVE LEVEL[/GROUPS]', checked against the level's rules; problems are one UserError line."""
    match = _SPEC.match(spec)
    if not match:
        raise UserError(f"{spec!r} is not a layout: write 'N x DRIVE LEVEL[/GROUPS]', "
                        "e.g. '8 x sata-ssd-1.6t raid6' or '12 x nl-sas-7.2k-12t raid60/2'")
    count, drive_name, level_name, groups_text = match.groups()
    count = int(count)
    level = LEVELS.get(level_name.lower())
    if level is None:
        raise UserError(f"{spec!r}: unknown level {level_name!r}; known: {', '.join(LEVELS)}")
    drive = find_drive(catalogue, drive_name)
    if groups_text and not level.grouped:
        grouped = ", ".join(name for name, other in LEVELS.items() if other.grouped)
        raise UserError(f"{spec!r}: {level.name} takes no /GROUPS (only {grouped})")
    groups = int(groups_text) if groups_text else (2 if level.name in ("raid50", "raid60") else 1)
    if groups < 1 or count % groups:
        raise UserError(f"{spec!r}: {count} drives do not split into {groups} equal groups")
    group_size = count // groups
    if group_size < level.min_group:
        what = "per group " if level.grouped else ""
        raise UserError(f"{spec!r}: {level.name} needs at least {level.min_group} drives {what}(has {group_size})")
    if level.two_way_mirror and count % 2:
        raise UserError(f"{spec!r}: {level.name} pairs drives, so it needs an even count (has {count})")
    return Layout(spec=spec.strip(), count=count, drive=drive, level=level, groups=groups, strip_bytes=strip_bytes)
