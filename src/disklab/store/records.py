"""What a reader gets back from the store (runs and their tests), and the decoding of rows into it."""

import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache
from types import MappingProxyType

from disklab.errors import FioError
from disklab.fio.logs import Series, SeriesPoint, series_order
from disklab.fio.parse import PERCENTILES, DirectionMetrics, JobResult, latency_bins
from disklab.store.dialect import Dialect

# What a pgbench run stores as its engine, where a fio run stores fio's (its version: PostgreSQL's).
PGBENCH_ENGINE = "pgbench"


@dataclass(frozen=True)
class RunInfo:
    id: int
    suite_name: str
    suite_source: str
    target: str
    target_kind: str
    test_path: str
    options: dict
    status: str
    error: str | None
    started_at: str
    finished_at: str | None
    disklab_version: str
    fio_version: str
    fio_engine: str
    hostname: str
    kernel: str
    planned_tests: int
    finished_tests: int
    name: str | None = None
    uid: str = ""  # the run's identity in every store it is copied to (its number is each store's own)
    user: str | None = None  # who ran it: the login name on its host (None: a run stored before disklab kept it)
    origin: dict | None = None  # an imported bundle's run: the store, number and time it was exported from

    @property
    def shown_target(self) -> str:
        """The target as its user names it: a `run --fs` run's device and file system, not the private mount point
        its test file was on (kept in `target`)."""
        configuration = self.options.get("configuration")
        made = configuration.get("file_system") if isinstance(configuration, dict) else None
        return f"{made['device']} ({made['fs']})" if isinstance(made, dict) and "device" in made else self.target

    @property
    def pgbench(self) -> bool:
        """A pgbench run: it keeps PostgreSQL's version where a fio run keeps fio's (fio_version)."""
        return self.fio_engine == PGBENCH_ENGINE

    @property
    def tool(self) -> str:
        """What ran the tests, as the 'Tool' column says it: 'fio-3.33 libaio', 'pgbench / PostgreSQL 17.2'."""
        return f"{PGBENCH_ENGINE} / {self.fio_version}" if self.pgbench else f"{self.fio_version} {self.fio_engine}"


class RawText:
    """A run's job files and fio outputs, read on first use: they are most of the store's bytes, and only a few
    callers need them (show --jobfile, the downloads, the fio groups of imported runs, the histograms of a test stored
    before schema 13)."""

    def __init__(self, read: Callable[[], dict[int, tuple[str, str]]]):
        self._read = read  # the run's {test id: (jobfile, fio_output)}, from the store
        self._by_test: dict[int, tuple[str, str]] | None = None

    def of(self, test_id: int) -> tuple[str, str]:
        """(jobfile, fio_output) of one test of the run."""
        if self._by_test is None:
            self._by_test = self._read()
        return self._by_test[test_id]


@dataclass(frozen=True)
class StoredTest:
    id: int
    seq: int
    label: str
    params: dict
    started_at: str
    finished_at: str
    usr_cpu_percent: float
    sys_cpu_percent: float
    metrics: tuple[DirectionMetrics, ...]
    series: tuple[Series, ...] = ()  # only tests with log_interval have any
    plan_index: int = 0  # the planned test this is; repeats and rounds share it
    attempt: int = 1  # which repeat or round of it
    flags: tuple[tuple[str, str], ...] = ()  # (flag, message): why a figure may not be the disk's
    host: str | None = None  # the fio server it ran on (client/server mode); None: this machine
    raw: RawText | None = field(default=None, compare=False, repr=False)  # jobfile's and fio_output's source
    # {direction: its histogram as the store recorded it (recorded_bins); None: a test stored before it did}
    recorded_bins: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    @property
    def jobfile(self) -> str:
        return self.raw.of(self.id)[0]

    @property
    def fio_output(self) -> str:
        """fio's output verbatim, read from the store on first use."""
        return self.raw.of(self.id)[1]

    def latency_bins(self, direction: str) -> Mapping[float, int] | None:
        """fio's json+ completion-latency histogram of the direction (ns -> I/O count) as the store recorded it, read
        from the fio output for a test stored before it did; None without bins (json output, pgbench's steps, a
        test not read from a store)."""
        recorded = self.recorded_bins.get(direction)
        if recorded is not None:
            return _decoded_bins(recorded)
        if self.raw is None:
            return None
        return _bins_of(self.fio_output, direction)

    def as_job(self) -> JobResult:
        return JobResult(self.label, 0, self.usr_cpu_percent, self.sys_cpu_percent, self.metrics)


@dataclass(frozen=True)
class Note:
    """What a run's user wrote about it (`disklab note`)."""

    text: str
    added_at: str  # ISO time in UTC


@dataclass(frozen=True)
class RunRecord:
    info: RunInfo
    suite_text: str
    tests: tuple[StoredTest, ...]
    env: dict = field(default_factory=dict)  # the environment registry's values (env/registry.py)
    outcomes: dict = field(default_factory=dict)  # what the run's schedule concluded (steady state, precision, ...)
    notes: tuple[Note, ...] = ()  # oldest first


def _bins_of(fio_output: str, direction: str) -> Mapping[float, int] | None:
    """parse.latency_bins of the output; None for output that is not fio's JSON (pgbench's)."""
    try:
        return latency_bins(fio_output, direction)
    except FioError:
        return None


