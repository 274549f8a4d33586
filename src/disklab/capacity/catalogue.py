"""The drive catalogue: drive types as TOML files, shipped ones (drives/) and the user's own.

Every figure is a spec-sheet value or a value typical for the class, and each file says which in its
[source] table. User files live in $DISKLAB_HOME/drives/ (or ~/.local/share/disklab/drives/) or are named
with --drives; `disklab capacity calibrate` writes measured drives there.
"""

from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path

from disklab.errors import UserError
from disklab.store.db import default_store_path
from disklab.system.textfile import parse_toml, read_text_file, toml_string
from disklab.units import brief, parse_size

KINDS = ("hdd", "ssd", "measured")  # measured: fitted by calibrate, modelled like an SSD
CONDITIONS = ("steady", "fresh")  # an SSD's state: written full and worn in, or empty (fresh out of the box)


def _line_rate(gigabaud: float, data_bits: int, coded_bits: int, lanes: int = 1) -> float:
    """Bytes/s a link carries after its line coding; framing and protocol overhead not taken off."""
    return lanes * gigabaud * 1e9 * data_bits / coded_bits / 8


# The most each drive interface carries, bytes/s: its line rate after coding, a ceiling no rating may pass. Frame and
# packet overhead are not taken off: drives are rated and measured above any payload estimate (Samsung 870 EVO:
# rated 560 MB/s on SATA 6G, KitGuru measured 561; 990 PRO: rated 7,450 MB/s on PCIe 4.0 x4).
INTERFACE_BYTES_PER_S = {
    "sata-6g": _line_rate(6, 8, 10),  # 600 MB/s
    "sas-12g": _line_rate(12, 8, 10),  # 1,200 MB/s
    "sas-24g": _line_rate(22.5, 128, 150),  # 2,400 MB/s (SAS-4: 22.5 Gbaud, 128b/150b)
    "nvme-pcie3-x4": _line_rate(8, 128, 130, lanes=4),  # 3,938 MB/s
    "nvme-pcie4-x4": _line_rate(16, 128, 130, lanes=4),  # 7,877 MB/s
    "nvme-pcie5-x4": _line_rate(32, 128, 130, lanes=4),  # 15,754 MB/s
}
SMALL_BLOCK = 4096  # the block size of spec sheets' random IOPS ratings


@dataclass(frozen=True)
class Drive:
    """One drive type. Rates are bytes/s, times seconds; None: the class has no such figure (an HDD's IOPS)."""

    name: str
    description: str
    kind: str
    interface: str
    capacity_bytes: int
    seq_read_bytes_per_s: float  # sustained; for an HDD the outer zone's, the spec sheets' maximum
    seq_write_bytes_per_s: float
    sources: tuple[tuple[str, str], ...]  # (topic, where its figures come from)
    # None: unknown (no source gives it), never 0; costs that depend on it stay unknown.
    power_idle_w: float | None = None
    power_active_w: float | None = None
    price_eur: float | None = None
    # HDD: the innermost zone's sustained rate (zoned bit recording puts fewer sectors on the shorter tracks).
    seq_inner_bytes_per_s: float | None = None
    rpm: int | None = None
    seek_read_s: float | None = None
    seek_write_s: float | None = None
    seek_track_s: float | None = None  # single-track seek: what a seek costs when the data is close together
    rand_read_iops: float | None = None
    rand_write_iops: float | None = None
    # Large-block random transfer rates (steady state for writes); None: not given (the model says what it uses).
    rand_read_bytes_per_s: float | None = None
    rand_write_bytes_per_s: float | None = None
    latency_read_s: float | None = None
    latency_write_s: float | None = None
    endurance_tbw: float | None = None
    dwpd: float | None = None
    # The drive's model as the kernel reports it (sysfs device/model, e.g. "Samsung SSD 990 PRO 2TB"): a run on such
    # a drive checks its results against this file's ratings without --spec. None: a class, not one model.
    model: str | None = None
    # The drive's own volatile write cache as it ships: on for almost every drive; drives sold for hardware RAID
    # may ship with it off. A layout's write_cache= overrides it.
    write_cache: bool = True
    # The state the random-write rating was measured in: "steady" (a full drive after sustained writes, what data
    # centre sheets rate and reviews call the worst case) or "fresh" (an empty drive, writes landing in an SLC
    # cache: what consumer sheets rate).
    rand_write_condition: str = "steady"
    origin: str = "catalogue"  # the file it came from

    @property
    def interface_bytes_per_s(self) -> float:
        return INTERFACE_BYTES_PER_S[self.interface]


