"""Stored runs side by side: tests matched by their parameters, each figure judged against the baseline run.

Repeats of a test form one sample, and each run's sample is judged against the baseline's (analysis/verdict.py).
One job's figures out of a fio group are never matched with a whole group's.
Pure: RunRecords in, a Comparison out; the report layer renders it.
"""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from disklab.analysis.repeats import planned_tests, pooled_sample, repeated
from disklab.analysis.stats import Summary
from disklab.analysis.verdict import BETTER, DEFAULT_TOLERANCE_PERCENT, INCONCLUSIVE, WITHIN_NOISE, WORSE, judge, ratio
from disklab.analysis.withheld import withheld_reason
from disklab.env.registry import env_differences
from disklab.fio.parse import DirectionMetrics, job_groups
from disklab.store.records import RunInfo, RunRecord, StoredTest
from disklab.suite.params import PARAMS

# What makes two tests the same test. Left out: names (label, group, metric), how long and how hard a test ran
# (runtime, ramp, pause, rate caps), the data-set size, engine and offset: those are conditions, and differences in
# them are named (ConditionDifference) instead of hiding the match.
MATCH_PARAMS = ("pattern", "direction", "rwmixread", "bs", "bssplit", "iodepth", "jobs", "region", "sync", "nrfiles",
                "filesize", "frame_size", "bit_depth", "fps", "direct", "time_based", "fio")
CONDITION_PARAMS = ("size", "runtime", "ramp", "rate", "rate_iops", "engine",
                    "scale", "threads", "transactions", "time_s", "vacuum")  # the last five: pgbench steps'
# A pgbench step (database/pgbench.py) is the same test as another run's with as many clients; its scale,
# threads and length are conditions like a fio test's size and runtime.
PGBENCH_MATCH_PARAMS = ("benchmark", "clients")
# A trace's replay (trace/replay.py) is the same test as another run's replay of the same trace (name and content) at
# the same speed; its queue depth and size follow from the trace, the fio and the target (conditions).
REPLAY_MATCH_PARAMS = ("trace", "speed", "direct")
# Parameters a suite sweeps, in which a crossover of the leading run is looked for.
SWEPT_PARAMS = ("bs", "iodepth", "rwmixread", "jobs", "clients")


@dataclass(frozen=True)
class CompareMetric:
    name: str
    label: str  # with its unit
    higher_is_better: bool
    value: Callable[[DirectionMetrics], float | None]
    lead: str  # what the leading run does, for crossover sentences


def _p99_us(m: DirectionMetrics) -> float | None:
    p99 = m.clat_percentiles_ns.get("p99")
    return None if p99 is None else p99 / 1e3


METRICS = (
    CompareMetric("iops", "IOPS", True, lambda m: m.iops if m.direction != "transaction" else None,
                  "delivers more IOPS"),
    CompareMetric("tps", "TPS", True, lambda m: m.iops if m.direction == "transaction" else None,
                  "delivers more transactions per second"),
    CompareMetric("mb_per_s", "MB/s", True,
                  lambda m: m.bw_bytes_per_s / 1e6 if m.direction not in ("sync", "transaction") else None,
                  "delivers more MB/s"),
    CompareMetric("lat_mean_us", "mean lat µs", False, lambda m: m.lat_mean_ns / 1e3, "has the lower mean latency"),
    CompareMetric("clat_p99_us", "p99 µs", False, _p99_us, "has the lower p99 latency"),
)
METRIC_BY_NAME = {m.name: m for m in METRICS}


@dataclass(frozen=True)
class TestKey:
    """The defining parameters of a test, and which occurrence of them in its run (a suite may repeat a test)."""

    params: tuple[tuple[str, object], ...]
    occurrence: int = 1
    part_of: int | None = None  # one job's figures out of a fio group of this many jobs; None: the whole group

    def get(self, name: str):
        return dict(self.params).get(name)

    def without(self, name: str) -> "TestKey":
        return TestKey(tuple((k, v) for k, v in self.params if k != name), self.occurrence, self.part_of)


@dataclass(frozen=True)
class Cell:
    """One run's figure in a row; ratio and verdict are against the baseline (None for the baseline itself)."""

    summary: Summary | None  # None: the run has no such test or figure
    ratio: float | None = None
    verdict: str | None = None  # BETTER, WORSE, WITHIN_NOISE, INCONCLUSIVE or NO_VERDICT
    basis: str | None = None  # T_TEST, INTERVAL or SINGLE_RUNS
    reason: str | None = None  # why the verdict is INCONCLUSIVE or NO_VERDICT
    withheld_by: str | None = None  # a flag of the tests behind this figure withholds any verdict on it (why)
    best: float | None = None  # run --best-of: the best pass, the figure shown; the verdict still judges every pass


