"""A trace made ready for fio to replay on a target: what it holds (one streamed pass), the test that replays it, the
iolog rewritten for the target, and how faithfully fio replayed it.

The rewritten iolog names the target's test file or device as its only file (a trace of several files or devices is
replayed onto the one target, each record at its own offset) and is read by fio in chunks (read_iolog_chunked), so a
trace of many GB never sits in memory, ours or fio's. Offsets beyond the target are refused, or with `wrap` taken
modulo the target's size (which changes the trace's locality).
"""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from disklab.errors import UserError
from disklab.fio.parse import JobResult
from disklab.suite.model import Suite, TestSpec
from disklab.suite.params import PARAMS
from disklab.system.textfile import open_regular_file
from disklab.trace import REPLAY_SUITE
from disklab.trace.iolog import TraceRecord, read_meta, read_trace, write_trace
from disklab.units import format_size

IO_ACTIONS = ("read", "write", "trim")
# Wrapped offsets are aligned to this, so that direct I/O and the device's pages still line up.
WRAP_ALIGNMENT = 4096
# fio's queue depth for a trace whose metadata does not say how deep the device's queue got (an iolog from elsewhere).
DEFAULT_REPLAY_IODEPTH = 32
# A replay at a set speed that takes this much longer than the trace's own duration (scaled) is flagged.
SLOW_MARGIN_PERCENT = 10
_HASH_CHARS = 12
# fio before 3.36 reaps a timed replay's completions only once its queue is full, so at a queue deeper than 1 it counts
# each I/O's wait for the queue to fill as completion latency (tens of ms here at QD 32); fixed by axboe/fio#1600
# (merged July 2023, after fio 3.35).
TIMED_REPLAY_REAPS_FROM = (3, 36)


@dataclass(frozen=True)
class TraceFacts:
    """What a replay needs to know of a trace, from one pass over it."""

    path: str
    name: str
    digest: str  # sha256 of the iolog's bytes, first _HASH_CHARS hex digits
    ios: tuple[tuple[str, int], ...]  # (action, I/Os) of each of IO_ACTIONS present
    io_bytes: tuple[tuple[str, int], ...]
    footprint: int  # the highest byte any I/O touches, + 1
    duration_us: int  # time of the last record
    files: tuple[str, ...]
    max_length: int
    alignment: int  # the largest power of two (at most 4 KiB) that divides every offset and length
    queue_depth: int | None  # the deepest queue the capture saw; None: not known

    @property
    def identity(self) -> str:
        """What makes two replays the same workload: the trace's name and content."""
        return f"{self.name} sha256:{self.digest}"

    @property
    def total_ios(self) -> int:
        return sum(n for _, n in self.ios)


def scan_trace(path: Path) -> TraceFacts:
    """One streamed pass: counts, footprint, duration, files and alignment; the content hash from a second read."""
    ios: dict[str, int] = {}
    io_bytes: dict[str, int] = {}
    files: dict[str, None] = {}
    footprint = duration = max_length = bits = 0
    for record in read_trace(path):
        files[record.file] = None
        duration = max(duration, record.time_us)
        if record.action not in IO_ACTIONS:
            continue
        ios[record.action] = ios.get(record.action, 0) + 1
        io_bytes[record.action] = io_bytes.get(record.action, 0) + record.length
        footprint = max(footprint, record.offset + record.length)
        max_length = max(max_length, record.length)
        bits |= record.offset | record.length
    if not ios:
        raise UserError(f"{path} holds no read, write or trim: nothing to replay")
    meta = read_meta(path)
    alignment = min(bits & -bits, WRAP_ALIGNMENT) if bits else WRAP_ALIGNMENT
    return TraceFacts(
        path=str(path.absolute()), name=path.name, digest=_digest(path), ios=_ordered(ios), io_bytes=_ordered(io_bytes),
        footprint=footprint, duration_us=duration, files=tuple(files), max_length=max_length, alignment=alignment,
        queue_depth=max(meta.queue_depths) if meta.queue_depths else None,
    )


