"""`run --members DEV,DEV,... --array md:raid5:chunk=64K --array-state clean,degraded`: the arrays a run is made on,
as the user names them, checked before a member is touched. The array is the variable of four of the five studies
(RAID5 against single drives, RAID10 against RAID6, RAID 0/5/10 of the same drives), and an array assembled by hand
between runs has its chunk, layout and state recorded nowhere.

md (mdadm: targets/md.py), LVM (lvcreate's striped and raid segment types: targets/lvm.py) and btrfs (its data and
metadata profiles over the members: targets/btrfs_array.py) are built; ZFS is named so that a user learns why it is
not, rather than reading an unknown option."""

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
# LVM's segment types (lvcreate --type), each with the fewest data stripes it takes, the members it spends besides
# its data stripes (raid5's parity, raid6's two syndromes; raid10 mirrors each stripe, so it spends as many again),
# and whether it survives a failed member. raid1 mirrors every member (lvcreate -m), with no stripes.
LVM_TYPES = {"striped": (1, 0, False), "raid0": (2, 0, False), "raid1": (1, 1, True), "raid5": (2, 1, True),
             "raid6": (3, 2, True), "raid10": (2, 0, True)}
# btrfs's profiles (mkfs.btrfs -d, -m), each with the fewest devices btrfs takes for it (btrfs-progs' own table).
BTRFS_PROFILES = {"single": 1, "dup": 1, "raid0": 1, "raid1": 2, "raid1c3": 3, "raid1c4": 4, "raid10": 2,
                  "raid5": 2, "raid6": 3}
