"""Array layouts: "24 x sas-hdd-10k-2.4t raid10", "12 x nl-sas-7.2k-12t raid60/2 cache=4GiB", "6 x nvme-u3-3.84t
raidz2 via=iscsi:25GbE".

A layout knows how its drives are grouped, what stands between them and the host (a RAID controller with its
cache, ZFS, the path), and what a host I/O costs the drives (drive operations); it does not know how fast a
drive is (drive_time.py, model.py) or what anything costs (cost.py).
"""

import math
import re
from dataclasses import dataclass, field, replace

from disklab.capacity.catalogue import CONDITIONS, Drive, find_drive
from disklab.capacity.path import Path, parse_via
from disklab.errors import UserError
from disklab.units import brief, format_size, parse_size

# Per drive strip (hardware RAID "strip size"): common controllers default to 256 KiB.
DEFAULT_STRIP_BYTES = 256 * 1024
# Hardware RAID controllers of the class (Broadcom MegaRAID 93xx/94xx, Microchip SmartRAID, Dell PERC H7xx) ship
# with 1-8 GiB of battery- or flash-backed cache, write-back by default; 2 GiB is the common middle.
DEFAULT_CACHE_BYTES = 2 * 1024**3
# ZFS's default recordsize.
DEFAULT_RECORD_BYTES = 128 * 1024
# Drives in one array, at most: a hundred 102-bay enclosures. Beyond it a count is a typo, and the model's shares of
# the array (a data set's region) would fall below what a float holds.
MAX_DRIVES = 10_000


@dataclass(frozen=True)
class Level:
    name: str
    parity: int  # parity drives per group
    two_way_mirror: bool  # RAID10 and ZFS mirror vdevs (RAID1 mirrors across all its drives)
    min_group: int  # drives per group at least
    grouped: bool  # takes /GROUPS (RAID50/60, raidz vdevs)
    description: str

    @property
    def zfs(self) -> bool:
        return self.name in ("mirror", "stripe") or self.name.startswith("raidz")