def recorded_bins(fio_output: str, direction: str) -> str:
    """The direction's histogram (_bins_of) as metrics.clat_bins_json keeps it: JSON [[ns, ...], [count, ...]], or
    null without bins; whole nanoseconds without their '.0' (a third of the bytes), and every value reads back
    exactly (a float is written as repr writes it)."""
    bins = _bins_of(fio_output, direction)
    if bins is None:
        return "null"
    values = [int(value) if value.is_integer() else value for value in bins]
    return json.dumps([values, list(bins.values())], separators=(",", ":"))


@lru_cache(maxsize=1024)
def _decoded_bins(recorded: str) -> Mapping[float, int] | None:
    """Read only, and kept for the histograms read last: a report asks for a test's several times."""
    document = json.loads(recorded)
    return None if document is None else MappingProxyType(dict(zip(map(float, document[0]), document[1])))


def run_columns(dialect: Dialect) -> str:
    """RunInfo's fields in order, so that a row builds one without lookups. A run on many hosts counts its steps (the
    aggregates, host NULL), not each host's test of a step; the count is answered by the index tests_by_run_host."""
    hosts = dialect.json_key.format(column="runs.options_json", key="hosts")
    computed = {
        "options": "runs.options_json", "user": "runs.user_name", "origin": "runs.origin_json",
        "finished_tests": "(SELECT COUNT(*) FROM tests WHERE tests.run_id = runs.id AND (tests.host IS NULL"
                          f" OR {hosts} IS NULL))",
    }
    return ", ".join(computed.get(f.name, f"runs.{f.name}") for f in fields(RunInfo))


_RUN_FIELDS = len(fields(RunInfo))
_OPTIONS = [f.name for f in fields(RunInfo)].index("options")
_ORIGIN = [f.name for f in fields(RunInfo)].index("origin")
# A test's parsed columns; its job file and fio's output are read apart (RawText).
TEST_COLUMNS = (
    "id, seq, label, params_json, started_at, finished_at, usr_cpu_percent, sys_cpu_percent, plan_index, attempt, host"
)
_PERCENTILE_COLUMNS = tuple((p, f"clat_{p}_ns") for p in PERCENTILES.values())  # (percentile, its metrics column)
# 'transaction': a pgbench step's transactions (database/pgbench.py), the only direction of such a test.
_DIRECTION_ORDER = {"read": 0, "write": 1, "trim": 2, "sync": 3, "transaction": 4}


def run_info(row: sqlite3.Row) -> RunInfo:
    """A row selected with run_columns first."""
    values = list(row[:_RUN_FIELDS])
    values[_OPTIONS] = json.loads(values[_OPTIONS])
    values[_ORIGIN] = None if values[_ORIGIN] is None else json.loads(values[_ORIGIN])
    return RunInfo(*values)


def stored_test(
    row: sqlite3.Row, metric_rows: list[sqlite3.Row], series: tuple[Series, ...], flags: tuple[tuple[str, str], ...],
    raw: RawText,
) -> StoredTest:
    """A row selected with TEST_COLUMNS, and what the other tables hold of that test (its rows of metrics)."""
    metrics = [direction_metrics(m) for m in metric_rows]
    return StoredTest(
        id=row["id"], seq=row["seq"], label=row["label"], params=json.loads(row["params_json"]),
        started_at=row["started_at"], finished_at=row["finished_at"],
        usr_cpu_percent=row["usr_cpu_percent"], sys_cpu_percent=row["sys_cpu_percent"],
        metrics=tuple(sorted(metrics, key=lambda m: _DIRECTION_ORDER[m.direction])), series=series,
        plan_index=row["seq"] if row["plan_index"] is None else row["plan_index"], attempt=row["attempt"], flags=flags,
        host=row["host"], raw=raw, recorded_bins={m["direction"]: m["clat_bins_json"] for m in metric_rows},
    )


def series_by_test(rows: list[sqlite3.Row]) -> dict[int, tuple[Series, ...]]:
    """Rows come in time order; series are returned in the parser's order."""
    points: dict[int, dict[tuple[str, str], list[SeriesPoint]]] = {}
    for row in rows:
        key = (row["kind"], row["direction"])
        points.setdefault(row["test_id"], {}).setdefault(key, []).append(SeriesPoint(row["t_ms"], row["value"]))
    return {
        test_id: tuple(
            Series(kind, direction, tuple(by_key[kind, direction]))
            for kind, direction in sorted(by_key, key=series_order)
        )
        for test_id, by_key in points.items()
    }


def direction_metrics(row: sqlite3.Row) -> DirectionMetrics:
    """A row of the metrics table."""
    return DirectionMetrics(
        direction=row["direction"], io_bytes=row["io_bytes"], total_ios=row["total_ios"], iops=row["iops"],
        bw_bytes_per_s=row["bw_bytes_per_s"], runtime_ms=row["runtime_ms"], lat_mean_ns=row["lat_mean_ns"],
        clat_mean_ns=row["clat_mean_ns"], clat_max_ns=row["clat_max_ns"],
        clat_percentiles_ns={p: value for p, column in _PERCENTILE_COLUMNS if (value := row[column]) is not None},
    )