KINDS = ("md", "lvm", "btrfs")
_NOT_YET = {
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
    """One --array: 'md:raid5:chunk=64K:layout=left-symmetric:bitmap=none:metadata=1.2:size=64G',
    'lvm:striped:stripes=4',
    'btrfs:data=raid0:metadata=raid1'."""

    kind: str  # md, lvm, btrfs
    level: str  # md's level; LVM's segment type; btrfs's data profile
    chunk_bytes: int | None = None  # md's chunk; LVM's stripe size
    layout: str | None = None
    bitmap: str | None = None
    metadata: str | None = None  # md's metadata version; btrfs's metadata profile
    size_bytes: int | None = None  # of each member used (mdadm --size): a short-stroked array, or a quick one
    stripes: int | None = None  # LVM's data stripes (by default as many as the members hold)

    @property
    def label(self) -> str:
        """What runs are named by: 'md raid5 chunk 64 KiB layout left-symmetric', 'lvm striped stripes 2 stripesize
        64KiB', 'btrfs raid10', 'btrfs data raid0 metadata raid1'."""
        if self.kind == "lvm":
            return " ".join(["lvm", self.level, *([f"stripes {self.stripes}"] if self.stripes else []),
                             *([f"stripesize {format_size(self.chunk_bytes)}"] if self.chunk_bytes else [])])
        if self.kind == "btrfs":
            return (f"btrfs {self.level}" if self.level == self.metadata
                    else f"btrfs data {self.level} metadata {self.metadata}")
        return " ".join([self.kind, self.level,
                         *([f"chunk {format_size(self.chunk_bytes)}"] if self.chunk_bytes else []),
                         *([f"layout {self.layout}"] if self.layout else []),
                         *([f"bitmap {self.bitmap}"] if self.bitmap else []),
                         *([f"metadata {self.metadata}"] if self.metadata else []),
                         *([f"size {format_size(self.size_bytes)}"] if self.size_bytes else [])])

    @property
    def redundant(self) -> bool:
        return LVM_TYPES[self.level][2] if self.kind == "lvm" else MD_LEVELS[self.level][1]

    @property
    def on_a_device(self) -> bool:
        """An md or LVM array is a block device; a btrfs array is a file system over its members."""
        return self.kind != "btrfs"

    def refused_state(self, state: str) -> str | None:
        """Why this array cannot be brought to `state` (one line), or None."""
        if self.kind == "btrfs" and state != "clean":
            return (f"{self.label} is only built clean: btrfs has no initial sync to skip (assume-clean), and disklab "
                    "does not yet fail or rebuild a btrfs member (mount -o degraded, btrfs replace)")
        if self.kind == "lvm" and state in ("degraded", "rebuilding"):
            return (f"{self.label} is not run {state}: LVM fails a raid leg only when its device is gone, which "
                    "disklab cannot do to a drive it does not remove; give an md array for that state")
        if self.kind == "lvm" and state == "assume-clean" and self.level == "raid6":
            return f"{self.label}: lvcreate refuses --nosync for raid6 (its syndromes must be computed); give clean"
        if state in ("degraded", "rebuilding") and not self.redundant:
            return (f"{self.label} has no redundancy, so it cannot run with a member failed; give a redundant level "
                    "(raid1, raid4, raid5, raid6, raid10)")
        return None

    def lvm_stripes(self, count: int) -> int:
        """LVM's data stripes over `count` members: those given, or as many as the members hold (lvcreate's own
        default is 1 for striped and 2 for raid5, whatever the members)."""
        if self.stripes:
            return self.stripes
        return count // 2 if self.level == "raid10" else count - LVM_TYPES[self.level][1]

    def members_used(self, count: int) -> int:
        """How many of `count` members the array is built on: all, unless LVM's stripes ask for fewer."""
        if self.kind != "lvm" or self.level == "raid1":
            return count
        stripes = self.lvm_stripes(count)
        return stripes * 2 if self.level == "raid10" else stripes + LVM_TYPES[self.level][1]

    def check_members(self, count: int) -> None:
        """ValueError unless the level can be made of `count` members (and its layout fits them)."""
        if self.kind == "btrfs":
            fewest = max(BTRFS_PROFILES[self.level], BTRFS_PROFILES[self.metadata])
        elif self.kind == "lvm":
            least, extra, _ = LVM_TYPES[self.level]
            fewest = least * 2 if self.level == "raid10" else least + extra
            if self.stripes and self.members_used(count) > count:
                raise ValueError(f"{self.label} takes {self.members_used(count)} members; --members names {count}")
        else:
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
        raise ValueError(f"{text!r}: {_NOT_YET[kind]}; the kinds built are md (md:raid5), lvm (lvm:striped) and "
                         "btrfs (btrfs:raid10)")
    if kind not in KINDS:
        raise ValueError(f"{text!r}: the array kind is md (mdadm), lvm or btrfs, e.g. md:raid5:chunk=64K, "
                         "lvm:striped:stripes=4, btrfs:raid10")
    level, *settings = rest.split(":") if rest else [""]
    level = level.lower()
    if kind == "lvm":
        return _lvm(text, level, _values(text, settings, ("stripes", "stripesize")))
    if kind == "btrfs":
        return _btrfs(text, level, settings)
    if level.isdigit():
        level = f"raid{level}"
    if level not in MD_LEVELS:
        raise ValueError(f"{text!r}: md's level is one of {', '.join(MD_LEVELS)}")
    values = _values(text, settings, ("chunk", "layout", "bitmap", "metadata", "size"))
    return ArraySpec("md", level, _chunk(text, level, values.get("chunk")), _layout(text, level, values.get("layout")),
                     _choice(text, "bitmap", values.get("bitmap"), _BITMAPS),
                     _choice(text, "metadata", values.get("metadata"), _METADATA), _size(text, values.get("size")))


def _values(text: str, settings: list[str], keys: tuple[str, ...]) -> dict[str, str]:
    """KEY=VALUE settings of one kind, each key one of `keys` and given once."""
    kind = text.strip().partition(":")[0].lower()
    values: dict[str, str] = {}
    for setting in settings:
        key, equals, value = setting.partition("=")
        key = key.strip().lower()
        if not equals or not value.strip():
            raise ValueError(f"{text!r}: {setting!r} is not KEY=VALUE ({', '.join(keys[:-1])} or {keys[-1]})")
        if key in values:
            raise ValueError(f"{text!r}: {key} is given twice")
        values[key] = value.strip()
    unknown = sorted(set(values) - set(keys))
    if unknown:
        raise ValueError(f"{text!r}: {kind} arrays take {', '.join(keys[:-1])} and {keys[-1]}, not "
                         f"{', '.join(unknown)}")
    return values


def _lvm(text: str, segment_type: str, values: dict[str, str]) -> ArraySpec:
    """lvm:TYPE[:stripes=N][:stripesize=SIZE]."""
    if segment_type not in LVM_TYPES:
        raise ValueError(f"{text!r}: LVM's segment type is one of {', '.join(LVM_TYPES)}")
    if segment_type == "raid1" and values:
        raise ValueError(f"{text!r}: raid1 mirrors every member and has no stripes or stripe size")
    stripes = None
    if "stripes" in values:
        if not values["stripes"].isdigit() or int(values["stripes"]) < LVM_TYPES[segment_type][0]:
            raise ValueError(f"{text!r}: {segment_type}'s stripes is a whole number of at least "
                             f"{LVM_TYPES[segment_type][0]}, not {values['stripes']}")
        stripes = int(values["stripes"])
    size = None
    if "stripesize" in values:
        try:
            size = parse_size(values["stripesize"])
        except ValueError as exc:
            raise ValueError(f"{text!r}: stripesize {exc}") from None
        if size < 4096 or size & (size - 1):
            raise ValueError(f"{text!r}: LVM's stripe size is a power of two of at least 4 KiB (4K, 64K, 512K), "
                             f"not {values['stripesize']}")
    return ArraySpec("lvm", segment_type, size, stripes=stripes)


def _btrfs(text: str, profile: str, settings: list[str]) -> ArraySpec:
    """btrfs:PROFILE (data and metadata), btrfs:data=P:metadata=P, or btrfs:PROFILE:metadata=P."""
    if "=" in profile:
        settings, profile = [profile, *settings], ""
    values = _values(text, settings, ("data", "metadata"))
    if profile and "data" in values:
        raise ValueError(f"{text!r}: the data profile is given twice ({profile} and data={values['data']})")
    data = (values.get("data") or profile).lower()
    metadata = (values.get("metadata") or profile or data).lower()
    for what, found in (("data", data), ("metadata", metadata)):
        if found not in BTRFS_PROFILES:
            raise ValueError(f"{text!r}: btrfs's {what} profile is one of {', '.join(BTRFS_PROFILES)}"
                             + ("" if found else ", e.g. btrfs:raid10 or btrfs:data=raid0:metadata=raid1"))
    return ArraySpec("btrfs", data, metadata=metadata)


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
