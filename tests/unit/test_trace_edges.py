"""`disklab trace` at its edges (issue 24): metadata of every wrong type, special files where a trace or an output
should be, and generated bad traces. For every input: exit 0, or exit 2 with one `disklab: error:` line; never an
internal error (70), a traceback or a hang, and a FIFO named as an output stays a FIFO.

Bad inputs are copies of real ones (tests/fixtures/trace) with one thing changed.
"""

import json
import math
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from disklab.cli.main import cli
from disklab.errors import UserError
from disklab.system.textfile import open_regular_file
from disklab.trace.iolog import MAX_LINE_CHARS, meta_path, read_meta, read_trace, write_trace
from tests.unit.test_fuzz_input import FUZZ

TRACE_FIXTURES = Path(__file__).parents[1] / "fixtures" / "trace"
FIO_IOLOG = TRACE_FIXTURES / "iolog-randrw70-4k-qd8.log"
BLKTRACE = TRACE_FIXTURES / "blktrace-randrw70-4k-qd8.blktrace.0"
SHOW_AND_SUITE = (("show",), ("show", "-f", "json"), ("show", "-f", "markdown"), ("suite",))


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert_0_or_2(result.exit_code, result.stderr, result.exception)
    return result


def run_bounded(*args):
    """In a process of its own, for inputs that made disklab wait for ever or read without end: a hang or a
    MemoryError fails the test, never the test run (or the machine)."""
    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    result = subprocess.run([sys.executable, "-m", "disklab", *map(str, args)], capture_output=True, text=True,
                            timeout=20, stdin=subprocess.DEVNULL, preexec_fn=limit_memory)
    assert_0_or_2(result.returncode, result.stderr)
    return result


def assert_0_or_2(code, stderr, exception=None):
    assert exception is None or isinstance(exception, SystemExit), repr(exception)
    if code:
        lines = stderr.splitlines()
        assert code == 2, (code, stderr)
        assert len(lines) == 1 and lines[0].startswith("disklab: error: "), stderr


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    """A real trace and the metadata disklab writes for it: the blktrace fixture imported (its queue depths
    included), or fio's iolog where blkparse is missing."""
    trace = tmp_path_factory.mktemp("imported") / "real.trace"
    source = (BLKTRACE, "--device", "7:1") if shutil.which("blkparse") else (FIO_IOLOG,)
    assert CliRunner().invoke(cli, ["trace", "import", *map(str, source), "-o", str(trace)]).exit_code == 0
    return trace


def real_meta(imported: Path) -> dict:
    return json.loads(meta_path(imported).read_text())


def trace_with_meta(folder: Path, imported: Path, document) -> Path:
    """A copy of the real trace with `document` as its metadata (JSON text, or anything json.dumps writes)."""
    trace = folder / "t.trace"
    shutil.copy(imported, trace)
    text = document if isinstance(document, str) else json.dumps(document)
    meta_path(trace).write_text(text, encoding="utf-8", errors="surrogatepass")
    return trace


# --- metadata of the wrong type: each was an internal error, or passed unchecked ---

@pytest.mark.parametrize("field, value", [
    ("method", 5), ("method", None), ("method", ["tracefs"]),  # NotRenderableError, AttributeError in markdown
    ("device", 5), ("captured_at", 5), ("kernel", {}), ("host", [1]),
    ("device_bytes", "x"), ("device_bytes", 1.5), ("device_bytes", -1),  # TypeError comparing with 0
    ("duration_s", "x"), ("duration_s", 1e308), ("duration_s", -1.0), ("duration_s", True),  # TypeError, OverflowError
    ("lost_events", "x"), ("lost_events", None), ("lost_events", -3),  # ValueError, TypeError in a format string
    ("queue_depths", {"1": -5}), ("queue_depths", {"0": 5}), ("queue_depths", {"1": 1.5}), ("queue_depths", []),
    ("notes", [5, {}]), ("notes", "one note"), ("pid", "x"), ("pid", 0), ("format_version", "x"),
])
def test_metadata_of_a_wrong_type_is_refused_naming_file_and_field(tmp_path, imported, field, value):
    trace = trace_with_meta(tmp_path, imported, {**real_meta(imported), field: value})
    for command in SHOW_AND_SUITE:
        result = run("trace", command[0], trace, *command[1:])
        assert result.exit_code == 2, (command, result.output)
        assert "t.trace.json" in result.stderr and field in result.stderr, result.stderr


