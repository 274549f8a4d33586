"""execute_schedule against a replaying executor: real captured fio output, no fio run."""

from dataclasses import replace

import pytest

from disklab.errors import FioError
from disklab.run.execute import Execution, execute_schedule, stage_of
from disklab.run.saturate import SaturateSchedule
from disklab.run.schedule import FixedSchedule, Step
from disklab.run.steady import SteadySchedule
from disklab.fio.executor import FioRun
from disklab.fio.logs import parse_logs
from disklab.plan.build import build_plan, resolve_engines
from disklab.store.repository import Store
from disklab.suite.loader import load_suite
from tests.conftest import fixture_text
from tests.unit.test_logs import fixture_logs
from tests.unit.test_store import new_run


class ReplayExecutor:
    def __init__(self, outputs: list[str], fail_at: int | None = None, logs: dict[str, str] | None = None):
        self.outputs = outputs
        self.fail_at = fail_at
        self.logs = logs or {}
        self.jobfiles: list[str] = []

    def run(self, jobfile, on_tick=None, on_status=None, status_interval_s=1):
        self.asked_for_status = on_status is not None
        self.status_interval_s = status_interval_s
        if len(self.jobfiles) == self.fail_at:
            raise FioError("fio failed (exit 1): replayed failure")
        self.jobfiles.append(jobfile)
        if on_tick:
            on_tick()
        return FioRun(output=self.outputs[len(self.jobfiles) - 1], stderr="", returncode=0, logs=self.logs)


class Recorder:
    wants_live = True

    def __init__(self):
        self.events = []

    def test_started(self, seq, test, stage="", steps=None):
        self.events.append(("start", seq))
        self.stages = [*getattr(self, "stages", []), stage]

    def tick(self):
        self.events.append(("tick",))

    def live(self, figures):
        self.events.append(("live", figures.phase))

    def test_finished(self, seq, test, job):
        self.events.append(("done", seq))


def test_every_test_is_stored_with_its_job_file_and_raw_output(tmp_path):
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    outputs = [fixture_text("randread-4k-q32.json.json"), fixture_text("seqwrite-1m-q8.jsonplus.json")] * 4
    executor, recorder = ReplayExecutor(outputs), Recorder()
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=8))
        execute_schedule(Execution(plan, "/mnt/x/f", "/files", run_id), FixedSchedule(plan), executor, store, recorder)
        record = store.get_run(run_id)
    assert [t.label for t in record.tests] == [t.label for t in plan.tests]
    assert [t.jobfile for t in record.tests] == executor.jobfiles
    assert [t.fio_output for t in record.tests] == outputs
    assert all("filename=/mnt/x/f" in j and "ioengine=io_uring" in j for j in executor.jobfiles)
    assert [e for e in recorder.events if e[0] != "tick"] == [(k, i) for i in range(8) for k in ("start", "done")]


@pytest.mark.parametrize("wants_live", [True, False])
def test_fio_reports_every_second_only_to_a_listener_that_shows_it(tmp_path, wants_live):
    """A script or a pipe gets the measurement without fio's interim reports (and disklab reading them)."""
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    executor, recorder = ReplayExecutor([fixture_text("randread-4k-q32.json.json")] * 8), Recorder()
    recorder.wants_live = wants_live
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=8))
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), executor, store, recorder)
    assert executor.asked_for_status is wants_live


def test_a_failing_test_stops_the_run_and_keeps_the_finished_ones(tmp_path):
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    executor = ReplayExecutor([fixture_text("randread-4k-q32.json.json")] * 8, fail_at=3)
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=8))
        with pytest.raises(FioError) as failed:
            execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), executor, store, Recorder())
        assert str(failed.value) == f"test {plan.tests[3].label!r}: fio failed (exit 1): replayed failure"
        assert [t.seq for t in store.get_run(run_id).tests] == [0, 1, 2]


