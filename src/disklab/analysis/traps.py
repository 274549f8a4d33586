"""Cache traps: figures that are probably the page cache's or RAM's, the interface's impossibility, or compression's.

Each check looks at one finished test, the run's environment (registry keys)
and the tests finished before it, and returns (flag, message) pairs; the
caller stores them with the test.
"""

from __future__ import annotations

from typing import Sequence

from disklab.env.registry import DEVICE_PREFIX
from disklab.fio.parse import JobResult
from disklab.suite.model import TestSpec
from disklab.system.mounts import MEMORY_FS_TYPES
from disklab.units import human_size

# A buffered test this many times faster than the same pattern with direct I/O measured memory, not the disk.
BUFFERED_FACTOR = 3.0
# fio's bandwidth can overshoot a link by a little (rounding, ramp edges); beyond this it cannot be the device.
CEILING_MARGIN = 1.1
INTERFACE = "the device's interface"


def cache_traps(test: TestSpec, job: JobResult, env: dict, earlier: Sequence[tuple[TestSpec, JobResult]]) -> list[tuple[str, str]]:
    flags = []
    flags += memory_target(env, test.direct)
    flags += _page_cache(test, env)
    flags += _device_cache(test, env)
    flags += _beyond_interface(job, env)
    flags += _faster_than_direct(test, job, earlier)
    flags += _compression(test, env)
    return flags


def data_set_bytes(test: TestSpec) -> int | None:
    if test.file_set:
        return test.nrfiles * test.filesize
    return test.size


def memory_target(env: dict, direct: bool) -> list[tuple[str, str]]:
    """A file system in RAM, or a disk under the target whose data RAM holds (env/collect.py: ram_backing).

    Any test on such a target is flagged, fio's and pgbench's alike."""
    held = []
    if env.get("fs_type") in MEMORY_FS_TYPES:
        held.append(f"the file system is {env['fs_type']}, which keeps its files in RAM")
    for key, value in env.items():
        if key.startswith(DEVICE_PREFIX) and key.endswith(".ram_backing") and value not in (None, "none"):
            held.append(f"{key[len(DEVICE_PREFIX):].rpartition('.')[0]} is {value}")
    if not held:
        return []
    unchanged = " (direct I/O does not change that)" if direct else ""
    return [("memory-target", f"{'; '.join(held)}: these figures are memory's, not a disk's{unchanged}")]


def _page_cache(test: TestSpec, env: dict) -> list[tuple[str, str]]:
    ram = env.get("ram_bytes")
    data = data_set_bytes(test)
    if test.direct or not ram or data is None or data >= 2 * ram:
        return []
    return [("page-cache", f"buffered I/O on {human_size(data)} with {ram / 1024**3:,.1f} GiB of RAM: "
                           "page cache can serve this; M3 asks for at least 2x RAM")]


def _device_cache(test: TestSpec, env: dict) -> list[tuple[str, str]]:
    """A data set the drive's or RAID controller's own cache can hold (its size as declared with run --cache:
    neither sysfs nor SMART reports it), direct I/O or not."""
    cache = env.get("declared_cache_bytes")
    data = data_set_bytes(test)
    if not cache or data is None or data > cache:
        return []
    return [("device-cache", f"the data set ({human_size(data)}) fits in the {human_size(cache)} drive or "
                             "controller cache declared with --cache: the cache, not the media, can serve this")]


def ceilings(env: dict) -> list[tuple[str, float]]:
    """What can carry at most so many bytes/s between fio and the data: the disks' interfaces (their sum: several
    disks of a RAID or a pool), and the network link to a network target's server."""
    found = []
    interfaces = [v for k, v in env.items()
                  if k.startswith(DEVICE_PREFIX) and k.endswith(".interface_ceiling_bytes_per_s") and v]
    if interfaces:
        found.append((INTERFACE, float(sum(interfaces))))
    link = env.get("net_link_speed_mbit_per_s")
    if link:
        found.append((f"the {link:,} Mb/s network link", link * 1e6 / 8))
    return found


def _beyond_interface(job: JobResult, env: dict) -> list[tuple[str, str]]:
    interface = [ceiling for name, ceiling in ceilings(env) if name == INTERFACE]
    if not interface:
        return []
    ceiling = interface[0]
    total = sum(d.bw_bytes_per_s for d in job.directions)
    if total <= ceiling * CEILING_MARGIN:
        return []
    return [("beyond-interface", f"{total / 1e6:,.0f} MB/s exceeds the device's interface ceiling of "
                                 f"{ceiling / 1e6:,.0f} MB/s: a cache, not the device, delivered it")]


def _faster_than_direct(test: TestSpec, job: JobResult, earlier: Sequence[tuple[TestSpec, JobResult]]) -> list[tuple[str, str]]:
    if test.direct:
        return []
    for other, other_job in earlier:
        if not other.direct or _pattern(other) != _pattern(test):
            continue
        for direction in job.directions:
            match = next((d for d in other_job.directions if d.direction == direction.direction), None)
            if match and match.bw_bytes_per_s > 0 and direction.bw_bytes_per_s > BUFFERED_FACTOR * match.bw_bytes_per_s:
                factor = direction.bw_bytes_per_s / match.bw_bytes_per_s
                return [("faster-than-direct", f"{factor:,.1f}x faster ({direction.direction}) than the same pattern "
                                               f"with direct I/O ({other.label!r}): the page cache served it")]
    return []


def _compression(test: TestSpec, env: dict) -> list[tuple[str, str]]:
    compression = env.get("fs_compression")
    if not compression or compression == "none":
        return []
    refill = " (disklab writes incompressible data: refill_buffers=1)" if test.writes else ""
    return [("compressing-fs", f"the file system compresses or deduplicates ({compression}): figures depend on how "
                               f"compressible the data is{refill}")]


def _pattern(test: TestSpec) -> tuple:
    return (test.fio_rw, test.rwmixread if test.direction == "mixed" else None, test.bs, test.bssplit, test.iodepth,
            test.jobs, test.sync, test.fio)
