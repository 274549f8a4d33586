"""What a run's own data says, as the studies concluded it from theirs: each finding with the figures it rests on and
the basis of its judgement. A finding that compares needs a measured spread (repeats, rounds, intervals): without
one it is stated with its figures and "no verdict", never as a difference.

- start vs end of the device (M1: HDDs are faster at the start; the same test on the first and the last N bytes);
- a capped test that did not cover its region (M1's footnote: such a result is "not representative");
- the spec sheet (M3/M4: do the results reach the drive's rated figures?);
- an initial peak then a decline over time (M4: fresh flash, caches);
- dips in a read-share curve (M5: an ideal curve is smooth; a slump points at firmware flaws).
"""

from dataclasses import dataclass

from disklab.analysis.compare import METRIC_BY_NAME, PlannedUnit, match_params, planned_units, unit_sample
from disklab.analysis.repeats import planned_tests, repeated
from disklab.analysis.stats import Summary, summarize
from disklab.analysis.steady import round_value
from disklab.analysis.verdict import (
    BETTER, DEFAULT_TOLERANCE_PERCENT, INCONCLUSIVE, NO_VERDICT, WORSE, judge, ratio,
)
from disklab.analysis.traps import CEILING_MARGIN, ceilings, data_set_bytes
from disklab.analysis.withheld import withheld_reason
from disklab.plan.build import PRECONDITION_GROUP, sequential_job_slice
from disklab.store.records import RunRecord, StoredTest
from disklab.suite.model import TestSpec

COVERED_SHARE = 0.99  # a capped test that moved less than this share of its region's bytes did not cover it
CEILING_NEAR = 0.9  # throughput at this share of a ceiling or more (up to the flag's margin): the link set it
CACHE_FLAGS = ("page-cache", "device-cache", "memory-target")  # analysis/traps.py: the data's home is a cache
PEAK_SHARE = 0.1  # the first tenth of a time series is its start; its second half, where it settled
SPEC_READS = (("sequential", "read", "mb_per_s", "seq_read_mb_per_s"), ("sequential", "write", "mb_per_s",
              "seq_write_mb_per_s"), ("random", "read", "iops", "rand_read_iops"),
              ("random", "write", "iops", "rand_write_iops"))
SPEC_MIN_SEQUENTIAL_BS = 128 * 1024  # spec sheets rate sequential transfer with large blocks, random IOPS at 4 KiB
SPEC_RANDOM_BS = 4096
BEYOND_INTERFACE = "beyond the interface"  # a figure no drive on the rated interface can deliver


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str  # "IOPS", "MB/s", "%", "B", "s", "x"


@dataclass(frozen=True)
class Finding:
    kind: str  # start-vs-end, capped, spec, peak-decline, read-share-dip
    subject: str  # the test (or tests) it is about
    statement: str  # one line: what was found
    verdict: str  # what the figures support, e.g. "slower at the end", "reaches the spec", "no verdict"
    basis: str  # how it was judged
    figures: tuple[Figure, ...]

    def as_dict(self) -> dict:
        return {"kind": self.kind, "subject": self.subject, "statement": self.statement, "verdict": self.verdict,
                "basis": self.basis,
                "figures": [{"name": f.name, "value": f.value, "unit": f.unit} for f in self.figures]}


@dataclass(frozen=True)
class Spec:
    """A drive's rated figures (a drive file of the capacity catalogue); None: not rated."""

    name: str
    seq_read_mb_per_s: float | None = None
    seq_write_mb_per_s: float | None = None
    rand_read_iops: float | None = None
    rand_write_iops: float | None = None
    matched_by: str | None = None  # how the drive file was found without --spec: "model 'X'"
    interface: str | None = None  # the drive file's, e.g. "sata-6g", and the most it carries after line coding
    interface_mb_per_s: float | None = None


def findings(record: RunRecord, spec: Spec | None = None,
             tolerance_percent: float = DEFAULT_TOLERANCE_PERCENT) -> list[Finding]:
    """`spec`: the drive's ratings to check against; by default those the run was made with (`run --spec`)."""
    if record.info.options.get("imported_from") or not record.tests:
        return []  # imported output has no plan to read regions and caps from
    recorded = record.info.options.get("spec")
    if spec is None and isinstance(recorded, dict):
        spec = Spec(**recorded)
    return [*start_vs_end(record, tolerance_percent), *capped(record), *cached(record), *spec_check(record, spec),
            *limit_hit(record), *recovery(record, tolerance_percent), *peak_decline(record, tolerance_percent),
            *read_share_dips(record, tolerance_percent)]


