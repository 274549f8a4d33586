"""What one drive spends on one I/O: positioning and transfer for HDDs, command and transfer for SSDs.

HDD. An I/O waits for the head to reach its track (seek) and its sector to come round (rotation), then
transfers at the rate of the zone it lies in.
- Seek over a distance x (share of the full stroke): single-track + (average - single-track) x sqrt(3x). Short
  seeks are dominated by the arm's acceleration, so seek time grows with the square root of the distance; the
  average random seek spans a third of the stroke, where the formula gives the sheet's average.
- A command that needs no positioning still costs the drive's command time (HDD_COMMAND_S): small sequential
  requests are bound by it, not by the media rate.
- With q requests queued, the drive serves the one it can reach first (shortest positioning time first, as NCQ
  and SCSI tagged queuing do): the expected positioning time is the least of q independent draws of seek +
  rotational wait, computed from their distribution. One request: average seek + half a revolution; deep queues
  over a small region: little more than a track seek, as controllers destaging a write cache achieve.
- Zoned bit recording: outer tracks hold more sectors, so the rate falls with the radius from the sheet's
  (outer) figure to the inner zone's. Capacity from the outer edge grows with r_o^2 - r^2, which makes the rate at
  the share x of the capacity outer x sqrt(1 - x (1 - (inner/outer)^2)); over a region, time per byte is averaged.
SSD. An I/O costs a command time (what the 4 KiB rating leaves once the 4 KiB transfer is paid) plus its
transfer at the drive's random rate for that direction, and never less than 1 / the 4 KiB IOPS rating: the
rating is a hard cap at every block size, below 4 KiB too. Random writes transfer at the steady-state random-write
rate: `rand_write_mbps` from the drive file, else the 4 KiB rating x 4 KiB (steady-state write amplification of a
page-mapped flash translation layer does not shrink with the write size; study M2's SSD array bears this out from
8 KiB to 64 MiB), at most the sequential write rate. Random reads transfer at `rand_read_mbps`, else the sequential
read rate. Sequential I/O transfers at the sequential rates. Every rate is capped by the drive's interface.
"""

import math
from dataclasses import dataclass
from functools import lru_cache

from disklab.capacity.catalogue import SMALL_BLOCK, Drive

HALF_REVOLUTION_S_PER_RPM = 30.0  # 60 s / rpm / 2
# What an HDD spends on a command that needs no positioning (the next sectors, or its look-ahead cache): typical
# for the class, SAS and SATA drives complete 4 KiB sequential reads with direct I/O at 10,000-30,000 IOPS.
HDD_COMMAND_S = 50e-6
# The distribution of seek distances is taken at this many quantiles.
_DISTANCE_STEPS = 1000


@dataclass(frozen=True)
class Region:
    """Where the data set lies on each drive: shares of its capacity counted from the outer edge (striping maps
    the array's address space proportionally onto every drive)."""

    start: float = 0.0
    end: float = 1.0

    @property
    def span(self) -> float:
        return self.end - self.start


WHOLE = Region()


def zone_rate(outer: float, inner: float, region: Region) -> float:
    """Bytes/s over the region, time-averaged (the harmonic mean of the rate across it)."""
    shrink = 1 - (inner / outer) ** 2
    # The integral of dx / (outer sqrt(1 - shrink x)) is -2 sqrt(1 - shrink x) / (shrink outer); over the span
    # end - start that is 2 / (outer (sqrt(1 - shrink start) + sqrt(1 - shrink end))), so the time-averaged rate is
    # the mean of the rates at the region's two ends. Written so, it holds for a region too narrow for a float to
    # tell its ends' square roots apart (a few KB of a large array), where the difference would be 0.
    return outer * (math.sqrt(1 - shrink * region.start) + math.sqrt(1 - shrink * region.end)) / 2


def transfer_rate(drive: Drive, op: str, sequential: bool, region: Region = WHOLE) -> float:
    """Bytes/s one drive moves for reads ("read") or writes ("write"), capped by its interface."""
    if drive.kind == "hdd":
        outer = drive.seq_read_bytes_per_s if op == "read" else drive.seq_write_bytes_per_s
        inner = min(drive.seq_inner_bytes_per_s or outer, outer)
        rate = zone_rate(outer, inner, region)
    elif op == "read":
        rate = drive.seq_read_bytes_per_s if sequential else (drive.rand_read_bytes_per_s or drive.seq_read_bytes_per_s)
    elif sequential:
        rate = drive.seq_write_bytes_per_s
    else:
        rate = drive.rand_write_bytes_per_s or min(drive.rand_write_iops * SMALL_BLOCK, drive.seq_write_bytes_per_s)
    return min(rate, drive.interface_bytes_per_s)


