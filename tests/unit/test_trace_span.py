"""A capture window longer than the workload: `trace show` and `trace suite` take the rate and the runtime over the I/O
span (first to last I/O), and still say the window.

The trace is the issue's case, written as a capture writes one (write_trace, write_meta): tracing on for 6.0 s, the
workload's 4,800 reads issued from 1.5 s to 4.5 s, one every 625 µs (1,600 IOPS); over the window it would read as
800 IOPS for 6 s.
"""

import json
import tomllib

from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.trace.iolog import TraceMeta, TraceRecord, write_meta, write_trace
from tests.unit.test_fuzz_input import assert_clean

IOS = 4800
FIRST_US, GAP_US = 1_500_000, 625


def _trace(tmp_path):
    path = tmp_path / "late.trace"
    records = (TraceRecord(FIRST_US + i * GAP_US, "/dev/vdb", "read", (i * 7919 % 4096) * 4096, 4096) for i in range(IOS))
    write_trace(path, records, ["/dev/vdb"])
    write_meta(path, TraceMeta(method="tracefs", device="/dev/vdb", duration_s=6.0))
    return path


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert_clean(result)
    assert result.exit_code == 0, result.output
    return result


def test_show_gives_the_rate_over_the_io_span_and_says_the_window(tmp_path):
    path = _trace(tmp_path)
    document = json.loads(run("trace", "show", path, "--format", "json").stdout)
    assert document["duration_s"] == 6.0  # the window, as before
    assert document["first_io_s"] == 1.5 and abs(document["io_span_s"] - 3.0) < 0.001
    assert abs(document["mean_iops"] - 1600) < 1
    table = run("trace", "show", path, "--format", "markdown").stdout
    assert "| I/O span (first to last I/O) | 2.999 s (from 1.500 s) |" in table
    assert "| capture window | 6.000 s |" in table and "| mean rate (over the I/O span) | 1,600.3 IOPS |" in table


def test_suite_runs_for_the_io_span_at_its_rate(tmp_path):
    text = run("trace", "suite", _trace(tmp_path)).stdout
    group = tomllib.loads(text)["group"][0]
    assert group["runtime"] == "2999ms" and group["rate_iops"] == 1600  # not the 6 s window at 800
    assert "over 2.999 s, first to last, in a capture window of 6.000 s" in text
