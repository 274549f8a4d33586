"""Saturation search, then latency under rate-limited load: each step is a test of its own (its own plan_index).

The steps are recomputed from the results so far, so a resumed run continues where it stopped.
"""

from dataclasses import replace
from typing import Sequence

from disklab.analysis.saturation import (
    Level, Probe, best_under, knee, level_rate_per_job, next_probe, peak, probe_of,
)
from disklab.plan.build import Plan
from disklab.plan.estimate import search_steps
from disklab.run.schedule import Finished, Step
from disklab.suite.model import TestSpec
from disklab.suite.settings import SaturationSettings


class SaturateSchedule:
    def __init__(self, plan: Plan, settings: SaturationSettings):
        if len(plan.tests) != 1:
            raise ValueError("a saturation search runs one test")
        self.template = plan.tests[0]
        self.settings = settings

    def next_step(self, finished: Sequence[Finished]) -> Step | None:
        return self._replay(finished)[2]

    def expected_steps(self, finished: Sequence[Finished] = ()) -> int:
        """The steps a search typically takes (plan/estimate.py) until it ends; then exactly the steps it took and
        its load levels."""
        probes = self._replay(finished)[0]
        if next_probe(probes, self.settings) is None:
            return len(probes) + len(self.settings.levels)
        return max(search_steps(self.settings)[1], len(probes) + 1 + len(self.settings.levels))

    def _replay(self, finished: Sequence[Finished]) -> tuple[list[Probe], list[Level], Step | None]:
        """Walk the stored steps in order: search probes first, then load levels; the first missing one is next."""
        ordered = sorted(finished, key=lambda f: f.step.plan_index)
        probes: list[Probe] = []
        n = 0
        while (settings := next_probe(probes, self.settings)) is not None:
            if n == len(ordered):
                return probes, [], Step(n, 1, self._probe_test(*settings))
            probes.append(probe_of(*settings, ordered[n].job))
            n += 1
        top = peak(probes)
        levels = []
        for percent in self.settings.levels:
            target = top.iops * percent / 100
            if n == len(ordered):
                return probes, levels, Step(n, 1, self._level_test(top, percent))
            levels.append(Level(percent, target, probe_of(top.iodepth, top.jobs, ordered[n].job)))
            n += 1
        return probes, levels, None

    def _probe_test(self, iodepth: int, jobs: int) -> TestSpec:
        return replace(self.template, label=f"{self.template.group} Q{iodepth}T{jobs}", iodepth=iodepth, jobs=jobs,
                       rate_iops=None)

    def _level_test(self, top: Probe, percent: int) -> TestSpec:
        rate = level_rate_per_job(top, percent)
        return replace(self.template, label=f"{self.template.group} Q{top.iodepth}T{top.jobs} at {percent} %",
                       iodepth=top.iodepth, jobs=top.jobs, rate_iops=rate)

    def outcomes(self, finished: Sequence[Finished]) -> dict:
        probes, levels, _ = self._replay(finished)
        top = peak(probes)
        outcome = {
            "peak": top.as_dict(), "search": [p.as_dict() for p in probes], "levels": [lv.as_dict() for lv in levels],
            "summary": f"saturation: peak {top.iops:,.0f} IOPS at queue depth {top.iodepth} x {top.jobs} "
                       f"job{'s' if top.jobs > 1 else ''} (search stopped after {self.settings.patience} steps "
                       f"in a row "
                       f"added less than {self.settings.gain_percent:g} %, p99 exploded, or a limit was reached)",
        }
        found = knee(levels)
        outcome["knee"] = found.as_dict() if found else None
        lines = [outcome["summary"], _latency_line(levels)]
        lines.append(f"knee: p99 more than doubles beyond {found.percent} % of the peak ({found.probe.iops:,.0f} IOPS, "
                     f"p99 {_us(found.probe.p99_ns)})" if found else
                     "knee: none; p99 stayed within twice the lowest p99 of lighter loads up to the peak")
        bound = self.settings.p99_bound_ns
        if bound:
            best = best_under(levels, bound)
            outcome["p99_bound_ns"] = bound
            outcome["best_under_p99"] = best.as_dict() if best else None
            lines.append(f"highest load with p99 <= {_us(bound)}: {best.probe.iops:,.0f} IOPS ({best.percent} % of the "
                         f"peak, p99 {_us(best.probe.p99_ns)})" if best else
                         f"no load level kept p99 <= {_us(bound)} (the lightest, {levels[0].percent} %, had "
                         f"{_us(levels[0].probe.p99_ns)})" if levels else
                         f"no load level measured against {_us(bound)}")
        outcome["summary"] = "\n".join(lines)
        return {"saturation": outcome}


def _latency_line(levels: Sequence[Level]) -> str:
    cells = [f"{lv.percent}%: {lv.probe.iops:,.0f} IOPS{'' if lv.held else ' (rate not held)'} "
             f"p99 {_us(lv.probe.p99_ns)}" for lv in levels]
    return "latency under load: " + "; ".join(cells)


def _us(ns: float | None) -> str:
    return "n/a" if ns is None else f"{ns / 1000:,.0f} us"
