"""The live display's source for real: fio's status reports each second while a test runs, phases and figures handed
to the listener, and fio's final report alone stored; `run --quiet` and `run --format json`."""

import json

import pytest

from disklab.fio import executor as executor_module
from disklab.fio.executor import SubprocessExecutor
from disklab.fio.features import choose_engine, detect_fio
from disklab.fio.parse import parse_fio_output, read_fio_document
from disklab.fio.status import documents
from disklab.plan.build import build_plan, resolve_engines
from disklab.run.execute import Execution, execute_schedule
from disklab.run.schedule import FixedSchedule
from disklab.store.repository import Store
from disklab.suite.loader import parse_suite
from tests.integration.conftest import NEEDS_FIO
from tests.unit.test_execute import Recorder
from tests.unit.test_store import new_run

pytestmark = [pytest.mark.integration, NEEDS_FIO]

# A pause long enough that fio's first report (1 s after it starts) falls in it, then a ramp and two measured seconds.
PHASES_SUITE = """
name = "phases"
[defaults]
size = "16MiB"
pause = "2s"
ramp = "1s"
runtime = "2s"
[[group]]
name = "rr"
pattern = "random"
direction = "read"
iodepth = 4
"""
ONE_SECOND_SUITE = PHASES_SUITE.replace('pause = "2s"', 'pause = "0s"').replace('ramp = "1s"', 'ramp = "0s"') \
    .replace('runtime = "2s"', 'runtime = "1s"').replace('"phases"', '"one-second"')


class Figures(Recorder):
    def __init__(self):
        super().__init__()
        self.figures = []

    def live(self, figures):
        super().live(figures)
        self.figures.append(figures)


def test_the_listener_gets_phases_and_figures_and_the_store_keeps_fio_s_final_report(tmp_path, monkeypatch):
    raw_outputs = []
    real_final_output = executor_module.final_output

    def keep_raw(text):
        raw_outputs.append(text)
        return real_final_output(text)

    monkeypatch.setattr(executor_module, "final_output", keep_raw)
    fio = detect_fio()
    plan = resolve_engines(build_plan(parse_suite(PHASES_SUITE, "phases.toml", "phases.toml")),
                           lambda wanted: choose_engine(fio, wanted))
    listener = Figures()
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=1))
        execution = Execution(plan, str(tmp_path / "testfile"), str(tmp_path / "files"), run_id)
        (done,) = execute_schedule(execution, FixedSchedule(plan), SubprocessExecutor(fio.path), store, listener)
        (stored,) = store.get_run(run_id).tests

    phases = [f.phase for f in listener.figures]
    order = ["pause", "ramp", "measuring"]
    assert phases == sorted(phases, key=order.index), phases
    assert phases[0] == "pause" and phases[-1] == "measuring", phases
    assert all(f.lat_mean_ns is None for f in listener.figures if f.phase == "ramp")  # fio measures no latency then
    measured = [f for f in listener.figures if f.phase == "measuring"]
    assert measured and all(f.iops > 0 and f.bw_bytes_per_s > 0 and f.lat_mean_ns > 0 for f in measured)

    (raw,) = raw_outputs
    reports = documents(raw)
    assert len(reports) >= 3, "fio wrote no interim reports"
    assert stored.fio_output == raw[reports[-1][0]:], "the stored output is fio's final report, verbatim"
    final = read_fio_document(raw[reports[-1][0]:]).data
    assert final == reports[-1][2]
    assert done.job == parse_fio_output(json.dumps(final)).jobs[0]
    (read,) = stored.metrics
    assert read.iops == final["jobs"][0]["read"]["iops"]
    assert read.total_ios == final["jobs"][0]["read"]["total_ios"]
    assert read.lat_mean_ns == final["jobs"][0]["read"]["lat_ns"]["mean"]


@pytest.fixture
def one_second_suite(tmp_path):
    suite = tmp_path / "one-second.toml"
    suite.write_text(ONE_SECOND_SUITE)
    target = tmp_path / "target"
    target.mkdir()
    return suite, target


def test_run_quiet_with_format_json_prints_the_stored_run_as_show_does(disklab, one_second_suite):
    suite, target = one_second_suite
    result = disklab("run", str(suite), "--target", str(target), "--quiet", "--format", "json")
    assert result.returncode == 0, result.stderr
    (run,) = disklab.runs()
    assert result.stderr.splitlines() == [f"stored as run {run['id']} in {disklab.store_path} (complete)"]
    shown = disklab("show", str(run["id"]), "--format", "json")
    assert result.stdout == shown.stdout
    assert json.loads(result.stdout)["run"]["id"] == run["id"]


def test_run_says_what_runs_and_its_id_before_the_tests(disklab, one_second_suite):
    suite, target = one_second_suite
    result = disklab("run", str(suite), "--target", str(target))
    assert result.returncode == 0, result.stderr
    (run,) = disklab.runs()
    lines = result.stderr.splitlines()
    assert lines[0].startswith("suite one-second: 1 tests on ") and "estimated duration:" in lines[0]
    assert lines[1].startswith("one pass per test (--repeat 1): its figures have no measured spread")
    assert lines[2] == f"run {run['id']} started: each test is stored as it finishes"
    assert lines[3].startswith("[1/1] rr")  # not a terminal: one line per test, no live figures
    quiet = disklab("run", str(suite), "--target", str(target), "-q")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr.splitlines() == [f"stored as run {run['id'] + 1} in {disklab.store_path} (complete)"]
    assert "rr" in quiet.stdout  # --quiet quietens stderr; the results still go to stdout


@pytest.mark.parametrize("args, message", [
    (("run", "quick", "--dry-run", "--format", "json"), "--format prints the run once it is stored; a dry run"),
    (("run", "pgbench", "--quiet", "--format", "json"), "--quiet, --format: not for suite 'pgbench'"),
])
def test_format_and_quiet_where_they_cannot_apply_are_refused(disklab, args, message):
    result = disklab(*args)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [result.stderr.strip()] and message in result.stderr
