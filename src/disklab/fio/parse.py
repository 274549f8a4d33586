"""fio's JSON (json and json+, fio 2.x and every 3.x) -> typed results. Pure: text in, values out.

fio changed its JSON over the years (tests/fixtures/fio/layouts/README.md lists every field, which versions wrote it
and how it is converted). Each job entry is read from whichever fields its fio wrote, converted exactly; a figure
fio did not write is never guessed: the parser derives it by a stated rule (and says so in the job's notes) or
refuses with FioError naming the field and the layout. Every figure read is checked (fio/figures.py): runs and imports
refuse malformed output before they store any of it.
"""

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from disklab.errors import FioError
from disklab.fio.figures import MAX_COUNT, count_at, float_at, number_at, shown

DIRECTIONS = ("read", "write", "trim")
# fio's percentile keys, and the names disklab stores them under.
PERCENTILES = {"50.000000": "p50", "90.000000": "p90", "99.000000": "p99", "99.900000": "p99_9", "99.990000": "p99_99"}
NS_LAYOUT = "fio 3.x layout (lat_ns, clat_ns in ns)"
US_LAYOUT = "fio 2.x layout (lat, clat in usec)"
# Job options under which 'bs' alone does not give every I/O's size (as fio's default kb_base=1024 reads it).
_OTHER_BLOCK_SIZES = ("bsrange", "blocksize_range", "bssplit", "bs_unaligned", "bs_is_seq_rand", "rbs", "wbs",
                      "read_bs", "write_bs", "kb_base")
# A line of fio's terse output: version 2 starts "2;jobname", versions 3-5 "N;fio-3.33;jobname".
_TERSE_LINE = re.compile(r"\d;")


@dataclass(frozen=True)
class DirectionMetrics:
    direction: str
    io_bytes: int
    total_ios: int
    iops: float
    bw_bytes_per_s: float
    runtime_ms: int
    lat_mean_ns: float
    clat_mean_ns: float
    clat_max_ns: float
    clat_percentiles_ns: dict[str, float]  # keys from PERCENTILES' values; absent when fio gave none


@dataclass(frozen=True)
class JobResult:
    name: str
    error: int
    usr_cpu_percent: float
    sys_cpu_percent: float
    directions: tuple[DirectionMetrics, ...]  # only the directions that did I/O
    notes: tuple[str, ...] = ()  # how figures of an older layout were converted or derived, one sentence each


@dataclass(frozen=True)
class FioReport:
    fio_version: str
    timestamp: int
    jobs: tuple[JobResult, ...]
    notes: tuple[str, ...] = ()  # what the document reader skipped or chose (read_fio_document)


@dataclass(frozen=True)
class FioDocument:
    data: dict  # fio's report: the last complete JSON object of the output
    notes: tuple[str, ...]  # what was skipped or chosen to find it, one human sentence each


def read_fio_document(text: str) -> FioDocument:
    """fio's report out of its raw output: past a BOM, notes, warnings and terse lines; the last of several reports.

    Every line that opens with '{' must start a complete JSON object: a report cut off or edited is refused, never
    replaced by an earlier interim report of --status-interval.
    """
    notes = []
    if text.startswith("\ufeff"):
        text = text[1:]
        notes.append("skipped a UTF-8 byte-order mark")
    documents, skipped = _json_objects(text)
    if not documents:
        raise FioError("fio produced no JSON output" + (f" (it said: {skipped[-1][:200]})" if skipped else ""))
    terse = [s for s in skipped if _TERSE_LINE.match(s)]
    other = [s for s in skipped if not _TERSE_LINE.match(s)]
    if terse:
        notes.append(f"skipped {len(terse)} line(s) of fio's terse output (--output-format with terse and json)")
    if other:
        notes.append(f"skipped {len(other)} line(s) of text that is not JSON, the first: {other[0][:200]!r}")
    if len(documents) > 1:
        names = [_job_names(d) for d in documents]
        if any(n != names[-1] for n in names):
            raise FioError(f"fio's output holds {len(documents)} JSON reports of different jobs; "
                           "give one report per file")
        notes.append(f"kept the last of {len(documents)} JSON reports (fio --status-interval)")
    return FioDocument(data=documents[-1], notes=tuple(notes))


