"""A pgbench run's values said right (issue 42): its data set as pg_database_size measured it, never '0.0 MiB'; its
page-cache warning once per output however many steps carry it. The steps are stored from real pgbench output
(tests/fixtures/pgbench) and flagged as database/benchmark.py flags them."""

import json

from disklab.analysis.findings import findings
from disklab.database.benchmark import OUTCOME_KEY, data_set_outcome, step_flags, step_figures, store_step
from disklab.report.export import to_json
from disklab.report.findings import figure_text, findings_lines
from disklab.report.table import flag_lines
from disklab.store.repository import Store
from tests.unit.test_pgbench import fixture
from tests.unit.test_pgbench_report import step_result
from tests.unit.test_store import new_run

RAM = 8 * 2**30
DATABASE_BYTES = 23_535_139  # pg_database_size of `pgbench -i -s 1` (PostgreSQL 15)
POSTGRESQL = "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)"
DISK = {"devices": "sda", "device.sda.model": "ACME SSD", "device.sda.serial": "S1", "ram_bytes": RAM}


def pgbench_run(store: Store, version: str = POSTGRESQL) -> int:
    """Two steps of one small data set, stored and flagged as run_database_benchmark stores them."""
    results = [step_result(1, fixture("transactions-2-clients.stdout")),
               step_result(4, fixture("time-4-clients.stdout"), fixture("time-4-clients.stderr"))]
    run_id = store.create_run(new_run(suite_name="pgbench", fio_engine="pgbench", fio_version=version,
                                      planned_tests=len(results)))
    store.set_run_values("run_env", run_id, DISK)
    data_set = data_set_outcome(DATABASE_BYTES, 1, RAM)
    for seq, result in enumerate(results):
        test_id = store_step(store, run_id, seq, result)
        for flag, message in step_flags(DISK, data_set):
            store.add_flag(test_id, flag, message)
    steps = {str(r.step.clients): step_figures(r) for r in results}
    store.set_run_values("run_outcomes", run_id, {OUTCOME_KEY: {"summary": "pgbench: ...", "data_set": data_set,
                                                                "steps": steps}})
    store.finish_run(run_id, "complete")
    return run_id


def test_the_data_set_is_the_database_pgbench_made_and_its_warning_is_said_once(tmp_path):
    with Store(tmp_path / "r.db") as store:
        record = store.get_run(pgbench_run(store))
    assert [len(test.flags) for test in record.tests] == [1, 1], "every step carries the page-cache flag"
    (line,) = flag_lines(record)
    assert line.startswith("⚑ every test: page-cache: the data set (22.4MiB at scale 1) is less than 0.01x RAM")
    (finding,) = findings(record)
    assert finding.subject == "every test" and finding.verdict == "figures of a cache"
    assert [(f.name, f.value) for f in finding.figures] == [("data set", DATABASE_BYTES), ("RAM", RAM)]
    assert figure_text(finding.figures[0]) == "data set 22.4 MiB"
    shown = "\n".join([*flag_lines(record), *(line.plain for line in findings_lines(findings(record)))])
    assert shown.count("the page cache can hold it") == 1, shown
    assert json.loads(to_json(record))["findings"][0]["figures"][0] == {"name": "data set", "value": DATABASE_BYTES,
                                                                        "unit": "B"}

