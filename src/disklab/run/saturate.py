"""Saturation search, then latency under rate-limited load. Each setting the search measures is a test of its own
(its own plan_index); the passes of a setting measured again are its attempts, as repeats are stored.

The steps are recomputed from the results so far, so a resumed run continues where it stopped.
"""

from dataclasses import replace
from typing import Sequence

from disklab.analysis.peak_search import Peak, PeakSearch
from disklab.analysis.saturation import Level, best_under, knee, level_rate_per_job, probe_of
from disklab.errors import UserError
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
        search = self._replay(finished)[0]
        if search.wanted is None:
            return search.steps + len(self.settings.levels)
        return max(search_steps(self.settings)[1], search.steps + 1 + len(self.settings.levels))

    def _replay(self, finished: Sequence[Finished]) -> tuple[PeakSearch, list[Level], Step | None]:
        """Walk the stored steps in the order they ran: search passes first, then load levels; the first missing one
        is next."""
        search = PeakSearch(self.settings)
        index: dict[tuple[int, int], int] = {}  # plan_index of each setting, in the order first measured
        n = 0
        while (wanted := search.wanted) is not None:
            plan_index = index.setdefault(wanted, len(index))
            if n == len(finished):
                return search, [], Step(plan_index, len(search.iops(wanted)) + 1, self._probe_test(*wanted))
            done = finished[n].step.test
            if (done.iodepth, done.jobs) != wanted:
                raise UserError(f"step {n + 1} of this saturation search ran QD{done.iodepth} x {done.jobs} where the "
                                f"search now asks for QD{wanted[0]} x {wanted[1]} (a run of an older disklab): start "
                                "it again rather than resume it")
            search.record(probe_of(*wanted, finished[n].job))
            n += 1
        top = search.peak
        levels = []
        for i, percent in enumerate(self.settings.levels):
            target = top.probe.iops * percent / 100
            if n == len(finished):
                return search, levels, Step(len(index) + i, 1, self._level_test(top, percent))
            levels.append(Level(percent, target, probe_of(*search.chosen, finished[n].job)))
            n += 1
        return search, levels, None

    def _probe_test(self, iodepth: int, jobs: int) -> TestSpec:
        return replace(self.template, label=f"{self.template.group} Q{iodepth}T{jobs}", iodepth=iodepth, jobs=jobs,
                       rate_iops=None)

    def _level_test(self, top: Peak, percent: int) -> TestSpec:
        depth, jobs = top.probe.iodepth, top.probe.jobs
        return replace(self.template, label=f"{self.template.group} Q{depth}T{jobs} at {percent} %",
                       iodepth=depth, jobs=jobs, rate_iops=level_rate_per_job(top.probe, percent))

    def outcomes(self, finished: Sequence[Finished]) -> dict:
        search, levels, _ = self._replay(finished)
        top = search.peak
        outcome = {
            "peak": top.as_dict(), "search": [p.as_dict() for p in search.measured], "stopped": search.reasons,
            "levels": [lv.as_dict() for lv in levels],
            "summary": f"saturation: peak {top.probe.iops:,.0f} IOPS at queue depth {top.probe.iodepth} x "
                       f"{top.probe.jobs} job{'s' if top.probe.jobs > 1 else ''}, the mean of {len(top.passes)} "
                       f"passes ({min(top.passes):,.0f}-{max(top.passes):,.0f}); {search.steps} search steps, "
                       f"stopped: {'; '.join(search.reasons)}",
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
