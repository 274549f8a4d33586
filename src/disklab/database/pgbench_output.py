"""pgbench's summary, progress lines and per-transaction log -> typed results. Pure: text in, values out.

Summary (stdout of PostgreSQL 15's pgbench):
    number of transactions actually processed: 3965          (with -t: 100/100)
    number of failed transactions: 0 (0.000%)
    latency average = 3.014 ms
    latency stddev = 3.860 ms                                (only with -P, --rate or --latency-limit)
    initial connection time = 11.030 ms
    tps = 1322.213622 (without initial connection time)
pgbench 14 and later no longer print TPS "including connections establishing"; it is derived here as the
transactions over the whole elapsed time, connection set-up included (see `tps_including_connections`).
Progress (stderr, -P 1): "progress: 1.0 s, 1128.8 tps, lat 3.505 ms stddev 6.387, 0 failed".
Log (-l), one line per transaction: "client_id transaction_no time script_no time_epoch time_us", where time is
the latency in microseconds, or "failed"/"skipped" for transactions that did not complete.
"""

import math
import re
from dataclasses import dataclass

from disklab.errors import DatabaseError

# Latency percentiles disklab stores (the same names as fio's, disklab.fio.parse.PERCENTILES), and the smallest
# sample each is reported from: a p99.99 of 500 transactions would be one transaction's latency dressed up.
PERCENTILE_MIN_SAMPLES = {"p50": 1, "p90": 10, "p99": 100, "p99_9": 1000, "p99_99": 10000}
_PERCENT = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99_9": 99.9, "p99_99": 99.99}

_PROCESSED = re.compile(r"^number of transactions actually processed: (\d+)", re.MULTILINE)
_FAILED = re.compile(r"^number of failed transactions: (\d+)", re.MULTILINE)
_LATENCY = re.compile(r"^latency average = ([\d.]+) ms", re.MULTILINE)
_STDDEV = re.compile(r"^latency stddev = ([\d.]+) ms", re.MULTILINE)
_CONNECTION = re.compile(r"^initial connection time = ([\d.]+) ms", re.MULTILINE)
_TPS = re.compile(r"^tps = ([\d.]+) \(without initial connection time\)", re.MULTILINE)
_CLIENTS = re.compile(r"^number of clients: (\d+)", re.MULTILINE)
_THREADS = re.compile(r"^number of threads: (\d+)", re.MULTILINE)
_PROGRESS = re.compile(
    r"^progress: (?P<t>[\d.]+) s, (?P<tps>[\d.]+) tps, lat (?P<lat>[\d.]+) ms stddev (?P<stddev>[\d.]+|NaN)"
    r"(?:, (?P<failed>\d+) failed)?", re.MULTILINE,
)


@dataclass(frozen=True)
class PgbenchSummary:
    clients: int
    threads: int
    processed: int  # transactions that completed
    failed: int
    latency_mean_ms: float
    latency_stddev_ms: float | None  # printed only with progress reports
    connection_ms: float  # average time for the clients to connect, before measuring
    tps: float  # excluding connection set-up

    @property
    def tps_including_connections(self) -> float:
        """Transactions over the elapsed time with connection set-up: the measured duration plus the connection
        time (what pgbench 13 and older printed as 'including connections establishing')."""
        if self.tps == 0:
            return 0.0
        return self.processed / (self.processed / self.tps + self.connection_ms / 1000)


@dataclass(frozen=True)
class ProgressPoint:
    t_s: float  # end of the interval, from the start of the step
    tps: float
    latency_mean_ms: float
    failed: int


def parse_summary(stdout: str) -> PgbenchSummary:
    def number(name: str, pattern: re.Pattern, convert=float, required=True):
        match = pattern.search(stdout)
        if match is None and required:
            raise DatabaseError(f"pgbench's summary lacks its {name} line: {stdout.strip()[-200:]!r}")
        return None if match is None else convert(match.group(1))

    return PgbenchSummary(
        clients=number("clients", _CLIENTS, int), threads=number("threads", _THREADS, int),
        processed=number("transactions processed", _PROCESSED, int),
        failed=number("failed transactions", _FAILED, int, required=False) or 0,
        latency_mean_ms=number("latency average", _LATENCY),
        latency_stddev_ms=number("latency stddev", _STDDEV, required=False),
        connection_ms=number("initial connection time", _CONNECTION), tps=number("tps", _TPS),
    )


def parse_progress(stderr: str) -> tuple[ProgressPoint, ...]:
    return tuple(
        ProgressPoint(float(m["t"]), float(m["tps"]), float(m["lat"]), int(m["failed"] or 0))
        for m in _PROGRESS.finditer(stderr)
    )


def transaction_latencies_us(log_text: str) -> tuple[list[int], int]:
    """The latencies of completed transactions, and how many failed or were skipped."""
    latencies, not_completed = [], 0
    for line in log_text.splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        if fields[2].isdigit():
            latencies.append(int(fields[2]))
        else:
            not_completed += 1
    return latencies, not_completed


def percentiles_ns(latencies_us: list[int]) -> dict[str, float]:
    """Nearest-rank percentiles (a latency some transaction really had), each only from a sample big enough."""
    ordered = sorted(latencies_us)
    n = len(ordered)
    return {
        name: ordered[max(math.ceil(_PERCENT[name] / 100 * n), 1) - 1] * 1000.0
        for name, least in PERCENTILE_MIN_SAMPLES.items() if n >= least
    }
