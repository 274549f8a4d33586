"""What a trace holds, in one streaming pass: counters and histograms only, never a list of its records.

Sizes are counted exactly for the first MAX_EXACT_SIZES distinct sizes (a real workload has a handful) and in
power-of-two buckets always; inter-arrival times go into log-spaced buckets (percentiles within one bucket's width);
the footprint's distinct MiB come from a bitmap of 1 MiB chunks, capped so memory stays bounded.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass

from disklab.trace.iolog import ACTIONS, TraceMeta, TraceRecord

DATA_ACTIONS = ("read", "write")
MAX_EXACT_SIZES = 64
SEQUENTIAL_SHARE = 0.5  # at or above it the trace is called sequential
GAP_BUCKETS_PER_DECADE = 10  # inter-arrival percentiles are within 10**(1/10) - 1 = 26 % of the truth
CHUNK_BYTES = 1024**2
MAX_BITMAP_BYTES = 16 * 1024**2  # 128 Mi chunks: distinct MiB counted up to 128 TiB of offsets
MAX_RATE_BUCKETS = 4096  # rate-over-time buckets kept while reading; their width doubles when more are needed
SHOWN_RATE_ROWS = 20
# Bump when the JSON document changes shape. 1: first version. 2: io_span_s and first_io_s added; mean_iops over the
# I/O span (first to last I/O), no longer over the capture window (duration_s, unchanged).
SUMMARY_FORMAT_VERSION = 2


@dataclass(frozen=True)
class Percentiles:
    mean: float
    p50: float
    p90: float
    p99: float
    max: float


@dataclass(frozen=True)
class RateRow:
    start_s: float
    seconds: float
    ios: int
    bytes: int

    @property
    def iops(self) -> float:
        return self.ios / self.seconds

    @property
    def mb_per_s(self) -> float:
        return self.bytes / self.seconds / 1e6


@dataclass(frozen=True)
class TraceSummary:
    """A trace's shape. Shares are fractions (0..1) of reads + writes; None: nothing to take a share of."""

    meta: TraceMeta
    actions: dict[str, tuple[int, int]]  # action -> (I/Os, bytes), every action of ACTIONS
    read_share_ios: float | None
    read_share_bytes: float | None
    sizes: tuple[tuple[int, int], ...]  # (bytes, I/Os), most frequent first, exact
    sizes_other: int  # I/Os of sizes beyond MAX_EXACT_SIZES distinct ones (only in size_buckets)
    size_buckets: tuple[tuple[int, int], ...]  # (power-of-two upper bound in bytes, I/Os), smallest first
    sequential_share: dict[str, float | None]  # read, write, all
    gaps_us: Percentiles | None  # inter-arrival times of reads and writes
    queue_depth: Percentiles | None  # from meta.queue_depths; None: unknown
    footprint_bytes: int  # highest offset + length touched, of any file
    distinct_mib: int | None  # 1 MiB chunks touched; None: beyond the bitmap's cap
    duration_s: float  # the capture window: tracing on to off (or to the last I/O, if later)
    rate: tuple[RateRow, ...]
    out_of_order: int  # records whose time went backwards (counted with a gap of 0)
    first_io_s: float = 0.0  # when the first read or write was issued, from the start of the window
    io_span_s: float = 0.0  # first to last read or write: how long the workload ran, however long tracing went on

    @property
    def data_ios(self) -> int:
        return sum(self.actions[a][0] for a in DATA_ACTIONS)

    @property
    def data_bytes(self) -> int:
        return sum(self.actions[a][1] for a in DATA_ACTIONS)

    @property
    def mean_iops(self) -> float | None:
        """Over the I/O span: a capture window twice as long as the workload would halve it."""
        return self.data_ios / self.io_span_s if self.io_span_s > 0 else None

    @property
    def verdict(self) -> str | None:
        share = self.sequential_share["all"]
        return None if share is None else "sequential" if share >= SEQUENTIAL_SHARE else "random"


