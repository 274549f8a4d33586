"""fio JSON produced elsewhere -> a stored run, with fio's own figures and each job's options as disklab params.

Reads every layout fio/parse.py reads (fio 2.x and 3.x, json and json+, text around the JSON, status-interval
reports) and client/server output ("client_stats", one entry per host and job). One fio job is one test: the
entries of one group's jobs written without group_reporting are combined as group_reporting would (fio_groups.py).
A job fio reports an error for is a failed test; how fio ended (a signal, a job far short of its runtime) makes the
run interrupted or flags its tests (fio_ending.py). Options are read as fio reads them (fio/sizes.py, kb_base
included). Every figure is checked before the store is touched, and a run is stored in one transaction: a refused or
killed import leaves nothing behind.
"""

import os
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import disklab
from disklab.errors import FioError, UserError
from disklab.fio.clientstats import client_entries, entry_document, entry_host
from disklab.fio.parse import JobResult, job_groups, parse_fio_output, parse_job, read_fio_document
from disklab.fio.sizes import is_percent, one_bssplit, option_bases, parse_fio_size, parse_range, per_direction
from disklab.imports.fio_ending import JobEnd, fio_ending
from disklab.imports.fio_groups import Flags, combine_group
from disklab.store.db import now_iso
from disklab.store.repository import NewRun, Store
from disklab.suite.model import FIO_RW_MODES, IO_DIRECTIONS, TestSpec
from disklab.system.textfile import read_text_file
from disklab.units import parse_duration

# Flags on imported tests (store test_flags; shown by show, the JSON export and the HTML report).
FIO_ERROR_FLAG = "fio_error"  # fio reported an error for the job: a failed test, without figures
LAYOUT_FLAG = "fio_layout"  # figures of an older fio layout, converted (fio/parse.py says how)
# fio's rw modes -> (pattern, direction) as disklab's tests name them.
RW_MODES = {rw: (pattern, direction) for (direction, pattern), rw in FIO_RW_MODES.items()} | {
    "readwrite": ("sequential", "mixed")}

# json+ of thousands of jobs on many hosts stays far below this; /dev/zero or a disk image is refused unread.
MAX_FIO_OUTPUT_BYTES = 256 * 1024**2


@dataclass(frozen=True)
class ImportedTest:
    label: str
    host: str | None  # the fio server it ran on; None: not client/server output
    target: str | None  # the job's filename or directory, when it named one
    target_kind: str  # as the store names kinds: directory, file or device
    params: dict
    jobfile: str
    fio_output: str  # fio's document of the test's job entries: one, or every job of a combined group
    job: JobResult  # no directions when the job failed
    error: str | None = None  # fio's error number and text: a failed test
    flags: Flags = ()
    fio_messages: str = ""  # fio's own 'fio: ...' lines around the JSON


@dataclass(frozen=True)
class ImportedRun:
    source: Path
    fio_version: str
    started_at: str
    client_server: bool
    tests: tuple[ImportedTest, ...]
    notes: tuple[str, ...] = ()  # what the reader skipped or chose in the file
    interrupted: str | None = None  # the signal that stopped fio or a job, and what it cut

    @property
    def failed(self) -> tuple[ImportedTest, ...]:
        return tuple(t for t in self.tests if t.error)

    @property
    def outcome(self) -> tuple[str, str | None]:
        """The run's status and why: failed if every job failed, interrupted if a signal stopped fio or a job."""
        if len(self.failed) == len(self.tests):
            return "failed", f"fio reported an error for every job: {self.tests[0].error}"
        return ("interrupted", self.interrupted) if self.interrupted else ("complete", None)