def _json_objects(text: str) -> tuple[list[dict], list[str]]:
    """The JSON objects that start at a line opening with '{', and the other non-blank lines (or line ends)."""
    decoder = json.JSONDecoder()
    documents: list[dict] = []
    skipped: list[str] = []
    end = 0
    for line in re.finditer(r"^.*$", text, re.MULTILINE):
        if line.start() < end or not line.group().strip():
            continue
        if not line.group().startswith("{"):
            skipped.append(line.group().strip())
            continue
        try:
            value, end = decoder.raw_decode(text, line.start())
        except json.JSONDecodeError as exc:
            raise FioError(f"fio's JSON output cannot be read: {exc}") from exc
        except (RecursionError, ValueError) as exc:  # ValueError: an integer of over 4,300 digits, Python's limit
            what = "nested too deeply" if isinstance(exc, RecursionError) else "a number of over 4,300 digits"
            where = f"the object at line {text.count(chr(10), 0, line.start()) + 1}"
            raise FioError(f"fio's JSON output cannot be read: {what} ({where})") from None
        documents.append(value)
        line_end = text.find("\n", end)
        rest = text[end:line_end if line_end >= 0 else len(text)].strip()
        if rest:
            skipped.append(rest)
    return documents, skipped


def _job_names(document: dict) -> list:
    """The jobs a report covers: interim reports of --status-interval name the same jobs as the final one."""
    entries = document.get("jobs", document.get("client_stats", []))
    return [e.get("jobname") if isinstance(e, dict) else None for e in entries] if isinstance(entries, list) else []


def extract_json(output: str) -> dict:
    """fio's report as a JSON object (see read_fio_document, which also says what it skipped)."""
    return read_fio_document(output).data


def parse_fio_output(output: str) -> FioReport:
    """fio's raw output (any layout, see the module docstring) -> its jobs, with the reader's notes."""
    document = read_fio_document(output)
    data = document.data
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        raise FioError("fio's JSON output has no 'jobs' list")
    return FioReport(
        fio_version=str(data.get("fio version", "")),
        timestamp=count_at(data.get("timestamp", 0), "timestamp", "the report"),
        jobs=tuple(parse_job(job, f"jobs[{index}]") for index, job in enumerate(jobs)), notes=document.notes,
    )


def job_groups(entries: list[dict]) -> list[list[dict]]:
    """fio's job entries by job: the clones of one job (same server, group, name and options) written without
    group_reporting belong together; with group_reporting fio wrote one entry for them already."""
    groups: dict[str, list[dict]] = {}
    for entry in entries:
        key = json.dumps([entry.get("hostname"), entry.get("port"), entry.get("groupid"), entry.get("jobname"),
                          entry.get("job options")], sort_keys=True, default=str)
        groups.setdefault(key, []).append(entry)
    return list(groups.values())


