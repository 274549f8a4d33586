"""The search for peak IOPS, judged against the noise: a setting that might be the peak is measured again, so that a
gain counts only beyond the spread of repeated passes and the peak is the mean of its passes, not the luckiest one.

Queue depth rises at one job (fourfold while IOPS keep pace with it, then doubling), then jobs double at the chosen
depth. Pure logic: it replays the passes measured so far, so a resumed run continues where it stopped.
"""

import math
from dataclasses import dataclass
from statistics import mean

from disklab.analysis.saturation import Probe
from disklab.suite.settings import SaturationSettings

Setting = tuple[int, int]  # (iodepth, jobs)

# While a step's IOPS grow by at least this share of its depth's growth, the device is far from saturation: queue
# depth rises fourfold rather than doubling (fewer steps on the way up, where a gain is never in doubt).
KEEPS_PACE = 0.75


@dataclass(frozen=True)
class Peak:
    """The chosen setting: its IOPS the mean of its passes, each percentile the worst of them."""

    probe: Probe
    passes: tuple[float, ...]  # IOPS of each pass

    def as_dict(self) -> dict:
        return {**self.probe.as_dict(), "passes": len(self.passes), "iops_min": min(self.passes),
                "iops_max": max(self.passes), "iops_passes": list(self.passes)}


def label(setting: Setting) -> str:
    return f"QD{setting[0]} x {setting[1]}"


