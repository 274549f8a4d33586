"""fio JSON produced elsewhere -> a stored run, with fio's own figures and each job's options as disklab params.

Reads fio 3.x `json` and `json+`, with or without fio's notes before the JSON, and client/server output
("client_stats", one entry per host and job). Everything is validated before the store is touched.
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from disklab import __version__
from disklab.errors import FioError, UserError
from disklab.fio.parse import JobResult, extract_json, parse_fio_output
from disklab.hosts.hosts import host_name
from disklab.store.db import now_iso
from disklab.store.repository import NewRun, Store
from disklab.suite.model import TestSpec
from disklab.units import parse_duration, parse_size

# fio's rw modes -> (pattern, direction) as disklab's suites name them.
RW_MODES = {
    "read": ("sequential", "read"),
    "write": ("sequential", "write"),
    "randread": ("random", "read"),
    "randwrite": ("random", "write"),
    "rw": ("sequential", "mixed"),
    "readwrite": ("sequential", "mixed"),
    "randrw": ("random", "mixed"),
}
# fio's aggregate over hosts: a sum of the hosts' figures with latencies of unknown weighting; not a measurement.
ALL_CLIENTS = "All clients"
# Top-level fields kept with each job so that the stored output reads back through fio/parse.py.
HEADER_FIELDS = ("fio version", "timestamp", "timestamp_ms", "time", "global options")


@dataclass(frozen=True)
class ImportedTest:
    label: str
    host: str | None  # the fio server it ran on; None: not client/server output
    target: str | None  # the job's filename or directory, when it named one
    target_kind: str  # as the store names kinds: directory, file or device
    params: dict
    jobfile: str
    fio_output: str
    job: JobResult


@dataclass(frozen=True)
class ImportedRun:
    source: Path
    fio_version: str
    started_at: str
    client_server: bool
    tests: tuple[ImportedTest, ...]


def read_fio_json(path: Path) -> ImportedRun:
    """The file as a run to store, or a UserError that says in one line what cannot be read."""
    data = _document(path)
    version = str(data.get("fio version", ""))
    if re.match(r"fio-[12]\.", version):
        raise UserError(f"{path}: made by {version}; disklab imports the JSON of fio 3.x only")
    client_server = "client_stats" in data
    if not client_server and "jobs" not in data:
        raise UserError(f"{path}: a JSON document without 'jobs' or 'client_stats' is not fio's output")
    entries = data["client_stats"] if client_server else data["jobs"]
    if not isinstance(entries, list):
        raise UserError(f"{path}: fio's job list is not a list")
    measured = client_entries(data) if client_server else entries
    if not measured:
        raise UserError(f"{path}: fio's output holds no jobs")
    tests = tuple(_test(path, data, entry, client_server) for entry in measured)
    return ImportedRun(
        source=path, fio_version=version or "unknown", started_at=_iso(data.get("timestamp")),
        client_server=client_server, tests=tests,
    )


def store_import(store: Store, imported: ImportedRun, name: str | None) -> int:
    """One run, finished, with one test per fio job (per host and job in client/server mode)."""
    targets = list(dict.fromkeys(t.target for t in imported.tests if t.target))
    hosts = list(dict.fromkeys(t.host for t in imported.tests if t.host))
    target = ", ".join(targets) or "unknown"
    run_id = store.create_run(NewRun(
        suite_name="import", suite_source=str(imported.source.resolve()), suite_text="", target=target,
        target_kind=imported.tests[0].target_kind, test_path=target,
        options={"imported_from": str(imported.source.resolve()), "client_server": imported.client_server},
        disklab_version=__version__, fio_version=imported.fio_version,
        fio_engine=", ".join(sorted({t.params["engine"] for t in imported.tests})),
        hostname=", ".join(hosts) or "unknown", kernel="unknown", planned_tests=len(imported.tests), name=name,
        started_at=imported.started_at,
    ))
    try:
        for seq, test in enumerate(imported.tests):
            store.add_test(run_id, seq, test.label, test.params, test.jobfile, test.fio_output, "", imported.started_at,
                           test.job, host=test.host)
    except BaseException as exc:
        store.finish_run(run_id, "failed", f"import stopped: {exc}")
        raise
    store.finish_run(run_id, "complete")
    return run_id


def client_entries(data: dict) -> list:
    """The per-host entries of fio's client/server output; its 'All clients' sum is left out."""
    return [e for e in data["client_stats"] if not (isinstance(e, dict) and e.get("jobname") == ALL_CLIENTS)]


def entry_document(data: dict, entry: dict, host: str | None) -> str:
    """One job entry as a fio document of its own (header, the job, its host's disks), readable by fio/parse.py."""
    document = {**{key: data[key] for key in HEADER_FIELDS if key in data}, "jobs": [entry]}
    disk_util = data.get("disk_util", [])
    if disk_util:
        document["disk_util"] = [d for d in disk_util if not host or entry_host(d) == host]
    return json.dumps(document, indent=2) + "\n"


def entry_host(entry: dict) -> str:
    """The fio server an entry of client/server output came from, as disklab names hosts."""
    return host_name(str(entry.get("hostname", "unknown")), entry.get("port"))


