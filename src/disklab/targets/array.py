"""`run --members DEV,DEV,... --array md:raid5:chunk=64K --array-state clean,degraded`: the arrays a run is made on,
as the user names them, checked before a member is touched. The array is the variable of four of the five studies
(RAID5 against single drives, RAID10 against RAID6, RAID 0/5/10 of the same drives), and an array assembled by hand
between runs has its chunk, layout and state recorded nowhere.

md (mdadm) is built here (targets/md.py); LVM, btrfs and ZFS are named so that a user learns they are not built yet,
rather than reading an unknown option."""

import re
from dataclasses import dataclass

from disklab.units import format_size, parse_size

# Levels md builds, each with the fewest members it takes and whether it survives a failed member.
MD_LEVELS = {"raid0": (2, False), "raid1": (2, True), "raid4": (3, True), "raid5": (3, True), "raid6": (4, True),
             "raid10": (2, True)}
# md's parity layouts (mdadm's names); RAID6 also takes the RAID5 ones with -6 (a RAID5 layout plus a Q disk).
_PARITY_LAYOUTS = ("left-asymmetric", "left-symmetric", "right-asymmetric", "right-symmetric", "parity-first",
                   "parity-last", "ddf-zero-restart", "ddf-N-restart", "ddf-N-continue")
_LAYOUTS = {"raid4": ("parity-last", "parity-first"), "raid5": _PARITY_LAYOUTS,
            "raid6": _PARITY_LAYOUTS + tuple(f"{name}-6" for name in _PARITY_LAYOUTS[:5])}
_METADATA = ("0.90", "1.0", "1.1", "1.2")
_BITMAPS = ("internal", "none")
_NOT_YET = {
    "lvm": "LVM striped and raid volumes (lvcreate --type) are not built by disklab yet",
    "btrfs": "btrfs data/metadata profiles over the members are not built by disklab yet",
    "zfs": "ZFS pools are not built by disklab: this machine's kernel has no ZFS module to test them with",
}
STATES = ("clean", "assume-clean", "degraded", "rebuilding")
# What each state means, for --help and the docs.
STATE_MEANINGS = {
    "clean": "the initial resync run to its end before the suite (its duration recorded)",
    "assume-clean": "created with --assume-clean: no resync, parity not computed (reads of unwritten stripes are "
                    "not checked)",
    "degraded": "resynced, then one member failed and removed: a redundant level running on what is left",
    "rebuilding": "degraded, then the member added back as a spare: the suite runs while md rebuilds onto it",
}


@dataclass(frozen=True)
class ArraySpec:
    """One --array: 'md:raid5:chunk=64K:layout=left-symmetric:bitmap=none:metadata=1.2:size=64G'."""

    kind: str  # md
    level: str
    chunk_bytes: int | None = None
    layout: str | None = None
    bitmap: str | None = None
    metadata: str | None = None
    size_bytes: int | None = None  # of each member used (mdadm --size): a short-stroked array, or a quick one

    @property
    def label(self) -> str:
        """What runs are named by: 'md raid5 chunk 64 KiB layout left-symmetric'."""
        return " ".join([self.kind, self.level,
                         *([f"chunk {format_size(self.chunk_bytes)}"] if self.chunk_bytes else []),
                         *([f"layout {self.layout}"] if self.layout else []),
                         *([f"bitmap {self.bitmap}"] if self.bitmap else []),
                         *([f"metadata {self.metadata}"] if self.metadata else []),
                         *([f"size {format_size(self.size_bytes)}"] if self.size_bytes else [])])

    @property
    def redundant(self) -> bool:
        return MD_LEVELS[self.level][1]

    def check_members(self, count: int) -> None:
        """ValueError unless the level can be made of `count` members (and its layout fits them)."""
        fewest = MD_LEVELS[self.level][0]
        if count < fewest:
            raise ValueError(f"{self.kind}:{self.level} takes at least {fewest} members; --members names {count}")
        copies = re.fullmatch(r"[nfo]([0-9]+)", self.layout or "")
        if copies and int(copies[1]) > count:
            raise ValueError(f"{self.kind}:{self.level} layout {self.layout} keeps {copies[1]} copies of each block "
                             f"on {count} members; give at most {count} copies")


def parse_array_specs(texts) -> tuple[ArraySpec, ...]:
    """Each --array; a ValueError says what is wrong with one."""
    specs = tuple(parse_array_spec(text) for text in texts)
    twice = [spec.label for spec in specs if specs.count(spec) > 1]
    if twice:
        raise ValueError(f"{twice[0]!r} is given twice; each array is one configuration")
    return specs


