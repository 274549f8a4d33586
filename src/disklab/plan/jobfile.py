"""Render one test as a plain fio job file that anyone can run with fio alone."""

import re
from pathlib import Path

import disklab
from disklab.fio.logs import LOG_PREFIX
from disklab.plan.build import file_set_name, sequential_job_slice
from disklab.suite.model import TestSpec
from disklab.system.outputs import write_whole
from disklab.units import fio_size, parse_size

_SYNC_OPTIONS = {"fsync": "fsync=1", "fdatasync": "fdatasync=1", "dsync": "sync=dsync"}


def job_section_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-") or "test"


def render_jobfile(test: TestSpec, filename: str, directory: str, suite_name: str) -> str:
    """fio's options are written out in full, including the ones disklab relies on.

    `filename` is the test file or device; `directory` holds the files of file-set tests.
    """
    if test.iolog is not None:
        return _replay_jobfile(test, filename, suite_name)
    lines = [
        f"; disklab {disklab.version()}, suite {suite_name!r}, test {test.label!r}",
        "; reproduce with: fio --output-format=json+ THIS_FILE",
        "[global]",
        f"ioengine={test.engine}",
        f"direct={int(test.direct)}",
        *_where(test, filename, directory),
        *_duration(test),
        "group_reporting=1",
        # Jobs as threads of one fio process: killing it (or disklab dying) stops every job.
        "thread=1",
        # Different random offsets for every job and every run, so jobs don't hit each other's cached blocks.
        "randrepeat=0",
        # Fresh random data in every write buffer, so compressing or deduplicating storage cannot shrink the work.
        *(["refill_buffers=1"] if test.writes else []),
        *_logs(test),
        "",
        f"[{job_section_name(test.label)}]",
        f"rw={test.fio_rw}",
        f"bssplit={_bssplit(test.bssplit)}" if test.bssplit else f"bs={fio_size(test.bs)}",
        f"iodepth={test.iodepth}",
        f"numjobs={test.jobs}",
    ]
    if test.direction == "mixed":
        lines.append(f"rwmixread={test.rwmixread}")
    if test.sync != "none":
        lines.append(_SYNC_OPTIONS[test.sync])
    if test.rate:
        lines.append(f"rate={test.rate}")
    if test.rate_iops:
        lines.append(f"rate_iops={test.rate_iops}")
    return "\n".join(_as_written(lines, test)) + "\n"


# The lines of disklab's that an option handed to fio as written takes the place of (a bssplit per direction, its bs).
_REPLACED = {"readwrite": "rw", "blocksize": "bs", "bssplit": "bs"}


def _as_written(lines: list[str], test: TestSpec) -> list[str]:
    """The test's options for fio as written, after disklab's own (kb_base, when given, reads only them): each in
    place of the line of disklab's it replaces, so that no option is given twice."""
    if not test.fio:
        return lines
    given = test.fio_options
    replaced = {_REPLACED.get(name, name) for name in given} | set(given)
    kept = [line for line in lines if line.partition("=")[0] not in replaced or line.startswith(("[", ";"))]
    return [*kept, "; fio's options of the suite or job file, as written", test.fio]


def _replay_jobfile(test: TestSpec, filename: str, suite_name: str) -> str:
    """A trace's replay: fio's iolog (rewritten for this target, beside the job file when exported) sets every I/O, its
    size and its time; read in chunks so that memory stays bounded."""
    from disklab.trace.replay import time_scale_percent  # with the trace modules, only for a replay

    scale = time_scale_percent(test.speed)
    lines = [
        f"; disklab {disklab.version()}, suite {suite_name!r}, test {test.label!r}, trace {test.trace}",
        "; reproduce with: fio --output-format=json+ THIS_FILE",
        "[global]",
        f"ioengine={test.engine}",
        f"direct={int(test.direct)}",
        f"filename={_escape(filename)}",
        f"size={test.size}",
        "group_reporting=1",
        "thread=1",
        *(["refill_buffers=1"] if test.writes else []),
        *_logs(test),
        "",
        f"[{job_section_name(test.label)}]",
        # The log sets every I/O; rw only makes fio lay a new test file out in full (it does so for jobs that read),
        # so that no read of the replay lands in a hole the file system answers without the disk.
        f"rw={'randread' if not test.writes else 'randrw'}",
        f"read_iolog={test.iolog}",
        "read_iolog_chunked=1",
        f"iodepth={test.iodepth}",
        "replay_no_stall=1" if scale is None else f"replay_time_scale={scale}",
    ]
    return "\n".join(lines) + "\n"