def parse_job(job: dict, where: str | None = None) -> JobResult:
    """One entry of fio's 'jobs' (or of client/server 'client_stats'), from whichever fields its fio wrote."""
    if not isinstance(job, dict):
        raise FioError(f"fio's JSON output: {where or 'a job entry'} is not an object")
    name = job.get("jobname")
    if not isinstance(name, str):
        raise FioError(f"fio's JSON output: {where or 'a job entry'} has no 'jobname'")
    where = where or f"job {name!r}"  # the entry's place in fio's document ('jobs[2]'), which errors name
    notes: list[str] = []
    directions = []
    for direction in DIRECTIONS:
        if direction in job:
            said: list[str] = []
            metrics = _direction(where, direction, job, said)
            if metrics.total_ios > 0:
                _histogram(job, direction, where)  # json+ bins, checked now: reports count I/Os from them
                directions.append(metrics)
                notes += said
    if not directions and _did_io(job.get("mixed")):
        raise FioError(f"job {name!r}: fio reported only 'mixed' figures (unified_rw_reporting); "
                       "disklab reads fio's per-direction figures: run it without unified_rw_reporting")
    if isinstance(job.get("sync"), dict) and _sync_count(job["sync"], f"{where}.sync") > 0 and directions:
        write = next((d for d in directions if d.direction == "write"), directions[-1])
        directions.append(_sync(f"{where}.sync", job["sync"], write))
        _histogram(job, "sync", where)
    return JobResult(
        name=name,
        error=count_at(job.get("error", 0), "error", where),
        usr_cpu_percent=float_at(job.get("usr_cpu", 0.0), "usr_cpu", where),
        sys_cpu_percent=float_at(job.get("sys_cpu", 0.0), "sys_cpu", where),
        directions=tuple(directions),
        notes=tuple(notes),
    )


def _did_io(section) -> bool:
    return isinstance(section, dict) and bool(section.get("total_ios") or section.get("io_bytes"))


def _direction(job_where: str, name: str, job: dict, notes: list[str]) -> DirectionMetrics:
    """One direction's figures; the layout is told by the fields themselves, never by the version string."""
    d = job[name]
    where = f"{job_where}.{name}"
    if not isinstance(d, dict):
        raise FioError(f"fio's JSON output: {where} is not an object")
    ns = "lat_ns" in d
    layout = NS_LAYOUT if ns else US_LAYOUT
    if not ns and "lat" not in d:
        raise FioError(f"fio's JSON output: {where} has neither 'lat_ns' (fio 3.x) nor 'lat' (fio 2.x)")

    def field(key: str, section: dict = d, label: str = "") -> int | float:
        if key not in section:
            raise FioError(f"fio's JSON output: {where} lacks {label + key!r} ({layout})")
        return number_at(section[key], label + key, where)

    runtime = count_at(field("runtime"), "runtime", where)
    # io_kbytes came with fio 3.0, when io_bytes changed from KiB (fio 2.x) to bytes.
    bytes_written = "io_kbytes" in d
    if bytes_written:
        io_bytes = count_at(field("io_bytes"), "io_bytes", where)
        if count_at(field("io_kbytes"), "io_kbytes", where) != io_bytes >> 10:
            raise FioError(f"fio's JSON output: {where}: io_kbytes is not io_bytes / 1024 ({layout})")
    else:
        io_bytes = count_at(count_at(field("io_bytes"), "io_bytes", where) * 1024, "io_bytes (KiB) x 1024", where)
        notes.append(f"{name}: fio wrote I/O as whole KiB in 'io_bytes' (fio 2.x): bytes = KiB x 1024")
    if "bw_bytes" in d:
        bw = float_at(field("bw_bytes"), "bw_bytes", where)
    elif bytes_written:
        # Later fio writes bw_bytes = 1000 * io_bytes // runtime: the same figure from the same fields, checked
        # against the KiB/s 'bw' (that figure // 1024) this fio wrote.
        bw_exact = 1000 * io_bytes // runtime if runtime else 0
        if bw_exact // 1024 != count_at(field("bw"), "bw", where):
            raise FioError(f"fio's JSON output: {where}: 'bw' does not match io_bytes / runtime ({layout})")
        bw = float(bw_exact)
        notes.append(f"{name}: fio wrote no 'bw_bytes' (fio 3.x before it, e.g. 3.1): bytes/s = 1000 x io_bytes "
                     "// runtime, as later fio computes it, which matches this fio's KiB/s 'bw'")
    else:
        bw = float(count_at(field("bw"), "bw", where) * 1024)
        notes.append(f"{name}: fio wrote bandwidth as whole KiB/s in 'bw' (fio 2.x): bytes/s = KiB/s x 1024")
    if "total_ios" in d:
        total_ios = count_at(field("total_ios"), "total_ios", where)
    else:
        total_ios = _derived_total_ios(io_bytes, job, name, where, layout)
        if total_ios:
            notes.append(f"{name}: fio wrote no 'total_ios' (an early fio 2.x): I/O count derived as io_bytes / bs")
    iops = float_at(field("iops"), "iops", where)
    if not total_ios:
        return DirectionMetrics(name, io_bytes, 0, iops, bw, runtime, 0.0, 0.0, 0.0, {})
    lat = _section(d, "lat_ns" if ns else "lat", where)
    clat = _section(d, "clat_ns" if ns else "clat", where)
    scale = 1 if ns else 1000
    if not ns:
        notes.append(f"{name}: fio wrote latencies in usec (fio 2.x): ns = usec x 1000")
    lat_key, clat_key = ("lat_ns", "clat_ns") if ns else ("lat", "clat")
    percentiles = clat.get("percentile", {})
    if not isinstance(percentiles, dict):
        raise FioError(f"fio's JSON output: {where}: {clat_key}.percentile is not an object ({layout})")
    return DirectionMetrics(
        direction=name,
        io_bytes=io_bytes,
        total_ios=total_ios,
        iops=iops,
        bw_bytes_per_s=bw,
        runtime_ms=runtime,
        lat_mean_ns=_scaled(field("mean", lat, f"{lat_key}."), scale, f"{lat_key}.mean", where),
        clat_mean_ns=_scaled(field("mean", clat, f"{clat_key}."), scale, f"{clat_key}.mean", where),
        clat_max_ns=_scaled(field("max", clat, f"{clat_key}."), scale, f"{clat_key}.max", where),
        clat_percentiles_ns={
            ours: _scaled(percentiles[theirs], scale, f"{clat_key}.percentile.{theirs}", where)
            for theirs, ours in PERCENTILES.items() if theirs in percentiles
        },
    )