def _unit(metric: str) -> str:
    return "IOPS" if metric == "iops" else "MB/s"


def _judged(base: Summary, other: Summary, tolerance_percent: float, better: str, worse: str, same: str,
            tests: tuple[StoredTest, ...] = ()):
    """(verdict, basis) of `other` against `base`, higher being better, in the finding's own words; a flag on one
    of `tests` that withholds compare's verdicts (other work beside it, fio stopped) withholds this one too."""
    judgement = judge(base, other, True, tolerance_percent)
    withheld = withheld_reason(flag for test in tests for flag, _ in test.flags)
    if judgement.verdict in (BETTER, WORSE) and withheld:
        return INCONCLUSIVE, withheld
    words = {BETTER: better, WORSE: worse}.get(judgement.verdict, judgement.verdict)
    if judgement.verdict == NO_VERDICT:
        return NO_VERDICT, "a single pass each: no spread measured (run with the default passes or --repeat 3)"
    basis = f"{judgement.basis} on n = {base.n} and {other.n}, tolerance {tolerance_percent:g} %"
    return (same if words == "within noise" else words), basis + (f": {judgement.reason}" if judgement.reason else "")


def start_vs_end(record: RunRecord, tolerance_percent: float) -> list[Finding]:
    """The same test on the first and on the last N bytes of the device, in one run."""
    units = planned_units(record)
    found = []
    for key, first in units.items():
        region = key.get("region") or ""
        if not region.startswith("first:"):
            continue
        match = [u for k, u in units.items() if k.without("region") == key.without("region")
                 and k.get("region") == "last:" + region.removeprefix("first:")]
        if not match:
            continue
        last = match[0]
        metric = METRIC_BY_NAME[first.params.get("metric", "iops")]
        for direction in dict.fromkeys(m.direction for t in first.tests for m in t.metrics):
            start, end = unit_sample(first, direction, metric), unit_sample(last, direction, metric)
            if start is None or end is None:
                continue
            verdict, basis = _judged(start, end, tolerance_percent, "faster at the end", "slower at the end",
                                     "the same at both ends (within noise)", first.tests + last.tests)
            share = ratio(start, end)
            span = region.removeprefix("first:")
            found.append(Finding(
                "start-vs-end", f"{first.label} / {last.label}",
                f"{direction} {metric.label} on the last {span} is {share:.2f}x that on the first {span}: {verdict}"
                if share is not None else f"{direction} {metric.label}: no figure at the start",
                verdict, basis, (Figure(f"first {span}", start.mean, _unit(metric.name)),
                                 Figure(f"last {span}", end.mean, _unit(metric.name)))))
    return found


def capped(record: RunRecord) -> list[Finding]:
    """Tests run once over their region with a time cap that stopped them before they covered it."""
    found = []
    for tests in planned_tests(record).values():
        params = tests[0].params
        if params.get("time_based", True) or not params.get("runtime") or params.get("trace"):
            continue
        expected = _region_bytes(tests[0])
        if not expected:
            continue
        moved = min(sum(m.io_bytes for m in test.metrics) for test in tests)
        if moved < COVERED_SHARE * expected:
            found.append(Finding(
                "capped", tests[0].label,
                f"stopped by its {params['runtime']:g} s cap after {moved / expected:.0%} of its region: not "
                "representative of the whole region (study M1's footnote); raise --runtime or shrink --size",
                "not representative", "fio's bytes moved against those of one pass over the region (random jobs: "
                "one pass each; parallel sequential jobs: a slice each)",
                (Figure("moved", moved, "B"), Figure("one pass", expected, "B"),
                 Figure("cap", params["runtime"], "s"))))
    return found