@dataclass(frozen=True)
class Row:
    test: str
    key: TestKey
    direction: str
    metric: str
    cells: tuple[Cell, ...]  # one per run, the baseline first

    @property
    def within_noise(self) -> bool:
        """Every judged figure was measured within noise: the row says nothing that --only-changed must keep."""
        return all(c.verdict == WITHIN_NOISE for c in self.cells[1:] if c.verdict is not None)


@dataclass(frozen=True)
class Crossover:
    """Along a swept parameter, the point from which another run leads (the other parameters held equal)."""

    parameter: str
    value: object  # the first point the new leader leads
    below: object  # the last point the previous leader led
    metric: str
    direction: str
    context: TestKey  # the parameters held equal
    leader: int  # index into Comparison.runs
    previous_leader: int


@dataclass(frozen=True)
class ConditionDifference:
    """A condition (not matched on) whose values differ between the runs' matched tests."""

    parameter: str
    values: tuple[tuple[object, ...], ...]  # per run, its distinct values


@dataclass(frozen=True)
class Refusal:
    """A test not compared because its match in another run has another shape: one job's figures of a fio group
    (imported fio output without group_reporting) against the whole group's."""

    run: int  # index into Comparison.runs
    test: str
    part_of: int | None  # this test holds one job's figures of a group of this many jobs; None: the whole group's
    against: tuple[int, ...]  # the runs whose matching test has the other shape


@dataclass(frozen=True)
class Comparison:
    runs: tuple[RunInfo, ...]  # the baseline first
    tolerance_percent: float
    rows: tuple[Row, ...]
    crossovers: tuple[Crossover, ...]
    unmatched: tuple[tuple[str, ...], ...]  # per run, its tests left out: not in the baseline, or only in the baseline
    env_differences: tuple[tuple[str, ...], ...]  # per run, what differs from the baseline's environment
    conditions: tuple[ConditionDifference, ...]
    refused: tuple[Refusal, ...]  # tests left out because their match elsewhere has another shape

    @property
    def repeated(self) -> bool:
        return any(c.summary is not None and c.summary.n > 1 for row in self.rows for c in row.cells)

    @property
    def bases(self) -> set[str]:
        return {c.basis for row in self.rows for c in row.cells[1:] if c.basis}


@dataclass(frozen=True)
class PlannedUnit:
    """A planned test of one run: its label, its conditions and the tests whose figures form the sample."""

    label: str
    params: dict
    tests: tuple[StoredTest, ...]
    best_of: int | None = None  # the run was made with --best-of


def compare_runs(records: Sequence[RunRecord], tolerance_percent: float = DEFAULT_TOLERANCE_PERCENT) -> Comparison:
    """The first record is the baseline."""
    if len(records) < 2:
        raise ValueError("a comparison needs at least two runs")
    units = [planned_units(record) for record in records]
    compared = [k for k in units[0] if any(k in u for u in units[1:])]
    rows = tuple(row for key in compared for row in _rows(key, units, tolerance_percent))
    left_out = [[(key, unit.label) for key, unit in u.items() if key not in compared] for u in units]
    refused = _refusals(left_out, units)
    unmatched = tuple(
        tuple(dict.fromkeys(label for _, label in tests if all((r.run, r.test) != (i, label) for r in refused)))
        for i, tests in enumerate(left_out)
    )
    return Comparison(
        runs=tuple(r.info for r in records), tolerance_percent=tolerance_percent, rows=rows,
        crossovers=find_crossovers(rows, tolerance_percent),
        unmatched=unmatched,
        env_differences=tuple(env_changes(records[0], r, fio_version=False) for r in records),
        conditions=_conditions(compared, units),
        refused=refused,
    )


def planned_units(record: RunRecord) -> dict[TestKey, PlannedUnit]:
    """Repeats form one sample; rounds towards steady state are a series, and their last round is the figure, or,
    once steady state is reached, the rounds of the steady window: SNIA's measurement window, whose spread is the
    steady state's own."""
    units: dict[TestKey, PlannedUnit] = {}
    seen: dict[tuple, int] = {}
    parts = job_parts(record)
    window = steady_window(record)
    for tests in planned_tests(record).values():
        params, part_of = match_params(tests[0].params), parts.get(tests[0].id)
        seen[params, part_of] = seen.get((params, part_of), 0) + 1
        in_window = tuple(t for t in tests if t.attempt in window)
        sample = tuple(tests) if repeated(record) else in_window if len(in_window) > 1 else (tests[-1],)
        units[TestKey(params, seen[params, part_of], part_of)] = PlannedUnit(tests[0].label, tests[0].params, sample,
                                                                             record.info.options.get("best_of"))
    return units