def _scaled(value, scale: int, key: str, where: str) -> float:
    """usec -> ns: fio prints floats with 6 decimals, so the ns figure has 3; rounding there drops binary noise."""
    ns = float_at(value, key, where) if scale == 1 else round(float_at(value, key, where) * scale, 3)
    if math.isinf(ns):  # from 1.8e305 usec
        raise FioError(f"fio's JSON output: {where}: {key!r} is too large: {shown(value)} usec is no number in ns")
    return ns


def _section(d: dict, key: str, where: str) -> dict:
    section = d.get(key)
    if not isinstance(section, dict):
        raise FioError(f"fio's JSON output: {where} lacks {key!r} ({NS_LAYOUT if key.endswith('_ns') else US_LAYOUT})")
    return section


def _derived_total_ios(io_bytes: int, job: dict, name: str, where: str, layout: str) -> int:
    """Old fio wrote no I/O count: io_bytes / bs, only where one fixed block size makes that exact."""
    if io_bytes == 0:
        return 0
    options = job.get("job options", {})
    if not isinstance(options, dict) or any(k in options for k in _OTHER_BLOCK_SIZES):
        options = {}
    bs = _block_size(options.get("bs", options.get("blocksize")), DIRECTIONS.index(name))
    if not bs or bs % 1024 or io_bytes % bs:
        raise FioError(f"fio's JSON output: {where} lacks 'total_ios' ({layout}, an early fio 2.x), and no single "
                       "block size in the job's options gives the I/O count exactly")
    return io_bytes // bs


def _block_size(value, index: int) -> int | None:
    """fio's bs option ('4k', or '4k,64k' per direction) in bytes as fio's default kb_base=1024 reads it."""
    if not isinstance(value, str):
        return None
    parts = value.split(",")
    match = re.fullmatch(r"(\d+)([kKmM]?)", parts[min(index, len(parts) - 1)].strip())
    if not match:
        return None
    return int(match.group(1)) * {"": 1, "k": 1024, "m": 1024**2}[match.group(2).lower()]


