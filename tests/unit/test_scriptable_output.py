"""Issue 15, item 5: output a script can rely on. One tidy CSV per run, -f honoured or refused in one line, click's
usage errors in disklab's one-line format, "did you mean" for suite names and keys, conflicting options refused,
--precision with its unit and its time budget in the dry run, test counts that add up. Runs are real fio 3.33 output
imported from tests/fixtures (their READMEs say how each was made)."""

import csv
import io
import json
import os
import string
from dataclasses import replace

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from disklab.cli.main import cli
from disklab.cli.estimate import estimate_line
from disklab.plan.build import build_plan
from disklab.plan.estimate import RUN_START_S, STEP_START_S
from disklab.report.runs import duration, ran_tests, run_cells, counted_tests
from disklab.run.prepare import schedule_for
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from disklab.suite.loader import did_you_mean, load_suite
from disklab.units import format_duration, parse_percent
from tests.conftest import FIO_FIXTURES

SMART = FIO_FIXTURES.parent / "smart"
MIXED = FIO_FIXTURES / "randrw-70-4k-4jobs.json.json"  # one job, read and write
TWO_JOBS = FIO_FIXTURES / "import-two-jobs.json.json"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="disklab")


def refused(result, *fragments: str, exit_code: int = 2) -> str:
    """One line on stderr in disklab's format, nothing on stdout, the exit code of bad input."""
    assert result.exit_code == exit_code, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("disklab: error: "), result.stderr
    assert result.stdout == ""
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def imported(*paths) -> list[int]:
    for path in paths:
        result = invoke("import", path)
        assert result.exit_code == 0, result.output
    with Store(commands_location()) as store:
        return [r.id for r in reversed(store.list_runs())]


def commands_location():
    """The store the commands use: DISKLAB_STORE where a test set it (commands_store), else the default file."""
    return os.environ.get("DISKLAB_STORE") or default_store_path()


# --- one tidy CSV ---

def test_show_csv_is_one_table_with_the_run_id_on_every_row(commands_store):
    first, second = imported(MIXED, TWO_JOBS)
    tables = [invoke("show", run_id, "-f", "csv").stdout for run_id in (first, second)]
    for text in tables:
        assert "\n\n" not in text
    header = tables[0].splitlines()[0]
    assert header == tables[1].splitlines()[0], "runs share one header, so their CSVs concatenate"
    rows = [row for text in tables for row in csv.DictReader(io.StringIO(text))]
    assert {row["run_id"] for row in rows} == {str(first), str(second)}
    assert all(None not in row and len(row) == len(header.split(",")) for row in rows), "no ragged row"
    raw = json.loads(MIXED.read_text())["jobs"][0]
    read, write = [row for row in rows if row["run_id"] == str(first)]
    assert (read["direction"], write["direction"]) == ("read", "write")
    assert float(read["iops"]) == raw["read"]["iops"]
    assert float(write["mb_per_s"]) == raw["write"]["bw_bytes"] / 1e6
    assert float(read["clat_p99_us"]) == raw["read"]["clat_ns"]["percentile"]["99.000000"] / 1e3
    assert int(read["block_size_bytes"]) == 4096 and read["block_size"] == "4KiB"


def test_every_figure_column_names_its_unit():
    (run_id,) = imported(MIXED)
    header = invoke("show", run_id, "-f", "csv").stdout.splitlines()[0].split(",")
    where = {"run_id", "run_name", "seq", "planned_test", "attempt", "host", "test", "direction", "pattern",
             "block_size", "iodepth", "jobs", "flags"}
    figures = [name for name in header if name not in where]
    assert figures and all(name == "iops" or name.endswith(("_us", "_per_s", "_percent", "_bytes")) for name in figures)


def test_csv_round_trips_through_the_csv_module_to_the_same_table():
    (run_id,) = imported(TWO_JOBS)
    text = invoke("show", run_id, "-f", "csv").stdout
    rows = list(csv.reader(io.StringIO(text)))
    again = io.StringIO()
    csv.writer(again, lineterminator="\n").writerows(rows)
    assert again.getvalue() == text


# --- -f honoured or refused ---

def stored_environment(run_id: int) -> None:
    with Store(commands_location()) as store:
        store.set_run_values("run_env", run_id, {"kernel": "6.1.0-13-amd64", "fio_version": "fio-3.33"})
        for phase in ("before", "after"):
            store.add_smart(run_id, "/dev/nvme0n1", phase, json.loads((SMART / f"nvme-{phase}.real.json").read_text()))