def shipped_drive_files() -> list[Path]:
    folder = resources.files("disklab.capacity") / "drives"
    return sorted(Path(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".toml"))


def user_drive_folder() -> Path:
    """Beside the default results store: $DISKLAB_HOME/drives, else in the XDG data folder."""
    return default_store_path().parent / "drives"


def load_catalogue(extra_files: tuple[Path, ...] = ()) -> dict[str, Drive]:
    """Shipped drives, then the user's folder, then --drives files; a later file of the same name wins."""
    folder = user_drive_folder()
    user_files = sorted(folder.glob("*.toml")) if folder.is_dir() else []
    drives: dict[str, Drive] = {}
    for path in [*shipped_drive_files(), *user_files, *extra_files]:
        drive = load_drive(path)
        drives[drive.name] = drive
    return drives


def drive_of_model(catalogue: dict[str, Drive], model: str) -> Drive | None:
    """The catalogue's drive file for this model (case and spacing aside), if one names it, the last loaded first
    (the user's file before a shipped one); measured drives (calibrate's) are figures of a run, not ratings, and
    match nothing."""
    wanted = " ".join(model.split()).casefold()
    return next((drive for drive in reversed(catalogue.values()) if drive.model and drive.kind != "measured"
                 and " ".join(drive.model.split()).casefold() == wanted), None)


def find_drive(catalogue: dict[str, Drive], name: str) -> Drive:
    try:
        return catalogue[name]
    except KeyError:
        raise UserError(f"unknown drive {brief(name)}; known drives: {', '.join(sorted(catalogue))} "
                        "(see 'disklab capacity drives')") from None


_REQUIRED = ("name", "description", "kind", "interface", "capacity", "seq_read_mbps", "seq_write_mbps")
_OPTIONAL_NUMBERS = {  # file key -> (field, factor into the field's unit)
    "power_idle_w": ("power_idle_w", 1), "power_active_w": ("power_active_w", 1), "price_eur": ("price_eur", 1),
    "seq_inner_mbps": ("seq_inner_bytes_per_s", 1e6),
    "rpm": ("rpm", 1), "seek_read_ms": ("seek_read_s", 1e-3), "seek_write_ms": ("seek_write_s", 1e-3),
    "seek_track_ms": ("seek_track_s", 1e-3),
    "rand_read_iops": ("rand_read_iops", 1), "rand_write_iops": ("rand_write_iops", 1),
    "rand_read_mbps": ("rand_read_bytes_per_s", 1e6), "rand_write_mbps": ("rand_write_bytes_per_s", 1e6),
    "latency_read_us": ("latency_read_s", 1e-6), "latency_write_us": ("latency_write_s", 1e-6),
    "endurance_tbw": ("endurance_tbw", 1), "dwpd": ("dwpd", 1),
}
# Any figure of a drive file other than 0, in the file's units (MB/s, IOPS, ms, W, EUR ...), lies between these:
# beyond every drive either way (a smaller one is a mistaken unit), and far enough from a float's limits that the
# model's products and reciprocals of it (times drives, years, bytes) stay finite.
MIN_FIGURE, MAX_FIGURE = 1e-6, 1e12
# Unknown is a missing key, never 0: a 0 here would price an array at nothing.
_ABOVE_ZERO = ("power_idle_w", "power_active_w", "price_eur")
_RATE_KEYS = ("seq_read_mbps", "seq_write_mbps", "seq_inner_mbps", "rand_read_mbps", "rand_write_mbps")
# Figures the model divides by: no drive has them at 0.
_POSITIVE = (*_RATE_KEYS, "rand_read_iops", "rand_write_iops", "rpm")