def parse_array_spec(text: str) -> ArraySpec:
    """KIND:LEVEL[:KEY=VALUE ...]; a ValueError says what is wrong and what is allowed."""
    if not text.isprintable():
        raise ValueError(f"{text!r} holds a control character; give KIND:LEVEL[:KEY=VALUE ...], e.g. md:raid5:chunk=64K")
    kind, _, rest = text.strip().partition(":")
    kind = kind.lower()
    if kind in _NOT_YET:
        raise ValueError(f"{text!r}: {_NOT_YET[kind]}; md (mdadm) arrays are: md:raid0 ... md:raid10")
    if kind != "md":
        raise ValueError(f"{text!r}: the array kind is md (mdadm), e.g. md:raid5:chunk=64K")
    level, *settings = rest.split(":") if rest else [""]
    level = level.lower()
    if level.isdigit():
        level = f"raid{level}"
    if level not in MD_LEVELS:
        raise ValueError(f"{text!r}: md's level is one of {', '.join(MD_LEVELS)}")
    values: dict[str, str] = {}
    for setting in settings:
        key, equals, value = setting.partition("=")
        key = key.strip().lower()
        if not equals or not value.strip():
            raise ValueError(f"{text!r}: {setting!r} is not KEY=VALUE (chunk, layout, bitmap, metadata or size)")
        if key in values:
            raise ValueError(f"{text!r}: {key} is given twice")
        values[key] = value.strip()
    unknown = sorted(set(values) - {"chunk", "layout", "bitmap", "metadata", "size"})
    if unknown:
        raise ValueError(f"{text!r}: md arrays take chunk, layout, bitmap, metadata and size, not "
                         f"{', '.join(unknown)}")
    return ArraySpec("md", level, _chunk(text, level, values.get("chunk")), _layout(text, level, values.get("layout")),
                     _choice(text, "bitmap", values.get("bitmap"), _BITMAPS),
                     _choice(text, "metadata", values.get("metadata"), _METADATA), _size(text, values.get("size")))


def parse_states(text: str) -> tuple[str, ...]:
    """'clean,degraded' -> ('clean', 'degraded'); a ValueError says what is wrong."""
    states = tuple(part.strip().lower() for part in text.split(","))
    for state in states:
        if state not in STATES:
            raise ValueError(f"{state!r} is not an array state; give one or more of {', '.join(STATES)}")
    if len(set(states)) != len(states):
        raise ValueError(f"{text!r} names a state twice; each is one configuration")
    return states


def _chunk(text: str, level: str, given: str | None) -> int | None:
    if given is None:
        return None
    if level == "raid1":
        raise ValueError(f"{text!r}: raid1 mirrors whole devices and has no chunk")
    try:
        chunk = parse_size(given)
    except ValueError as exc:
        raise ValueError(f"{text!r}: chunk {exc}") from None
    if chunk < 4096 or chunk & (chunk - 1):
        raise ValueError(f"{text!r}: md's chunk is a power of two of at least 4 KiB (4K, 64K, 512K), not {given}")
    return chunk


def _size(text: str, given: str | None) -> int | None:
    if given is None:
        return None
    try:
        size = parse_size(given)
    except ValueError as exc:
        raise ValueError(f"{text!r}: size {exc}") from None
    if size < 1024**2 or size % 1024:
        raise ValueError(f"{text!r}: size is what md uses of each member, whole KiB and at least 1 MiB, not {given}")
    return size


def _layout(text: str, level: str, given: str | None) -> str | None:
    if given is None:
        return None
    if level == "raid10":
        if not re.fullmatch(r"[nfo][1-9][0-9]*", given.lower()):
            raise ValueError(f"{text!r}: raid10's layout is n, f or o (near, far, offset) and a number of copies, "
                             "e.g. n2, f2, o2")
        return given.lower()
    if level not in _LAYOUTS:
        raise ValueError(f"{text!r}: {level} has no layout to choose")
    if given.lower() not in _LAYOUTS[level]:
        raise ValueError(f"{text!r}: {level}'s layout is one of {', '.join(_LAYOUTS[level])}")
    return given.lower()


def _choice(text: str, key: str, given: str | None, allowed: tuple[str, ...]) -> str | None:
    if given is not None and given.lower() not in allowed:
        raise ValueError(f"{text!r}: {key} is one of {', '.join(allowed)}")
    return None if given is None else given.lower()
