"""Charts of the methods that are not a set of fio tests side by side: a saturation search's latency under load, and
the rounds of a steady-state or write-saturation run with their verification window as SNIA's PTS plots it (pgbench's
sweep: pgbench_charts.py).

Each function takes the runs charted together and returns specs for the runs its method made (none for others). They
draw what the run's schedule concluded and stored (its outcome: the levels and knee, the steady verdict), so that a
chart marks the same knee and window as `show` prints.
"""

from collections.abc import Sequence
from dataclasses import replace

from disklab.analysis.saturation import HELD_FRACTION
from disklab.analysis.steady import fitted_line, stored_rounds
from disklab.report.flag_reasons import RATE_NOT_HELD
from disklab.report.html.charts import ChartSpec, Reference, SeriesSpec, describe, log_scale, y_axis_label
from disklab.report.html.pgbench_charts import pgbench_charts
from disklab.report.labels import run_labels
from disklab.report.metrics import REGISTRY
from disklab.report.table import planned_flags
from disklab.report.views import stored_suite
from disklab.store.records import RunRecord

# The saturation outcome's latency keys (analysis/saturation.py's Probe), as the chart names them.
_LEVEL_PERCENTILES = (("p50", "p50_ns"), ("p99", "p99_ns"), ("p99.9", "p99_9_ns"))
_BANDS = (10, 20)  # percent either side of the window's average: SNIA's +/-10 % (a 20 % excursion), and twice that
_ROUND_TICKS = 30  # more rounds than this (write saturation's minutes): the axis picks its own ticks


def saturate_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """Latency percentiles over the load each level offered, in the order the levels ran (offered load rises, so the
    line never runs back); a level that did not deliver its load, or whose test carries a flag, ringed; the knee and
    the p99 bound marked."""
    charts = []
    for n, (record, label) in enumerate(_labelled(records), start=1):
        outcome = record.outcomes.get("saturation")
        if not isinstance(outcome, dict) or not outcome.get("levels"):
            continue
        levels, peak = outcome["levels"], outcome["peak"]
        flags = [_level_flags(record, lv, _offered(lv, peak)) for lv in levels]
        series = tuple(
            SeriesSpec(name, tuple((_offered(lv, peak), lv[key] / 1e3) for lv in levels if lv.get(key) is not None),
                       flags=tuple(f for lv, f in zip(levels, flags) if lv.get(key) is not None))
            for name, key in _LEVEL_PERCENTILES)
        series = tuple(s for s in series if s.points)
        knee, bound = outcome.get("knee"), outcome.get("p99_bound_ns")
        references = []
        if knee:
            references.append(Reference("x", _offered(knee, peak), f"knee: {knee['percent']} % of peak"))
        if bound:
            references.append(Reference("y", bound / 1e3, f"p99 bound {bound / 1e3:,.0f} µs"))
        short = [f"{lv['percent']} %" for lv in levels if not lv.get("held", True)]
        charts.append(ChartSpec(
            runs=(record.info.id,),
            id=f"saturate-{n}", kind="line", title=f"saturate: IOPS vs latency percentiles · {label}",
            caption=f"completion latency percentiles (each the worst of the directions) at each load level, "
            f"{levels[0]['percent']} % .. {levels[-1]['percent']} % of the peak, in the order of the load fio's rate "
            "limit offered · ringed: a level that delivered under "
            f"{HELD_FRACTION * 100:g} % of its load (rate-not-held) or whose test carries a flag · dashed: the knee (the "
            "last level before p99 more than doubles)" + " and the p99 bound" * bool(bound),
            x_label=f"offered load (% of the peak, {peak['iops']:,.0f} IOPS)", y_label=y_axis_label("latency µs", series),
            series=series, x_ticks=tuple((_offered(lv, peak), f"{lv['percent']} %") for lv in levels),
            y_log=log_scale(series), references=tuple(references), metric="clat_p99_us",
            note=" · ".join([f"peak {peak['iops']:,.0f} IOPS{_passes_text(peak)} at QD{peak['iodepth']} x "
                             f"{peak['jobs']} job{'s' * (peak['jobs'] > 1)}", _knee_text(knee), *_bound_text(outcome)]
                            + [f"rate not held at {', '.join(short)}"] * bool(short)),
        ))
    return charts


def _offered(level: dict, peak: dict) -> float:
    """The IOPS fio's rate limit offered the level (runs stored before the levels kept it: its share of the peak)."""
    return level.get("target_iops") or peak["iops"] * level["percent"] / 100


def _level_flags(record: RunRecord, level: dict, offered: float) -> tuple[tuple[str, str], ...]:
    """The flags of the level's test, and rate-not-held where it delivered less than it was offered."""
    tests = [t for t in record.tests if t.label.endswith(f" at {level['percent']} %")]
    flags = planned_flags(tests, "passes") if tests else []
    if not level.get("held", True):
        flags.append((RATE_NOT_HELD, f": {level['iops']:,.0f} IOPS delivered of {offered:,.0f} offered"))
    return tuple(flags)


def _passes_text(peak: dict) -> str:
    """The mean of the peak's passes and their range (runs stored before the search repeated its peak: one pass)."""
    if peak.get("passes", 1) < 2:
        return ""
    return f" (mean of {peak['passes']} passes, {peak['iops_min']:,.0f}-{peak['iops_max']:,.0f})"


def _knee_text(knee: dict | None) -> str:
    if not knee:
        return "no knee: p99 stayed within twice the lowest p99 of lighter loads"
    return f"knee at {knee['percent']} % of the peak: {knee['iops']:,.0f} IOPS, p99 {knee['p99_ns'] / 1e3:,.0f} µs"


