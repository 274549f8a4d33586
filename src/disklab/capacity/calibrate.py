"""A drive model fitted to stored runs of one drive, so that planned arrays use measured figures.

Per direction, each block size's best IOPS (over the queue depths and job counts measured) gives the drive's
time per I/O at that size, t = 1 / IOPS; a (relative) least-squares line t = access + size / rate over the sizes
gives the per-command time and the large-block random transfer rate. Sequential tests, where present, give the
sequential rates; tests at one I/O in flight give the latency. Mixed tests fit the mix, used for reads and writes
alike. Each fit reports how well it holds (R², each point's error); a rate faster than the drive's interface is
refused (a cache answered, not the drive), and a poor fit or IOPS above what was measured are warned about.
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from disklab.capacity.catalogue import SMALL_BLOCK, Drive, faster_than_interface
from disklab.errors import UserError
from disklab.store.records import RunRecord, StoredTest
from disklab.units import format_size

DIRECTIONS = ("read", "write")
POOR_FIT_PERCENT = 25.0  # a fit with a point further off than this does not describe the drive well
# The fit's 4 KiB IOPS more than this above the best measured at any size: a rating no test showed (within the
# few per cent a fit's line passes above or below its points, it is the fit's error, shown per point).
ABOVE_MEASURED_PERCENT = 5.0
CACHE_ADVICE = "a cache answered; measure the raw drive with direct I/O"


@dataclass(frozen=True)
class Fit:
    """t = access_s + size / bytes_per_s, the measured points it was fitted to, and how well it holds."""

    direction: str  # "read", "write" or "mixed"
    access_s: float
    bytes_per_s: float
    points: tuple[tuple[int, float], ...]  # (block size, seconds per I/O)
    r_squared: float  # in the fit's own weighting (relative errors): 1 is a perfect line

    def time_s(self, size: int) -> float:
        return self.access_s + size / self.bytes_per_s

    @property
    def errors_percent(self) -> tuple[float, ...]:
        """Per point, the fitted IOPS against the measured: +10 means the fit promises 10 % more."""
        return tuple((seconds / self.time_s(size) - 1) * 100 for size, seconds in self.points)

    @property
    def median_error_percent(self) -> float:
        return statistics.median(abs(e) for e in self.errors_percent)

    @property
    def max_error_percent(self) -> float:
        return max(abs(e) for e in self.errors_percent)

    @property
    def best_measured_iops(self) -> float:
        return max(1 / seconds for _, seconds in self.points)


@dataclass(frozen=True)
class Calibration:
    drive: Drive
    fits: tuple[Fit, ...]  # each fit once: a stand-in for a missing direction is not repeated
    notes: tuple[str, ...]
    warnings: tuple[str, ...]  # figures that may be wrong, each named


@dataclass(frozen=True)
class DriveFacts:
    """What a run cannot tell: given by the user. None: not given, and so unknown in the drive file."""

    name: str
    capacity_bytes: int
    interface: str
    power_idle_w: float | None = None
    power_active_w: float | None = None
    price_eur: float | None = None
    rated_read_iops: float | None = None  # spec sheet's 4 KiB ratings, to warn when the fit claims more
    rated_write_iops: float | None = None


def fit_line(points: Sequence[tuple[int, float]], direction: str) -> Fit:
    """Least squares of time per I/O over block size, each point weighted by 1 / time^2: a sweep spans four
    orders of magnitude of time, and relative errors keep the small blocks from being drowned by the large.
    The intercept may not fall below zero."""
    weights = [1 / y**2 for _, y in points]
    sw = sum(weights)
    sx = sum(w * x for w, (x, _) in zip(weights, points))
    sy = sum(w * y for w, (_, y) in zip(weights, points))
    sxx = sum(w * x * x for w, (x, _) in zip(weights, points))
    sxy = sum(w * x * y for w, (x, y) in zip(weights, points))
    slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx)
    intercept = (sy - slope * sx) / sw
    if intercept < 0:  # a pure transfer line through the origin instead
        slope, intercept = sxy / sxx, 0.0
    if slope <= 0:
        raise UserError(f"the {direction} tests do not take longer for larger blocks: no transfer rate to fit "
                        "(a cache answered them? run the blocksize or transfer-sweep suite on the raw drive)")
    return Fit(direction, intercept, 1 / slope, tuple(points), _r_squared(points, weights, intercept, slope))


def _r_squared(points: Sequence[tuple[int, float]], weights: Sequence[float], intercept: float, slope: float) -> float:
    """1 - weighted residual / weighted total sum of squares, in the weighting the line was fitted in."""
    mean = sum(w * y for w, (_, y) in zip(weights, points)) / sum(weights)
    residual = sum(w * (y - intercept - slope * x) ** 2 for w, (x, y) in zip(weights, points))
    total = sum(w * (y - mean) ** 2 for w, (_, y) in zip(weights, points))
    return 1 - residual / total if total else 1.0


def fit_drive(records: Sequence[RunRecord], facts: DriveFacts) -> Calibration:
    tests = [t for record in records for t in record.tests if not t.params.get("bssplit")]
    notes = []
    fits = {}
    for direction in (*DIRECTIONS, "mixed"):
        points = best_time_per_size(tests, direction)
        if len(points) >= 2:
            fits[direction] = fit_line(points, direction)
    if not fits:
        raise UserError("no random read, write or mixed tests at two or more block sizes in these runs: calibrate "
                        "needs a block-size sweep (e.g. 'disklab run blocksize' or 'profile' on the drive)")
    for direction in DIRECTIONS:
        if direction not in fits:
            stand_in = fits.get("mixed") or next(iter(fits.values()))
            fits[direction] = stand_in
            notes.append(f"no random {direction} sweep: {direction}s use the {stand_in.direction} fit")
    read, write = fits["read"], fits["write"]
    unique = tuple(dict.fromkeys(fits[d] for d in (*DIRECTIONS, *fits)))
    measured_seq = {d: best_sequential_rate(tests, d) for d in DIRECTIONS}
    _refuse_faster_than_interface(unique, measured_seq, facts.interface)
    if facts.power_idle_w and facts.power_active_w and facts.power_idle_w > facts.power_active_w:
        raise UserError(f"idle power {facts.power_idle_w:g} W is above the power under load "
                        f"{facts.power_active_w:g} W")
    seq_read = measured_seq["read"] or read.bytes_per_s
    seq_write = measured_seq["write"] or write.bytes_per_s
    latency_read, latency_write = idle_latency(tests, "read"), idle_latency(tests, "write")
    run_ids = ", ".join(str(r.info.id) for r in records)
    drive = Drive(
        name=facts.name, description=f"measured drive (runs {run_ids})", kind="measured", interface=facts.interface,
        capacity_bytes=facts.capacity_bytes, seq_read_bytes_per_s=seq_read, seq_write_bytes_per_s=seq_write,
        power_idle_w=facts.power_idle_w, power_active_w=facts.power_active_w, price_eur=facts.price_eur,
        rand_read_iops=_rated_iops(read), rand_write_iops=_rated_iops(write),
        rand_read_bytes_per_s=read.bytes_per_s, rand_write_bytes_per_s=write.bytes_per_s,
        latency_read_s=latency_read, latency_write_s=latency_write,
        sources=(("performance", f"fitted by disklab capacity calibrate to runs {run_ids} of {records[0].info.target}"),
                 ("power", "given" if facts.power_active_w or facts.power_idle_w else "not given: unknown"),
                 ("price", "given" if facts.price_eur else "not given: unknown")),
    )
    ratings = {"read": facts.rated_read_iops, "write": facts.rated_write_iops}
    return Calibration(drive, unique, tuple(notes), _warnings(unique, ratings))


def _refuse_faster_than_interface(fits: Sequence[Fit], measured_seq: dict[str, float | None], interface: str) -> None:
    """No drive moves data faster than its link: such a figure came from a cache (page cache, controller)."""
    figures = [(f"sequential {d}", rate) for d, rate in measured_seq.items() if rate]
    figures += [(f"random {fit.direction} transfer rate (fitted)", fit.bytes_per_s) for fit in fits]
    for what, rate in figures:
        problem = faster_than_interface(what, rate, interface)
        if problem:
            raise UserError(f"{problem}: {CACHE_ADVICE}")


def _warnings(fits: Sequence[Fit], ratings: dict[str, float | None]) -> tuple[str, ...]:
    """One line per doubtful figure: 4 KiB IOPS above what was measured or rated, and poor fits."""
    lines = []
    for fit in fits:
        small = 1 / fit.time_s(SMALL_BLOCK)
        if small > fit.best_measured_iops * (1 + ABOVE_MEASURED_PERCENT / 100):
            smallest = min(size for size, _ in fit.points)
            advice = (f"the sweep starts at {format_size(smallest)}: extend it down to 4 KiB" if smallest > SMALL_BLOCK
                      else "the line misses the small blocks: see the error per block size")
            lines.append(f"the {fit.direction} fit gives {small:,.0f} IOPS at 4 KiB, above the best measured at any "
                         f"block size ({fit.best_measured_iops:,.0f} IOPS): the drive file's IOPS rating is higher "
                         f"than anything measured ({advice})")
        for direction in DIRECTIONS if fit.direction == "mixed" else (fit.direction,):
            rated = ratings.get(direction)
            if rated and small > rated:
                lines.append(f"the {fit.direction} fit gives {small:,.0f} IOPS at 4 KiB, above the {direction} "
                             f"rating given ({rated:,.0f} IOPS)")
        if fit.max_error_percent > POOR_FIT_PERCENT:
            lines.append(f"the {fit.direction} fit is poor: a point is {fit.max_error_percent:,.0f} % off (median "
                         f"{fit.median_error_percent:,.0f} %); the drive does not follow access + size / rate over "
                         "these sizes (a cache or too few I/Os in flight at some sizes?)")
    return tuple(lines)


def _rated_iops(fit: Fit) -> float:
    """The fit's 4 KiB IOPS: with the fitted random transfer rate, it gives the model back the fitted access time."""
    return 1 / fit.time_s(SMALL_BLOCK)


