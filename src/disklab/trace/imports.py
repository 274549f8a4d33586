"""Traces made elsewhere turned into disklab's trace: fio iologs (v2 or v3) and blktrace's binary per-CPU files.

blktrace files are read through blkparse (Debian's `blktrace` package), which merges the CPUs' files by time. Only
the issue (D) events become I/Os; the completions (C) give the queue depth the device saw. A blktrace holding
several devices is refused unless one is picked: their offsets mean nothing together.
"""

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from disklab.errors import UserError
from disklab.system.outputs import checked_output
from disklab.system.textfile import open_regular_file
from disklab.targets.blockdev import SECTOR_BYTES
from disklab.trace.blockevents import ISSUE, BlockEvent
from disklab.trace.blktrace import BLKPARSE_FORMAT, parse_blkparse_lines
from disklab.trace.capture import RecordBuilder, TracedDevice
from disklab.trace.iolog import (
    HEADER_V2, HEADER_V3, TraceMeta, TraceRecord, meta_path, read_trace, write_meta, write_trace,
)
from disklab.units import MAX_SIZE_BYTES, brief

BLKTRACE_MAGIC = 0x65617400  # struct blk_io_trace's magic; its low byte is the format's version
_BLKTRACE_NAME = re.compile(r"^(?P<base>.+)\.blktrace\.\d+$")


def import_trace(paths: Sequence[Path], output: Path, device: str | None = None) -> tuple[int, TraceMeta]:
    """Writes OUTPUT (an iolog v3) and its metadata; returns the I/Os written and the metadata."""
    if any(path.resolve() == output.resolve() for path in paths):
        raise UserError(f"{output} is also an input: write the trace to a new file")
    checked_output(output, "trace")  # a device node or FIFO is refused before a long conversion, not after
    checked_output(meta_path(output), "trace metadata")
    kinds = {path: _kind(path) for path in paths}
    if set(kinds.values()) == {"iolog"}:
        if len(paths) > 1:
            raise UserError(f"give one iolog at a time ({len(paths)} given)")
        if device is not None:
            raise UserError("--device picks a device of a blktrace; an iolog has none")
        return _import_iolog(paths[0], output)
    if set(kinds.values()) == {"blktrace"}:
        return _import_blktrace(paths, output, device)
    raise UserError("give either one fio iolog or the per-CPU files of one blktrace (NAME.blktrace.N), not both")


def _kind(path: Path) -> str:
    head = _head(path)
    first_line = head.split(b"\n", 1)[0].strip()
    if first_line in (HEADER_V2.encode(), HEADER_V3.encode()):
        return "iolog"
    if len(head) >= 4 and int.from_bytes(head[:4], "little") & 0xFFFFFF00 == BLKTRACE_MAGIC:
        if not _BLKTRACE_NAME.match(path.name):
            raise UserError(f"{path} is a blktrace file but not named NAME.blktrace.CPU as blkparse needs; rename it")
        return "blktrace"
    raise UserError(f"{path} is neither a fio iolog (first line {HEADER_V3!r}) nor a blktrace file "
                    "(NAME.blktrace.CPU, as blktrace writes them)")


def _import_iolog(path: Path, output: Path) -> tuple[int, TraceMeta]:
    """Rewritten as v3: a v2 log's waits become timestamps. Two passes: the files are named before the records."""
    files: dict[str, None] = {}
    last = 0
    for record in read_trace(path):
        files.setdefault(record.file)
        last = record.time_us
    version = 3 if _head(path).split(b"\n", 1)[0].strip() == HEADER_V3.encode() else 2
    meta = TraceMeta(method="fio-iolog", duration_s=last / 1e6,
                     notes=(f"imported from {path} (fio iolog version {version}); an iolog holds no completions, "
                            "so the queue depth is unknown",))
    return _write(output, read_trace(path), list(files), lambda: meta)


def _head(path: Path) -> bytes:
    """The first bytes of an input, enough to tell an iolog from a blktrace; special files refused unread."""
    with open_regular_file(path, "input") as handle:
        try:
            return handle.read(64)
        except OSError as exc:
            raise UserError(f"cannot read input {path}: {exc.strerror or exc}") from None