def read_fio_json(path: Path) -> ImportedRun:
    """The file as a run to store, or a UserError that says in one line what cannot be read."""
    data, notes, messages = _document(path)
    version = str(data.get("fio version", ""))
    client_server = "client_stats" in data
    if not client_server and "jobs" not in data:
        raise UserError(f"{path}: a JSON document without 'jobs' or 'client_stats' is not fio's output")
    entries = data["client_stats"] if client_server else data["jobs"]
    if not isinstance(entries, list):
        raise UserError(f"{path}: fio's job list is not a list")
    measured = client_entries(data) if client_server else entries
    if not measured:
        raise UserError(f"{path}: fio's output holds no jobs")
    if not all(isinstance(e, dict) for e in measured):
        raise UserError(f"{path}: a job entry is not a JSON object")
    _check_figures(path, "client_stats" if client_server else "jobs", entries, measured)
    for entry in measured:
        for where, options in (("global options", data.get("global options", {})),
                               ("job options", entry.get("job options", {}))):
            if not isinstance(options, dict):
                raise UserError(f"{path}: fio's {where!r} is not a JSON object")
    groups = job_groups(measured)
    tests = [_test(path, data, group, client_server, messages) for group in groups]
    ending = fio_ending(messages, [_job_end(test, group[0]) for test, group in zip(tests, groups)])
    ended = tuple(
        replace(test, flags=test.flags + flags, job=replace(test.job, directions=()) if void else test.job,
                fio_messages=test.fio_messages or ("\n".join(messages) if flags else ""))
        for test, flags, void in zip(tests, ending.flags, ending.void)
    )
    return ImportedRun(
        source=path, fio_version=version or "unknown", started_at=_iso(data.get("timestamp")),
        client_server=client_server, tests=ended, notes=notes, interrupted=ending.interrupted,
    )


def store_import(store: Store, imported: ImportedRun, name: str | None) -> int:
    """One run with one test per fio job (per host and job in client/server mode), ending as its outcome says, all in
    one transaction: an import stopped midway (a store error, a signal, a kill) leaves no run behind."""
    targets = list(dict.fromkeys(t.target for t in imported.tests if t.target))
    hosts = list(dict.fromkeys(t.host for t in imported.tests if t.host))
    target = ", ".join(targets) or "unknown"
    options = {"imported_from": str(imported.source.resolve()), "client_server": imported.client_server}
    if imported.notes:
        options["import_notes"] = list(imported.notes)
    with store.transaction():
        run_id = store.create_run(NewRun(
            suite_name="import", suite_source=str(imported.source.resolve()), suite_text="", target=target,
            target_kind=imported.tests[0].target_kind, test_path=target, options=options,
            disklab_version=disklab.version(), fio_version=imported.fio_version,
            fio_engine=", ".join(sorted({t.params["engine"] for t in imported.tests})),
            hostname=", ".join(hosts) or "unknown", kernel="unknown", planned_tests=len(imported.tests), name=name,
            started_at=imported.started_at,
        ))
        for seq, test in enumerate(imported.tests):
            test_id = store.add_test(run_id, seq, test.label, test.params, test.jobfile, test.fio_output,
                                     test.fio_messages, imported.started_at, test.job, host=test.host)
            for flag, message in test.flags:
                store.add_flag(test_id, flag, message)
        store.finish_run(run_id, *imported.outcome)
    return run_id


def _check_figures(path: Path, key: str, entries: list, measured: list) -> None:
    """Every job entry read by fio/parse.py where it stands in the file, so that a refusal names its place there
    ('jobs[3].read'): the tests re-read their own documents, in which the entry may stand elsewhere."""
    kept = {id(entry) for entry in measured}
    for index, entry in enumerate(entries):
        if id(entry) in kept:
            try:
                parse_job(entry, f"{key}[{index}]")
            except FioError as exc:
                raise UserError(f"{path}: {exc}") from None


def _document(path: Path) -> tuple[dict, tuple[str, ...], tuple[str, ...]]:
    """The file's fio report, what the reader skipped to find it, and fio's 'fio: ...' lines; fio's text and terse
    outputs without JSON are named as such, with the fix."""
    if not os.path.exists(path):  # os.path's: False, not an error, for a name too long
        raise UserError(f"{path}: no such file")
    text = read_text_file(path, "fio output", MAX_FIO_OUTPUT_BYTES)  # refuses FIFOs, devices and huge files unread
    try:
        document = read_fio_document(text)
    except FioError as exc:
        first_line = text.lstrip("\ufeff").lstrip().partition("\n")[0]
        fix = "run fio with --output-format=json (or json+) and import that"
        if re.match(r"\d+;", first_line) and "{" not in text:
            raise UserError(f"{path}: this is fio's terse output; {fix}") from None
        if re.search(r"\(groupid=\d+, jobs=\d+\)|Run status group", text):
            raise UserError(f"{path}: this is fio's normal text output; {fix}") from None
        reason = str(exc).partition("cannot be read: ")[2]  # where a cut-off, edited or absurd document breaks
        reason = f" ({reason})" if reason else ""
        raise UserError(f"{path}: no readable JSON object{reason}; expected fio's --output-format=json output") \
            from None
    if not isinstance(document.data, dict):
        raise UserError(f"{path}: no readable JSON object; expected fio's --output-format=json output")
    messages = tuple(line.strip() for line in text.splitlines() if line.startswith("fio: "))
    return document.data, document.notes, messages