@pytest.mark.parametrize("text, says", [
    ("[1, 2]", "a JSON list"), ("5", "a JSON int"), ('{"device": "/dev/sdb"}', "method is missing"),
    ("[" * 100_000, "nested too deeply"), ('{"method": "tracefs", "duration_s": NaN}', "duration_s"),
    ('{"method": "tracefs", "duration_s": Infinity}', "duration_s"), ('{"method": "\\ud800"}', "Unicode"),
    ('{"method": "tracefs", "lost_events": ' + "9" * 5000 + "}", "not JSON"),
])
def test_metadata_that_is_no_object_of_fields_is_refused(tmp_path, imported, text, says):
    result = run("trace", "show", trace_with_meta(tmp_path, imported, text))
    assert result.exit_code == 2 and says in result.stderr


def test_metadata_of_bytes_other_than_utf8_is_refused(tmp_path, imported):
    trace = trace_with_meta(tmp_path, imported, real_meta(imported))
    meta_path(trace).write_bytes(meta_path(trace).read_bytes().replace(b'"method"', b'"m\xffethod"'))
    assert "not UTF-8" in run("trace", "suite", trace).stderr


def test_real_metadata_still_reads_and_unknown_keys_are_left_for_a_later_disklab(tmp_path, imported):
    trace = trace_with_meta(tmp_path, imported, {**real_meta(imported), "from_the_future": [1]})
    assert read_meta(trace) == read_meta(imported)
    assert run("trace", "show", trace).exit_code == 0


# --- special files where a trace is read ---

@pytest.mark.parametrize("command", [("show",), ("suite",), ("import", "-o", "{out}")])
def test_a_fifo_as_the_trace_is_refused_unread(tmp_path, command):
    fifo = tmp_path / "fifo.trace"
    os.mkfifo(fifo)
    args = [a.format(out=tmp_path / "out.trace") for a in command]
    result = run_bounded("trace", args[0], fifo, *args[1:])  # opening a FIFO without a writer waited for ever
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_fifo_as_the_trace_of_a_replay_is_refused_unread(tmp_path):
    fifo = tmp_path / "fifo.trace"
    os.mkfifo(fifo)
    result = run_bounded("run", "replay", "--trace", fifo, "--target", tmp_path, "--dry-run")
    assert result.returncode == 2 and "not a regular file" in result.stderr


def test_a_fifo_as_the_metadata_is_refused_unread(tmp_path, imported):
    trace = trace_with_meta(tmp_path, imported, {})
    meta_path(trace).unlink()
    os.mkfifo(meta_path(trace))
    result = run_bounded("trace", "show", trace)
    assert result.returncode == 2 and "trace metadata" in result.stderr and "not a regular file" in result.stderr


@pytest.mark.parametrize("command", [("show",), ("suite",), ("import", "-o", "{out}")])
@pytest.mark.parametrize("special", ["/proc/self/mem", "/dev/null", "{folder}"])
def test_special_files_as_the_trace_are_one_line(tmp_path, command, special):
    """/proc/self/mem opens as a regular file and fails to read (OSError, EIO); a folder and a device are refused."""
    args = [a.format(out=tmp_path / "out.trace") for a in command]
    result = run("trace", args[0], special.format(folder=tmp_path), *args[1:])
    assert result.exit_code == 2