def best_time_per_size(tests: Sequence[StoredTest], direction: str) -> list[tuple[int, float]]:
    """Per block size, the least time per I/O (the most IOPS) of the random tests in this direction."""
    best: dict[int, float] = {}
    for test in tests:
        p = test.params
        if p.get("pattern") != "random" or p.get("direction") != direction:
            continue
        iops = sum(m.iops for m in test.metrics if m.direction in DIRECTIONS)
        if iops > 0:
            best[p["bs"]] = max(best.get(p["bs"], 0.0), iops)
    return sorted((size, 1 / iops) for size, iops in best.items())


def best_sequential_rate(tests: Sequence[StoredTest], direction: str) -> float | None:
    rates = [m.bw_bytes_per_s for t in tests if t.params.get("pattern") == "sequential"
             and t.params.get("direction") == direction for m in t.metrics if m.direction == direction]
    return max(rates, default=None)


def idle_latency(tests: Sequence[StoredTest], direction: str) -> float | None:
    """Mean latency of the smallest random I/O measured with one I/O in flight."""
    idle = [t for t in tests if t.params.get("pattern") == "random" and t.params.get("direction") == direction
            and t.params.get("jobs", 1) * t.params.get("iodepth", 1) == 1]
    if not idle:
        return None
    smallest = min(idle, key=lambda t: t.params["bs"])
    return next((m.lat_mean_ns / 1e9 for m in smallest.metrics if m.direction == direction), None)
