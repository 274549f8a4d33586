"""Every figure of fio's JSON is checked before anything is stored (issue 24): real fio output with one value made
wrong (a string, null, a list, NaN, 1e309, a count too large for SQLite, a negative count) is refused in one line that
names the file and the field's place in it, with exit 2 and the store as it was; a run given such output by fio
fails cleanly too, through the same parser."""

import json
import math
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.errors import FioError
from disklab.fio.parse import parse_fio_output
from disklab.plan.build import build_plan, resolve_engines
from disklab.run.execute import Execution, execute_schedule
from disklab.run.schedule import FixedSchedule
from disklab.store.repository import Store
from disklab.suite.loader import load_suite
from tests.conftest import FIO_FIXTURES, fixture_json, fixture_text
from tests.unit.test_execute import Recorder, ReplayExecutor
from tests.unit.test_store import new_run

# Python's json writes no such numbers: these stand in for them in the text (see edited_output).
BEYOND_FLOAT = "<1e309>"  # read back as infinity
BEYOND_INT_TEXT = "<5000 digits>"  # more digits than Python converts to an int
LITERALS = {BEYOND_FLOAT: "1e309", BEYOND_INT_TEXT: "9" * 5000}


def edited_output(name: str, path: tuple, value) -> str:
    """A real fio output (tests/fixtures/fio) with the value at `path` replaced."""
    data = fixture_json(name)
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    text = json.dumps(data)
    for marker, literal in LITERALS.items():
        text = text.replace(json.dumps(marker), literal)
    return text


def first_bin(name: str) -> str:
    return next(iter(fixture_json(name)["jobs"][0]["read"]["clat_ns"]["bins"]))


TWO_JOBS = "import-two-jobs.json.json"
JSONPLUS = "import-two-jobs.jsonplus.json"
CLIENT = "import-client-two-hosts.json"
FDATASYNC = "layouts/sync-fdatasync.json"
FIO_2 = "layouts/layout-fio-2.20.randrw.json"
NAN, INF = math.nan, BEYOND_FLOAT
# (fixture, where the value goes, the value, what the error line says)
CASES = {
    "nan-latency-mean": (TWO_JOBS, ("jobs", 0, "read", "lat_ns", "mean"), NAN,
                         "jobs[0].read: 'lat_ns.mean' is not a number: NaN"),
    "nan-usr-cpu": (TWO_JOBS, ("jobs", 0, "usr_cpu"), NAN, "jobs[0]: 'usr_cpu' is not a number: NaN"),
    "total-ios-10^21": (TWO_JOBS, ("jobs", 1, "write", "total_ios"), 10**21,
                        "jobs[1].write: 'total_ios' is too large to store (over 2^63 - 1): 1000000000000000000000"),
    "total-ios-2^63": (TWO_JOBS, ("jobs", 0, "read", "total_ios"), 2**63, "'total_ios' is too large to store"),
    "total-ios-string": (TWO_JOBS, ("jobs", 0, "read", "total_ios"), "12",
                         "jobs[0].read: 'total_ios' is not a number: \"12\" (a string)"),
    "total-ios-null": (TWO_JOBS, ("jobs", 0, "read", "total_ios"), None,
                       "jobs[0].read: 'total_ios' is not a number: null"),
    "total-ios-list": (TWO_JOBS, ("jobs", 0, "read", "total_ios"), [12],
                       "jobs[0].read: 'total_ios' is not a number: [12]"),
    "total-ios-true": (TWO_JOBS, ("jobs", 0, "read", "total_ios"), True, "'total_ios' is not a number: true"),
    "total-ios-fraction": (TWO_JOBS, ("jobs", 0, "read", "total_ios"), 1.5, "'total_ios' is not a whole number: 1.5"),
    "total-ios-negative": (TWO_JOBS, ("jobs", 0, "read", "total_ios"), -1,
                           "jobs[0].read: 'total_ios' is negative: -1"),
    "runtime-negative": (TWO_JOBS, ("jobs", 1, "write", "runtime"), -1000, "jobs[1].write: 'runtime' is negative"),
    "io-kbytes-nan": (TWO_JOBS, ("jobs", 0, "read", "io_kbytes"), NAN,
                      "jobs[0].read: 'io_kbytes' is not a number: NaN"),
    "iops-1e309": (TWO_JOBS, ("jobs", 0, "read", "iops"), INF,
                   "jobs[0].read: 'iops' is infinite (1e309 and beyond read as infinity): Infinity"),
    "total-ios-1e309": (TWO_JOBS, ("jobs", 0, "read", "total_ios"), INF, "'total_ios' is infinite"),
    "clat-max-minus-1e309": (TWO_JOBS, ("jobs", 0, "read", "clat_ns", "max"), -math.inf,
                             "'clat_ns.max' is negative: -Infinity"),
    "p99-string": (TWO_JOBS, ("jobs", 0, "read", "clat_ns", "percentile", "99.000000"), "fast",
                   "jobs[0].read: 'clat_ns.percentile.99.000000' is not a number: \"fast\" (a string)"),
    "io-bytes-400-digits": (TWO_JOBS, ("jobs", 0, "read", "io_bytes"), 10**400,
                            f"'io_bytes' is too large to store (over 2^63 - 1): 1{'0' * 35} ..."),
    "iops-400-digits": (TWO_JOBS, ("jobs", 0, "read", "iops"), 10**400,
                        f"jobs[0].read: 'iops' is too large: 1{'0' * 35} ..."),
    "io-bytes-5000-digits": (TWO_JOBS, ("jobs", 0, "read", "io_bytes"), BEYOND_INT_TEXT,
                             "a number of over 4,300 digits"),
    "timestamp-nan": (TWO_JOBS, ("timestamp",), NAN, "'timestamp' is not a number: NaN"),
    "error-nan": (TWO_JOBS, ("jobs", 0, "error"), NAN, "jobs[0]: 'error' is not a number: NaN"),
    "sync-lat-n-list": (FDATASYNC, ("jobs", 0, "sync", "lat_ns", "N"), [],
                        "jobs[0].sync: 'lat_ns.N' is not a number: []"),
    "sync-percentile-null": (FDATASYNC, ("jobs", 0, "sync", "lat_ns", "percentile"), None,
                             "jobs[0].sync: lat_ns.percentile is not an object"),
    "json+-bin-count-nan": (JSONPLUS, ("jobs", 0, "read", "clat_ns", "bins", first_bin(JSONPLUS)), NAN,
                            "jobs[0].read: latency bins are not 'value' : count"),
    "json+-bin-count-negative": (JSONPLUS, ("jobs", 0, "read", "clat_ns", "bins", first_bin(JSONPLUS)), -1,
                                 "jobs[0].read: latency bins are not 'value' : count"),
    "client-server-entry": (CLIENT, ("client_stats", 3, "write", "total_ios"), "12",
                            "client_stats[3].write: 'total_ios' is not a number: \"12\" (a string)"),
    "fio-2-usec-beyond-ns": (FIO_2, ("jobs", 0, "read", "lat", "mean"), 1e306,
                             "jobs[0].read: 'lat.mean' is too large: 1e+306 usec is no number in ns"),
    "fio-2-kib-beyond-bytes": (FIO_2, ("jobs", 0, "read", "io_bytes"), 2**62,
                               "jobs[0].read: 'io_bytes (KiB) x 1024' is too large to store"),
}


