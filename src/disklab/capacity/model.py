"""The performance model: what an array of catalogue drives would deliver under a random workload.

A model, not a measurement. Per drive, one I/O of B bytes keeps the drive busy for access + B / rate:
- HDD: access = seek + half a revolution; rate = sustained transfer. The seek shrinks with the share f of each
  drive the data set spans (short stroking): single-track seek + (average - single-track) x sqrt(f), since a
  seek's time grows with the square root of its distance and the average seek spans a third of the stroke.
- SSD: rate = sequential read rate for reads and, for random writes, the steady-state random-write rate
  (4 KiB random-write IOPS x 4 KiB: flash pays for random writes per byte); access = what is left of
  1 / random IOPS once the 4 KiB transfer is paid, i.e. the per-command cost at the rated queue depth.
The layout turns each host I/O into drive operations (layout.py); the drives' busy time, summed over the
workload's mix, is shared by all drives of the array. The result is capped by the controller's link to the
drives (bytes the drives move, parity and mirror copies included), by the host's link (bytes the host moves),
and by the workload's concurrency (Little's law with the latency of one I/O on an idle array).
"""

from dataclasses import dataclass

from disklab.capacity.catalogue import SMALL_BLOCK, Drive
from disklab.capacity.layout import DriveOps, Layout
from disklab.suite.model import TestSpec
from disklab.units import parse_size

MODEL_NOTE = "model, not a measurement"
HALF_REVOLUTION_S_PER_RPM = 30.0  # 60 s / rpm / 2
# The controller's link to its drives when the drives are SAS or SATA: one SAS3 12G x4 wide port.
SAS3_WIDE_PORT_BYTES_PER_S = 4.4e9
LIMIT_DRIVES, LIMIT_CONTROLLER, LIMIT_HOST, LIMIT_CONCURRENCY = "drives", "controller link", "host link", "concurrency"


@dataclass(frozen=True)
class Workload:
    """Random I/O: block sizes with their share of the I/Os, the share of reads, the I/Os in flight, and the
    data set it spreads over (None: the whole array)."""

    name: str
    sizes: tuple[tuple[int, float], ...]
    read_share: float
    outstanding: int
    data_set_bytes: int | None = None


@dataclass(frozen=True)
class Ceilings:
    """Links that may cap the array, bytes/s; None: no such limit."""

    controller_bytes_per_s: float | None
    host_bytes_per_s: float | None = None


@dataclass(frozen=True)
class DriveTiming:
    read_access_s: float
    read_bytes_per_s: float
    write_access_s: float
    write_bytes_per_s: float
    idle_read_access_s: float  # at queue depth 1, for the latency of one I/O
    idle_write_access_s: float


@dataclass(frozen=True)
class Prediction:
    workload: str
    iops: float
    bw_bytes_per_s: float
    limit: str  # which of LIMIT_* decides
    idle_latency_s: float  # one I/O on an otherwise idle array, mean over the mix


def workload_from_test(test: TestSpec) -> Workload:
    """A suite test as the model's workload (the M2 suites `blocksize` and `mixed` are the defaults)."""
    if test.bssplit:
        parts = [part.partition("/") for part in test.bssplit.split(":")]
        sizes = tuple((parse_size(size), int(share) / 100) for size, _, share in parts)
    else:
        sizes = ((test.bs, 1.0),)
    read_share = {"read": 1.0, "write": 0.0}.get(test.direction, test.rwmixread / 100)
    return Workload(test.label, sizes, read_share, test.jobs * test.iodepth, test.size)


def ceilings_for(layout: Layout, controller_bytes_per_s: float | None = None,
                 host_bytes_per_s: float | None = None) -> Ceilings:
    """The links given, else the defaults: SAS and SATA drives hang off one controller port, NVMe drives have
    PCIe lanes of their own, and the host's link is not limited."""
    if controller_bytes_per_s is None and not layout.drive.interface.startswith("nvme"):
        controller_bytes_per_s = SAS3_WIDE_PORT_BYTES_PER_S
    return Ceilings(controller_bytes_per_s, host_bytes_per_s)