def cached(record: RunRecord) -> list[Finding]:
    """Tests whose data set fits a cache (the page cache, RAM, the drive's or controller's cache): their figures are
    the cache's. The traps flagged each test as it ran (analysis/traps.py), and the flag lines say the flag's message
    with its sizes and its remedy; the finding judges each flag and message once, for every test that carries it (a
    pgbench run's one data set flags each of its steps alike), with the sizes it rests on."""
    planned = list(planned_tests(record).values())
    carried: dict[tuple[str, str], list[StoredTest]] = {}  # a flag and its message -> the first test of each carrier
    for tests in planned:
        flagged = dict(flag for test in tests for flag in test.flags if flag[0] in CACHE_FLAGS)
        for flag_and_message in flagged.items():
            carried.setdefault(flag_and_message, []).append(tests[0])
    found = []
    for (flag, _), tests in carried.items():
        subject = "every test" if len(tests) == len(planned) > 1 else ", ".join(test.label for test in tests)
        data_set = _data_set_bytes(record, tests[0])
        figures = [Figure("data set", data_set, "B")] if data_set else []
        holder, key = _HOLDERS.get(flag, ("", ""))
        if isinstance(record.env.get(key), (int, float)) and record.env[key] > 0:
            figures.append(Figure(holder, record.env[key], "B"))
        found.append(Finding("cache", subject, _CACHE_STATEMENTS[flag], "figures of a cache",
                             f"the {flag} flag: the data set against what can hold it", tuple(figures)))
    return found


# What each cache flag says of the figures; its message (the flag line) says the sizes and what to do.
_CACHE_STATEMENTS = {
    "page-cache": "the page cache can hold the data set: these figures may be RAM's, not the disk's",
    "device-cache": "the drive's or controller's cache can hold the data set: these figures may be the cache's, "
                    "not the media's",
    "memory-target": "the target keeps its data in RAM: these figures are memory's, not a disk's",
}
# What holds the data set and its size as the run's environment recorded it (env/collect.py, run --cache).
_HOLDERS = {"page-cache": ("RAM", "ram_bytes"), "device-cache": ("cache", "declared_cache_bytes")}


def _data_set_bytes(record: RunRecord, test: StoredTest) -> int | None:
    """The bytes a cache would hold: a pgbench run's database as pg_database_size measured it once loaded (the
    run's 'pgbench' outcome: its steps' parameters have no size), a fio test's file, file set or region as the traps
    judged it; None where the test did not say (a whole device)."""
    if test.params.get("benchmark") == "pgbench":  # database/pgbench.py's Step.params
        data_set = (record.outcomes.get("pgbench") or {}).get("data_set") or {}
        return data_set.get("bytes")
    try:
        return data_set_bytes(TestSpec(label=test.label, **test.params))
    except TypeError:  # parameters of an older or foreign layout
        return test.params.get("size")


def recovery(record: RunRecord, tolerance_percent: float) -> list[Finding]:
    """The same test after pauses of different lengths (M1: flash recovers while idle, 161 -> 397 -> 488 MB/s)."""
    by_workload: dict[tuple, dict[float, list[StoredTest]]] = {}
    for tests in planned_tests(record).values():
        by_pause = by_workload.setdefault(match_params(tests[0].params), {})
        by_pause.setdefault(tests[0].params.get("pause") or 0.0, []).extend(tests)
    found = []
    for pauses in by_workload.values():
        if len(pauses) < 2:
            continue
        shortest, longest = min(pauses), max(pauses)
        metric = METRIC_BY_NAME[pauses[shortest][0].params.get("metric", "iops")]
        first, last = (PlannedUnit(pauses[p][0].label, pauses[p][0].params, tuple(pauses[p]))
                       for p in (shortest, longest))
        for direction in dict.fromkeys(m.direction for t in first.tests for m in t.metrics):
            before, after = unit_sample(first, direction, metric), unit_sample(last, direction, metric)
            if before is None or after is None:
                continue
            verdict, basis = _judged(before, after, tolerance_percent, "recovers with longer pauses",
                                     "slower after longer pauses", "the same after any pause (within noise)",
                                     first.tests + last.tests)
            figures = tuple(Figure(f"after {p:g} s", unit_sample(PlannedUnit("", {}, tuple(pauses[p])), direction,
                                                                 metric).mean, _unit(metric.name))
                            for p in sorted(pauses))
            found.append(Finding(
                "recovery", f"{first.label} / {last.label}",
                f"{direction} {metric.label} after a {longest:g} s pause is {after.mean / before.mean:.2f}x that "
                f"after {shortest:g} s: {verdict}", verdict, basis, figures))
    return found