def test_fio_reporting_an_error_fails_the_test(tmp_path):
    import json

    data = json.loads(fixture_text("randread-4k-q32.json.json"))
    data["jobs"][0]["error"] = 5
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run())
        with pytest.raises(FioError, match=r"fio reported error 5 \(Input/output error\)"):
            execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), ReplayExecutor([json.dumps(data)]), store, Recorder())


def test_the_logs_of_a_test_with_log_interval_are_stored_as_series(tmp_path):
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    logged, plain = replace(plan.tests[0], log_interval=1.0), plan.tests[1]
    plan = replace(plan, tests=(logged, plain))
    executor = ReplayExecutor([fixture_text("randrw-70-4k-4jobs-log1s.jsonplus.json")] * 2, logs=fixture_logs())
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=2))
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), executor, store, Recorder())
        stored = store.get_run(run_id).tests
    assert "log_avg_msec=1000" in executor.jobfiles[0] and "log_avg_msec" not in executor.jobfiles[1]
    assert stored[0].series == parse_logs(fixture_logs(), 1000)
    assert stored[1].series == ()


def test_the_stage_says_where_a_step_stands_in_its_schedule():
    steady = build_plan(load_suite("steady"))
    schedule = SteadySchedule(steady)
    first_round = Step(schedule.workload, 3, steady.tests[schedule.workload])
    assert stage_of(schedule, first_round, 5) == (
        f"steady-state round 3 of at most {steady.suite.rounds.criteria.max_rounds}")
    if schedule.preconditioning:
        index = schedule.preconditioning[0]
        assert stage_of(schedule, Step(index, 1, steady.tests[index]), 0) == "preconditioning"
    saturate = build_plan(load_suite("saturate"))
    step = SaturateSchedule(saturate, saturate.suite.saturation).next_step([])
    assert stage_of(SaturateSchedule(saturate, saturate.suite.saturation), step, 0) == "saturation step 1"
    quick = build_plan(load_suite("quick"))
    repeated = FixedSchedule(quick, repeat=2)
    assert [stage_of(repeated, s, i) for i, s in enumerate(repeated.steps)][::8] == ["", "repeat 2"]


def test_a_test_its_flags_and_device_states_land_in_one_commit(tmp_path, monkeypatch):
    """One sync to disk per test: every write of a test between one BEGIN and its COMMIT, none on its own."""
    monkeypatch.setattr("disklab.run.execute.busy_machine", lambda seen, job, devices: [("busy-machine", "beside")])
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    plan = replace(plan, tests=plan.tests[:3])
    executor = ReplayExecutor([fixture_text("randread-4k-q32.json.json")] * 3)
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=3))
        statements = []
        store.conn.set_trace_callback(statements.append)
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), executor, store, Recorder(),
                         observe=lambda: {"rebuild": "idle"})
        store.conn.set_trace_callback(None)
        record = store.get_run(run_id)
        flags = store.conn.execute("SELECT COUNT(*) FROM test_flags WHERE flag = 'busy-machine'").fetchone()[0]
    writes = [s.split()[0] for s in statements if s.split()[0] in ("BEGIN", "COMMIT", "INSERT")]
    assert writes == ["BEGIN", "INSERT", "INSERT", "INSERT", "INSERT", "COMMIT"] * 3  # test, metrics, flag, states
    assert len(record.tests) == 3 and flags == 3


def test_a_test_whose_flag_cannot_be_stored_is_not_stored_without_it(tmp_path, monkeypatch):
    """The test and its flags land together or not at all; the tests before it stay stored."""
    traps = iter([[], [("device-cache", "the cache answered")]])
    monkeypatch.setattr("disklab.run.execute.cache_traps", lambda *args: next(traps))
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    plan = replace(plan, tests=plan.tests[:2])
    executor = ReplayExecutor([fixture_text("randread-4k-q32.json.json")] * 2)
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=2))
        store.conn.execute("CREATE TRIGGER no_flags BEFORE INSERT ON test_flags BEGIN SELECT RAISE(ABORT, 'full'); END")
        with pytest.raises(Exception, match="full"):
            execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), executor, store, Recorder())
        assert [t.seq for t in store.get_run(run_id).tests] == [0]
