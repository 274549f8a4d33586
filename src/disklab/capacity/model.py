"""The performance model: what an array of catalogue drives would deliver under a workload.

A model, not a measurement. Each host I/O becomes drive operations (layout.py: mirror copies, parity
read-modify-write, full stripes, ZFS records); each drive operation costs the drive its time (drive_time.py:
HDD positioning and zoned transfer, SSD command and transfer under the IOPS rating). What decides is the first
of these limits to be reached, and the prediction names it:
- drives: the drives' busy time per host I/O, shared by all drives of the array;
- concurrency: the workload's I/Os in flight over the time one I/O takes on an otherwise idle array (Little's
  law), the path's per-I/O latency included;
- controller link: bytes the drives move (parity and mirror copies included) over the controller's link to them;
- host link: bytes the host moves over its link, or over the path's network link (`via`);
- target: a network target's published I/O rate per target;
- CPU: what the host's or NAS's CPU and file system move at most (`cpu_mbps=`, given by the user: no drive or
  layout figure tells it).
Terms beyond the drives, each from what the published studies show matters:
- A RAID controller's write-back cache acknowledges writes from its memory and destages them later, sorted:
  the drives still do every write (a cache cannot make sustained writes faster than the drives take them), but
  the host no longer waits for them, and a destaging controller keeps DESTAGE_QUEUE writes queued on each drive,
  which an HDD serves shortest-positioning-first. Sequential writes behind it fill full stripes (layout.py).
- Read-ahead on sequential reads fetches a full stripe per stream, so HDDs serving several streams position
  once per stripe instead of once per request.
- Sequential I/O follows on from the previous request: an HDD positions only when several streams share it.
- Where the data set lies (the test's region and size) sets the HDD zone rates and how far the heads seek.
- ZFS: records, copy-on-write writes that the allocator lays out in order (no seek per write), streaming writes
  gathered into whole records, prefetch that reads each stream ahead, and the ARC answering the share of reads it
  holds.
- Parity: a sequential read passes over the parity on every drive, so a parity array streams at its data drives'
  rate (RAID5 and raidz1 N - 1 drives, RAID6 and raidz2 N - 2), the textbook figure (Wikipedia, "Standard RAID
  levels", comparison table: sequential read (n - 1)x for RAID 5, (n - 2)x for RAID 6); HDD RAID10 likewise
  streams at half its drives (each drive passes over the strips its mirror reads).
- A drive's own write cache off: an HDD writes each request to the platter before completing it, so a lone
  sequential stream misses its next sector and waits a revolution per write (one write per revolution: 120 IOPS
  at 7,200 rpm); a queue of such writes lets the drive take them back to back.
"""

from dataclasses import dataclass

from disklab.capacity.catalogue import Drive
from disklab.capacity.drive_time import Region, hdd_op_time, revolution_s, ssd_op_time
from disklab.capacity.layout import DriveOps, Layout
from disklab.suite.model import TestSpec
from disklab.units import parse_size

MODEL_NOTE = "model, not a measurement"
# The controller's link to its drives when the drives are SAS or SATA: one SAS3 12G x4 wide port.
SAS3_WIDE_PORT_BYTES_PER_S = 4.4e9
# Writes a destaging controller keeps queued per drive: SATA's NCQ holds 32 commands, and RAID controllers
# commonly queue that many per SAS drive too (MegaRAID's default per-drive queue depth is 32).
DESTAGE_QUEUE = 32
# A write acknowledged from a controller's cache (or ZFS's RAM) costs the host a transfer into memory and the
# controller's firmware path: tens of microseconds on current hardware RAID (typical for the class: 20-60 us).
CACHE_WRITE_LATENCY_S = 40e-6
# A read the ARC answers from RAM goes through ZFS but not to a drive: typical for the class 10-30 us.
ARC_HIT_LATENCY_S = 20e-6
# An SSD's wait for one small request alone, where its drive file gives no typical latency: typical for the class,
# sheets give 55-80 us for reads (Intel DC S3610 55, Micron 7450 80; Samsung 870 EVO 13,000 IOPS at QD1 = 77) and
# 15-66 us for writes (Micron 7450 15, Intel DC S3610 66; 870 EVO 36,000 IOPS at QD1 = 28).
SSD_TYPICAL_LATENCY_S = {"read": 80e-6, "write": 30e-6}
# ZFS prefetch reads each sequential stream this far ahead at most: 8 MiB in OpenZFS up to 2.1 and on 32-bit
# systems, 64 MiB on 64-bit ones since ("max bytes to prefetch per stream", module/zfs/dmu_zfetch.c); the smaller.
ZFETCH_DISTANCE_BYTES = 8 * 1024 * 1024
# Sequential streams sharing an HDD: its cache, split into segments, reads ahead and gathers writes per stream,
# so the heads move once per run of this many bytes, not per request. Typical for the class: drives carry 64-512
# MiB of cache in 16 or more segments (product manuals describe segmented read look-ahead and write caching); 1 MiB
# per stream is well inside a segment.
HDD_STREAM_RUN_BYTES = 1024 * 1024
LIMIT_DRIVES, LIMIT_CONCURRENCY = "drives", "concurrency"
LIMIT_CONTROLLER, LIMIT_HOST, LIMIT_TARGET, LIMIT_CPU = "controller link", "host link", "target", "CPU"


