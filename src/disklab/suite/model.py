"""Suites and the tests they expand to, as frozen values."""

import math
from dataclasses import asdict, dataclass

from disklab.suite.fio_options import parse_fio_lines
from disklab.suite.pgbench import PgbenchSettings
from disklab.suite.settings import Configurations, SaturationSettings, SteadyCriteria
from disklab.units import parse_size

# fio rw modes that never write; everything else counts as writing (allow-list).
READ_ONLY_RW_MODES = frozenset({"read", "randread"})
# fio's rw mode of each (direction, pattern). trimwrite is fio's trim of each block followed by a write of it; the trim
# directions come from imported fio output only (suite/params.py says why suites cannot set them).
FIO_RW_MODES = {
    ("read", "sequential"): "read", ("read", "random"): "randread",
    ("write", "sequential"): "write", ("write", "random"): "randwrite",
    ("mixed", "sequential"): "rw", ("mixed", "random"): "randrw",
    ("trim", "sequential"): "trim", ("trim", "random"): "randtrim",
    ("trimwrite", "sequential"): "trimwrite", ("trimwrite", "random"): "randtrimwrite",
}
# The fio directions (sections of its JSON) a test of each direction does I/O in.
IO_DIRECTIONS = {"read": ("read",), "write": ("write",), "mixed": ("read", "write"), "trim": ("trim",),
                 "trimwrite": ("trim", "write")}
# Bytes per pixel of an RGB frame as video files store it (10 bit: three channels packed in 32 bits, as DPX).
BYTES_PER_PIXEL = {8: 3, 10: 4, 12: 6, 16: 6}
# Frame files are written with direct I/O: their size is rounded up to this alignment.
FRAME_ALIGNMENT = 4096
# Figures a suite view can show per test (the report layer defines how each is computed and labelled).
METRICS = ("iops", "mb_per_s", "lat_mean_us", "clat_p99_us", "sync_p99_us", "frames_missed", "tps",
           "elapsed_s")
# How a suite's tests are scheduled: each once (fixed), in rounds until steady or until enough is written, or as a
# search for peak IOPS followed by latency at fractions of that peak (saturate); pgbench suites run no fio at all but
# PostgreSQL's pgbench against a private server on the target.
MODES = ("fixed", "steady", "write-saturation", "saturate", "pgbench")


@dataclass(frozen=True)
class TestSpec:
    """One fio test, every parameter resolved. Field names after `metric` are the suite parameters."""

    label: str
    group: str
    metric: str  # the figure this test is about in suite views, one of METRICS
    pattern: str
    direction: str
    rwmixread: int
    bs: int
    bssplit: str | None
    iodepth: int
    jobs: int
    region: str
    size: int | None  # None: the whole target (a device or an existing file)
    nrfiles: int
    filesize: int | None
    runtime: float
    time_based: bool
    ramp: float
    pause: float
    rate: int | None
    rate_iops: int | None
    sync: str
    log_interval: float | None
    frame_size: str | None
    bit_depth: int
    fps: int
    direct: bool
    engine: str
    fio: str | None = None  # fio's options handed to fio as written, one per line (suite/fio_options.py)
    offset: int = 0  # where the region starts; set when the plan is fitted to the target
    # A replay of a trace (trace/replay.py): the trace's identity (name and content hash), the speed (Nx or max) and
    # the iolog rewritten for the target that fio reads; None for every other test.
    trace: str | None = None
    speed: str | None = None
    iolog: str | None = None

    @property
    def fio_rw(self) -> str:
        return FIO_RW_MODES[self.direction, self.pattern]

    @property
    def writes(self) -> bool:
        return self.fio_rw not in READ_ONLY_RW_MODES

    @property
    def block_sizes(self) -> tuple[int, ...]:
        """Every block size the test issues: its bs, or each size of its bssplit."""
        if not self.bssplit:
            return (self.bs,)
        return tuple(parse_size(part.partition("/")[0]) for part in self.bssplit.split(":"))

    @property
    def fio_options(self) -> dict[str, str | None]:
        """The options handed to fio as written, by name."""
        return dict(parse_fio_lines(self.fio or ""))

    @property
    def file_set(self) -> bool:
        """Tests over many files (small files, video frames) need a directory of their own."""
        return self.nrfiles > 1 or self.filesize is not None or self.frame_size is not None

    @property
    def frame_bytes(self) -> int | None:
        if self.frame_size is None:
            return None
        width, height = (int(n) for n in self.frame_size.split("x"))
        raw = width * height * BYTES_PER_PIXEL[self.bit_depth]
        return math.ceil(raw / FRAME_ALIGNMENT) * FRAME_ALIGNMENT

    def params(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "label"}


@dataclass(frozen=True)
class Group:
    """A block of a suite file: fixed values and lists that expand as a grid."""

    name: str
    label: str | None
    metric: str
    repeat: int  # the group's tests run this many times in a row (passes), as separate tests
    values: tuple[tuple[str, object], ...]  # in file order; a tuple value is a grid axis


@dataclass(frozen=True)
class View:
    """How `show` lays out a suite's results: rows by one field, columns by others, cells of given metrics."""

    rows: str  # "group" or a parameter name
    columns: tuple[str, ...]  # parameter names; may be empty
    values: tuple[str, ...]  # metrics from METRICS, or "metric" for each test's own
    published_by: str | None = None  # the tool whose grid the view reproduces, e.g. "CrystalDiskMark"
    published_best_of: int | None = None  # that tool reports each cell as the best of this many passes


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    source: str  # "built-in" or the file path
    where: str  # how messages name it: the file path, or "built-in suite 'quick'"
    text: str  # the TOML as loaded, stored with every run
    defaults: tuple[tuple[str, object], ...]
    groups: tuple[Group, ...]
    view: View | None
    mode: str = "fixed"  # one of MODES
    rounds: "Rounds | None" = None  # the [steady] table of steady and write-saturation suites
    saturation: SaturationSettings | None = None  # the [saturate] table of saturate suites
    passes: int | None = None  # interleaved passes of every test without --repeat; None: the default
    configurations: Configurations | None = None  # [configurations]: run once per file system, cache state, OP level
    pgbench: PgbenchSettings | None = None  # the [pgbench] table of pgbench suites (which have no groups)
    notes: tuple[str, ...] = ()  # how it was read (a job file translated, SI sizes, defaults taken), shown with its plan


@dataclass(frozen=True)
class Rounds:
    """How a steady or write-saturation suite repeats its one workload test in rounds."""

    criteria: SteadyCriteria
    precondition: bool  # write the test region twice with 128 KiB sequential writes first
    purge: bool  # discard the whole device first (device targets with --destroy-data only)
    written_multiple: float | None  # write-saturation: stop once this many times the region is written
    time_limit: float | None  # write-saturation: stop after this many seconds of rounds