def test_the_shared_reader_refuses_devices_fifos_and_folders_before_reading(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for path in (Path("/dev/zero"), Path("/dev/null"), tmp_path / "fifo", tmp_path):
        with pytest.raises(UserError, match="is not a regular file"):
            open_regular_file(path, "trace")
    with open_regular_file(FIO_IOLOG, "trace") as handle:
        assert handle.readline() == b"fio version 3 iolog\n"


def test_a_file_without_line_ends_is_refused_at_its_first_long_line(tmp_path):
    """A disk image (or a sparse file of zeros) named as a trace is not read into memory whole."""
    image = tmp_path / "image.trace"
    with image.open("wb") as out:
        out.write(b"fio version 3 iolog\n")
        out.truncate(64 * 1024**3)  # sparse: 64 GiB of zeros, no line end after the header
    result = run_bounded("trace", "show", image)
    assert result.returncode == 2 and "line 2" in result.stderr
    header_only = tmp_path / "header.trace"
    header_only.write_bytes(b"fio version 3 iolog" + b" " * (2 * MAX_LINE_CHARS))
    assert run("trace", "show", header_only).exit_code == 2


def test_version_2_waits_adding_up_beyond_an_iolog_time_are_refused(tmp_path):
    """They were written as a v3 time of 21 digits, which no reader takes back."""
    v2 = tmp_path / "v2.log"
    wait = "9" * 20
    v2.write_text(f"fio version 2 iolog\n/a add\n/a wait {wait} 0\n/a wait {wait} 0\n/a read 0 4096\n")
    result = run("trace", "import", v2, "-o", tmp_path / "out.trace")
    assert result.exit_code == 2 and "line 4" in result.stderr
    assert not (tmp_path / "out.trace").exists()


# --- outputs that are not regular files ---

def test_import_to_a_fifo_leaves_the_fifo_as_it_was(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run("trace", "import", FIO_IOLOG, "-o", fifo)  # was renamed over: the FIFO became a regular file
    assert result.exit_code == 2 and "not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert not meta_path(fifo).exists() and sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_import_to_a_device_node_leaves_the_node_as_it_was(tmp_path):
    node = tmp_path / "null"  # a private node with /dev/null's numbers: what a mistyped `-o /dev/null` meets
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    result = run("trace", "import", FIO_IOLOG, "-o", node)
    assert result.exit_code == 2 and "not a regular file" in result.stderr
    assert stat.S_ISCHR(os.stat(node).st_mode) and os.stat(node).st_rdev == os.makedev(1, 3)


def test_import_beside_a_fifo_named_as_the_metadata_leaves_both_as_they_were(tmp_path):
    out = tmp_path / "out.trace"
    os.mkfifo(meta_path(out))
    result = run_bounded("trace", "import", FIO_IOLOG, "-o", out)  # writing the metadata waited for a reader
    assert result.returncode == 2 and "trace metadata" in result.stderr
    assert stat.S_ISFIFO(os.stat(meta_path(out)).st_mode) and not out.exists()


@pytest.mark.parametrize("command", [("show", "-f", "json", "-o"), ("show", "-f", "markdown", "-o"), ("suite", "-o")])
def test_show_and_suite_to_a_fifo_leave_the_fifo_as_it_was(tmp_path, command):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run_bounded("trace", command[0], FIO_IOLOG, *command[1:], fifo)
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_trace_is_written_whole_and_a_failed_import_leaves_the_old_one(tmp_path):
    out = tmp_path / "out.trace"
    assert run("trace", "import", FIO_IOLOG, "-o", out).exit_code == 0
    before = out.read_bytes(), meta_path(out).read_bytes()
    bad = tmp_path / "bad.log"
    bad.write_text(FIO_IOLOG.read_text() + "12 /x read 0\n")  # a malformed last line: found while writing
    assert run("trace", "import", bad, "-o", out).exit_code == 2
    assert (out.read_bytes(), meta_path(out).read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.log", "out.trace", "out.trace.json"]


def test_write_trace_keeps_its_signature_and_writes_whole(tmp_path):
    """capture.py calls write_trace(path, records, devices): an exception from the records leaves no file."""
    records = read_trace(FIO_IOLOG)

    def failing():
        yield next(records)
        raise UserError("stopped")

    with pytest.raises(UserError):
        write_trace(tmp_path / "t.trace", failing(), ["/var/tmp/t17s/data"])
    assert list(tmp_path.iterdir()) == []
    assert write_trace(tmp_path / "t.trace", read_trace(FIO_IOLOG), ["/var/tmp/t17s/data"]) == 4000


# --- generated input ---

_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10**18, max_value=10**400),
              st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
              st.sampled_from(["", "\ud800", "tracefs", "1", "-1", "1e400", "nan", "\x1b[2J", "x" * 5000])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6)
_FIELDS = ("method", "device", "device_bytes", "duration_s", "captured_at", "host", "kernel", "pid", "lost_events",
           "queue_depths", "notes", "format_version")
_DEPTHS = st.dictionaries(st.one_of(st.integers(-2, 2**21).map(str), st.text(max_size=4)), _JSON, max_size=4)


@st.composite
def metadata(draw):
    """The real document with fields replaced, dropped or added; or any JSON at all."""
    kind = draw(st.sampled_from(["fields", "fields", "fields", "any"]))
    if kind == "any":
        return ("any", draw(_JSON))
    changes = draw(st.lists(st.tuples(st.sampled_from(_FIELDS + ("extra",)),
                                      st.one_of(_JSON, st.just("<drop>"), _DEPTHS)), min_size=1, max_size=3))
    return ("fields", changes)


def meta_text(imported: Path, case) -> str:
    kind, content = case
    if kind == "any":
        document = content
    else:
        document = real_meta(imported)
        for field, value in content:
            if value == "<drop>":
                document.pop(field, None)
            else:
                document[field] = value
    return json.dumps(document)  # NaN and Infinity as Python's json writes and reads them


@FUZZ
@given(case=metadata(), command=st.sampled_from(SHOW_AND_SUITE))
def test_fuzzed_metadata(tmp_path, imported, case, command):
    trace = trace_with_meta(tmp_path, imported, meta_text(imported, case))
    result = run("trace", command[0], trace, *command[1:])
    if command == ("show", "-f", "json") and result.exit_code == 0:
        document = json.loads(result.stdout)
        assert all(math.isfinite(v) for v in (document["duration_s"], document["mean_iops"] or 0))


_FIO_LINES = FIO_IOLOG.read_text().splitlines()
_TOKENS = st.one_of(
    st.sampled_from(["", "0", "-1", "18446744073709551615", "9" * 21, "9" * 5000, "1e3", "0x10", "٣", "read",
                     "write", "trim", "sync", "datasync", "wait", "add", "open", "close", "/dev/sdb", "a b", "\x00",
                     "\ufffd", "nan", "inf"]),
    st.text(max_size=10))


@st.composite
def iologs(draw):
    """fio's own iolog (its first 40 lines) with a few lines changed: a token replaced, dropped or added, a line
    repeated, removed, or given other bytes; the header too."""
    lines = [line.encode() for line in _FIO_LINES[:40]]
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["token", "token", "drop-token", "add-token", "repeat", "remove", "bytes"]))
        parts = lines[index].split(b" ")
        if how == "token":
            parts[draw(st.integers(0, len(parts) - 1))] = draw(_TOKENS).encode("utf-8", "surrogatepass")
        elif how == "drop-token":
            parts.pop(draw(st.integers(0, len(parts) - 1)))
        elif how == "add-token":
            parts.append(draw(_TOKENS).encode("utf-8", "surrogatepass"))
        elif how == "repeat":
            parts = parts * draw(st.integers(2, 3))
        elif how == "remove":
            parts = []
        else:
            parts = [draw(st.binary(min_size=1, max_size=12))]
        lines[index] = b" ".join(parts)
    return b"\n".join(lines) + draw(st.sampled_from([b"\n", b"", b"\r\n"]))


@FUZZ
@given(content=iologs(), command=st.sampled_from(SHOW_AND_SUITE + (("import", "-o"),)))
def test_fuzzed_iolog_lines(tmp_path, content, command):
    trace = tmp_path / "fuzz.log"
    trace.write_bytes(content)
    out = tmp_path / "out.trace"
    args = [*command[1:], out] if command[0] == "import" else command[1:]
    result = run("trace", command[0], trace, *args)
    if command[0] == "import" and result.exit_code == 0:
        assert run("trace", "show", out).exit_code == 0  # what import writes, show reads back