@dataclass(frozen=True)
class Workload:
    """Block sizes with their share of the I/Os, the share of reads, the I/Os in flight and the streams that
    issue them, random or sequential, and where the data lies: its size (None: the whole array) and region."""

    name: str
    sizes: tuple[tuple[int, float], ...]
    read_share: float
    outstanding: int
    data_set_bytes: int | None = None
    sequential: bool = False
    streams: int = 1
    region: str = "whole"  # as suites write it: whole, first:10%, first:5GB, last:5GB


@dataclass(frozen=True)
class Ceilings:
    """Links that may cap the array, bytes/s; None: no such limit."""

    controller_bytes_per_s: float | None
    host_bytes_per_s: float | None = None


@dataclass(frozen=True)
class Prediction:
    workload: str
    iops: float
    bw_bytes_per_s: float
    limit: str  # which of LIMIT_* decides
    idle_latency_s: float  # one I/O on an otherwise idle array, mean over the mix


def workload_from_test(test: TestSpec) -> Workload:
    """A suite test as the model's workload (the M2 suites `blocksize` and `mixed` are the defaults)."""
    return workload_from_params(test.label, test.params())


def workload_from_params(label: str, params: dict) -> Workload:
    """A test's parameters (as a suite test has them, and as every stored test keeps them) as the model's workload."""
    if params.get("bssplit"):
        parts = [part.partition("/") for part in params["bssplit"].split(":")]
        sizes = tuple((parse_size(size), int(share) / 100) for size, _, share in parts)
    else:
        sizes = ((params["bs"], 1.0),)
    read_share = {"read": 1.0, "write": 0.0}.get(params["direction"], params.get("rwmixread", 50) / 100)
    jobs = params.get("jobs", 1)
    return Workload(label, sizes, read_share, jobs * params.get("iodepth", 1), params.get("size"),
                    sequential=params.get("pattern") == "sequential", streams=jobs,
                    region=params.get("region", "whole"))


def ceilings_for(layout: Layout, controller_bytes_per_s: float | None = None,
                 host_bytes_per_s: float | None = None) -> Ceilings:
    """The links given, else the defaults: SAS and SATA drives hang off one controller port, NVMe drives have
    PCIe lanes of their own; the host's link is the path's network link unless a narrower one is given."""
    if controller_bytes_per_s is None and not layout.drive.interface.startswith("nvme"):
        controller_bytes_per_s = SAS3_WIDE_PORT_BYTES_PER_S
    links = [rate for rate in (host_bytes_per_s, layout.via.link_bytes_per_s) if rate]
    return Ceilings(controller_bytes_per_s, min(links) if links else None)


def data_region(layout: Layout, workload: Workload) -> Region:
    """The share of each drive the data set covers, from the outer edge: a region of the array maps onto the
    same share of every drive."""
    net = layout.net_capacity_bytes
    where, _, amount = workload.region.partition(":")
    if where == "whole":
        length = min(workload.data_set_bytes or net, net)
        return Region(0.0, length / net)
    length = net * float(amount[:-1]) / 100 if amount.endswith("%") else min(parse_size(amount), net)
    if workload.data_set_bytes:
        length = min(length, workload.data_set_bytes)
    return Region(0.0, length / net) if where == "first" else Region(1 - length / net, 1.0)