def _bound_text(outcome: dict) -> list[str]:
    bound = outcome.get("p99_bound_ns")
    if not bound:
        return []
    best = outcome.get("best_under_p99")
    if not best:
        return [f"no level kept p99 <= {bound / 1e3:,.0f} µs"]
    return [f"highest load with p99 <= {bound / 1e3:,.0f} µs: {best['iops']:,.0f} IOPS ({best['percent']} %)"]


def steady_charts(records: Sequence[RunRecord]) -> list[ChartSpec]:
    """Per steady or write-saturation run: its figure per round (convergence), and its last or steady window with
    the window's average, the +/-10 % and +/-20 % bands and the fitted line (verification)."""
    charts = []
    for n, (record, label) in enumerate(_labelled(records), start=1):
        verdict = record.outcomes.get("steady_state")
        rounds = stored_rounds(record) if isinstance(verdict, dict) else None
        if not rounds or not rounds.values:
            continue
        method = "write saturation" if "write_saturation" in record.outcomes else "steady state"
        unit = REGISTRY[rounds.metric].unit
        window = tuple(verdict.get("window") or ())
        full = verdict.get("excursion_percent") is not None  # a whole window was judged
        last = verdict.get("round") or len(rounds.values)
        first = last - len(window) + 1
        which = "steady window" if verdict.get("reached") else "last window"
        flags = tuple(tuple(planned_flags((test,), "rounds")) for test in rounds.tests)
        lines = [SeriesSpec(f"{unit} per round", tuple((i, v) for i, v in enumerate(rounds.values, start=1)),
                            flags=flags)]
        lines += [SeriesSpec(which, tuple(enumerate(window, start=first)), flags=flags[first - 1:last])] * full
        workload = describe(rounds.tests[-1].params)
        marks = (Reference("x", first, f"{which}: rounds {first}-{last}"), Reference("x", last, "")) * full
        charts.append(ChartSpec(
            runs=(record.info.id,),
            id=f"steady-rounds-{n}", kind="line", title=f"{method}: convergence per round · {label}",
            caption=f"{unit} of each round of the workload ({workload}), in order, on a linear axis from zero as "
            "SNIA's PTS plots convergence" + f"; the {which} ({len(window)} rounds) drawn again between dashed lines "
            "(its average and +/-10 %, +/-20 % bands: the verification chart)" * full,
            x_label="round", y_label=y_axis_label(unit, ()), series=tuple(lines), references=marks,
            x_ticks=_round_ticks(1, len(rounds.values)), note=verdict.get("summary", ""),
        ))
        if full:
            charts.append(_verification(f"steady-window-{n}", f"{method}: verification window · {label}", record,
                                        verdict, lines[1], unit))
    return charts


def _verification(chart_id: str, title: str, record: RunRecord, verdict: dict, rounds: SeriesSpec,
                  unit: str) -> ChartSpec:
    """The window's rounds (`rounds`: as the convergence chart draws them, flags and all)."""
    window, first = tuple(v for _, v in rounds.points), rounds.points[0][0]
    average = sum(window) / len(window)
    start, per_round = fitted_line(window)
    last = first + len(window) - 1
    fit = SeriesSpec(f"fitted line: {verdict['slope_percent']:.1f} % across the window",
                     ((first, start), (last, start + per_round * (len(window) - 1))))
    bands = [Reference("y", average * (1 + sign * p / 100), f"{'+' if sign > 0 else '-'}{p} %")
             for p in _BANDS for sign in (1, -1)]
    suite = stored_suite(record)
    criteria = suite.rounds.criteria if suite and suite.rounds else None
    limits = f" (at most {criteria.excursion_percent:g} %)" if criteria else ""
    slope_limit = f" (at most {criteria.slope_percent:g} %)" if criteria else ""
    return ChartSpec(
        runs=(record.info.id,),
        id=chart_id, kind="line", title=title,
        caption=f"the {'steady' if verdict.get('reached') else 'last'} window's rounds {first}-{last} with their "
        f"average, lines at +/-10 % and +/-20 % of it and the least-squares line through them, as SNIA's PTS "
        "plots its measurement window · y axis fitted to the figures, not from zero",
        x_label="round", y_label=y_axis_label(unit, ()),
        series=(replace(rounds, name=f"{unit} per round"), fit),
        x_ticks=_round_ticks(first, last), y_from_zero=False,
        references=(Reference("y", average, f"average {average:,.0f} {unit}"), *bands),
        note=f"{'steady' if verdict.get('reached') else 'not steady'} · excursion (max - min) "
        f"{verdict['excursion_percent']:.1f} % of the average{limits} · fitted slope {verdict['slope_percent']:.1f} % "
        f"across the window{slope_limit}",
    )


def _round_ticks(first: int, last: int) -> tuple[tuple[float, str], ...]:
    return tuple((r, str(r)) for r in range(first, last + 1)) if last - first < _ROUND_TICKS else ()


def _labelled(records: Sequence[RunRecord]) -> list[tuple[RunRecord, str]]:
    return list(zip(records, run_labels([r.info for r in records])))


METHOD_CHARTS = (saturate_charts, pgbench_charts, steady_charts)


def method_charts(records: Sequence[RunRecord]) -> tuple[ChartSpec, ...]:
    """Every method chart that applies to these runs; they come before the charts of fio tests (charts.py)."""
    return tuple(chart for make in METHOD_CHARTS for chart in make(records))