def faster_than_interface(what: str, bytes_per_s: float, interface: str) -> str | None:
    """The problem with a rate no drive on this interface can deliver, or None: a cache, not the drive, answered."""
    limit = INTERFACE_BYTES_PER_S[interface]
    if bytes_per_s <= limit:
        return None
    return f"{what} {bytes_per_s / 1e6:,.0f} MB/s is faster than {interface} allows ({limit / 1e6:,.0f} MB/s)"


def load_drive(path: Path) -> Drive:
    """One drive file, checked: every problem is one line naming the file and the key."""
    text = read_text_file(path, "drive file")  # a FIFO, a device or bytes other than UTF-8: refused unread
    return drive_from_dict(parse_toml(text, f"drive file {path}"), str(path))


def drive_from_dict(data: dict, origin: str) -> Drive:
    def fail(message: str):
        raise UserError(f"drive file {origin}: {message}")

    missing = [key for key in _REQUIRED if key not in data]
    if missing:
        fail(f"missing {', '.join(missing)}")
    known = set(_REQUIRED) | set(_OPTIONAL_NUMBERS) | {"source", "model", "write_cache", "rand_write_condition"}
    unknown = sorted(set(data) - known)
    if unknown:
        fail(f"unknown key {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    for key in ("name", "description", "model"):
        if key in data and not isinstance(data[key], str):
            fail(f"{key} must be a string, not {brief(data[key])}")
    if not isinstance(data.get("write_cache", True), bool):
        fail(f"write_cache must be true or false, not {brief(data['write_cache'])}")
    if data.get("rand_write_condition", "steady") not in CONDITIONS:
        fail(f"rand_write_condition must be one of {', '.join(CONDITIONS)}, not {brief(data['rand_write_condition'])}")
    if "model" in data and not data["model"].strip():
        fail("model must name the drive as the kernel reports it, e.g. \"Samsung SSD 990 PRO 2TB\"")
    if not data["name"] or any(c.isspace() for c in data["name"]):
        fail(f"name must be one word, as layouts name the drive ('12 x NAME raid6'), not {brief(data['name'])}")
    if not isinstance(data["kind"], str) or data["kind"] not in KINDS:
        fail(f"kind must be one of {', '.join(KINDS)}, not {brief(data['kind'])}")
    if not isinstance(data["interface"], str) or data["interface"] not in INTERFACE_BYTES_PER_S:
        fail(f"interface must be one of {', '.join(INTERFACE_BYTES_PER_S)}, not {brief(data['interface'])}")
    numbers = {}
    for key in ("seq_read_mbps", "seq_write_mbps", *_OPTIONAL_NUMBERS):
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    value == 0 or MIN_FIGURE <= value <= MAX_FIGURE):
                zero = "" if key in _ABOVE_ZERO or key in _POSITIVE else "0 or "
                fail(f"{key} must be {zero}a finite number from {MIN_FIGURE:g} to {MAX_FIGURE:g}, not {brief(value)}")
            if key in _ABOVE_ZERO and value == 0:
                fail(f"{key} = 0: leave the key out when the figure is unknown")
            if key in _POSITIVE and value == 0:
                fail(f"{key} must be above 0")
            numbers[key] = value
    try:
        capacity = parse_size(data["capacity"])
    except (ValueError, TypeError) as exc:
        fail(f"capacity: {exc}")
    if capacity <= 0:
        fail(f"capacity must be above 0, not {data['capacity']!r}")
    if data["kind"] == "hdd" and not all(k in data for k in ("rpm", "seek_read_ms", "seek_write_ms", "seek_track_ms")):
        fail("an hdd needs rpm, seek_read_ms, seek_write_ms and seek_track_ms")
    if data["kind"] != "hdd" and not all(k in data for k in ("rand_read_iops", "rand_write_iops")):
        fail(f"an {data['kind']} drive needs rand_read_iops and rand_write_iops")
    problem = _physics_problem(numbers, data["kind"], data["interface"])
    if problem:
        fail(problem)
    source = data.get("source", {})
    if not isinstance(source, dict) or not source:
        fail("needs a [source] table saying where its figures come from")
    optional = {field: numbers[key] * factor for key, (field, factor) in _OPTIONAL_NUMBERS.items() if key in numbers}
    return Drive(
        name=data["name"], description=data["description"], kind=data["kind"],
        interface=data["interface"], capacity_bytes=capacity,
        seq_read_bytes_per_s=numbers["seq_read_mbps"] * 1e6, seq_write_bytes_per_s=numbers["seq_write_mbps"] * 1e6,
        sources=tuple((str(k), str(v)) for k, v in source.items()), model=data.get("model"),
        write_cache=data.get("write_cache", True), rand_write_condition=data.get("rand_write_condition", "steady"),
        origin=origin,
        **optional,
    )