@dataclass(frozen=True)
class _Costs:
    """One kind of host I/O (a read or a write of one size): drive-seconds, drive bytes, and the host's wait."""

    busy_s: float
    drive_bytes: float
    latency_s: float


def predict(layout: Layout, workload: Workload, ceilings: Ceilings) -> Prediction:
    region = data_region(layout, workload)
    busy = drive_bytes = host_bytes = latency = 0.0
    for size, share in workload.sizes:
        for op, weight in (("read", workload.read_share), ("write", 1 - workload.read_share)):
            if not weight:
                continue
            cost = _host_io(layout, workload, region, op, size)
            busy += share * weight * cost.busy_s
            drive_bytes += share * weight * cost.drive_bytes
            latency += share * weight * cost.latency_s
            host_bytes += share * weight * size
    latency += layout.via.per_io_latency_s or 0.0
    limits = {LIMIT_CONCURRENCY: workload.outstanding / latency}
    if busy:  # the ARC may answer every read
        limits[LIMIT_DRIVES] = layout.count / busy
    if drive_bytes and ceilings.controller_bytes_per_s:
        limits[LIMIT_CONTROLLER] = ceilings.controller_bytes_per_s / drive_bytes
    if ceilings.host_bytes_per_s:
        limits[LIMIT_HOST] = ceilings.host_bytes_per_s / host_bytes
    if layout.via.per_io_busy_s:
        limits[LIMIT_TARGET] = 1 / layout.via.per_io_busy_s
    if layout.cpu_bytes_per_s:
        limits[LIMIT_CPU] = layout.cpu_bytes_per_s / host_bytes
    limit = min(limits, key=limits.get)
    iops = limits[limit]
    return Prediction(workload.name, iops, iops * host_bytes, limit, latency)


def _host_io(layout: Layout, workload: Workload, region: Region, op: str, size: int) -> _Costs:
    """What one host read or write of `size` bytes costs the drives, and how long the host waits for it."""
    drive = layout.drive
    if op == "read":
        ops = layout.read_ops(size, sequential=workload.sequential)
        # At least a byte: the last few bytes of a large array are a share a float rounds to 0, and the ARC holds them.
        data_set = max(region.span * layout.net_capacity_bytes, 1.0)
        cached = min(1.0, layout.arc_bytes / data_set) if layout.level.zfs else 0.0
        queue = _offered_queue(layout, workload, ops)
        positioned = _positioned_share(workload)
        if layout.level.zfs and workload.sequential:  # prefetch: one positioning per stretch read ahead
            positioned *= min(1.0, layout.record_bytes / ZFETCH_DISTANCE_BYTES)
        positioned *= _stream_run_share(layout, workload, ops.read_bytes, ops.read_accesses, True)
        busy = _busy(drive, ops, region, queue, workload.sequential, positioned, _passed_over(layout, workload))
        wait = _idle_wait(drive, ops, region, workload.sequential)
        return _Costs((1 - cached) * busy, (1 - cached) * ops.read_bytes,
                      (1 - cached) * wait + cached * ARC_HIT_LATENCY_S)
    ops = layout.write_ops(size, sequential=workload.sequential)
    # An HDD's own write cache (on as drives ship) acknowledges writes no controller cache took, and destages
    # them sorted from its queue; parity reads still come first.
    drive_cached = drive.kind == "hdd" and layout.write_cache and not layout.write_back
    deferred = layout.write_back or ops.writes_in_order or drive_cached
    queue = DESTAGE_QUEUE if layout.write_back or drive_cached else _offered_queue(layout, workload, ops)
    positioned = 0.0 if workload.sequential and deferred else _positioned_share(workload)
    positioned *= _stream_run_share(layout, workload, ops.write_bytes, ops.write_accesses, layout.write_cache)
    busy = _busy(drive, ops, region, queue, workload.sequential, positioned, write_cache=layout.write_cache)
    if layout.write_back or ops.writes_in_order:
        wait = CACHE_WRITE_LATENCY_S
    elif drive_cached:
        first = ops.read_then_write and _one_request(drive, "read", ops.largest_read, region, workload.sequential)
        wait = CACHE_WRITE_LATENCY_S + (first or 0.0)
    else:
        wait = _idle_wait(drive, ops, region, workload.sequential)
    return _Costs(busy, ops.read_bytes + ops.write_bytes, wait)