def _sync_count(sync: dict, where: str) -> int:
    """fio 3.33 counts fsync calls in total_ios but leaves it 0 for fdatasync; its latency N counts both."""
    lat = sync.get("lat_ns", {})
    counted = count_at(sync.get("total_ios", 0), "total_ios", where)
    return counted or (count_at(lat.get("N", 0), "lat_ns.N", where) if isinstance(lat, dict) else 0)


def _sync(where: str, sync: dict, write: DirectionMetrics) -> DirectionMetrics:
    """fsync/fdatasync calls: their count over the write phase's runtime, and their own latency."""
    lat = _section(sync, "lat_ns", where)
    for key in ("mean", "max"):
        if key not in lat:
            raise FioError(f"fio's JSON output: {where} lacks 'lat_ns.{key}' ({NS_LAYOUT})")
    percentiles = lat.get("percentile", {})
    if not isinstance(percentiles, dict):
        raise FioError(f"fio's JSON output: {where}: lat_ns.percentile is not an object ({NS_LAYOUT})")
    count = _sync_count(sync, where)
    return DirectionMetrics(
        direction="sync",
        io_bytes=0,
        total_ios=count,
        iops=count / (write.runtime_ms / 1000) if write.runtime_ms else 0.0,
        bw_bytes_per_s=0.0,
        runtime_ms=write.runtime_ms,
        lat_mean_ns=float_at(lat["mean"], "lat_ns.mean", where),
        clat_mean_ns=float_at(lat["mean"], "lat_ns.mean", where),
        clat_max_ns=float_at(lat["max"], "lat_ns.max", where),
        clat_percentiles_ns={
            ours: float_at(percentiles[theirs], f"lat_ns.percentile.{theirs}", where)
            for theirs, ours in PERCENTILES.items() if theirs in percentiles
        },
    )


@lru_cache(maxsize=64)
def latency_bins(output: str, direction: str) -> Mapping[float, int] | None:
    """json+'s completion latency histogram (ns -> I/O count), summed over the document's jobs; None without bins.
    Read only, and kept for the documents read last: a device's history asks for each pass's several times."""
    jobs = _jobs(output)
    bins = [_histogram(job, direction, f"jobs[{index}]") for index, job in enumerate(jobs)]
    if not bins or any(b is None for b in bins):
        return None
    summed: dict[float, int] = {}
    for histogram in bins:
        for value, count in histogram.items():
            summed[value] = summed.get(value, 0) + count
    return MappingProxyType(summed)


@lru_cache(maxsize=8)
def _jobs(output: str) -> tuple[dict, ...]:
    """The document's jobs, read only: parsed once for all its directions, which a report's charts ask one by one
    (a comparison of 12 runs of 36 tests parsed 720 documents for 432 tests)."""
    return tuple(extract_json(output).get("jobs", []))


def _histogram(job: dict, direction: str, where: str) -> dict[float, int] | None:
    """fsync/fdatasync calls keep their histogram under 'sync' as lat_ns; I/O directions under clat_ns (fio 3.x,
    bins keyed by ns) or clat (fio 2.x json+, bins keyed by usec)."""
    section = job.get(direction, {})
    if direction == "sync":
        latency, scale = section.get("lat_ns", {}), 1
    elif "clat_ns" in section:
        latency, scale = section["clat_ns"], 1
    else:
        latency, scale = section.get("clat", {}), 1000
    bins = latency.get("bins")
    if bins is None:
        return None
    try:
        histogram = {float(value) * scale: count for value, count in bins.items()}
        values, counts = histogram.keys(), histogram.values()  # checked a column at a time: pages read thousands
        if not histogram or (set(map(type, counts)) == {int} and 0 <= min(counts) and max(counts) <= MAX_COUNT
                             and all(map(math.isfinite, values)) and min(values) >= 0):
            return histogram
    except (AttributeError, ValueError):  # not an object; a key that is no number
        pass
    raise FioError(f"fio's JSON output: {where}.{direction}: latency bins are not 'value' : count")
