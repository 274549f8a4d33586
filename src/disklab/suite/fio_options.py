"""fio's options that a test hands to fio as written (a suite's `fio` parameter): what may go, and why the rest may not.

A job file's options that do not change how disklab reads fio's results run as fio would run them (bssplit per
direction, fsync every N writes, norandommap, random_distribution, offset, loops ...). They are kept with the test,
written into its job file after disklab's own lines, and shown wherever the job file is (show --jobfile, export).
Refused are only the options that would make the stored figures wrong or leave the machine changed, each with why;
the ones that say where I/O and results go are disklab's to set.
"""

import re

from disklab.units import brief

# Where I/O goes, results and logs, and how fio's processes are grouped: disklab sets these for every test.
SET_BY_DISKLAB = (
    "filename", "directory", "filename_format", "output", "output-format", "write_bw_log", "write_lat_log",
    "write_iops_log", "write_hist_log", "log_avg_msec", "log_hist_msec", "log_hist_coarseness", "log_max_value",
    "log_offset", "log_prio", "log_compression", "log_store_compressed", "log_unix_epoch", "log_alternate_epoch",
    "log_alternate_epoch_clock_id", "log_entries", "per_job_logs", "group_reporting", "thread", "randrepeat",
    "refill_buffers", "unlink", "unlink_each_loop", "stonewall", "new_group", "wait_for", "name", "description",
)
_WITHOUT_LATENCY = "takes away latency figures disklab stores (fio's clat, from its json+ histogram)"
# fio option -> why a test cannot hand it to fio: its figures would be wrong, or the machine left changed.
REFUSED = {
    "stats": "stats=0 leaves the job out of fio's results: there would be no figure to store",
    "disable_lat": _WITHOUT_LATENCY, "disable_clat": _WITHOUT_LATENCY, "gtod_reduce": _WITHOUT_LATENCY,
    "disable_bw_measurement": "takes away the bandwidth figures disklab stores",
    "clat_percentiles": _WITHOUT_LATENCY,
    "lat_percentiles": "makes fio report total latency's percentiles instead of clat's, which disklab stores",
    "slat_percentiles": "makes fio report submission latency's percentiles instead of clat's, which disklab stores",
    "percentile_list": "changes which percentiles fio reports; disklab reads p50 to p99.99 from fio's json+ bins",
    "unified_rw_reporting": "merges reads and writes into one figure; disklab stores each direction",
    "verify": "fio counts the verifying reads among the test's reads, so a write test's figures mix in reads; "
              "verify data with fio alone",
    "verify_only": "reads back instead of writing: the figures would not be the test's",
    "do_verify": "fio counts the verifying reads among the test's reads",
    "ioscheduler": "switches the device's I/O scheduler and fio does not set it back; set it before the run "
                   "(disklab records the scheduler in force)",
    "include": "disklab reads one job file; put the included options into it",
}
# The options whose values are disklab's own parameters; a test's `fio` takes them only in forms no parameter has.
AS_PARAMETERS = {
    "iodepth": "iodepth", "numjobs": "jobs", "rwmixread": "rwmixread", "rwmixwrite": "rwmixread", "size": "size",
    "runtime": "runtime", "time_based": "time_based", "ramp_time": "ramp", "startdelay": "pause", "direct": "direct",
    "buffered": "direct", "ioengine": "engine", "nrfiles": "nrfiles", "filesize": "filesize",
}
# Options given once are the parameter; per direction ('4k,64k') they go to fio as written.
PER_DIRECTION = {"bs": "bs", "blocksize": "bs", "rate": "rate", "rate_iops": "rate_iops"}
# fio's (option, value) that the suite parameter sync names: a flush after every write, or O_DSYNC.
SYNC_PARAMETER = {("fsync", "1"): "fsync", ("fdatasync", "1"): "fdatasync", ("sync", "dsync"): "dsync"}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def parse_fio_lines(text: str) -> list[tuple[str, str | None]]:
    """(option, value or None) of each line of a `fio` value, as a job file's lines: 'norandommap', 'fsync=4'."""
    options = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        name, equals, value = line.partition("=")
        options.append((name.strip(), value.strip() if equals else None))
    return options


def fio_lines_text(options: list[tuple[str, str | None]]) -> str:
    return "\n".join(name if value is None else f"{name}={value}" for name, value in options)


def fio_option_text(value) -> str:
    """The suite parameter `fio`: fio's options as a job file writes them, one per line, each one fio may be handed
    (ValueError names the one that may not, and why)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{brief(value)} is not fio's options, one per line as in a job file (e.g. 'norandommap')")
    options = parse_fio_lines(value)
    for name, given in options:
        if not _NAME.fullmatch(name) or len(name) > 64:
            raise ValueError(f"{brief(name)} is not an fio option's name")
        if given is not None and (len(given) > 4096 or not given.isprintable()):
            raise ValueError(f"{name}: {brief(given)} is not a value fio reads")
        refusal = refusal_of(name, given)
        if refusal:
            raise ValueError(f"{name}: {refusal}")
    if len({name for name, _ in options}) < len(options):
        raise ValueError("an option is given twice")
    return fio_lines_text(options)


def refusal_of(name: str, value: str | None) -> str | None:
    """Why a test's `fio` may not hand fio this option, or None when it may."""
    if name in SET_BY_DISKLAB:
        return "set by disklab for every test (the target and its test file, fio's output and logs)"
    if name in REFUSED and not (name in ("verify", "do_verify", "clat_percentiles") and _off(name, value)):
        return REFUSED[name]
    if name in AS_PARAMETERS:
        return f"is the suite parameter {AS_PARAMETERS[name]}; set it there"
    if name in ("rw", "readwrite") and ":" not in (value or ""):
        return "is the suite parameters pattern and direction; set them there (fio's rw=MODE:N goes here)"
    if name in PER_DIRECTION and "," not in (value or ""):
        return f"is the suite parameter {PER_DIRECTION[name]}; set it there (a value per direction goes here)"
    sync = SYNC_PARAMETER.get((name, (value or "").strip()))
    if sync:
        return f"is the suite parameter sync = '{sync}'; set it there"
    return None


def _off(name: str, value: str | None) -> bool:
    """verify=0/none and do_verify=0 do nothing; clat_percentiles=1 is fio's default."""
    value = (value or "").strip()
    if name == "clat_percentiles":
        return value in ("", "1")
    return value in ("0", "none")


def block_sizes_as_written(params: dict) -> str | None:
    """A test's block sizes as fio is handed them where no parameter holds them ('4k,64k', a bssplit per direction),
    for the tables and titles that name a test's block size; None where its bs or bssplit says it."""
    given = dict(parse_fio_lines(params.get("fio") or ""))
    return given.get("bssplit") or given.get("bs") or given.get("blocksize")


def other_options_as_written(params: dict) -> str:
    """fio's options handed on as written beyond the block sizes, as a job file's line would list them."""
    shown = [name if value is None else f"{name}={value}" for name, value in parse_fio_lines(params.get("fio") or "")
             if name not in ("bssplit", "bs", "blocksize")]
    return " ".join(shown)
