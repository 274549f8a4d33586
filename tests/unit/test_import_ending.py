"""`disklab import` of fio runs that ended before their end (real fio 3.33 output in tests/fixtures/fio/stopped): a
signal makes the run interrupted and flags the tests it cut; a time_based job far short of its runtime is flagged;
complete output stays complete with no flag."""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.fio.parse import read_fio_document
from disklab.imports.fio_ending import SHORT_FLAG, STOPPED_FLAG
from disklab.imports.fio_output import FIO_ERROR_FLAG, read_fio_json
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from tests.conftest import FIO_FIXTURES
from tests.unit.test_import import CLIENT_SERVER, IMPORTED_LAYOUTS, STANDALONE

STOPPED = FIO_FIXTURES / "stopped"
ENDING_FLAGS = (STOPPED_FLAG, SHORT_FLAG)


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def imported(name: str | Path, *options: str):
    """The stored run of a fixture (a name) or of a file elsewhere (a path), and what `import` printed."""
    path = STOPPED / name if isinstance(name, str) else name
    result = invoke("import", str(path), *options)
    assert result.exit_code == 0, result.output
    with Store(default_store_path()) as store:
        return store.get_run(store.resolve_run_id("last")), result.output


def entries(name: str) -> list[dict]:
    return read_fio_document((STOPPED / name).read_text()).data["jobs"]


def seconds_run(entry: dict) -> str:
    """The time fio measured the job for, as the flags write it."""
    return f"{max(entry[d]['runtime'] for d in ('read', 'write', 'trim')) / 1000:.1f} s"


@pytest.mark.parametrize("name, said, asked", [
    ("sigint-loops.txt", "signal 2 (SIGINT)", "before the job ended (its runtime allowed 10 s)"),
    ("sigterm-time-based.txt", "signal 15 (SIGTERM)", "of the 10 s the job asked for"),
    ("sigint-status-interval.txt", "signal 2 (SIGINT)", "of the 10 s the job asked for"),
])
def test_a_signal_to_fio_makes_the_run_interrupted_and_names_the_signal_and_the_time(name, said, asked):
    (entry,) = entries(name)
    record, output = imported(name)
    (test,) = record.tests
    message = dict(test.flags)[STOPPED_FLAG]
    assert message.startswith(f"fio was stopped by {said} after {seconds_run(entry)}")
    assert asked in message and message.endswith("its figures are partial")
    assert record.info.status == "interrupted" and record.info.error == message
    assert f"interrupted: {message}" in output
    assert [m.total_ios for m in test.metrics] == [entry["read"]["total_ios"]]  # what fio did is kept, flagged
    assert read_fio_json(STOPPED / name).tests[0].fio_messages.startswith("fio: terminating on signal")  # its stderr


def test_only_the_jobs_the_signal_cut_are_flagged():
    """Stonewalled jobs run one after another: the signal fell in the second; the first had ended, the third never
    began."""
    first, second, third = entries("sigint-stonewall.txt")
    record, _ = imported("sigint-stonewall.txt")
    flags = [dict(t.flags) for t in record.tests]
    assert flags[0] == {}
    assert flags[1][STOPPED_FLAG] == (f"fio was stopped by signal 2 (SIGINT) after {seconds_run(second)} of the 2 s "
                                      "the job asked for: its figures are partial")
    assert flags[2][STOPPED_FLAG] == ("fio was stopped by signal 2 (SIGINT) before this job did any I/O: it has no "
                                      "figures")
    assert [len(t.metrics) for t in record.tests] == [1, 1, 0] and third["read"]["total_ios"] == 0
    assert record.info.status == "interrupted"
    assert record.info.error == ("fio was stopped by signal 2 (SIGINT): 2 of 3 tests are partial or have no figures "
                                 "(second, third; see their flags)")
    shown = invoke("show", "last")
    assert "⚑ second: fio_stopped: fio was stopped by signal 2 (SIGINT)" in shown.output
    assert f"interrupted: {record.info.error}" in shown.output


def test_a_job_process_killed_by_a_signal_leaves_no_figures_and_an_interrupted_run():
    (entry,) = entries("killed-job.txt")
    assert (entry["read"]["runtime"], entry["read"]["io_bytes"], entry["error"]) == (0, 0, 0)
    record, _ = imported("killed-job.txt")
    (test,) = record.tests
    assert test.metrics == ()  # I/Os counted without time or bytes are no measurement
    assert dict(test.flags)[STOPPED_FLAG] == (
        "fio's process for this job was killed by signal 9 (SIGKILL) before fio closed its figures "
        f"({entry['read']['total_ios']:,} I/Os counted, no time, no bytes): it has no figures")
    assert record.info.status == "interrupted" and "signal 9 (SIGKILL)" in record.info.error