def _offered_queue(layout: Layout, workload: Workload, ops: DriveOps) -> float:
    """Requests waiting at each drive when the workload's I/Os in flight spread over the array."""
    accesses = ops.read_accesses + ops.write_accesses
    return max(1.0, workload.outstanding * accesses / layout.count)


def _stream_run_share(layout: Layout, workload: Workload, n_bytes: float, accesses: float, cached: bool) -> float:
    """Of the requests of several sequential streams on an HDD, the share that moves the heads: the drive's
    segmented cache reads ahead (and, with its write cache on, gathers writes) HDD_STREAM_RUN_BYTES of a stream
    before it turns to the next."""
    if layout.drive.kind != "hdd" or not workload.sequential or not cached or not accesses:
        return 1.0
    return min(1.0, n_bytes / accesses / HDD_STREAM_RUN_BYTES)


def _positioned_share(workload: Workload) -> float:
    """The share of drive requests that need a seek: all of them for random I/O; for sequential I/O none when each
    drive serves one stream, else every one (the streams take turns; read-ahead makes the requests fewer)."""
    return 0.0 if workload.sequential and workload.streams <= 1 else 1.0


def _passed_over(layout: Layout, workload: Workload) -> float:
    """A sequential read streams past the parity on every drive, and on an HDD past the strips the mirror's other
    side reads: the array streams at its data drives' rate, not all of its drives'."""
    hdd_mirror = layout.drive.kind == "hdd" and layout.level.name == "raid10"
    if not workload.sequential or not (layout.level.parity or hdd_mirror):
        return 1.0
    return layout.count / layout.data_drives


def _busy(drive: Drive, ops: DriveOps, region: Region, queue: float, sequential: bool, positioned: float,
          passed_over: float = 1.0, write_cache: bool = True) -> float:
    """Drive-seconds the operations cost, summed over the drives they touch; reads pass `passed_over` times their
    bytes under the heads (or through the SSD); an HDD without its write cache and without a queue waits a
    revolution for each write that follows on."""
    total = 0.0
    for op, accesses, n_bytes, in_order in (("read", ops.read_accesses, ops.read_bytes * passed_over, False),
                                            ("write", ops.write_accesses, ops.write_bytes, ops.writes_in_order)):
        if not accesses:
            continue
        each = n_bytes / accesses
        if drive.kind == "hdd":
            seek_share = 0.0 if in_order else positioned
            each_s = hdd_op_time(drive, op, each, region.span, queue, seek_share, region)
            if op == "write" and not write_cache and queue < 2:
                each_s += (1 - seek_share) * revolution_s(drive)
            total += accesses * each_s
        else:
            total += accesses * ssd_op_time(drive, op, each, sequential=sequential or in_order)
    return total


def _idle_wait(drive: Drive, ops: DriveOps, region: Region, sequential: bool) -> float:
    """The host's wait on an idle array: the drives work in parallel, one read, one write, or (parity update)
    a read and then a write."""
    read = _one_request(drive, "read", ops.largest_read, region, sequential) if ops.read_accesses else 0.0
    write = _one_request(drive, "write", ops.largest_write, region, sequential) if ops.write_accesses else 0.0
    return read + write if ops.read_then_write else max(read, write)


def _one_request(drive: Drive, op: str, size: float, region: Region, sequential: bool) -> float:
    """One request alone on a drive: HDD positioning (none when it follows on) and transfer; SSD its typical
    latency for a small request (the sheet's queue-depth-1 figure) plus the rest of the transfer."""
    if drive.kind == "hdd":
        return hdd_op_time(drive, op, size, region.span, positioned=0.0 if sequential else 1.0, region=region)
    typical = drive.latency_read_s if op == "read" else drive.latency_write_s
    typical = typical or SSD_TYPICAL_LATENCY_S[op]
    busy = ssd_op_time(drive, op, size, sequential)
    return max(busy, typical + busy - ssd_op_time(drive, op, 4096, sequential))