def _physics_problem(numbers: dict, kind: str, interface: str) -> str | None:
    """The first figure (in file units) that no drive of this kind on this interface can have, or None."""
    for key in _RATE_KEYS:
        if key in numbers:
            problem = faster_than_interface(key, numbers[key] * 1e6, interface)
            if problem:
                return problem
    for key in ("rand_read_iops", "rand_write_iops"):
        if key in numbers:
            what = f"{key} {numbers[key]:,.0f} x 4 KiB ="
            problem = faster_than_interface(what, numbers[key] * SMALL_BLOCK, interface)
            if problem:
                return problem
    if "seq_inner_mbps" in numbers:
        if kind != "hdd":
            return "seq_inner_mbps is the innermost zone of a hard disk: only for kind \"hdd\""
        for outer in ("seq_read_mbps", "seq_write_mbps"):
            if numbers["seq_inner_mbps"] > numbers[outer]:
                return (f"seq_inner_mbps {numbers['seq_inner_mbps']:,} MB/s is faster than {outer} "
                        f"{numbers[outer]:,} MB/s: the inner zone is the slowest part of a disk")
    idle, active = numbers.get("power_idle_w"), numbers.get("power_active_w")
    if idle is not None and active is not None and idle > active:
        return f"power_idle_w {idle:g} W is above power_active_w {active:g} W"
    return None


def drive_to_toml(drive: Drive) -> str:
    """A drive as a file load_drive reads back into the same Drive (but its origin)."""
    lines = [f"name = {toml_string(drive.name)}", f"description = {toml_string(drive.description)}",
             f"kind = {toml_string(drive.kind)}", f"interface = {toml_string(drive.interface)}",
             f"capacity = {toml_string(str(drive.capacity_bytes))}",
             f"seq_read_mbps = {drive.seq_read_bytes_per_s / 1e6:g}",
             f"seq_write_mbps = {drive.seq_write_bytes_per_s / 1e6:g}"]
    if drive.model is not None:
        lines.append(f"model = {toml_string(drive.model)}")
    if not drive.write_cache:
        lines.append("write_cache = false")
    if drive.rand_write_condition != "steady":
        lines.append(f"rand_write_condition = {toml_string(drive.rand_write_condition)}")
    by_field = {field: (key, factor) for key, (field, factor) in _OPTIONAL_NUMBERS.items()}
    for f in fields(Drive):
        value = getattr(drive, f.name)
        if f.name in by_field and value is not None:
            key, factor = by_field[f.name]
            lines.append(f"{key} = {value / factor:.6g}")
    lines += ["", "[source]"] + [f"{topic} = {toml_string(text)}" for topic, text in drive.sources]
    return "\n".join(lines) + "\n"