def drive_timing(drive: Drive, stroke_share: float = 1.0) -> DriveTiming:
    """stroke_share: the share of each drive's capacity the data set spans (HDD seeks only)."""
    read_rate = min(drive.seq_read_bytes_per_s, drive.interface_bytes_per_s)
    if drive.kind == "hdd":
        half_turn = HALF_REVOLUTION_S_PER_RPM / drive.rpm
        write_rate = min(drive.seq_write_bytes_per_s, drive.interface_bytes_per_s)
        scale = min(1.0, stroke_share) ** 0.5
        read_access = drive.seek_track_s + (drive.seek_read_s - drive.seek_track_s) * scale + half_turn
        write_access = drive.seek_track_s + (drive.seek_write_s - drive.seek_track_s) * scale + half_turn
        return DriveTiming(read_access, read_rate, write_access, write_rate, read_access, write_access)
    write_rate = min(drive.rand_write_bytes_per_s or drive.rand_write_iops * SMALL_BLOCK, drive.interface_bytes_per_s)
    read_access = _command_time(1 / drive.rand_read_iops, read_rate)
    write_access = _command_time(1 / drive.rand_write_iops, write_rate)
    return DriveTiming(
        read_access, read_rate, write_access, write_rate,
        _command_time(drive.latency_read_s, read_rate) if drive.latency_read_s else read_access,
        _command_time(drive.latency_write_s, write_rate) if drive.latency_write_s else write_access,
    )


def _command_time(time_for_small_block: float, rate: float) -> float:
    """The part of a 4 KiB I/O's time that is not transfer; never below zero."""
    return max(0.0, time_for_small_block - SMALL_BLOCK / rate)


def predict(layout: Layout, workload: Workload, ceilings: Ceilings) -> Prediction:
    span = workload.data_set_bytes or layout.net_capacity_bytes
    timing = drive_timing(layout.drive, span / layout.net_capacity_bytes)
    busy = drive_bytes = host_bytes = latency = 0.0
    for size, share in workload.sizes:
        reads, writes = (layout.read_ops(size), workload.read_share), (layout.write_ops(size), 1 - workload.read_share)
        for ops, weight in (reads, writes):
            if not weight:
                continue
            busy += share * weight * _busy_time(ops, timing)
            drive_bytes += share * weight * (ops.read_bytes + ops.write_bytes)
            latency += share * weight * _idle_latency(ops, timing)
            host_bytes += share * weight * size
    limits = {
        LIMIT_DRIVES: layout.count / busy,
        LIMIT_CONCURRENCY: workload.outstanding / latency,
    }
    if ceilings.controller_bytes_per_s:
        limits[LIMIT_CONTROLLER] = ceilings.controller_bytes_per_s / drive_bytes
    if ceilings.host_bytes_per_s:
        limits[LIMIT_HOST] = ceilings.host_bytes_per_s / host_bytes
    limit = min(limits, key=limits.get)
    iops = limits[limit]
    return Prediction(workload.name, iops, iops * host_bytes, limit, latency)


def _busy_time(ops: DriveOps, timing: DriveTiming) -> float:
    """Drive-seconds one host I/O costs, summed over the drives it touches."""
    return (ops.read_accesses * timing.read_access_s + ops.read_bytes / timing.read_bytes_per_s
            + ops.write_accesses * timing.write_access_s + ops.write_bytes / timing.write_bytes_per_s)


def _idle_latency(ops: DriveOps, timing: DriveTiming) -> float:
    """The drives work in parallel: one read, one write, or (parity update) a read and then a write."""
    read = timing.idle_read_access_s + ops.largest_read / timing.read_bytes_per_s if ops.read_accesses else 0.0
    write = timing.idle_write_access_s + ops.largest_write / timing.write_bytes_per_s if ops.write_accesses else 0.0
    return read + write if ops.read_then_write else max(read, write)