def test_show_env_honours_json_and_markdown(commands_store):
    (run_id,) = imported(MIXED)
    stored_environment(run_id)
    result = invoke("show", run_id, "--env", "-f", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["format"] == "disklab-environment" and document["run_id"] == run_id
    assert document["environment"]["kernel"] == "6.1.0-13-amd64"
    before = json.loads((SMART / "nvme-before.real.json").read_text())
    assert document["smart"]["/dev/nvme0n1"]["before"] == before
    changes = document["smart_changes"]["/dev/nvme0n1"]
    assert changes and all(c["change"] == c["after"] - c["before"] for c in changes)
    markdown = invoke("show", run_id, "--env", "-f", "markdown").stdout
    assert "| Key | Value |" in markdown and "SMART of /dev/nvme0n1" in markdown


@pytest.mark.parametrize("args, fragment", [
    (("--env", "-f", "csv"), "--format json or markdown"),
    (("--jobfile", "-f", "csv"), "--jobfile prints fio's job files"),
    (("--jobfile", "-f", "json"), "leave out --format"),
    (("--env", "--jobfile"), "exclude each other"),
    (("--series", "--env"), "exclude each other"),
    (("--env", "--flat"), "--flat"),
    (("--jobfile", "--flat"), "--flat"),
    (("--env", "--per-host"), "--per-host"),
    (("--env", "-o", "env.txt"), "a table goes to the terminal"),
])
def test_show_refuses_what_it_cannot_honour_in_one_line(args, fragment):
    (run_id,) = imported(MIXED)
    refused(invoke("show", run_id, *args), fragment)


# --- click's usage errors ---

@pytest.mark.parametrize("args, help_of", [
    (("run",), "disklab run"), (("run", "quick", "--repeat"), "disklab run"), (("show", "-f"), "disklab show"),
    (("show", "1", "-f", "xml"), "disklab show"), (("compare",), "disklab compare"),
    (("runs", "--limit", "0"), "disklab runs"), (("capacity", "nosuch"), "disklab capacity"),
    (("capacity", "--bogus"), "disklab capacity"), (("hosts", "check"), "disklab hosts check"),
    (("hosts", "check", "--port"), "disklab hosts check"), (("suites", "show"), "disklab suites show"),
    (("nosuch",), "disklab --help"), (("--db",), "disklab --help"),
])
def test_usage_errors_are_one_line_naming_the_help_of_the_command(args, help_of):
    line = refused(invoke(*args), f"(see '{help_of}")
    assert "Usage:" not in line and "Error:" not in line


# --- did you mean ---

def test_a_near_suite_name_is_suggested():
    refused(invoke("run", "quik", "--dry-run"), "unknown suite 'quik'; did you mean 'quick'?", "built-in suites:")
    line = refused(invoke("run", "zzzz", "--dry-run"), "unknown suite 'zzzz'")
    assert "did you mean" not in line


@pytest.mark.parametrize("line, suggestion", [
    ("blok_size = '4k'", "did you mean 'bs'?"), ("iodepht = 4", "did you mean 'iodepth'?"),
    ("numjob = 2", "did you mean 'jobs'?"), ("io_engine = 'libaio'", "did you mean 'engine'?"),
])
def test_a_near_key_in_a_suite_file_is_suggested(tmp_path, line, suggestion):
    suite = tmp_path / "mine.toml"
    suite.write_text(f"name = 'mine'\n[defaults]\n{line}\n[[group]]\nname = 'a'\n")
    refused(invoke("run", suite, "--dry-run"), "defaults: unknown field", suggestion)
    suite.write_text("name = 'mine'\nmod = 'fixed'\n[[group]]\nname = 'a'\n")
    refused(invoke("run", suite, "--dry-run"), "unknown field 'mod'; did you mean 'mode'?")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_did_you_mean_is_a_known_name_or_nothing(text):
    known = ("bs", "iodepth", "jobs", "pattern")
    hint = did_you_mean(text, known)
    assert hint == "" or any(hint == f"; did you mean {name!r}?" for name in known)


# --- conflicting options ---

@pytest.mark.parametrize("args, fragment", [
    (("run", "quick", "--force", "--dry-run"), "--force only widens --destroy-data"),
    (("run", "quick", "--read-only", "--destroy-data", "--dry-run"), "--read-only runs no test that writes"),
    (("run", "quick", "--max-time", "5m", "--dry-run"), "--max-time is the time budget of --precision"),
    (("run", "steady", "--precision", "2%", "--dry-run"), "--precision does not apply"),
    (("runs", "--all", "--limit", "3"), "--all and --limit exclude each other"),
])
def test_conflicting_options_are_refused(args, fragment):
    refused(invoke(*args), fragment)


# --- --precision ---

def test_precision_needs_its_unit():
    refused(invoke("run", "quick", "--precision", "2", "--dry-run"), "'2' needs its unit: write 2%")
    assert invoke("run", "quick", "--precision", "2 %", "--dry-run").exit_code == 0
    refused(invoke("compare", "1", "2", "--tolerance", "10"), "with its unit, e.g. 10%")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.digits + ".% -+eE", max_size=12) | st.text(max_size=12))