def rated_iops(drive: Drive, op: str) -> float:
    return drive.rand_read_iops if op == "read" else drive.rand_write_iops


def command_time(drive: Drive, op: str) -> float:
    """SSD: the part of a 4 KiB random I/O's time at the rating that is not transfer; never below zero."""
    return max(0.0, 1 / rated_iops(drive, op) - SMALL_BLOCK / transfer_rate(drive, op, sequential=False))


def ssd_op_time(drive: Drive, op: str, size: float, sequential: bool = False) -> float:
    """Seconds an SSD is busy per I/O at its rated queue depth: the IOPS rating caps every block size."""
    floor = 1 / rated_iops(drive, op)
    if sequential:
        return max(floor, size / transfer_rate(drive, op, sequential=True))
    return max(floor, command_time(drive, op) + size / transfer_rate(drive, op, sequential=False))


def revolution_s(drive: Drive) -> float:
    return 2 * HALF_REVOLUTION_S_PER_RPM / drive.rpm


def seek_time(drive: Drive, op: str, distance: float) -> float:
    """Seconds to move the head across `distance` (share of the full stroke); 0 on the same track."""
    if distance <= 0:
        return 0.0
    average = drive.seek_read_s if op == "read" else drive.seek_write_s
    return drive.seek_track_s + (average - drive.seek_track_s) * math.sqrt(3 * min(distance, 1.0))


def positioning_time(drive: Drive, op: str, span: float, queue: float = 1) -> float:
    """Expected seek + rotational wait of the request served next, with `queue` requests to choose from, over data
    spanning the share `span` of each drive (HDD)."""
    return _positioning_time(drive.rpm, drive.seek_track_s, drive.seek_read_s if op == "read" else drive.seek_write_s,
                             round(min(max(span, 0.0), 1.0), 6), max(1.0, round(queue, 2)))


@lru_cache(maxsize=256)
def _positioning_time(rpm: int, track_s: float, average_s: float, span: float, queue: float) -> float:
    revolution = 2 * HALF_REVOLUTION_S_PER_RPM / rpm
    # Head and target lie uniformly in the span: their distance has density 2 (span - x) / span^2, so its
    # quantile p is span (1 - sqrt(1 - p)). Seek time at each quantile, midpoints of equal-probability steps.
    seeks = []
    for i in range(_DISTANCE_STEPS):
        distance = span * (1 - math.sqrt(1 - (i + 0.5) / _DISTANCE_STEPS))
        seeks.append(0.0 if distance <= 0 else track_s + (average_s - track_s) * math.sqrt(3 * min(distance, 1.0)))
    # After its seek a request waits a uniform share of a revolution. The chance S(t) that a request is not yet
    # reached by time t is piecewise linear: each seek s starts a fall of 1 / (steps x revolution) per second at s
    # and ends it at s + revolution. The least of `queue` independent requests exceeds t with chance S(t)^queue;
    # its expectation, the integral of that, is exact on each linear piece.
    fall = 1 / (_DISTANCE_STEPS * revolution)
    events = sorted([(seek, -fall) for seek in seeks] + [(seek + revolution, fall) for seek in seeks])
    expected, survival, slope, now = 0.0, 1.0, 0.0, 0.0
    for when, change in events:
        later = max(0.0, survival + slope * (when - now))
        if slope:
            expected += (survival ** (queue + 1) - later ** (queue + 1)) / (-slope * (queue + 1))
        else:
            expected += survival ** queue * (when - now)
        survival, slope, now = later, slope + change, when
    return expected


def hdd_op_time(drive: Drive, op: str, size: float, span: float = 1.0, queue: float = 1, positioned: float = 1.0,
                region: Region = WHOLE) -> float:
    """Seconds an HDD is busy per I/O: positioning (for the share `positioned` of requests that do not follow on
    from the previous one) and the transfer, never less than the drive's command time."""
    position = positioned * positioning_time(drive, op, span, queue) if positioned else 0.0
    return max(HDD_COMMAND_S, position + size / transfer_rate(drive, op, sequential=True, region=region))