def render_layout_jobfile(test: TestSpec, filename: str) -> str:
    """The test file a replay runs in, written in full first: fio sizes a file it makes for an iolog to the log's
    writes, and a read beyond them (or in a hole) would never reach the disk."""
    return "\n".join([
        f"; disklab {disklab.version()}: lays out the test file of {test.label!r} (run before it)",
        "[global]",
        f"ioengine={test.engine}",
        f"direct={int(test.direct)}",
        f"filename={_escape(filename)}",
        f"size={test.size}",
        "thread=1",
        "refill_buffers=1",
        "",
        "[layout]",
        "rw=write",
        f"bs={fio_size(1024**2) if test.size % 1024**2 == 0 else fio_size(4096)}",
        "iodepth=8",
    ]) + "\n"


def _where(test: TestSpec, filename: str, directory: str) -> list[str]:
    if test.file_set:
        lines = [
            f"directory={_escape(directory)}",
            f"filename_format={file_set_name(test)}.$jobnum.$filenum",
            f"nrfiles={test.nrfiles}",
            f"filesize={fio_size(test.filesize)}",
            f"size={fio_size(test.nrfiles * test.filesize)}",
            f"openfiles={min(test.nrfiles, 64)}",
            "file_service_type=sequential",
        ]
        if test.writes:
            # Files are made by the test itself (as a copy makes them) and flushed before it ends.
            lines += ["create_on_open=1", "end_fsync=1"]
        return lines
    lines = [f"filename={_escape(filename)}"]
    if test.offset:
        lines.append(f"offset={test.offset}")
    slice_bytes = sequential_job_slice(test)
    if slice_bytes:
        lines += [f"size={fio_size(slice_bytes)}", f"offset_increment={fio_size(slice_bytes)}"]
    else:
        lines.append(f"size={fio_size(test.size)}")
    return lines


def _duration(test: TestSpec) -> list[str]:
    lines = []
    if test.pause:
        lines.append(f"startdelay={_seconds(test.pause)}")
    if test.time_based:
        lines += ["time_based=1", f"runtime={_seconds(test.runtime)}"]
    elif test.runtime:
        lines.append(f"runtime={_seconds(test.runtime)}")  # a cap: the test ends when its data is done
    lines.append(f"ramp_time={_seconds(test.ramp)}")
    return lines


def _logs(test: TestSpec) -> list[str]:
    if not test.log_interval:
        return []
    return [
        f"write_iops_log={LOG_PREFIX}",
        f"write_bw_log={LOG_PREFIX}",
        f"write_lat_log={LOG_PREFIX}",
        f"log_avg_msec={log_avg_msec(test)}",
    ]


def log_avg_msec(test: TestSpec) -> int:
    """The logging window in fio's whole milliseconds; the log parser buckets samples by the same number."""
    return round(test.log_interval * 1000)


def _seconds(value: float) -> str:
    return f"{int(value)}" if value == int(value) else f"{round(value * 1000)}ms"


def _bssplit(bssplit: str) -> str:
    """The suite's split with sizes fio reads as the suite means them: a suite's 4KB is 4,000 bytes, fio's 4,096."""
    parts = (part.partition("/") for part in bssplit.split(":"))
    return ":".join(f"{fio_size(parse_size(size))}/{share}" for size, _, share in parts)


def _escape(path: str) -> str:
    # fio splits filename on ':' (several files); a literal colon must be escaped.
    return path.replace(":", "\\:")


def write_jobfiles(jobfiles: list[tuple[str, str]], folder: Path) -> list[Path]:
    """One numbered fio job file per test, and a script that runs them all in order with fio alone."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for seq, (label, text) in enumerate(jobfiles, start=1):
        path = folder / f"{seq:03d}-{job_section_name(label)}.fio"
        write_whole(path, text, "job file")
        written.append(path)
    script = folder / "run-all.sh"
    write_whole(
        script,
        "#!/bin/sh\n# Runs every job file here with fio alone, each result beside its job file.\nset -e\n"
        'cd "$(dirname "$0")"\n'
        'for job in *.fio; do fio --output-format=json+ --output="${job%.fio}.json" "$job"; done\n',
        "script",
    )
    script.chmod(0o755)
    return written
