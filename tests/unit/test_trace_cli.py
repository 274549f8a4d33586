"""`disklab trace show|suite|import` as a user runs them, bad input included (fuzzed like test_fuzz_input)."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from disklab.cli.main import cli
from disklab.suite.loader import load_suite
from disklab.trace.iolog import read_meta, read_trace
from tests.unit.test_fuzz_input import FUZZ, assert_clean

TRACE_FIXTURES = Path(__file__).parents[1] / "fixtures" / "trace"
FIO_IOLOG = TRACE_FIXTURES / "iolog-randrw70-4k-qd8.log"
TWO_DEVICES = TRACE_FIXTURES / "blktrace-two-devices.blktrace.0"
needs_blkparse = pytest.mark.skipif(shutil.which("blkparse") is None, reason="blkparse (Debian's blktrace) missing")


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert_clean(result)
    return result


def test_show_as_table_json_and_markdown(tmp_path):
    table = run("trace", "show", FIO_IOLOG)
    assert table.exit_code == 0
    assert "70.0 %" in table.stdout and "random" in table.stdout and "unknown: an iolog holds no completions" in table.stdout
    document = json.loads(run("trace", "show", FIO_IOLOG, "--format", "json").stdout)
    assert document["format"] == "disklab-trace-summary" and document["format_version"] == 2
    assert document["actions"]["read"] == {"ios": 2800, "bytes": 2800 * 4096}
    assert document["verdict"] == "random" and document["queue_depth"] is None
    run("trace", "show", FIO_IOLOG, "-f", "markdown", "-o", tmp_path / "s.md")
    assert "| read share (I/Os) | 70.0 % |" in (tmp_path / "s.md").read_text()


def test_show_warns_of_lost_events(tmp_path):
    trace = tmp_path / "t.trace"
    shutil.copy(FIO_IOLOG, trace)
    trace.with_name("t.trace.json").write_text('{"method": "tracefs", "lost_events": 12}')
    assert "the kernel lost 12 events" in run("trace", "show", trace).stdout


def test_suite_written_loads_with_the_suite_loader(tmp_path):
    result = run("trace", "suite", FIO_IOLOG, "-o", tmp_path / "mydb.toml")
    assert result.exit_code == 0
    suite = load_suite(str(tmp_path / "mydb.toml"))
    assert suite.name == "mydb"
    assert dict(suite.groups[0].values)["bs"] == 4096


def test_import_iolog_rewrites_it_as_version_3(tmp_path):
    v2 = tmp_path / "v2.log"
    v2.write_text("fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n/dev/sdb wait 300 0\n"
                  "/dev/sdb write 4096 4096\n/dev/sdb close\n")
    assert run("trace", "import", v2, "-o", tmp_path / "v3.trace").exit_code == 0
    assert (tmp_path / "v3.trace").read_text().splitlines()[0] == "fio version 3 iolog"
    assert [(r.time_us, r.action) for r in read_trace(tmp_path / "v3.trace")] == [(0, "read"), (300, "write")]
    assert read_meta(tmp_path / "v3.trace").method == "fio-iolog"


@needs_blkparse
def test_import_blktrace_of_two_devices_needs_one_picked(tmp_path):
    refused = run("trace", "import", TWO_DEVICES, "-o", tmp_path / "t.trace")
    assert refused.exit_code == 2
    assert "2 devices: 7:0 (50 I/Os), 7:1 (30 I/Os); pick one with --device MAJ:MIN" in refused.stderr
    assert not (tmp_path / "t.trace").exists()
    assert run("trace", "import", TWO_DEVICES, "--device", "7:0", "-o", tmp_path / "t.trace").exit_code == 0
    records = list(read_trace(tmp_path / "t.trace"))
    assert len(records) == 50 and {(r.action, r.length) for r in records} == {("read", 65536)}
    assert [r.offset for r in records[:3]] == [0, 65536, 131072]  # fio's sequential reads
    meta = read_meta(tmp_path / "t.trace")
    assert meta.method == "blktrace" and meta.device == "/dev/block/7:0" and meta.queue_depths == {1: 50}


@pytest.mark.parametrize("make, args, message", [
    (None, ("show", "{missing}"), "cannot read trace"),
    ("garbage", ("show", "{file}"), "is not a fio iolog"),
    ("garbage", ("suite", "{file}"), "is not a fio iolog"),
    ("garbage", ("import", "{file}", "-o", "{out}"), "is neither a fio iolog"),
    ("iolog", ("import", "{file}", "-o", "{file}"), "is also an input"),
    ("iolog", ("import", "{file}", "{file}", "-o", "{out}"), "one iolog at a time"),
    ("iolog", ("import", "{file}", "--device", "8:0", "-o", "{out}"), "an iolog has none"),
    ("iolog", ("import", "{file}", "-o", "{missing}/t.trace"), "cannot write"),
    ("blktrace", ("import", "{file}", "-o", "{out}"), "not named NAME.blktrace.CPU"),
    ("iolog", ("show", "{file}", "-o", "{out}"), "a table goes to the terminal"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, make, args, message):
    file = tmp_path / "input"
    if make == "garbage":
        file.write_bytes(b"\x00\xffnot a trace\n")
    elif make == "iolog":
        shutil.copy(FIO_IOLOG, file)
    elif make == "blktrace":
        shutil.copy(TWO_DEVICES, file)
    names = {"file": file, "out": tmp_path / "out.trace", "missing": tmp_path / "missing"}
    result = run("trace", *(a.format(**names) for a in args))
    assert result.exit_code == 2 and message in result.stderr


_LINES = st.one_of(
    st.sampled_from(["0 /a add", "0 /a open", "5 /a read 0 4096", "7 /a write 4096 512", "9 /a trim 0 1048576",
                     "3 /a sync 0 0", "2 /b read 18446744073709551615 4096", "1 /a read 0", "x /a read 0 1",
                     "/a wait 100 0", "/a read 0 4096", "0 /a close", "", "\x00", "4 /a read 4 " + "9" * 30]),
    st.text(max_size=40),
)


@FUZZ
@given(header=st.sampled_from(["fio version 3 iolog", "fio version 2 iolog", "fio version 1 iolog", ""]),
       lines=st.lists(_LINES, max_size=12), meta=st.one_of(st.none(), st.text(max_size=60), st.sampled_from([
           '{"method": "tracefs", "queue_depths": {"1": 5, "8": 3}}', '{"queue_depths": {"-1": 0}}',
           '{"method": "x", "duration_s": 1e308, "lost_events": 3}', '{"format_version": 1e400}'])),
       command=st.sampled_from([("show",), ("show", "-f", "json"), ("show", "-f", "markdown"), ("suite",)]))
def test_fuzzed_traces_never_crash_show_or_suite(tmp_path, header, lines, meta, command):
    trace = tmp_path / "fuzz.trace"
    trace.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8", errors="surrogatepass")
    meta_file = trace.with_name("fuzz.trace.json")
    meta_file.unlink(missing_ok=True)
    if meta is not None:
        meta_file.write_text(meta, encoding="utf-8", errors="surrogatepass")
    run("trace", command[0], trace, *command[1:])