class PeakSearch:
    """Give it each pass in the order it was measured (`record`): `wanted` is the setting to measure next, None once
    the peak is chosen (`peak`); `reasons` says why each phase stopped climbing.

    A new setting is measured once. It is a clear gain when it beats the best setting's highest pass by more than
    `gain_percent`: climbing goes on. It is no gain when it does not beat that highest pass (once the best has more
    passes: its gain is inside their spread), or when its p99 exploded. Between the two it might be the peak: both
    are measured again, alternately, up to `repeats` passes each; the gain counts only if the ranges stay apart (as
    soon as they overlap the pair is decided) and the means differ by more than `gain_percent`; otherwise the higher
    mean wins. A phase ends at the first setting that is no gain; the search's winner is measured to `repeats` passes
    if it has fewer.
    """

    def __init__(self, settings: SaturationSettings):
        self.settings = settings
        self.passes: dict[Setting, list[Probe]] = {}
        self.measured: list[Probe] = []  # every pass, in the order measured
        self.jobs_phase = False
        self.best: Setting | None = None
        self.pending: list[Setting] = []  # repeats still to run, in order
        self.then: tuple = ()  # what the repeats decide: ("pair", best, new) or ("end", winner)
        self.wanted: Setting | None = (1, 1)
        self.chosen: Setting | None = None
        self.reasons: list[str] = []

    @property
    def steps(self) -> int:
        return len(self.measured)

    def iops(self, setting: Setting) -> list[float]:
        return [p.iops for p in self.passes.get(setting, ())]

    @property
    def peak(self) -> Peak | None:
        if self.chosen is None:
            return None
        passes = self.passes[self.chosen]

        def worst(key: str) -> float | None:
            values = [getattr(p, key) for p in passes if getattr(p, key) is not None]
            return max(values) if values else None

        probe = Probe(*self.chosen, mean(self.iops(self.chosen)), worst("p50_ns"), worst("p99_ns"), worst("p99_9_ns"))
        return Peak(probe, tuple(self.iops(self.chosen)))

    def record(self, probe: Probe) -> None:
        setting = (probe.iodepth, probe.jobs)
        self.passes.setdefault(setting, []).append(probe)
        self.measured.append(probe)
        if not self.pending:
            self._judge(setting)
            return
        self.pending.pop(0)
        if self.pending and not self._overlap():
            self.wanted = self.pending[0]
        else:
            self.pending = []
            self._after_repeats()

    def _overlap(self) -> bool:
        """The pair's ranges overlap: more passes only widen them, so the gain can no longer count."""
        if self.then[0] != "pair":
            return False
        _, best, new = self.then
        return min(self.iops(new)) <= max(self.iops(best))

    def _judge(self, new: Setting) -> None:
        """One pass of a new setting against the best so far."""
        best = self.best
        if best is None:
            self.best = new
            self._climb(new, keeps_pace=True)
            return
        gain = 1 + self.settings.gain_percent / 100
        value, before = self.iops(new)[-1], self.iops(best)
        if value > max(before) * gain:
            self.best = new
            # IOPS from none (a first pass fio measured as 0, its runtime under a millisecond) keep any pace.
            pace = value / mean(before) if mean(before) else math.inf
            self._climb(new, pace >= KEEPS_PACE * new[0] / best[0] and not self.jobs_phase)
        elif self._exploded(new, best):
            self._end(best, f"p99 at {label(new)} grew more than {self.settings.explode_factor / 2:g}x as much as "
                            f"the I/O in flight over {label(best)}'s, for less than {self.settings.gain_percent:g} % "
                            "more IOPS")
        elif value <= max(before):
            self._end(best, f"{label(new)} gave {value:,.0f} IOPS, no gain over {label(best)}'s {_range(before)}")
        else:
            self._repeat([best, new], ("pair", best, new))

    def _after_repeats(self) -> None:
        kind, *which = self.then
        if kind == "end":
            self._finish(which[0])
            return
        best, new = which
        before, after = self.iops(best), self.iops(new)
        if mean(after) > mean(before) * (1 + self.settings.gain_percent / 100) and min(after) > max(before):
            self.best = new
            self._climb(new, keeps_pace=False)
            return
        winner = max((best, new), key=lambda s: mean(self.iops(s)))
        self._end(winner, f"{label(new)}'s gain over {label(best)} lay inside their spread ({_range(after)} vs "
                          f"{_range(before)})")

    def _climb(self, setting: Setting, keeps_pace: bool) -> None:
        depth, jobs = setting
        if self.jobs_phase:
            if jobs * 2 <= self.settings.max_jobs:
                self.wanted = (depth, jobs * 2)
                return
            self._end(setting, f"reached max_jobs ({self.settings.max_jobs})")
            return
        if depth < self.settings.max_iodepth:
            self.wanted = (min(depth * (4 if keeps_pace else 2), self.settings.max_iodepth), jobs)
            return
        self._end(setting, f"reached max_iodepth ({self.settings.max_iodepth})")

    def _exploded(self, new: Setting, best: Setting) -> bool:
        """p99 grew more than `explode_factor` / 2 times as much as the I/O in flight (4x for a doubling): more than
        queueing explains. Against the median of the best's passes, so that one disturbed pass does not set it."""
        last = self.passes[new][-1].p99_ns
        before = sorted(p.p99_ns for p in self.passes[best] if p.p99_ns)
        if not last or not before:
            return False
        growth = new[0] * new[1] / (best[0] * best[1])
        return last > self.settings.explode_factor / 2 * growth * before[len(before) // 2]

    def _end(self, winner: Setting, reason: str) -> None:
        """The phase stops climbing. The depth phase's winner goes on to the jobs phase as it is (if jobs gain, its
        passes would be wasted); the search's winner is measured to `repeats` passes before it is the peak."""
        self.reasons.append(f"{'jobs' if self.jobs_phase else 'queue depth'}: {reason}")
        if not self.jobs_phase and self.settings.max_jobs >= 2:
            self.best, self.jobs_phase, self.wanted = winner, True, (winner[0], 2)
            return
        self._repeat([winner], ("end", winner))

    def _repeat(self, which: list[Setting], then: tuple) -> None:
        """Alternate the settings (a, b, a, b) until each has `repeats` passes, then decide `then`."""
        counts = {s: len(self.passes[s]) for s in which}
        self.pending = []
        for _ in range(self.settings.repeats):
            for s in which:
                if counts[s] < self.settings.repeats:
                    counts[s] += 1
                    self.pending.append(s)
        self.then = then
        if self.pending:
            self.wanted = self.pending[0]
        else:
            self._after_repeats()

    def _finish(self, winner: Setting) -> None:
        self.chosen, self.wanted = winner, None


def _range(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:,.0f} IOPS"
    return f"{min(values):,.0f}-{max(values):,.0f} IOPS ({len(values)} passes)"