def _test(path: Path, data: dict, entries: list[dict], client_server: bool, messages: tuple[str, ...]) -> ImportedTest:
    """One fio job (one entry, or one group's entries), re-read through fio/parse.py from exactly the output that is
    stored with it."""
    entry = entries[0]
    jobname = str(entry.get("jobname", "?"))
    host = entry_host(entry) if client_server else None
    fio_output = entry_document(data, entries, host)
    try:
        jobs = parse_fio_output(fio_output).jobs  # the entries are checked already (_check_figures), the header here
    except FioError as exc:
        raise UserError(f"{path}: {exc}") from None
    # fio writes every option as a string; anything else is read as its text, and refused where it is no option value.
    global_options = {str(k): str(v) for k, v in data.get("global options", {}).items()}
    job_options = {str(k): str(v) for k, v in entry.get("job options", {}).items()}
    options = {**global_options, **job_options}
    error = _error(jobs, messages)
    job, flags = (replace(jobs[0], directions=()), ()) if error else combine_group(path, jobname, jobs, fio_output)
    if error:
        flags = ((FIO_ERROR_FLAG, error),)
    notes = tuple(dict.fromkeys(n for j in jobs for n in j.notes))
    if notes:
        flags += ((LAYOUT_FLAG, " ".join(notes)),)
    return ImportedTest(
        label=f"{jobname} @ {host}" if host else jobname, host=host,
        target=options.get("filename") or options.get("directory"), target_kind=_target_kind(options),
        params=_params(path, jobname, global_options, job_options, len(entries)),
        jobfile=_jobfile(global_options, jobname, job_options, host), fio_output=fio_output,
        job=job, error=error, flags=flags, fio_messages="\n".join(messages) if error else "",
    )


def _job_end(test: ImportedTest, entry: dict) -> JobEnd:
    group = entry.get("groupid")
    return JobEnd(test.label, test.host, group if type(group) is int else 0, test.job, test.error is not None,
                  test.params["runtime"], test.params["time_based"])


def _error(jobs: tuple[JobResult, ...], messages: tuple[str, ...]) -> str | None:
    """fio's error number and text for a job that failed (the first of a group's), with fio's lines naming it."""
    failed = next((j for j in jobs if j.error), None)
    if failed is None:
        return None
    try:
        text = os.strerror(failed.error)
    except (OverflowError, ValueError):
        text = "not an error number this system knows"
    said = [m for m in messages if f"err={failed.error}/" in m or text in m]
    return f"fio error {failed.error} ({text})" + (": " + " | ".join(said) if said else "")