class _Accumulator:
    def __init__(self) -> None:
        self.actions = {action: [0, 0] for action in ACTIONS}
        self.sizes: dict[int, int] = {}
        self.sizes_other = 0
        self.buckets: dict[int, int] = {}
        self.ends: dict[tuple[str, str], int] = {}  # (file, action) -> where its last I/O ended
        self.sequential = {action: 0 for action in DATA_ACTIONS}
        self.gaps: dict[int, int] = {}  # log bucket (-1: a gap of 0) -> count
        self.gap_sum = 0
        self.gap_max = 0
        self.last_time: int | None = None
        self.first_time: int | None = None
        self.out_of_order = 0
        self.footprint = 0
        self.bitmaps: dict[str, bytearray] = {}
        self.bitmap_overflow = False
        self.rate: dict[int, list[int]] = {}
        self.rate_width_us = 1_000_000

    def add(self, record: TraceRecord) -> None:
        counters = self.actions[record.action]
        counters[0] += 1
        counters[1] += record.length
        if record.action not in ("read", "write", "trim"):
            return
        end = record.offset + record.length
        self.footprint = max(self.footprint, end)
        self._touch(record.file, record.offset, end)
        if record.action == "trim":
            return
        self._size(record.length)
        key = (record.file, record.action)
        if self.ends.get(key) == record.offset:
            self.sequential[record.action] += 1
        self.ends[key] = end
        self._gap(record.time_us)
        self._rate(record.time_us, record.length)

    def _size(self, length: int) -> None:
        if length in self.sizes or len(self.sizes) < MAX_EXACT_SIZES:
            self.sizes[length] = self.sizes.get(length, 0) + 1
        else:
            self.sizes_other += 1
        bound = 1 << max(length - 1, 0).bit_length()
        self.buckets[bound] = self.buckets.get(bound, 0) + 1

    def _gap(self, time_us: int) -> None:
        self.first_time = time_us if self.first_time is None else min(self.first_time, time_us)
        if self.last_time is not None:
            gap = time_us - self.last_time
            if gap < 0:
                self.out_of_order += 1
                gap = 0
            bucket = -1 if gap == 0 else int(math.log10(gap) * GAP_BUCKETS_PER_DECADE)
            self.gaps[bucket] = self.gaps.get(bucket, 0) + 1
            self.gap_sum += gap
            self.gap_max = max(self.gap_max, gap)
        self.last_time = time_us if self.last_time is None else max(self.last_time, time_us)

    def _rate(self, time_us: int, length: int) -> None:
        row = self.rate.setdefault(time_us // self.rate_width_us, [0, 0])
        row[0] += 1
        row[1] += length
        while len(self.rate) > MAX_RATE_BUCKETS:  # fold pairs of buckets: memory stays bounded on long traces
            self.rate_width_us *= 2
            folded: dict[int, list[int]] = {}
            for index, (ios, size) in self.rate.items():
                into = folded.setdefault(index // 2, [0, 0])
                into[0] += ios
                into[1] += size
            self.rate = folded

    def _touch(self, file: str, start: int, end: int) -> None:
        if self.bitmap_overflow or end <= start:
            return
        first, last = start // CHUNK_BYTES, (end - 1) // CHUNK_BYTES
        bitmap = self.bitmaps.setdefault(file, bytearray())
        needed = last // 8 + 1
        if needed > len(bitmap):
            if sum(map(len, self.bitmaps.values())) - len(bitmap) + needed > MAX_BITMAP_BYTES:
                self.bitmap_overflow, self.bitmaps = True, {}
                return
            bitmap.extend(bytes(needed - len(bitmap)))
        _set_bits(bitmap, first, last)


def _set_bits(bitmap: bytearray, first: int, last: int) -> None:
    """Bits first..last set, whole bytes at once: a record of many GiB costs no loop over its chunks."""
    low, high = first >> 3, last >> 3
    if low == high:
        bitmap[low] |= ((1 << (last - first + 1)) - 1) << (first & 7)
        return
    bitmap[low] |= (0xFF << (first & 7)) & 0xFF
    bitmap[low + 1:high] = b"\xff" * (high - low - 1)
    bitmap[high] |= (1 << ((last & 7) + 1)) - 1


def summarize(records: Iterable[TraceRecord], meta: TraceMeta) -> TraceSummary:
    """The summary of a stream of records (read_trace's), in one pass."""
    acc = _Accumulator()
    for record in records:
        acc.add(record)
    actions = {action: (ios, size) for action, (ios, size) in acc.actions.items()}
    last_us = acc.last_time or 0
    duration_s = max(last_us / 1e6, meta.duration_s or 0.0)
    (reads, read_bytes), (writes, write_bytes) = actions["read"], actions["write"]
    return TraceSummary(
        meta=meta, actions=actions,
        read_share_ios=_share(reads, reads + writes), read_share_bytes=_share(read_bytes, read_bytes + write_bytes),
        sizes=tuple(sorted(acc.sizes.items(), key=lambda item: (-item[1], item[0]))), sizes_other=acc.sizes_other,
        size_buckets=tuple(sorted(acc.buckets.items())),
        sequential_share={"read": _share(acc.sequential["read"], reads), "write": _share(acc.sequential["write"], writes),
                          "all": _share(sum(acc.sequential.values()), reads + writes)},
        gaps_us=_gap_percentiles(acc), queue_depth=queue_depth_percentiles(meta.queue_depths),
        footprint_bytes=acc.footprint,
        distinct_mib=None if acc.bitmap_overflow else sum(int.from_bytes(m).bit_count() for m in acc.bitmaps.values()),
        duration_s=duration_s, rate=_rate_rows(acc, last_us, duration_s), out_of_order=acc.out_of_order,
        first_io_s=(acc.first_time or 0) / 1e6, io_span_s=(last_us - (acc.first_time or 0)) / 1e6,
    )


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _gap_percentiles(acc: _Accumulator) -> Percentiles | None:
    count = sum(acc.gaps.values())
    if not count:
        return None

    def value(bucket: int) -> float:  # the bucket's geometric middle, never beyond the largest gap seen
        return 0.0 if bucket < 0 else min(10 ** ((bucket + 0.5) / GAP_BUCKETS_PER_DECADE), acc.gap_max)

    p50, p90, p99 = (value(b) for b in _ranks(acc.gaps, (0.5, 0.9, 0.99)))
    return Percentiles(mean=acc.gap_sum / count, p50=p50, p90=p90, p99=p99, max=float(acc.gap_max))


def queue_depth_percentiles(depths: dict[int, int]) -> Percentiles | None:
    """Achieved queue depth from a capture's {depth: I/Os issued at it}; None when the trace has none."""
    count = sum(depths.values())
    if not count:
        return None
    p50, p90, p99 = (float(d) for d in _ranks(depths, (0.5, 0.9, 0.99)))
    return Percentiles(mean=sum(d * n for d, n in depths.items()) / count, p50=p50, p90=p90, p99=p99,
                       max=float(max(d for d, n in depths.items() if n)))


def _ranks(histogram: dict[int, int], quantiles: tuple[float, ...]) -> list[int]:
    """The key holding each quantile of a histogram (nearest rank)."""
    total, found = sum(histogram.values()), []
    for quantile in quantiles:
        rank, seen = max(1, math.ceil(quantile * total)), 0
        for key in sorted(histogram):
            seen += histogram[key]
            if seen >= rank:
                found.append(key)
                break
    return found


def _rate_rows(acc: _Accumulator, last_us: int, duration_s: float) -> tuple[RateRow, ...]:
    """At most SHOWN_RATE_ROWS rows of whole seconds (a power of two of them); a last row shorter than half a row
    (the trace's final instant) joins the row before it, so it never shows a burst that is only a short interval."""
    if not acc.rate:
        return ()
    width = acc.rate_width_us
    buckets = last_us // width + 1
    while buckets > SHOWN_RATE_ROWS:
        width, buckets = width * 2, (buckets + 1) // 2
    factor = width // acc.rate_width_us
    rows = [[i * width / 1e6, width / 1e6, 0, 0] for i in range(buckets)]
    for index, (ios, size) in acc.rate.items():
        rows[index // factor][2] += ios
        rows[index // factor][3] += size
    rows[-1][1] = max(duration_s - rows[-1][0], 1e-6)
    if len(rows) > 1 and rows[-1][1] < width / 2e6:
        start, seconds, ios, size = rows.pop()
        rows[-1] = [rows[-1][0], rows[-1][1] + seconds, rows[-1][2] + ios, rows[-1][3] + size]
    return tuple(RateRow(start_s=start, seconds=seconds, ios=ios, bytes=size) for start, seconds, ios, size in rows)


def summary_document(summary: TraceSummary) -> dict:
    """The versioned JSON form (`trace show --format json`)."""
    from dataclasses import asdict

    meta = asdict(summary.meta)
    meta["queue_depths"] = {str(k): v for k, v in sorted(summary.meta.queue_depths.items())}
    return {
        "format": "disklab-trace-summary", "format_version": SUMMARY_FORMAT_VERSION, "meta": meta,
        "actions": {a: {"ios": ios, "bytes": size} for a, (ios, size) in summary.actions.items()},
        "read_share_ios": summary.read_share_ios, "read_share_bytes": summary.read_share_bytes,
        "sizes": [{"bytes": size, "ios": ios} for size, ios in summary.sizes], "sizes_other_ios": summary.sizes_other,
        "size_buckets": [{"up_to_bytes": bound, "ios": ios} for bound, ios in summary.size_buckets],
        "sequential_share": summary.sequential_share, "verdict": summary.verdict,
        "interarrival_us": asdict(summary.gaps_us) if summary.gaps_us else None,
        "queue_depth": asdict(summary.queue_depth) if summary.queue_depth else None,
        "footprint_bytes": summary.footprint_bytes, "distinct_mib": summary.distinct_mib,
        "duration_s": summary.duration_s, "first_io_s": summary.first_io_s, "io_span_s": summary.io_span_s,
        "mean_iops": summary.mean_iops,
        "rate": [{"start_s": r.start_s, "seconds": r.seconds, "ios": r.ios, "bytes": r.bytes, "iops": r.iops,
                  "mb_per_s": r.mb_per_s} for r in summary.rate],
        "out_of_order": summary.out_of_order,
    }