def _ordered(counts: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple((action, counts[action]) for action in IO_ACTIONS if action in counts)


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular_file(path, "trace") as handle:
        try:
            while chunk := handle.read(1024**2):
                digest.update(chunk)
        except OSError as exc:
            raise UserError(f"cannot read trace {path}: {exc.strerror or exc}") from None
    return digest.hexdigest()[:_HASH_CHARS]


def parse_speed(text: str) -> str:
    """'max', or a factor of the original rate written as Nx (1x, 2x, 0.5x); fio takes it in whole percent."""
    text = text.strip().lower()
    if text == "max":
        return text
    try:
        factor = float(text.removesuffix("x")) if text.endswith("x") else None
    except ValueError:
        factor = None
    if factor is None or not 0.01 <= factor <= 1000:
        raise UserError(f"--speed {text}: give max, or a factor of the trace's own rate from 0.01x to 1000x, e.g. 2x")
    return f"{factor:g}x"


def time_scale_percent(speed: str) -> int | None:
    """fio's replay_time_scale (a percentage of the original rate); None for 'max' (replay_no_stall)."""
    return None if speed == "max" else round(float(speed[:-1]) * 100)


def replay_iodepth(facts: TraceFacts) -> int:
    """Deep enough that fio's queue never holds back an I/O the capture had in flight."""
    return max(facts.queue_depth or DEFAULT_REPLAY_IODEPTH, 1)


def fit_to_fio(test: TestSpec, fio_version: tuple[int, ...]) -> tuple[TestSpec, str | None]:
    """A timed replay on a fio that would misreport its latencies at a deeper queue runs at queue depth 1."""
    if test.speed == "max" or test.iodepth == 1 or fio_version >= TIMED_REPLAY_REAPS_FROM:
        return test, None
    note = (f"queue depth {test.iodepth} cut to 1: fio {'.'.join(map(str, fio_version))} reaps a timed replay's "
            "completions only when its queue is full, which would count the wait for the queue as latency (fixed in "
            "fio 3.36); the trace's own concurrency is lost, so the replay may run slower (its fidelity says), and "
            "--speed max keeps the queue depth")
    return replace(test, iodepth=1), note


def check_fits(facts: TraceFacts, capacity: int | None, wrap: bool, logical_block_size: int, direct: bool) -> list[str]:
    """Refuse what fio would do wrong or fail at; returns notes on how the replay is adapted to the target.

    `capacity`: the device's or existing file's size; None for a test file disklab makes to the footprint's size."""
    notes = []
    if len(facts.files) > 1:
        notes.append(f"the trace holds {len(facts.files)} files or devices ({', '.join(facts.files[:3])}"
                     f"{', ...' if len(facts.files) > 3 else ''}): all are replayed onto the one target, each I/O at "
                     "its own offset, so their regions may overlap")
    if direct and facts.alignment < logical_block_size:
        raise UserError(f"{facts.name}: offsets or lengths are aligned to {facts.alignment} bytes, and direct I/O on "
                        f"this target needs {logical_block_size}-byte blocks: replay it onto another target")
    if capacity is None or facts.footprint <= capacity:
        return notes
    if not wrap:
        raise UserError(f"{facts.name} reaches {format_size(facts.footprint)} (its footprint) and the target holds "
                        f"{format_size(capacity)}: use a larger target, or --wrap to fold offsets into it")
    if facts.max_length > capacity - capacity % WRAP_ALIGNMENT:
        raise UserError(f"{facts.name} has an I/O of {format_size(facts.max_length)}, more than the target's "
                        f"{format_size(capacity)}: nothing can fold it in")
    notes.append(f"--wrap: offsets beyond the target's {format_size(capacity)} are taken modulo its size (aligned to "
                 f"{format_size(WRAP_ALIGNMENT)}); the footprint is {format_size(facts.footprint)}, so the replay's "
                 "locality differs from the trace's")
    return notes


def wrapped(record: TraceRecord, capacity: int) -> TraceRecord:
    """An I/O beyond `capacity` folded into it, on a WRAP_ALIGNMENT boundary, wholly inside the target."""
    if record.offset + record.length <= capacity:
        return record
    offset = record.offset % capacity // WRAP_ALIGNMENT * WRAP_ALIGNMENT
    if offset + record.length > capacity:
        offset = (capacity - record.length) // WRAP_ALIGNMENT * WRAP_ALIGNMENT
    return replace(record, offset=offset)


def rewrite_for_target(facts: TraceFacts, out: Path, test_path: str, capacity: int | None, wrap: bool) -> int:
    """The trace as an iolog v3 for this target, streamed: every record on `test_path`; returns the records."""
    if any(c.isspace() for c in test_path):
        raise UserError(f"fio's iolog cannot name a target with white space: {test_path!r}; use another path")

    def records() -> Iterator[TraceRecord]:
        for record in read_trace(Path(facts.path)):
            moved = replace(record, file=test_path)
            if record.action in IO_ACTIONS and capacity is not None and record.offset + record.length > capacity:
                if not wrap:  # the trace changed since it was checked
                    raise UserError(f"{facts.name}: an I/O at {record.offset} is beyond the target's {capacity} bytes")
                moved = wrapped(moved, capacity)
            yield moved

    try:
        return write_trace(out, records(), [test_path])
    except OSError as exc:
        raise UserError(f"cannot write the replay's iolog {out}: {exc.strerror or exc}") from None


def replay_direction(facts: TraceFacts) -> tuple[str, int]:
    """(direction, read percent) of the test: a trace with any write or trim is a writing test."""
    ios = dict(facts.ios)
    if set(ios) == {"read"}:
        return "read", 100
    if set(ios) <= {"write"}:
        return "write", 0
    if set(ios) == {"trim"}:
        return "trim", 0
    return "mixed", round(100 * ios.get("read", 0) / facts.total_ios)


def replay_test(facts: TraceFacts, speed: str, size: int) -> TestSpec:
    """The one test of a replay; `size` is the test file's or the region's bytes (the footprint, or the target)."""
    direction, read_percent = replay_direction(facts)
    factor = None if speed == "max" else float(speed[:-1])
    values = {name: param.default for name, param in PARAMS.items()}
    values.update(
        pattern="random", direction=direction, rwmixread=read_percent, bs=facts.max_length, bssplit=None,
        iodepth=replay_iodepth(facts), jobs=1, region="whole", size=size, nrfiles=1, filesize=None,
        # the trace's own duration, for the estimate only: fio's iolog sets when the replay ends
        runtime=facts.duration_us / 1e6 / factor if factor else 0.0, time_based=factor is not None, ramp=0.0,
        pause=0.0, rate=None, rate_iops=None, sync="none", log_interval=1.0, frame_size=None, direct=True,
    )
    return TestSpec(label=f"replay {facts.name} at {speed}", group=REPLAY_SUITE, metric="iops", trace=facts.identity,
                    speed=speed, iolog="", **values)


def replay_suite(facts: TraceFacts) -> Suite:
    """A replay is stored as a run of a suite of its own name; its text says which trace, for the record."""
    text = (f"# disklab replay of {facts.path}\nname = \"{REPLAY_SUITE}\"\n"
            f"description = \"replay of {facts.identity}\"\n")
    return Suite(name=REPLAY_SUITE, description=f"replay of {facts.identity}", source=facts.path,
                 where=f"replay of {facts.name}", text=text, defaults=(), groups=(), view=None)


def replay_fidelity(facts: TraceFacts, speed: str, job: JobResult) -> dict:
    """How faithfully fio replayed the trace: duration, mean rate and I/Os per direction, against the trace's own;
    `warnings` say what makes the replay's figures not the trace's workload."""
    replayed = {d.direction: d.total_ios for d in job.directions if d.direction in IO_ACTIONS}
    wanted = dict(facts.ios)
    original_s = facts.duration_us / 1e6
    achieved_s = max((d.runtime_ms for d in job.directions), default=0) / 1e3
    factor = None if speed == "max" else float(speed[:-1])
    expected_s = original_s / factor if factor else None
    total = sum(replayed.values())
    warnings = [f"{action}: {replayed.get(action, 0):,} I/Os replayed of {wanted.get(action, 0):,} in the trace"
                for action in IO_ACTIONS if replayed.get(action, 0) != wanted.get(action, 0)]
    counted = {d.direction: d.io_bytes for d in job.directions if d.direction in IO_ACTIONS}
    traced = dict(facts.io_bytes)
    warnings += [f"{action}: fio counted {counted.get(action, 0):,} bytes where the trace holds {n:,} in as many I/Os "
                 "(fio 3.33 miscounts a replay's bytes at a queue depth above 1, while the device gets the trace's): "
                 "this test's MB/s are understated" for action, n in traced.items()
                 if counted.get(action, 0) != n and replayed.get(action, 0) == wanted.get(action, 0)]
    slower = (achieved_s / expected_s - 1) * 100 if expected_s else None
    if slower is not None and slower > SLOW_MARGIN_PERCENT:
        warnings.append(f"the replay took {achieved_s:.2f} s where the trace at {speed} takes {expected_s:.2f} s "
                        f"({slower:.0f} % slower, more than {SLOW_MARGIN_PERCENT} %): the target (or fio) could not keep "
                        "the trace's pace, so I/Os were issued later than the trace's times")
    return {
        "trace": facts.identity, "speed": speed,
        "original_duration_s": original_s, "expected_duration_s": expected_s, "achieved_duration_s": achieved_s,
        "slower_percent": slower,
        "original_iops": facts.total_ios / original_s if original_s else None,
        "achieved_iops": total / achieved_s if achieved_s else None,
        "ios_in_trace": wanted, "ios_replayed": replayed, "bytes_in_trace": traced, "bytes_counted": counted,
        "warnings": warnings,
    }


def describe_fidelity(fidelity: dict) -> str:
    """One line of figures, then one per warning."""
    counts = ", ".join(f"{action} {fidelity['ios_replayed'].get(action, 0):,}/{n:,}"
                       for action, n in fidelity["ios_in_trace"].items())
    rate = (f"; mean rate {fidelity['achieved_iops']:,.0f} IOPS vs {fidelity['original_iops']:,.0f} in the trace"
            if fidelity["achieved_iops"] is not None and fidelity["original_iops"] is not None else "")
    expected = (f" ({fidelity['expected_duration_s']:.2f} s expected at {fidelity['speed']})"
                if fidelity["expected_duration_s"] is not None and fidelity["speed"] != "1x" else "")
    line = (f"replay fidelity: {fidelity['achieved_duration_s']:.2f} s vs {fidelity['original_duration_s']:.2f} s in "
            f"the trace{expected}{rate}; I/Os replayed/in trace: {counts}")
    return "\n".join([line, *(f"warning: {w}" for w in fidelity["warnings"])])