def steady_window(record: RunRecord) -> range:
    """The rounds (attempts) of a steady run's steady window; empty when steady state was not reached, or the run
    saturated writes (its figure is where the writing led, not the window)."""
    steady = record.outcomes.get("steady_state")
    if not isinstance(steady, dict) or not steady.get("reached") or "write_saturation" in record.outcomes:
        return range(0)
    last = steady.get("round") or 0
    return range(last - len(steady.get("window") or ()) + 1, last + 1)


def job_parts(record: RunRecord) -> dict[int, int]:
    """Imported tests that each hold one job's figures of a fio job run as several (numjobs without group_reporting):
    test id -> how many tests share the job.

    Import combines such entries into one test now (job_groups); a run imported before it did holds a test per entry.
    """
    if "imported_from" not in record.info.options:
        return {}
    owner: dict[int, int] = {}  # id of an entry -> the test that holds it
    entries = []
    for test in record.tests:
        for entry in _entries(test.fio_output):
            owner[id(entry)] = test.id
            entries.append(entry)
    parts = {}
    for group in job_groups(entries):
        tests = {owner[id(entry)] for entry in group}
        if len(tests) > 1:
            parts.update(dict.fromkeys(tests, len(tests)))
    return parts


def _entries(fio_output: str) -> list[dict]:
    """The job entries of an imported test's stored fio document; none when it is not one."""
    try:
        jobs = json.loads(fio_output).get("jobs", [])
    except (ValueError, AttributeError):
        return []
    return [job for job in jobs if isinstance(job, dict)] if isinstance(jobs, list) else []


def _refusals(left_out: list[list[tuple[TestKey, str]]],
              units: list[dict[TestKey, PlannedUnit]]) -> tuple[Refusal, ...]:
    """The tests left out whose parameters match a test of another run that has the other shape (job vs group)."""
    refused: dict[tuple[int, str], Refusal] = {}
    for i, tests in enumerate(left_out):
        for key, label in tests:
            against = tuple(
                j for j, u in enumerate(units)
                if j != i and any(k.params == key.params and (k.part_of is None) != (key.part_of is None) for k in u)
            )
            if against:
                refused.setdefault((i, label), Refusal(i, label, key.part_of, against))
    return tuple(refused.values())


def match_params(params: dict) -> tuple[tuple[str, object], ...]:
    """The parameters that define a test; a read share only counts for mixed tests, a bssplit replaces the bs.

    A parameter a run did not store (an imported run's fio had no such option) has its default value.
    """
    if params.get("benchmark") == "pgbench":
        return tuple((name, params[name]) for name in PGBENCH_MATCH_PARAMS)
    if params.get("trace"):
        return tuple((name, params.get(name)) for name in REPLAY_MATCH_PARAMS)
    defining = {name: params.get(name, PARAMS[name].default) for name in MATCH_PARAMS}
    if defining["direction"] != "mixed":
        defining["rwmixread"] = None
    if defining["bssplit"]:
        defining["bs"] = None
    return tuple(defining.items())


def _rows(key: TestKey, units: list[dict[TestKey, PlannedUnit]], tolerance_percent: float) -> list[Row]:
    present = [u.get(key) for u in units]
    label = present[0].label
    directions = dict.fromkeys(m.direction for unit in present if unit for t in unit.tests for m in t.metrics)
    rows = []
    for direction in directions:
        for metric in METRICS:
            samples = [unit_sample(unit, direction, metric) if unit else None for unit in present]
            if samples[0] is None or all(s is None for s in samples[1:]):
                continue
            flagged = [unit and withheld_reason(flag for test in unit.tests for flag, _ in test.flags) for unit in present]
            cells = (Cell(samples[0], withheld_by=flagged[0]),) + tuple(
                Cell(None) if s is None else withheld(judged(samples[0], s, metric, tolerance_percent), flagged[0], why)
                for s, why in zip(samples[1:], flagged[1:])
            )
            cells = tuple(with_best(cell, unit, direction, metric) for cell, unit in zip(cells, present))
            rows.append(Row(label, key, direction, metric.name, cells))
    return rows


def unit_sample(unit: PlannedUnit, direction: str, metric: CompareMetric) -> Summary | None:
    measured = [(v, m.total_ios) for t in unit.tests for m in t.metrics
                if m.direction == direction and (v := metric.value(m)) is not None]
    return pooled_sample(unit.tests, direction, metric.name, measured) if measured else None


