"""A drive model fitted to stored runs of one drive, so that planned arrays use measured figures.

Per direction, each block size's best IOPS (over the queue depths and job counts measured) gives the drive's
time per I/O at that size, t = 1 / IOPS; a (relative) least-squares line t = access + size / rate over the sizes
gives the per-command time and the transfer rate. Sequential tests, where present, give the sequential
rates; tests at one I/O in flight give the latency. Mixed tests fit the mix, used for reads and writes alike.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from disklab.capacity.catalogue import SMALL_BLOCK, Drive
from disklab.errors import UserError
from disklab.store.records import RunRecord, StoredTest

DIRECTIONS = ("read", "write")


@dataclass(frozen=True)
class Fit:
    """t = access_s + size / bytes_per_s, and the measured points it was fitted to."""

    direction: str  # "read", "write" or "mixed"
    access_s: float
    bytes_per_s: float
    points: tuple[tuple[int, float], ...]  # (block size, seconds per I/O)

    def time_s(self, size: int) -> float:
        return self.access_s + size / self.bytes_per_s


@dataclass(frozen=True)
class Calibration:
    drive: Drive
    fits: tuple[Fit, ...]  # each fit once: a stand-in for a missing direction is not repeated
    notes: tuple[str, ...]


@dataclass(frozen=True)
class DriveFacts:
    """What a run cannot tell: given by the user."""

    name: str
    capacity_bytes: int
    interface: str
    power_idle_w: float = 0.0
    power_active_w: float = 0.0
    price_eur: float = 0.0


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
    return Fit(direction, intercept, 1 / slope, tuple(points))


def fit_drive(records: Sequence[RunRecord], facts: DriveFacts) -> Calibration:
    tests = [t for record in records for t in record.tests if not t.params.get("bssplit")]
    notes = []
    fits = {}
    for direction in (*DIRECTIONS, "mixed"):
        points = _best_time_per_size(tests, direction)
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
    seq_read = _best_sequential_rate(tests, "read") or read.bytes_per_s
    seq_write = _best_sequential_rate(tests, "write") or write.bytes_per_s
    latency_read, latency_write = _idle_latency(tests, "read"), _idle_latency(tests, "write")
    run_ids = ", ".join(str(r.info.id) for r in records)
    drive = Drive(
        name=facts.name, description=f"measured drive (runs {run_ids})", kind="measured", interface=facts.interface,
        capacity_bytes=facts.capacity_bytes, seq_read_bytes_per_s=seq_read, seq_write_bytes_per_s=seq_write,
        power_idle_w=facts.power_idle_w, power_active_w=facts.power_active_w, price_eur=facts.price_eur,
        rand_read_iops=_rated_iops(read, seq_read), rand_write_iops=_rated_iops(write, write.bytes_per_s),
        rand_write_bytes_per_s=write.bytes_per_s, latency_read_s=latency_read, latency_write_s=latency_write,
        sources=(("performance", f"fitted by disklab capacity calibrate to runs {run_ids} of {records[0].info.target}"),
                 ("power", "given" if facts.power_active_w else "not given"),
                 ("price", "given" if facts.price_eur else "not given")),
    )
    return Calibration(drive, tuple(dict.fromkeys(fits[d] for d in (*DIRECTIONS, *fits))), tuple(notes))


def _rated_iops(fit: Fit, rate: float) -> float:
    """The 4 KiB IOPS that give back the fitted per-command time at `rate` (model.py derives it so)."""
    return 1 / (fit.access_s + SMALL_BLOCK / rate)


def _best_time_per_size(tests: Sequence[StoredTest], direction: str) -> list[tuple[int, float]]:
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


def _best_sequential_rate(tests: Sequence[StoredTest], direction: str) -> float | None:
    rates = [m.bw_bytes_per_s for t in tests if t.params.get("pattern") == "sequential"
             and t.params.get("direction") == direction for m in t.metrics if m.direction == direction]
    return max(rates, default=None)


def _idle_latency(tests: Sequence[StoredTest], direction: str) -> float | None:
    """Mean latency of the smallest random I/O measured with one I/O in flight."""
    idle = [t for t in tests if t.params.get("pattern") == "random" and t.params.get("direction") == direction
            and t.params.get("jobs", 1) * t.params.get("iodepth", 1) == 1]
    if not idle:
        return None
    smallest = min(idle, key=lambda t: t.params["bs"])
    return next((m.lat_mean_ns / 1e9 for m in smallest.metrics if m.direction == direction), None)
