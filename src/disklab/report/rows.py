"""One row per test and direction, in display units, shared by the terminal table and every export."""

from dataclasses import asdict, dataclass

from disklab.store.repository import RunRecord
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
    rows = []
    for test in record.tests:
        for m in test.metrics:
            p = m.clat_percentiles_ns
            rows.append(
                ResultRow(
                    seq=test.seq + 1,
                    test=test.label,
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
            )
    return rows


def _us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e3