def store_dump(path: Path) -> list[str]:
    """Every table's rows, as SQL: what `disklab import` must leave as it was when it refuses."""
    with closing(sqlite3.connect(path)) as conn:
        return list(conn.iterdump())


@pytest.fixture
def store(tmp_path) -> Path:
    """A store holding one imported run."""
    path = tmp_path / "results.db"
    result = CliRunner().invoke(cli, ["--db", str(path), "import", str(FIO_FIXTURES / TWO_JOBS)])
    assert result.exit_code == 0, result.output
    return path


def refused_in_one_line(result, path: Path) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"disklab: error: {path}: "), line
    return line


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_wrong_figure_is_refused_in_one_line_naming_the_field_and_the_store_is_unchanged(case, store, tmp_path):
    name, where, value, message = CASES[case]
    path = tmp_path / "edited.json"
    path.write_text(edited_output(name, where, value))
    before = store_dump(store)
    result = CliRunner().invoke(cli, ["--db", str(store), "import", str(path)])  # a batch stores its good files
    assert message in refused_in_one_line(result, path)
    assert store_dump(store) == before


def test_jobs_whose_sum_no_count_can_hold_are_refused(store, tmp_path):
    """Each of the group's entries fits a 64-bit count; the group_reporting sum of two of them does not."""
    data = fixture_json("layouts/numjobs4-ungrouped.json")
    for entry in data["jobs"][:2]:
        entry["read"].update(io_bytes=2**62, io_kbytes=2**52)
    path = tmp_path / "summed.json"
    path.write_text(json.dumps(data))
    before = store_dump(store)
    result = CliRunner().invoke(cli, ["--db", str(store), "import", str(path)])
    line = refused_in_one_line(result, path)
    assert "job 'numjobs4-ungrouped': the read figures of its 4 entries, summed as group_reporting would, are too " \
           "large to store" in line
    assert store_dump(store) == before


def test_the_figures_fio_wrote_unread_by_disklab_are_not_judged(store, tmp_path):
    """lat_ns.N of a read is not read (total_ios counts the I/Os): a list there is no reason to refuse the file."""
    path = tmp_path / "n.json"
    path.write_text(edited_output(TWO_JOBS, ("jobs", 0, "read", "lat_ns", "N"), []))
    result = CliRunner().invoke(cli, ["--db", str(store), "import", str(path)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("where, value, message", [
    (("jobs", 0, "read", "lat_ns", "mean"), NAN, "jobs[0].read: 'lat_ns.mean' is not a number: NaN"),
    (("jobs", 0, "read", "total_ios"), 10**21, "jobs[0].read: 'total_ios' is too large to store"),
    (("jobs", 0, "usr_cpu"), INF, "jobs[0]: 'usr_cpu' is infinite"),
])
def test_a_run_given_such_output_by_fio_fails_cleanly_and_keeps_the_tests_before(tmp_path, where, value, message):
    """The parser runs share: fio's output of the third test is wrong; the two before it stay stored."""
    good = fixture_text("randread-4k-q32.json.json")
    bad = edited_output("randread-4k-q32.json.json", where, value)
    with pytest.raises(FioError, match="fio's JSON output: ") as refused:
        parse_fio_output(bad)
    assert message in str(refused.value) and "\n" not in str(refused.value)
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=8))
        with pytest.raises(FioError, match="is not a|is infinite|too large"):
            execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan),
                             ReplayExecutor([good, good, bad] * 3), store, Recorder())
        assert [t.seq for t in store.get_run(run_id).tests] == [0, 1]