def _region_bytes(test: StoredTest) -> int | None:
    """The bytes a once-over test moves: its region per job, or its slice per job for parallel sequential jobs."""
    try:
        spec = TestSpec(label=test.label, **test.params)
    except TypeError:  # parameters of an older or foreign layout
        return None
    if spec.file_set or not spec.size:
        return None
    return (sequential_job_slice(spec) or spec.size) * spec.jobs


def spec_check(record: RunRecord, spec: Spec | None) -> list[Finding]:
    """The run's best figure of each kind the spec sheet rates, against the rating."""
    if spec is None:
        return []
    units = planned_units(record)
    found = []
    for pattern, direction, metric_name, field in SPEC_READS:
        rated = getattr(spec, field)
        if rated is None:
            continue
        metric = METRIC_BY_NAME[metric_name]
        candidates = []
        for unit in units.values():
            p = unit.params
            fits = (p.get("bs", 0) >= SPEC_MIN_SEQUENTIAL_BS if pattern == "sequential"
                    else p.get("bs") == SPEC_RANDOM_BS)
            if (p.get("pattern"), p.get("direction"), p.get("bssplit")) == (pattern, direction, None) and fits:
                sample = unit_sample(unit, direction, metric)
                if sample is not None:
                    flags = (flag for test in unit.tests for flag, _ in test.flags)
                    candidates.append((sample.mean, sample, unit.label, withheld_reason(flags)))
        if not candidates:
            continue
        _, best, label, withheld = max(candidates, key=lambda c: c[0])
        share = best.mean / rated
        moved_mb_per_s = best.mean if metric_name == "mb_per_s" else best.mean * SPEC_RANDOM_BS / 1e6
        if spec.interface_mb_per_s and moved_mb_per_s > spec.interface_mb_per_s:
            verdict = BEYOND_INTERFACE  # a cache answered (the host's, the array's, the drive's DRAM): not the drive
            basis = (f"{moved_mb_per_s:,.0f} MB/s is faster than {spec.interface} carries "
                     f"({spec.interface_mb_per_s:,.0f} MB/s): a cache answered, not the drive the rating is for")
        elif best.n < 2:
            verdict, basis = NO_VERDICT, "a single pass: no spread measured (run with the default passes)"
        elif best.ci95_half_width is not None and abs(best.mean - rated) <= best.ci95_half_width:
            verdict, basis = "cannot tell", f"the rating lies within the 95 % interval of n = {best.n}"
        elif best.mean < rated and withheld:  # other work may have held the figure down
            verdict, basis = "cannot tell", withheld
        else:
            verdict = "reaches the spec" if best.mean >= rated else "misses the spec"
            basis = f"the 95 % interval of n = {best.n} lies {'above' if best.mean >= rated else 'below'} the rating"
        found.append(Finding(
            "spec", label,
            f"{pattern} {direction}: {best.mean:,.0f} {_unit(metric_name)} measured vs {rated:,.0f} rated for "
            f"{spec.name}{f' (matched by {spec.matched_by})' if spec.matched_by else ''} ({share:.0%}): {verdict}",
            verdict, basis,
            (Figure("measured", best.mean, _unit(metric_name)), Figure("rated", rated, _unit(metric_name)))))
    return found


def limit_hit(record: RunRecord) -> list[Finding]:
    """Tests whose throughput reached a ceiling (M4: results near the 25 GbE line): that link, not the drive, set the
    figure. Beyond the ceiling is a cache (the beyond-interface flag), not a finding about the link."""
    limits = ceilings(record.env)
    found = []
    for unit in planned_units(record).values():
        sample = summarize([sum(m.bw_bytes_per_s for m in test.metrics) for test in unit.tests])
        for name, ceiling in limits:
            if not CEILING_NEAR * ceiling <= sample.mean <= CEILING_MARGIN * ceiling:
                continue
            if sample.n < 2:
                verdict, basis = NO_VERDICT, "a single pass: no spread measured (run with the default passes)"
            elif sample.mean - (sample.ci95_half_width or 0) >= CEILING_NEAR * ceiling:
                verdict, basis = f"limited by {name}", f"the 95 % interval of n = {sample.n} lies above " \
                    f"{CEILING_NEAR:.0%} of the ceiling"
            else:
                verdict, basis = "cannot tell", f"the 95 % interval of n = {sample.n} reaches below {CEILING_NEAR:.0%}"
            found.append(Finding(
                "limit", unit.label, f"{sample.mean / 1e6:,.0f} MB/s is {sample.mean / ceiling:.0%} of {name}'s "
                f"{ceiling / 1e6:,.0f} MB/s: {verdict}", verdict, basis,
                (Figure("measured", sample.mean / 1e6, "MB/s"), Figure("ceiling", ceiling / 1e6, "MB/s"))))
    return found