def _document(path: Path) -> dict:
    """The file's JSON object; fio's text and terse outputs are named as such, with the fix."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot be read as text: {exc}") from None
    first_line = text.lstrip().partition("\n")[0]
    if re.match(r"\d+;fio-", first_line):
        raise UserError(f"{path}: this is fio's terse output; run fio with --output-format=json (or json+) and import that")
    try:
        data = extract_json(text)
    except FioError as exc:
        if re.search(r"\(groupid=\d+, jobs=\d+\)|Run status group", text):
            raise UserError(
                f"{path}: this is fio's normal text output; run fio with --output-format=json (or json+) and import that"
            ) from None
        reason = f" ({exc.__cause__})" if exc.__cause__ else ""  # where a cut-off or edited document breaks
        raise UserError(f"{path}: no readable JSON object{reason}; expected fio's --output-format=json output") from None
    return data  # extract_json reads from the first '{': always an object


def _test(path: Path, data: dict, entry: dict, client_server: bool) -> ImportedTest:
    """One fio job entry, re-read through fio/parse.py from exactly the output that is stored with it."""
    if not isinstance(entry, dict):
        raise UserError(f"{path}: a job entry is not a JSON object")
    jobname = str(entry.get("jobname", "?"))
    host = entry_host(entry) if client_server else None
    fio_output = entry_document(data, entry, host)
    try:
        (job,) = parse_fio_output(fio_output).jobs
    except FioError as exc:
        raise UserError(f"{path}: job {jobname!r} is not in fio 3.x's JSON layout ({exc})") from None
    global_options = data.get("global options", {})
    options = {**global_options, **entry.get("job options", {})}
    return ImportedTest(
        label=f"{jobname} @ {host}" if host else jobname, host=host,
        target=options.get("filename") or options.get("directory"), target_kind=_target_kind(options),
        params=_params(path, jobname, options),
        jobfile=_jobfile(global_options, jobname, entry.get("job options", {}), host), fio_output=fio_output,
        job=job,
    )


def _params(path: Path, jobname: str, options: dict) -> dict:
    """The job's options as the parameters native tests store, fio's defaults where an option is absent."""
    try:
        rw = str(options.get("rw", options.get("readwrite", "read"))).partition(":")[0]
        if rw not in RW_MODES:
            raise ValueError(f"rw={rw} (disklab reads {', '.join(RW_MODES)})")
        pattern, direction = RW_MODES[rw]
        if "rwmixread" in options:
            rwmixread = int(options["rwmixread"])
        else:
            rwmixread = 100 - int(options.get("rwmixwrite", 50))
        spec = TestSpec(
            label=jobname, group="import", metric="iops", pattern=pattern, direction=direction, rwmixread=rwmixread,
            bs=_first_size(options.get("bs", options.get("blocksize"))) or 4096, bssplit=options.get("bssplit"),
            iodepth=int(options.get("iodepth", 1)), jobs=int(options.get("numjobs", 1)), region="whole",
            size=_first_size(options.get("size")), nrfiles=int(options.get("nrfiles", 1)),
            filesize=_first_size(options.get("filesize")), runtime=parse_duration(options.get("runtime", 0)),
            time_based="time_based" in options, ramp=parse_duration(options.get("ramp_time", 0)),
            pause=parse_duration(options.get("startdelay", 0)), rate=_first_size(options.get("rate")),
            rate_iops=_first_size(options.get("rate_iops")), sync=_sync(options), log_interval=None, frame_size=None,
            bit_depth=10, fps=24, direct=str(options.get("direct", "0")) == "1",
            engine=str(options.get("ioengine", "psync")), offset=_first_size(options.get("offset")) or 0,
        )
    except ValueError as exc:
        raise UserError(f"{path}: job {jobname!r}: an option disklab cannot read: {exc}") from None
    return spec.params()


def _first_size(value) -> int | None:
    """fio's '4k', '4k,64k' (read,write) or '4k-16k' (a range): the first size; None when absent or relative (10%)."""
    if value is None:
        return None
    first = re.split(r"[,-]", str(value))[0]
    if not first or first.endswith("%"):
        return None
    return parse_size(first)


def _sync(options: dict) -> str:
    for mode in ("fsync", "fdatasync"):
        if str(options.get(mode, "0")) not in ("0", ""):
            return mode
    return "dsync" if str(options.get("sync", "0")) in ("1", "sync", "dsync") else "none"


def _jobfile(global_options: dict, jobname: str, job_options: dict, host: str | None) -> str:
    """The job as fio ran it, rebuilt from the options fio reported (fio reports only those set)."""
    lines = [f"# imported; ran on fio server {host}"] if host else ["# imported from fio's JSON output"]
    lines.append("[global]")
    lines += [_option_line(key, value) for key, value in global_options.items()]
    lines.append(f"[{jobname}]")
    lines += [_option_line(key, value) for key, value in job_options.items()]
    return "\n".join(lines) + "\n"


def _option_line(key: str, value) -> str:
    return f"{key}={value}" if value not in ("", None) else key


def _target_kind(options: dict) -> str:
    """A job without a filename made its files in a directory (its own, or the working directory)."""
    filename = options.get("filename")
    if not filename:
        return "directory"
    return "device" if filename.startswith("/dev/") else "file"


def _iso(timestamp) -> str:
    if not isinstance(timestamp, (int, float)) or isinstance(timestamp, bool):
        return now_iso()
    return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds")