def with_best(cell: Cell, unit: PlannedUnit | None, direction: str, metric: CompareMetric) -> Cell:
    """A --best-of run's cell also holds its best pass, the figure CrystalDiskMark reports (report/views.py)."""
    if unit is None or not unit.best_of:
        return cell
    values = [v for t in unit.tests for m in t.metrics
              if m.direction == direction and (v := metric.value(m)) is not None]
    return replace(cell, best=(max if metric.higher_is_better else min)(values)) if values else cell


def judged(base: Summary, other: Summary, metric: CompareMetric, tolerance_percent: float) -> Cell:
    judgement = judge(base, other, metric.higher_is_better, tolerance_percent)
    return Cell(other, ratio(base, other), judgement.verdict, judgement.basis, judgement.reason)


def withheld(cell: Cell, base: str | None, other: str | None) -> Cell:
    """A better or worse resting on a test fio did not finish, or one other work ran beside (either side), is
    inconclusive for that reason; one the spread left inconclusive names the flag first too, then its own reason."""
    cell = replace(cell, withheld_by=other)
    reason = base or other
    if cell.verdict not in (BETTER, WORSE, INCONCLUSIVE) or reason is None:
        return cell
    if cell.verdict == INCONCLUSIVE and cell.reason:
        reason = f"{reason}; and {cell.reason}"
    return replace(cell, verdict=INCONCLUSIVE, reason=reason)


def find_crossovers(rows: Sequence[Row], tolerance_percent: float, exact: bool = False) -> tuple[Crossover, ...]:
    """Per swept parameter, metric and direction, with the rest held equal: where the leading run changes.

    A point leads only when judge() finds its best run better than every other run; ties and points the figures
    cannot tell are skipped, so noise does not make crossovers. Exact figures (a model's predictions) have no noise:
    the best one leads by any margin.
    """
    crossovers = []
    for parameter in SWEPT_PARAMS:
        lines: dict[tuple, list[Row]] = {}
        for row in rows:
            if row.key.get(parameter) is not None:
                lines.setdefault((row.key.without(parameter), row.direction, row.metric), []).append(row)
        for (context, direction, metric_name), line in lines.items():
            if len({r.key.get(parameter) for r in line}) < 2:
                continue
            metric = METRIC_BY_NAME[metric_name]
            previous = None  # (leader, point)
            for row in sorted(line, key=lambda r: r.key.get(parameter)):
                leader = _leader(row, metric, tolerance_percent, exact)
                if leader is None:
                    continue
                point = row.key.get(parameter)
                if previous and previous[0] != leader:
                    crossovers.append(Crossover(parameter, point, previous[1], metric_name, direction, context,
                                                leader, previous[0]))
                previous = (leader, point)
    return tuple(crossovers)


def _leader(row: Row, metric: CompareMetric, tolerance_percent: float, exact: bool) -> int | None:
    present = [(i, c.summary) for i, c in enumerate(row.cells) if c.summary is not None]
    if len(present) < 2 or any(c.withheld_by for c in row.cells):
        return None  # a figure no verdict may rest on leads nobody
    pick = max if metric.higher_is_better else min
    best, best_summary = pick(present, key=lambda p: p[1].mean)
    beaten = all(
        s.mean != best_summary.mean if exact
        else judge(s, best_summary, metric.higher_is_better, tolerance_percent).verdict == BETTER
        for i, s in present if i != best
    )
    return best if beaten else None


def env_changes(base: RunRecord, other: RunRecord, fio_version: bool = True) -> tuple[str, ...]:
    """The environment's differences that may explain one (runs before the registry still carry fio version and
    kernel), and the engine each run used; `fio_version=False` where a line of its own says it (a comparison's)."""
    recorded = ({"kernel": r.info.kernel, "fio_version": r.info.fio_version, **r.env} for r in (base, other))
    lines = env_differences(*({k: v for k, v in d.items() if fio_version or k != "fio_version"} for d in recorded))
    if base.info.fio_engine != other.info.fio_engine:
        lines.append(f"fio engine used: {base.info.fio_engine} -> {other.info.fio_engine}")
    return tuple(lines)


def _conditions(compared: list[TestKey], units: list[dict[TestKey, PlannedUnit]]) -> tuple[ConditionDifference, ...]:
    differences = []
    for parameter in CONDITION_PARAMS:
        values = tuple(
            tuple(dict.fromkeys(u[k].params.get(parameter) for k in compared if k in u)) for u in units
        )
        if len(set(values)) > 1:
            differences.append(ConditionDifference(parameter, values))
    return tuple(differences)
