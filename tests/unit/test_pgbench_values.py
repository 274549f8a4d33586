"""A pgbench run's values said right (issue 42): its data set as pg_database_size measured it, never '0.0 MiB'; its
page-cache warning once per output however many steps carry it; its tool as pgbench and PostgreSQL, never in a 'fio'
column; and every run's options as its user wrote them, with units. The steps are stored from real pgbench output
(tests/fixtures/pgbench) and flagged as database/benchmark.py flags them."""

import csv
import io
import json
import re

from disklab.analysis.findings import findings
from disklab.database.benchmark import OUTCOME_KEY, data_set_outcome, step_flags, step_figures, store_step
from disklab.report.compare import version_lines
from disklab.report.export import to_json, to_markdown
from disklab.report.findings import figure_text, findings_lines
from disklab.report.html.model import build_report
from disklab.report.html.render import render_html
from disklab.report.run_options import options_text
from disklab.report.runs import runs_to_csv, runs_to_json
from disklab.report.table import flag_lines
from disklab.store.repository import Store
from disklab.web.history import device_page, store_devices
from disklab.web.links import ServerLinks
from tests.unit.test_pgbench import fixture
from tests.unit.test_pgbench_report import step_result
from tests.unit.test_store import new_run

RAM = 8 * 2**30
DATABASE_BYTES = 23_535_139  # pg_database_size of `pgbench -i -s 1` (PostgreSQL 15)
POSTGRESQL = "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)"
DISK = {"devices": "sda", "device.sda.model": "ACME SSD", "device.sda.serial": "S1", "ram_bytes": RAM}
# The options `disklab run pgbench --scale 1 --clients 1,4 --time 5s` stores (cli/run.py's parameters, parsed).
OPTIONS = {"clients": [1, 4], "output_format": "table", "scale": 1.0, "time_s": 5.0}


def pgbench_run(store: Store, version: str = POSTGRESQL) -> int:
    """Two steps of one small data set, stored and flagged as run_database_benchmark stores them."""
    results = [step_result(1, fixture("transactions-2-clients.stdout")),
               step_result(4, fixture("time-4-clients.stdout"), fixture("time-4-clients.stderr"))]
    run_id = store.create_run(new_run(suite_name="pgbench", fio_engine="pgbench", fio_version=version,
                                      options=OPTIONS, planned_tests=len(results)))
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


def test_the_report_says_the_tool_and_the_options_as_written(tmp_path):
    with Store(tmp_path / "r.db") as store:
        record = store.get_run(pgbench_run(store))
    tested = build_report([record], "2026-01-01T00:00:00+00:00").tested
    cells = dict(zip(tested.headings, tested.rows[0]))
    assert "fio" not in tested.headings
    assert cells["Tool"] == f"pgbench / {POSTGRESQL}"
    assert cells["Options"] == "clients 1, 4; scale 1; time 5 s"
    html = render_html(build_report([record], "2026-01-01T00:00:00+00:00"))
    assert "clients 1, 4; scale 1; time 5 s" in html and "time_s" not in html and "[1, 4]" not in html
    assert len(re.findall("the page cache can hold it", html)) == 1


def test_show_runs_and_their_exports_name_the_tool(tmp_path):
    with Store(tmp_path / "r.db") as store:
        record = store.get_run(pgbench_run(store))
        fio_run = store.get_run(store.create_run(new_run()))
    assert to_markdown(record).splitlines()[0].endswith(f"@testhost · pgbench / {POSTGRESQL}**"), "show's title"
    assert json.loads(to_json(record))["run"]["tool"] == f"pgbench / {POSTGRESQL}"
    listed = json.loads("".join(runs_to_json([record.info, fio_run.info], 2)))
    assert [run["tool"] for run in listed["runs"]] == [f"pgbench / {POSTGRESQL}", "fio-3.33 io_uring"]
    assert listed["runs"][0]["fio_version"] == POSTGRESQL, "the stored fields are kept as they were"
    rows = list(csv.DictReader(io.StringIO("".join(runs_to_csv([record.info], 1)))))
    assert rows[0]["tool"] == f"pgbench / {POSTGRESQL}"


def test_the_device_page_names_the_tool_of_each_run(tmp_path):
    with Store(tmp_path / "r.db") as store:
        pgbench_run(store)
        (device,) = store_devices(store)
        page = device_page(store, device.key, ServerLinks())
    runs_table = page[page.index('id="runs-of-device"'):]
    assert "<th>Tool</th>" in runs_table and "<th>fio</th>" not in runs_table
    assert f"<td>pgbench / {POSTGRESQL}</td>" in runs_table


def test_pgbench_runs_of_two_postgresql_versions_say_so_not_fio(tmp_path):
    with Store(tmp_path / "r.db") as store:
        infos = [store.get_run(pgbench_run(store, version)).info
                 for version in (POSTGRESQL, "PostgreSQL 17.2 (Debian 17.2-1)")]
    (line,) = version_lines(infos)
    assert line.startswith(f"made by different PostgreSQL versions: {POSTGRESQL} (run 1) -> PostgreSQL 17.2")


def test_options_are_said_as_a_user_writes_them_with_units():
    # Parsed as cli/run.py stores them: --p99 1ms, --max-time 10m, --precision 2%, --size 16MiB, --cache 2GiB.
    stored = {"p99": 1000000.0, "max_time": 600.0, "precision": 2.0, "size": 16 * 2**20, "cache_bytes": 2 * 2**30,
              "repeat": 3, "destroy_data": True, "quiet": True, "spec": {"name": "sata-ssd-consumer-1t"},
              "pg_set": [["shared_buffers", "1GB"]], "bs": "8k", "runtime": 1.0, "transactions": 10_000}
    assert options_text(stored) == (
        "bs 8k; cache 2GiB; destroy-data; max-time 10 min; p99 1 ms; pg-set shared_buffers=1GB; precision 2 %; "
        "repeat 3; runtime 1 s; size 16MiB; spec sata-ssd-consumer-1t; transactions 10,000")
    assert options_text({"p99": 500_000.0}) == "p99 500 µs"
    assert options_text({"output_format": "table"}) == "-"