def _write(output: Path, records: Iterator[TraceRecord], files: list[str],
           make_meta: Callable[[], TraceMeta]) -> tuple[int, TraceMeta]:
    """The trace, written whole (a failure leaves no half trace), then its metadata (known once it is written)."""
    count = write_trace(output, records, files)
    meta = make_meta()
    write_meta(output, meta)
    return count, meta


def _import_blktrace(paths: Sequence[Path], output: Path, device: str | None) -> tuple[int, TraceMeta]:
    bases = {(path.resolve().parent, _BLKTRACE_NAME.match(path.name)["base"]) for path in paths}
    if len(bases) > 1:
        names = ", ".join(sorted(base for _, base in bases))
        raise UserError(f"those files belong to {len(bases)} blktraces ({names}); import one at a time")
    folder, base = bases.pop()
    devices: Counter = Counter()
    last_ns: dict[tuple[int, int], int] = {}
    first_ns = None
    for event in _blkparse(folder, base):
        first_ns = event.time_ns if first_ns is None else first_ns
        if event.kind == ISSUE:
            devices[event.dev] += 1
            last_ns[event.dev] = max(last_ns.get(event.dev, 0), event.time_ns)
    disk = _pick_device(devices, device, base)
    name = f"{disk[0]}:{disk[1]}"
    # The device's size is not in the files: every offset is kept (a replay fits them to its target).
    builder = RecordBuilder(TracedDevice(f"/dev/block/{name}", disk, 0, MAX_SIZE_BYTES // SECTOR_BYTES))
    cpu_files = list(folder.glob(f"{_glob_escape(base)}.blktrace.*"))
    for path in cpu_files:  # blkparse opens every CPU's file: none of them may be a FIFO or a device
        open_regular_file(path, "blktrace file").close()
    cpus = len(cpu_files)

    def meta() -> TraceMeta:  # the queue depths are known once the records are written
        notes = (f"imported from {folder / base}.blktrace.* ({cpus} CPU files) through blkparse; device {name}",
                 "lost events unknown: blktrace reports dropped events when it stops, not in its files",
                 *builder.notes())
        return TraceMeta(method="blktrace", device=builder.device.path, duration_s=(last_ns[disk] - first_ns) / 1e9,
                         queue_depths=dict(sorted(builder.queue_depths.items())), notes=notes)

    return _write(output, builder.records(_blkparse(folder, base)), [builder.device.path], meta)


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _pick_device(devices: Counter, wanted: str | None, base: str) -> tuple[int, int]:
    listed = ", ".join(f"{major}:{minor} ({n:,} I/Os)" for (major, minor), n in sorted(devices.items()))
    if wanted is not None:
        major, colon, minor = wanted.partition(":")
        if not (colon and major.isascii() and major.isdigit() and minor.isascii() and minor.isdigit()):
            raise UserError(f"--device {brief(wanted)} is not MAJ:MIN, e.g. 8:0 (in {base}: {listed or 'no I/O'})")
        if (int(major), int(minor)) not in devices:
            raise UserError(f"--device {wanted}: not in {base}'s blktrace (it holds {listed or 'no I/O'})")
        return int(major), int(minor)
    if not devices:
        raise UserError(f"{base}'s blktrace holds no issued I/O (D events); was it captured with -a issue?")
    if len(devices) > 1:
        raise UserError(f"{base}'s blktrace holds {len(devices)} devices: {listed}; pick one with --device MAJ:MIN")
    return next(iter(devices))


def _blkparse(folder: Path, base: str) -> Iterator[BlockEvent]:
    """blkparse's events, merged across the CPUs' files by time (blkparse does that), as a stream."""
    program = shutil.which("blkparse")
    if program is None:
        raise UserError("blkparse is not installed; it reads blktrace files (Debian: apt-get install blktrace)")
    command = [program, "-q", "-i", base, "-D", str(folder), "-f", BLKPARSE_FORMAT.replace("\\n", "\n")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                          text=True, errors="replace") as process:
        try:
            yield from parse_blkparse_lines(process.stdout)
        finally:
            process.stdout.close()
            errors = process.stderr.read()
            process.wait()
    if process.returncode != 0:
        last = (errors.strip().splitlines() or [f"exit status {process.returncode}"])[-1]
        raise UserError(f"blkparse could not read {folder / base}.blktrace.*: {last}")