def test_a_time_based_job_far_short_of_its_runtime_is_flagged_in_a_complete_run():
    """exitall ended 'long' when 'short' finished: no signal, no message; 'short' is not time_based and ended
    normally."""
    long, short = entries("short-exitall.txt")
    record, _ = imported("short-exitall.txt")
    assert record.info.status == "complete"
    flags = [dict(t.flags) for t in record.tests]
    assert flags[0][SHORT_FLAG].startswith(
        f"fio ran this time_based job for {seconds_run(long)} of the 10 s it asked for and said nothing of why")
    assert flags[1] == {}
    assert [len(t.metrics) for t in record.tests] == [1, 1]


def test_a_real_io_error_is_a_failed_test_with_fios_lines_not_an_interruption():
    record, output = imported("eio-loop.txt")
    (test,) = record.tests
    flag = dict(test.flags)[FIO_ERROR_FLAG]
    assert flag.startswith(f"fio error 5 ({os.strerror(5)})") and "err=5/file:io_u.c" in flag
    assert STOPPED_FLAG not in dict(test.flags) and test.metrics == ()
    assert record.info.status == "failed" and "interrupted" not in output


def test_a_signal_after_every_job_ran_its_time_cuts_no_figures_but_the_run_says_it(tmp_path):
    """The complete run with fio's signal line added: fio was stopped while it wrote its report."""
    path = tmp_path / "late.txt"
    path.write_text("\nfio: terminating on signal 2\n" + (STOPPED / "complete-time-based.txt").read_text())
    record, _ = imported(path)
    assert dict(record.tests[0].flags) == {} and len(record.tests[0].metrics) == 1
    assert record.info.status == "interrupted"
    assert record.info.error == ("fio was stopped by signal 2 (SIGINT); every job had ended or run its time: no "
                                 "figures are cut")


def test_a_killed_job_process_no_job_shows_is_said_without_guessing_which(tmp_path):
    """The complete run with a killed process's line added: every job has its time and bytes, so none is flagged."""
    path = tmp_path / "killed.txt"
    path.write_text("fio: pid=4242, got signal=9\n" + (STOPPED / "complete-time-based.txt").read_text())
    run = read_fio_json(path)
    assert run.tests[0].flags == () and run.interrupted == (
        "a fio job's process was killed by signal 9 (SIGKILL); no job's figures show which (each has its time and "
        "bytes)")


def test_a_signal_number_this_system_does_not_name_is_given_as_a_number(tmp_path):
    path = tmp_path / "odd.txt"
    path.write_text((STOPPED / "sigterm-time-based.txt").read_text().replace("signal 15", "signal 99"))
    assert read_fio_json(path).interrupted.startswith("fio was stopped by signal 99 after ")


@pytest.mark.parametrize("name", [
    *STANDALONE, *CLIENT_SERVER, *(f"layouts/{n}" for n in IMPORTED_LAYOUTS), "stopped/complete-time-based.txt",
])
def test_output_of_fio_run_to_its_end_carries_no_ending_flag(name):
    run = read_fio_json(FIO_FIXTURES / name)
    assert run.interrupted is None
    assert not [flag for t in run.tests for flag, _ in t.flags if flag in ENDING_FLAGS]


def test_the_complete_run_imports_as_complete():
    record, output = imported("complete-time-based.txt")
    assert record.info.status == "complete" and record.info.error is None and record.tests[0].flags == ()
    assert "interrupted" not in output


@pytest.mark.parametrize("value, time_based", [("1", True), ("0", False), ("", True)])
def test_time_based_is_read_as_fio_reads_it(value, time_based, tmp_path):
    """fio reads time_based=0 as off; so a job with it asks for its size, and its runtime is only a cap."""
    text = (STOPPED / "short-exitall.txt").read_text()
    data = json.loads(text[text.index("{"):])
    data["jobs"] = data["jobs"][:1]
    data["jobs"][0]["job options"]["time_based"] = value
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data))
    (test,) = read_fio_json(path).tests
    assert test.params["time_based"] is time_based
    assert (SHORT_FLAG in dict(test.flags)) is time_based


def test_compare_marks_the_interrupted_side():
    imported("complete-time-based.txt")
    imported("sigterm-time-based.txt")
    table = invoke("compare", "last~1", "last")
    assert table.exit_code == 0 and "complete-time-based" in table.output
    exported = json.loads(invoke("compare", "last~1", "last", "--format", "json").output)
    assert "interrupted" in table.output and exported["runs"][1].get("status") == "interrupted"


def test_comparing_failed_runs_says_they_failed_not_that_they_share_no_test():
    first, _ = imported("eio-loop.txt")
    second, _ = imported("eio-loop.txt")
    result = invoke("compare", str(first.info.id), str(second.info.id))
    assert result.exit_code == 2
    assert "nothing to compare: " in result.output and "no test in common" not in result.output
    assert f"run {first.info.id} failed (" in result.output and "holds no figures" in result.output