def peak_decline(record: RunRecord, tolerance_percent: float) -> list[Finding]:
    """A time series (IOPS per interval) or rounds that start high and settle lower."""
    found = []
    for tests in planned_tests(record).values():
        if tests[0].params.get("group") == PRECONDITION_GROUP:
            continue
        if len(tests) > 2 and not repeated(record):  # rounds towards steady state
            values = [round_value(t.as_job(), "iops") for t in tests]
            what, subject = "rounds", tests[0].label
        else:
            by_time: dict[int, float] = {}
            for series in tests[0].series:
                if series.kind == "iops":  # read and write of a mixed test add up
                    for point in series.points:
                        by_time[point.t_ms] = by_time.get(point.t_ms, 0.0) + point.value
            values = [by_time[t] for t in sorted(by_time)]
            what, subject = "per-interval IOPS", tests[0].label
        if len(values) < 10:
            continue
        head = values[:max(2, int(len(values) * PEAK_SHARE))]
        tail = values[len(values) // 2:]
        start, settled = summarize(head), summarize(tail)
        verdict, basis = _judged(settled, start, tolerance_percent, "an initial peak, then a decline",
                                 "a slow start", "steady from the start (within noise)", tuple(tests))
        if verdict != "an initial peak, then a decline":
            continue
        found.append(Finding(
            "peak-decline", subject,
            f"{what}: {start.mean:,.0f} IOPS at first, {settled.mean:,.0f} IOPS once settled "
            f"({start.mean / settled.mean:.2f}x): the fresh-drive or cache figure is not the long-run one",
            verdict, basis + f" (the first {len(head)} and the last {len(tail)} {what})",
            (Figure("start", start.mean, "IOPS"), Figure("settled", settled.mean, "IOPS"))))
    return found


def read_share_dips(record: RunRecord, tolerance_percent: float) -> list[Finding]:
    """Along each read-share sweep (M5's curves), a point below both neighbours: a slump, not a smooth slope."""
    lines: dict[tuple, list] = {}
    for key, unit in planned_units(record).items():
        if key.get("direction") == "mixed":
            lines.setdefault(key.without("rwmixread"), []).append((key.get("rwmixread"), unit))
    found = []
    metric = METRIC_BY_NAME["iops"]
    for points in lines.values():
        if len(points) < 3:
            continue
        points.sort(key=lambda p: p[0])
        samples = [_mixed_iops(unit, metric) for _, unit in points]
        for i in range(1, len(points) - 1):
            here, before, after = samples[i], samples[i - 1], samples[i + 1]
            neighbour = min(before, after, key=lambda s: s.mean)
            verdict, basis = _judged(neighbour, here, tolerance_percent, "", "a dip", "",
                                     points[i - 1][1].tests + points[i][1].tests + points[i + 1][1].tests)
            if verdict != "a dip":
                continue
            share, label = points[i][0], points[i][1].label
            found.append(Finding(
                "read-share-dip", label,
                f"IOPS at {share} % read ({here.mean:,.0f}) fall below both neighbours ({before.mean:,.0f} at "
                f"{points[i - 1][0]} %, {after.mean:,.0f} at {points[i + 1][0]} %): a slump in the curve, which "
                "study M5 reads as a firmware flaw", verdict, basis,
                (Figure(f"{share} % read", here.mean, "IOPS"),
                 Figure(f"{points[i - 1][0]} % read", before.mean, "IOPS"),
                 Figure(f"{points[i + 1][0]} % read", after.mean, "IOPS"))))
    return found


def _mixed_iops(unit, metric) -> Summary:
    """Read + write IOPS of each repeat of a mixed test."""
    return summarize([sum(metric.value(m) or 0 for m in test.metrics) for test in unit.tests])