def test_parse_percent_takes_only_a_number_with_its_percent_sign(text):
    try:
        value = parse_percent(text)
    except ValueError as exc:
        assert "\n" not in str(exc)
        return
    assert "%" in text and 0 < value < 100


def test_precision_dry_run_shows_the_time_budget_beside_the_least_it_takes():
    plan = build_plan(load_suite("quick"))
    one_pass = plan.estimated_seconds()
    assert one_pass == pytest.approx(8 * (5 + 1 + STEP_START_S) + RUN_START_S)  # runtime, ramp, fio's start-up
    three = format_duration(plan.estimate(0, passes=3).seconds)
    line = estimate_line(plan, 0, schedule_for(plan, 1, 2.0))
    assert line.startswith(f"estimated duration: at least {three} ") and "every test at least 3 times" in line
    assert f"for at most {format_duration(10 * one_pass)}" in line  # 10 passes
    shown = invoke("run", "quick", "--precision", "2%", "--dry-run")
    assert shown.exit_code == 0 and line in shown.stdout
    short = estimate_line(plan, 0, schedule_for(plan, 1, 2.0, 60.0))
    assert short.startswith("estimated duration: 1m00s, the time budget") and f"would take {three}" in short
    assert estimate_line(plan, 0, schedule_for(plan, 3)) == f"estimated duration: {three} (every test 3 times)"
    assert estimate_line(plan, 0, schedule_for(plan, 1)) == f"estimated duration: {format_duration(one_pass)}"


# --- test counts ---

def test_runs_counts_the_tests_a_run_ran():
    (run_id,) = imported(TWO_JOBS)
    with Store(default_store_path()) as store:
        info = store.get_run(run_id).info
    assert info.status == "complete" and ran_tests(info) == str(info.finished_tests)
    precision = replace(info, status="complete", options={"precision": 2.0}, planned_tests=24, finished_tests=78)
    assert ran_tests(precision) == "78", "a precision run's plan is its least: 78/24 said nothing true"
    assert ran_tests(replace(precision, status="interrupted", finished_tests=10)) == "10 of at least 24"
    assert ran_tests(replace(info, status="failed", planned_tests=24, finished_tests=10)) == "10 of 24"
    assert run_cells(precision)[5] == "78"
    assert counted_tests(replace(info, status="complete", finished_tests=1)) == "1 test"  # "1 tests run"
    assert counted_tests(replace(info, status="failed", planned_tests=1, finished_tests=0)) == "0 of 1 test"
    assert counted_tests(replace(info, status="failed", planned_tests=24, finished_tests=1)) == "1 of 24 tests"
    listing = invoke("runs")
    assert "Tests run" in listing.stdout


def test_runs_lists_each_runs_duration():
    """`runs` had no duration column."""
    (run_id,) = imported(TWO_JOBS)
    with Store(default_store_path()) as store:
        info = store.get_run(run_id).info
    timed = replace(info, started_at="2026-01-02T10:00:00+00:00", finished_at="2026-01-02T10:12:05+00:00")
    assert duration(timed) == "12m05s" and "12m05s" in run_cells(timed)
    assert duration(replace(timed, finished_at=None)) == "-"  # still running, or killed before it ended
    assert duration(replace(timed, finished_at="not a time")) == "-"
    assert "Duration" in invoke("runs").stdout
