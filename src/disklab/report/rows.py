"""One row per test and direction, in display units, shared by the terminal table and every export."""

from dataclasses import asdict, dataclass

from disklab.analysis.repeats import planned_tests, pooled_lat_mean_ns, pooled_percentiles
from disklab.analysis.stats import Summary, summarize, too_wide
from disklab.analysis.steady import stored_rounds
from disklab.fio.parse import DirectionMetrics
from disklab.store.records import RunRecord, StoredTest
from disklab.units import format_size


@dataclass(frozen=True)
class ResultRow:
    seq: int
    test: str
    direction: str
    pattern: str
    block_size: str
    iodepth: int
    jobs: int
    mb_per_s: float  # 10^6 bytes per second
    iops: float
    lat_mean_us: float
    clat_p50_us: float | None
    clat_p99_us: float | None
    clat_p99_9_us: float | None
    clat_p99_99_us: float | None
    usr_cpu_percent: float
    sys_cpu_percent: float

    def as_dict(self) -> dict:
        return asdict(self)


def result_rows(record: RunRecord) -> list[ResultRow]:
    """fio tests; pgbench steps have rows of their own (sweep_rows). The rounds of a steady-state or write-saturation
    run are one test run again and again: each row names its round, as the convergence chart numbers them."""
    rounds = {t.id: n for n, t in enumerate(stored_rounds(record).tests, start=1)} \
        if "steady_state" in record.outcomes else {}
    return [result_row(test, m, f" · round {rounds[test.id]}" if test.id in rounds else "")
            for test in record.tests if not is_pgbench_test(test) for m in test.metrics]


def result_row(test: StoredTest, m: DirectionMetrics, which: str = "") -> ResultRow:
    """One direction of one stored fio test; `which` follows its label (' · round 3')."""
    p = m.clat_percentiles_ns
    return ResultRow(
        seq=test.seq + 1,
        test=test.label + which,
        direction=m.direction,
        pattern=test.params["pattern"],
        block_size=format_size(test.params["bs"]),
        iodepth=test.params["iodepth"],
        jobs=test.params["jobs"],
        mb_per_s=m.bw_bytes_per_s / 1e6,
        iops=m.iops,
        lat_mean_us=m.lat_mean_ns / 1e3,
        clat_p50_us=_us(p.get("p50")),
        clat_p99_us=_us(p.get("p99")),
        clat_p99_9_us=_us(p.get("p99_9")),
        clat_p99_99_us=_us(p.get("p99_99")),
        usr_cpu_percent=test.usr_cpu_percent,
        sys_cpu_percent=test.sys_cpu_percent,
    )


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e3


def is_pgbench_test(test: StoredTest) -> bool:
    return test.params.get("benchmark") == "pgbench"


def is_pgbench_run(record: RunRecord) -> bool:
    return any(is_pgbench_test(t) for t in record.tests) or "pgbench" in record.outcomes


@dataclass(frozen=True)
class SweepRow:
    """One pgbench step: does the database's TPS hold up as clients are added (M3)?"""

    seq: int
    test: str
    clients: int
    threads: int
    tps: float  # excluding connection set-up, as pgbench reports it
    tps_including_connections: float | None
    initial_connection_ms: float | None
    latency_mean_ms: float
    latency_p50_ms: float | None  # from pgbench's per-transaction log
    latency_p99_ms: float | None
    latency_max_ms: float
    transactions: int  # completed
    failed: int | None
    usr_cpu_percent: float  # the whole machine's: pgbench and the server share it
    sys_cpu_percent: float
    iowait_percent: float | None

    def as_dict(self) -> dict:
        return asdict(self)


def sweep_rows(record: RunRecord) -> list[SweepRow]:
    """Per-step figures beyond the stored metrics live in the run's pgbench outcome, by client count."""
    extras = record.outcomes.get("pgbench", {}).get("steps", {})
    rows = []
    for test in record.tests:
        if not is_pgbench_test(test) or not test.metrics:
            continue
        m, extra = test.metrics[0], extras.get(str(test.params["clients"]), {})
        p = m.clat_percentiles_ns
        rows.append(SweepRow(
            seq=test.seq + 1, test=test.label, clients=test.params["clients"], threads=test.params["threads"],
            tps=m.iops, tps_including_connections=extra.get("tps_including_connections"),
            initial_connection_ms=extra.get("initial_connection_ms"), latency_mean_ms=m.lat_mean_ns / 1e6,
            latency_p50_ms=_ms(p.get("p50")), latency_p99_ms=_ms(p.get("p99")), latency_max_ms=m.clat_max_ns / 1e6,
            transactions=m.total_ios, failed=extra.get("failed_transactions"),
            usr_cpu_percent=test.usr_cpu_percent, sys_cpu_percent=test.sys_cpu_percent,
            iowait_percent=extra.get("iowait_percent"),
        ))
    return rows


def _ms(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e6


@dataclass(frozen=True)
class SummaryRow:
    """One planned test and direction over its repeats: the mean, and how far the true mean may be from it."""

    plan_index: int
    test: str
    direction: str
    mb_per_s: Summary  # 10^6 bytes per second
    iops: Summary
    lat_mean_us: float  # over every I/O of every repeat
    clat_ios: int | None  # the I/Os the percentiles rest on
    clat_percentiles_ns: dict[str, float]  # every percentile those I/Os support (analysis/repeats.pooled_percentiles)
    too_wide: bool  # the 95 % interval of MB/s or IOPS is wider than TOO_WIDE_PERCENT of the mean

    @property
    def clat_p99_us(self) -> float | None:
        """Of every I/O of the repeats (json+ histograms merged); None: too few I/Os for it."""
        p99_ns = self.clat_percentiles_ns.get("p99")
        return None if p99_ns is None else p99_ns / 1e3

    def as_dict(self) -> dict:
        return {
            "seq": self.plan_index + 1, "test": self.test, "direction": self.direction, "n": self.iops.n,
            "mb_per_s": self.mb_per_s.mean, "mb_per_s_stdev": self.mb_per_s.stdev,
            "mb_per_s_ci95_percent": self.mb_per_s.ci95_percent, "iops": self.iops.mean, "iops_stdev": self.iops.stdev,
            "iops_ci95_percent": self.iops.ci95_percent, "lat_mean_us": self.lat_mean_us,
            "clat_p99_us": self.clat_p99_us, "clat_ios": self.clat_ios, "too_wide": self.too_wide,
        }


def summary_rows(record: RunRecord) -> list[SummaryRow]:
    rows = []
    for plan_index, tests in planned_tests(record).items():
        for direction in dict.fromkeys(m.direction for t in tests for m in t.metrics):
            ms = [m for t in tests for m in t.metrics if m.direction == direction]
            mb, iops = summarize([m.bw_bytes_per_s / 1e6 for m in ms]), summarize([m.iops for m in ms])
            lat_ns = pooled_lat_mean_ns(ms)
            if lat_ns is None:  # no I/O counted: each repeat weighs the same
                lat_ns = sum(m.lat_mean_ns for m in ms) / len(ms)
            pooled = pooled_percentiles(tests, (direction,))
            rows.append(SummaryRow(
                plan_index=plan_index, test=tests[0].label, direction=direction, mb_per_s=mb, iops=iops,
                lat_mean_us=lat_ns / 1e3, clat_ios=pooled.ios if pooled else None,
                clat_percentiles_ns=pooled.ns if pooled else {},
                too_wide=too_wide(mb) or too_wide(iops),
            ))
    return rows
