"""Steady state against spare area (study M4): the runs of an over-provisioning series, one per level, each with its
rounds and its steady window, and each level judged against the least over-provisioned level that reached steady
state. A level that never reached steady state has no steady figure: its rounds are shown, its verdict is none.
"""

from collections.abc import Sequence
from dataclasses import dataclass, replace

from disklab.analysis.compare import steady_window
from disklab.analysis.stats import Summary, summarize
from disklab.analysis.steady import stored_rounds
from disklab.analysis.verdict import (
    BETTER, DEFAULT_TOLERANCE_PERCENT, INCONCLUSIVE, NO_VERDICT, WORSE, Judgement, judge, ratio,
)
from disklab.analysis.withheld import withheld_reason
from disklab.store.records import RunRecord


@dataclass(frozen=True)
class SpareAreaLevel:
    run_id: int
    percent: int  # of the device left unused
    used_bytes: int  # the share the suite wrote
    metric: str  # "iops" or "mb_per_s": what the rounds were judged on
    rounds: tuple[float, ...]  # the workload's figure in each round, in order
    round_ends_s: tuple[float, ...]  # measured time at the end of each round, from the first round's start
    summary: str  # the steady-state verdict in words, as `show` prints it
    steady: Summary | None  # the steady window's rounds; None: steady state not reached
    withheld_by: str | None  # a flag on a round of the window withholds a verdict on it (why)
    judgement: Judgement | None = None  # against the baseline level; None for the baseline itself
    ratio: float | None = None  # steady figure / the baseline's


def spare_area_levels(records: Sequence[RunRecord],
                      tolerance_percent: float = DEFAULT_TOLERANCE_PERCENT) -> list[SpareAreaLevel]:
    """The steady runs of an over-provisioning series by level (others left out); the first level with a steady
    figure is the baseline."""
    levels = sorted((_level(r) for r in records if _is_level(r)), key=lambda level: level.percent)
    base = next((level for level in levels if level.steady), None)
    return [level if level is base else _judged(level, base, tolerance_percent) for level in levels]


def _is_level(record: RunRecord) -> bool:
    configuration = record.info.options.get("configuration")
    return (isinstance(configuration, dict) and isinstance(configuration.get("overprovision"), dict)
            and isinstance(record.outcomes.get("steady_state"), dict))


def _level(record: RunRecord) -> SpareAreaLevel:
    overprovision = record.info.options["configuration"]["overprovision"]
    outcome = record.outcomes["steady_state"]
    stored = stored_rounds(record)
    rounds, values, metric = stored.tests, stored.values, stored.metric
    ends, elapsed = [], 0.0
    for test in rounds:
        elapsed += max((m.runtime_ms for m in test.metrics), default=0) / 1000
        ends.append(elapsed)
    window = steady_window(record)
    steady = [value for test, value in zip(rounds, values) if test.attempt in window]
    flags = (flag for test in rounds if test.attempt in window for flag, _ in test.flags)
    return SpareAreaLevel(
        run_id=record.info.id, percent=overprovision["percent"], used_bytes=overprovision["used_bytes"],
        metric=metric, rounds=tuple(values), round_ends_s=tuple(ends), summary=outcome.get("summary", ""),
        steady=summarize(steady) if len(steady) > 1 else None, withheld_by=withheld_reason(flags),
    )


def _judged(level: SpareAreaLevel, base: SpareAreaLevel | None, tolerance_percent: float) -> SpareAreaLevel:
    """The level's steady figure against the baseline's, as compare judges repeats (here: the windows' rounds)."""
    if base is None or level.steady is None:
        why = f"OP {level.percent} % did not reach steady state" if level.steady is None else "no level reached it"
        return replace(level, judgement=Judgement(NO_VERDICT, "", f"{why}: there is no steady figure to compare; "
                                                  "give it more rounds (a suite copy with a larger max_rounds)"))
    judgement = judge(base.steady, level.steady, True, tolerance_percent)
    withheld = base.withheld_by or level.withheld_by
    if judgement.verdict in (BETTER, WORSE) and withheld:
        judgement = Judgement(INCONCLUSIVE, judgement.basis, withheld)
    return replace(level, judgement=judgement, ratio=ratio(base.steady, level.steady))