def _params(path: Path, jobname: str, global_options: dict, job_options: dict, entries: int) -> dict:
    """The job's options as the parameters native tests store, read as fio reads them, fio's defaults where an option
    is absent. `entries`: how many jobs fio wrote for it (a group without group_reporting writes one per job)."""
    options = {**global_options, **job_options}

    def base(key: str) -> int:
        return bases.get(key, 1024)

    try:
        bases = option_bases(global_options, job_options)  # the kb_base fio read each option with
        rw = str(options.get("rw", options.get("readwrite", "read"))).partition(":")[0]
        if rw not in RW_MODES:
            raise ValueError(f"rw={rw} (disklab reads {', '.join(RW_MODES)})")
        pattern, direction = RW_MODES[rw]
        used = IO_DIRECTIONS[direction]
        if "rwmixread" in options:
            rwmixread = _count(options["rwmixread"], base("rwmixread"))
        else:
            rwmixread = 100 - _count(options.get("rwmixwrite", 50), base("rwmixwrite"))
        bs, bssplit = _block_size(options, bases, used)
        numjobs = _count(options.get("numjobs", 1), base("numjobs"))
        spec = TestSpec(
            label=jobname, group="import", metric="iops", pattern=pattern, direction=direction, rwmixread=rwmixread,
            bs=bs, bssplit=bssplit, iodepth=_count(options.get("iodepth", 1), base("iodepth")),
            jobs=entries if entries > 1 else numjobs, region="whole",
            size=_size(options.get("size"), base("size")), nrfiles=_count(options.get("nrfiles", 1), base("nrfiles")),
            filesize=_file_size(options.get("filesize"), base("filesize")),
            runtime=parse_duration(options.get("runtime", 0)),
            time_based=str(options.get("time_based", "0")) != "0",  # fio reads time_based=0 as off
            ramp=parse_duration(options.get("ramp_time", 0)),
            pause=parse_duration(options.get("startdelay", 0)), rate=_one_value(options, "rate", base("rate"), used),
            rate_iops=_one_value(options, "rate_iops", base("rate_iops"), used), sync=_sync(options), log_interval=None,
            frame_size=None, bit_depth=10, fps=24, direct=str(options.get("direct", "0")) == "1",
            engine=str(options.get("ioengine", "psync")), offset=_size(options.get("offset"), base("offset")) or 0,
        )
    except ValueError as exc:
        raise UserError(f"{path}: job {jobname!r}: an option disklab cannot read: {exc}") from None
    return spec.params()


def _count(value, base: int) -> int:
    """fio reads counts (iodepth, numjobs, rwmixread ...) with the same suffixes as sizes."""
    return parse_fio_size(value, base)


def _size(value, base: int) -> int | None:
    """A size option in bytes; None when absent or relative (50%: a share of the file or device)."""
    if value is None or is_percent(str(value)):
        return None
    return parse_fio_size(value, base)


def _file_size(value, base: int) -> int | None:
    """filesize is a range to fio ('1m-4m': each file's size drawn from it); disklab's file sets have one size."""
    if value is None:
        return None
    if not re.search(r"[-:]", str(value)):
        return parse_fio_size(value, base)
    low, high = parse_range(value, base)["read"]
    if low != high:
        raise ValueError(f"filesize={value} (a range of file sizes; disklab's file sets have one size)")
    return low


def _one_value(options: dict, key: str, base: int, used: tuple[str, ...]) -> int | None:
    """An option given per direction (rate, rate_iops): the value of the job's directions, which must agree."""
    if key not in options:
        return None
    values = {per_direction(options[key], base)[d] for d in used}
    if len(values) > 1:
        raise ValueError(f"{key}={options[key]} differs between reads and writes; a disklab test has one {key}")
    return values.pop() or None


def _block_size(options: dict, bases: dict[str, int], used: tuple[str, ...]) -> tuple[int, str | None]:
    """(bs, bssplit) of the job's directions as fio reads them; a bssplit is written back in k/m/g (powers of 1024),
    which disklab's suites and fio read alike."""
    for key in ("bsrange", "blocksize_range"):
        if key in options:
            ranges = {parse_range(options[key], bases.get(key, 1024))[d] for d in used}
            if len(ranges) > 1 or any(r is not None and r[0] != r[1] for r in ranges):
                raise ValueError(f"{key}={options[key]} (a range of block sizes; a disklab test has one block size "
                                 "or a bssplit)")
    if "bssplit" in options:
        return 4096, one_bssplit(options["bssplit"], bases.get("bssplit", 1024), used)
    key = "bs" if "bs" in options else "blocksize"
    if key not in options:
        return 4096, None
    value = options[key]
    # An empty value (',64k') keeps fio's default, 4k.
    sizes = {per_direction(value, bases.get(key, 1024))[d] or 4096 for d in used}
    if len(sizes) > 1:
        listed = ", ".join(map(str, sorted(sizes)))
        raise ValueError(f"bs={value} gives reads and writes different block sizes ({listed} bytes); a disklab test "
                         "has one block size")
    return sizes.pop(), None


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
    try:
        return datetime.fromtimestamp(timestamp, timezone.utc).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return now_iso()  # no time a clock can show: not when fio ran