LEVELS = {level.name: level for level in (
    Level("raid0", 0, False, 1, False, "striping, no redundancy"),
    Level("raid1", 0, False, 2, False, "every drive holds a full copy"),
    Level("raid10", 0, True, 4, False, "striped two-way mirrors"),
    Level("mirror", 0, True, 2, False, "ZFS: striped two-way mirror vdevs"),
    Level("stripe", 0, False, 1, False, "ZFS: single-drive vdevs striped, no redundancy"),
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
    # ZFS writes copy-on-write into free space its allocator hands out in order: no seek per write.
    writes_in_order: bool = False


@dataclass(frozen=True)
class Controller:
    """A hardware RAID controller between host and drives: its write-back cache (0: write-through) and whether
    it reads ahead on sequential reads."""

    cache_bytes: int = DEFAULT_CACHE_BYTES
    read_ahead: bool = False
    stated: bool = False  # the cache mode was given (cache=), not assumed

    @property
    def write_back(self) -> bool:
        return self.cache_bytes > 0


@dataclass(frozen=True)
class Layout:
    spec: str  # as the user wrote it
    count: int
    drive: Drive
    level: Level
    groups: int
    strip_bytes: int = DEFAULT_STRIP_BYTES
    controller: Controller | None = None  # None: no RAID controller (NVMe, ZFS, HBAs)
    record_bytes: int = DEFAULT_RECORD_BYTES  # ZFS
    arc_bytes: int = 0  # ZFS: RAM of the read cache the data set may hit
    via: Path = field(default_factory=lambda: parse_via("local"))
    write_cache: bool = True  # the drives' own volatile write cache
    condition: str = "steady"  # SSDs: written full (steady state) or empty (fresh)
    cpu_bytes_per_s: float | None = None  # what the host's or NAS's CPU and file system move at most; None: not charged

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

    @property
    def write_back(self) -> bool:
        return bool(self.controller and self.controller.write_back)

    def read_ops(self, size: int, sequential: bool = False) -> DriveOps:
        """Reads spread over all drives (mirrors read either side, parity rotates); a read spanning several
        strips costs one access on each drive it touches. ZFS reads whole records. A controller reading ahead
        on a sequential stream fetches whole strips: one drive command per strip, however small the requests."""
        if self.level.zfs:
            return self._record_reads(math.ceil(size / self.record_bytes))
        if sequential and self.controller and self.controller.read_ahead:
            # The host waits, on average, for its own bytes: the rest of the strip was fetched meanwhile.
            return DriveOps(read_accesses=size / self.strip_bytes, read_bytes=size, largest_read=size)
        spans = self.count if self.level.name != "raid1" else 1
        accesses = min(math.ceil(size / self.strip_bytes), spans)
        return DriveOps(read_accesses=accesses, read_bytes=size, largest_read=size / accesses)

    def write_ops(self, size: int, sequential: bool = False) -> DriveOps:
        """Sequential writes behind a write-back cache (or a whole stripe or more at once) fill full stripes."""
        level = self.level
        if level.zfs:
            return self._record_writes(size, sequential)
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
        if sequential and self.write_back:
            # The cache gathers the stream into full stripes, destaged one strip per drive command.
            written = size * self.group_size / data
            return DriveOps(write_accesses=written / self.strip_bytes, write_bytes=written,
                            largest_write=self.strip_bytes)
        if size >= self.stripe_width_bytes:
            # Full stripes: data plus parity written, nothing read; each touched drive writes its run of strips.
            written = size * self.group_size / data
            accesses = min(math.ceil(written / self.strip_bytes), self.count)
            return DriveOps(write_accesses=accesses, write_bytes=written, largest_write=written / accesses)
        # Partial stripe: the cheaper of read-modify-write (read old data and parity) and reconstruct-write
        # (read the untouched data strips); either way the new data and parity are written. Reconstruct-write reads
        # only the rows the write covers of the other strips, not the whole strips: md reads them in its stripe
        # cache's 4 KiB pages (drivers/md/raid5.c, handle_stripe_dirtying), a controller the same sectors.
        parity_bytes = level.parity * min(size, self.strip_bytes)
        modify_reads = (strips + level.parity, size + parity_bytes)
        reconstruct_reads = (data - strips, (data - strips) * min(size, self.strip_bytes))
        accesses, read_bytes = min(modify_reads, reconstruct_reads)
        return DriveOps(
            read_accesses=accesses, read_bytes=read_bytes, write_accesses=strips + level.parity,
            write_bytes=size + parity_bytes, largest_read=min(size, self.strip_bytes),
            largest_write=min(size, self.strip_bytes), read_then_write=True,
        )

    # ZFS's own rules (OpenZFS documentation, "Workload tuning" and "RAIDZ"): data lives in records of up to
    # recordsize; a raidz record is split across the data drives of one vdev, so a random read of one record
    # busies every data drive of its vdev (a raidz vdev reads small blocks at about one drive's IOPS); a mirror
    # reads a record from either side. Writes are copy-on-write: a whole record (and its parity) goes to free
    # space, never a read-modify-write of parity; a write smaller than a record reads the rest of the record
    # first, unless the ARC holds it, or the write is part of a stream: streaming writes gather in RAM into whole
    # records before a transaction group writes them ("ZFS gathers small sequential writes", OpenZFS "Workload
    # tuning", recordsize), so they cost the record's write, never a read.

    def _record_reads(self, records: int) -> DriveOps:
        pieces = self.group_size - self.level.parity if self.level.parity else 1  # raidz splits a record
        return DriveOps(read_accesses=records * pieces, read_bytes=records * self.record_bytes,
                        largest_read=self.record_bytes / pieces)

    def _record_writes(self, size: int, sequential: bool) -> DriveOps:
        records = size / self.record_bytes if sequential else math.ceil(size / self.record_bytes)
        if self.level.parity:  # the record split over a raidz vdev's data drives, with its parity
            pieces, copies = self.group_size, self.group_size / (self.group_size - self.level.parity)
        else:
            pieces = copies = 2 if self.level.two_way_mirror else 1
        written = records * self.record_bytes * copies
        partial = size % self.record_bytes and not sequential
        read = self._record_reads(1) if partial else DriveOps()
        return DriveOps(read_accesses=read.read_accesses, read_bytes=read.read_bytes, largest_read=read.largest_read,
                        write_accesses=records * pieces, write_bytes=written,
                        largest_write=written / (records * pieces), read_then_write=bool(partial),
                        writes_in_order=True)

    def describe_options(self) -> str:
        """The settings beyond drives and level, as the layout's options would write them."""
        if self.level.zfs:
            parts = [f"record={format_size(self.record_bytes)}", f"arc={format_size(self.arc_bytes)}"]
        else:
            parts = [f"strip={format_size(self.strip_bytes)}"]
            if self.controller:
                cache = self.controller.cache_bytes
                parts += [f"cache={format_size(cache) if cache else 'none'}",
                          f"readahead={'on' if self.controller.read_ahead else 'off'}"]
        parts.append(f"write_cache={'on' if self.write_cache else 'off'}")
        if self.drive.kind != "hdd":
            parts.append(f"condition={self.condition}")
        if self.cpu_bytes_per_s:
            parts.append(f"cpu_mbps={self.cpu_bytes_per_s / 1e6:g}")
        return " ".join(parts + [f"via={self.via.text}"])


_SPEC = re.compile(r"^\s*(\d+)\s*[x×*]\s*(\S+)\s+([a-z0-9]+)(?:/(\d+))?((?:\s+\S+)*)\s*$", re.IGNORECASE)
# Options after the level: what each sets, and which layouts take it.
OPTIONS = {
    "strip": "strip per drive of hardware RAID (default 256KiB)",
    "cache": "the RAID controller's write-back cache, a size or none (default 2GiB with SAS/SATA drives)",
    "readahead": "the RAID controller reads ahead on sequential reads: on or off (default off)",
    "record": "ZFS recordsize, or a zvol's volblocksize (default 128KiB, a dataset's default)",
    "arc": "ZFS: RAM of the ARC the data set may hit (default 0: a data set larger than the ARC)",
    "via": "the path from host to array, e.g. local, iscsi:25GbE, nfs:10GbE (see 'disklab capacity show --help')",
    "write_cache": "the drives' own write cache: on or off (default: the drive file's write_cache, else on)",
    "condition": "SSDs written full and worn in (steady, the default: the worst case reviews report) or empty "
                 "(fresh)",
    "cpu_mbps": "MB/s the host's or NAS's CPU and file system move at most, from a measurement or a review "
                "(default: not charged)",
}
_ZFS_ONLY, _CONTROLLER_ONLY = ("record", "arc"), ("strip", "cache", "readahead")


def parse_layout(spec: str, catalogue: dict[str, Drive], strip_bytes: int = DEFAULT_STRIP_BYTES,
                 via: str = "local") -> Layout:
    """'N x DRIVE LEVEL[/GROUPS] [OPTION=VALUE ...]', checked against the level's rules; `strip_bytes` and `via`
    apply where the spec does not say; problems are one UserError line."""
    match = _SPEC.match(spec)
    if not match:
        raise UserError(f"{spec!r} is not a layout: write 'N x DRIVE LEVEL[/GROUPS] [OPTION=VALUE ...]', "
                        "e.g. '8 x sata-ssd-1.6t raid6' or '12 x nl-sas-7.2k-12t raid60/2 cache=4GiB'")
    count_text, drive_name, level_name, groups_text, options_text = match.groups()
    count = _drives(count_text, spec, "drives")
    level = LEVELS.get(level_name.lower())
    if level is None:
        raise UserError(f"{spec!r}: unknown level {level_name!r}; known: {', '.join(LEVELS)}")
    drive = find_drive(catalogue, drive_name)
    if groups_text and not level.grouped:
        grouped = ", ".join(name for name, other in LEVELS.items() if other.grouped)
        raise UserError(f"{spec!r}: {level.name} takes no /GROUPS (only {grouped})")
    groups = _drives(groups_text, spec, "groups") if groups_text else (2 if level.name in ("raid50", "raid60") else 1)
    if groups < 1 or count % groups:
        raise UserError(f"{spec!r}: {count} drives do not split into {groups} equal groups")
    group_size = count // groups
    if group_size < level.min_group:
        what = "per group " if level.grouped else ""
        raise UserError(f"{spec!r}: {level.name} needs at least {level.min_group} drives {what}(has {group_size})")
    if level.two_way_mirror and count % 2:
        raise UserError(f"{spec!r}: {level.name} pairs drives, so it needs an even count (has {count})")
    controller = None if level.zfs or drive.interface.startswith("nvme") else Controller()
    layout = Layout(spec=spec.strip(), count=count, drive=drive, level=level, groups=groups,
                    strip_bytes=strip_bytes, controller=controller, via=parse_via(via), write_cache=drive.write_cache)
    return _with_options(layout, options_text.split())


def _drives(text: str, spec: str, what: str) -> int:
    """A count of drives or groups, at most MAX_DRIVES (a longer number is not converted at all)."""
    if len(text) > len(str(MAX_DRIVES)) or int(text) > MAX_DRIVES:
        raise UserError(f"{spec!r}: {brief(text)} {what} is more than an array holds (at most {MAX_DRIVES:,})")
    return int(text)


def _with_options(layout: Layout, words: list[str]) -> Layout:
    spec = layout.spec
    for word in words:
        key, equals, value = word.partition("=")
        key = key.lower()
        if not equals or key not in OPTIONS:
            raise UserError(f"{spec!r}: {word!r} is not an option; options: "
                            + "; ".join(f"{name}=... {text}" for name, text in OPTIONS.items()))
        if key in _ZFS_ONLY and not layout.level.zfs:
            raise UserError(f"{spec!r}: {key}= is for ZFS levels (mirror, raidz1/2/3) only")
        if key in _CONTROLLER_ONLY and layout.level.zfs:
            raise UserError(f"{spec!r}: {key}= is for hardware RAID; ZFS takes record= and arc=")
        try:
            layout = _set(layout, key, value)
        except ValueError as exc:
            raise UserError(f"{spec!r}: {key}={value}: {exc}") from None
    return layout


def _set(layout: Layout, key: str, value: str) -> Layout:
    if key == "via":
        return replace(layout, via=parse_via(value))
    if key in ("readahead", "write_cache"):
        if value.lower() not in ("on", "off"):
            raise ValueError("write on or off")
        if key == "write_cache":
            return replace(layout, write_cache=value.lower() == "on")
        return replace(layout, controller=replace(layout.controller or Controller(0), read_ahead=value.lower() == "on"))
    if key == "cache":
        size = 0 if value.lower() in ("none", "0", "off") else parse_size(value)
        return replace(layout, controller=replace(layout.controller or Controller(), cache_bytes=size, stated=True))
    if key == "condition":
        if value.lower() not in CONDITIONS:
            raise ValueError(f"write {' or '.join(CONDITIONS)}")
        return replace(layout, condition=value.lower())
    if key == "cpu_mbps":
        rate = float(value)
        if not 1 <= rate <= 1e9:
            raise ValueError("write the MB/s as a number from 1 to 1e9")
        return replace(layout, cpu_bytes_per_s=rate * 1e6)
    size = parse_size(value)
    if key == "arc":
        return replace(layout, arc_bytes=size)
    if size < 512:
        raise ValueError("smaller than a sector (512 bytes)")
    return replace(layout, **{"strip_bytes" if key == "strip" else "record_bytes": size})
