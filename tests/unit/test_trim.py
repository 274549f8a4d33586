"""fio's trim modes (trim, randtrim, trimwrite, randtrimwrite): imported with every figure fio wrote, shown, compared
and reported like any test; refused in suites with the reason. The fixtures are real fio 3.33 runs on a loop device
(tests/fixtures/fio/layouts/README.md); expected figures are read from them with json.loads, not disklab's reader."""

import csv
import io
import json

import pytest
from click.testing import CliRunner

from disklab.analysis.compare import compare_runs
from disklab.analysis.verdict import NO_VERDICT
from disklab.cli.main import cli
from disklab.errors import UserError
from disklab.plan.jobfile import render_jobfile
from disklab.fio.parse import PERCENTILES
from disklab.imports.fio_output import RW_MODES
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from disklab.suite.loader import parse_suite
from disklab.suite import model  # not TestSpec by name: pytest would try to collect it
from tests.conftest import FIO_FIXTURES

LAYOUTS = FIO_FIXTURES / "layouts"
# rw mode -> (pattern, direction, the fio directions that did I/O)
TRIM_MODES = {
    "trim": ("sequential", "trim", ("trim",)),
    "randtrim": ("random", "trim", ("trim",)),
    "trimwrite": ("sequential", "trimwrite", ("write", "trim")),
    "randtrimwrite": ("random", "trimwrite", ("write", "trim")),
}


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def fixture(mode: str) -> dict:
    return json.loads((LAYOUTS / f"rw-{mode}.json").read_text())


def imported(*modes: str) -> list[int]:
    for mode in modes:
        result = invoke("import", LAYOUTS / f"rw-{mode}.json")
        assert result.exit_code == 0, result.output
    with Store(default_store_path()) as store:
        return [r.id for r in reversed(store.list_runs())]


def record(run_id: int):
    with Store(default_store_path()) as store:
        return store.get_run(run_id)


@pytest.mark.parametrize("mode", TRIM_MODES)
def test_every_trim_mode_imports_with_every_figure_fio_wrote(mode):
    (run_id,) = imported(mode)
    (test,) = record(run_id).tests
    (entry,) = fixture(mode)["jobs"]
    pattern, direction, did_io = TRIM_MODES[mode]
    assert (test.params["pattern"], test.params["direction"], test.params["bs"]) == (pattern, direction, 65536)
    assert f"rw={mode}" in test.jobfile and RW_MODES[mode] == (pattern, direction)
    stored = {m.direction: m for m in test.metrics}
    assert set(stored) == set(did_io) and entry["read"]["total_ios"] == 0
    for name in did_io:
        fio, ours = entry[name], stored[name]
        assert (ours.iops, ours.bw_bytes_per_s, ours.io_bytes, ours.total_ios, ours.runtime_ms) == (
            fio["iops"], fio["bw_bytes"], fio["io_bytes"], fio["total_ios"], fio["runtime"])
        assert (ours.lat_mean_ns, ours.clat_mean_ns, ours.clat_max_ns) == (
            fio["lat_ns"]["mean"], fio["clat_ns"]["mean"], fio["clat_ns"]["max"])
        assert ours.clat_percentiles_ns == {
            key: fio["clat_ns"]["percentile"][theirs] for theirs, key in PERCENTILES.items()}
        assert ours.io_bytes == 8 * 1024**2  # the whole 8m region, trimmed (and written) once
    assert (test.usr_cpu_percent, test.sys_cpu_percent) == (entry["usr_cpu"], entry["sys_cpu"])


@pytest.mark.parametrize("mode", TRIM_MODES)
def test_an_imported_trim_test_names_fios_mode_and_counts_as_writing(mode):
    """The safety rules allow-list the read-only modes (suite/model.py), so a trim needs --destroy-data like a write."""
    (run_id,) = imported(mode)
    spec = model.TestSpec(label="t", **record(run_id).tests[0].params)
    assert spec.fio_rw == mode and spec.writes
    assert f"\nrw={mode}\n" in render_jobfile(spec, "/dev/loop9", "/var/tmp/x", "import")


@pytest.mark.parametrize("direction", ["trim", "trimwrite"])
def test_a_suite_cannot_trim_and_is_told_why_in_one_line(direction, tmp_path):
    text = f'name = "t"\n[[group]]\nname = "g"\ndirection = "{direction}"\n'
    with pytest.raises(UserError, match=f"{direction} is for imported fio results only .*one of read, write, mixed"):
        parse_suite(text, "x", "t.toml")
    path = tmp_path / "t.toml"
    path.write_text(text)
    result = invoke("export", path, "--fio", tmp_path / "jobs")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert "imported fio results only" in result.output and not (tmp_path / "jobs").exists()


def test_show_prints_the_trim_figures_in_every_format():
    trim, trimwrite = imported("trim", "trimwrite")
    entry = fixture("trimwrite")["jobs"][0]
    table = invoke("show", trimwrite)
    assert table.exit_code == 0 and "trim" in table.output and "write" in table.output
    assert f"{entry['trim']['iops']:,.0f}" in table.output
    as_json = invoke("show", trimwrite, "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    (test,) = json.loads(as_json.output)["tests"]
    assert test["params"]["direction"] == "trimwrite"
    assert test["metrics"]["trim"]["iops"] == entry["trim"]["iops"]
    assert test["metrics"]["write"]["iops"] == entry["write"]["iops"]
    as_csv = invoke("show", trim, "--format", "csv")
    (row,) = csv.DictReader(io.StringIO(as_csv.output))
    assert (row["direction"], float(row["iops"])) == ("trim", fixture("trim")["jobs"][0]["trim"]["iops"])
    markdown = invoke("show", trimwrite, "--format", "markdown")
    assert markdown.exit_code == 0 and "| rw-trimwrite | trim |" in markdown.output
    listing = invoke("runs")
    assert listing.exit_code == 0 and "2 runs" in listing.output


def test_trims_compare_by_direction_and_like_writes(tmp_path):
    """A faster trim (here: the real run's figures doubled, latencies halved) is better on every metric."""
    data = fixture("trim")
    trim = data["jobs"][0]["trim"]
    trim["iops"] *= 2
    trim["bw_bytes"] *= 2
    trim["runtime"] //= 2  # fio's bw_bytes = 1000 * io_bytes / runtime holds as before
    for figures in (trim["lat_ns"], trim["clat_ns"], trim["slat_ns"]):
        figures["mean"] /= 2
    trim["clat_ns"]["percentile"] = {k: v // 2 for k, v in trim["clat_ns"]["percentile"].items()}
    faster = tmp_path / "faster.json"
    faster.write_text(json.dumps(data))
    base, randtrim = imported("trim", "randtrim")
    assert invoke("import", faster).exit_code == 0
    comparison = compare_runs([record(base), record(3)])
    # 128 trims: too few I/Os for a p99 (1,000: analysis/repeats.TAIL_IOS), so none is compared
    assert {(r.direction, r.metric) for r in comparison.rows} == {
        ("trim", "iops"), ("trim", "mb_per_s"), ("trim", "lat_mean_us")}
    # Imported fio outputs are single runs: the ratios say faster, and no verdict is claimed without a spread.
    assert all(r.cells[1].verdict == NO_VERDICT for r in comparison.rows)
    assert [round(r.cells[1].ratio, 2) for r in comparison.rows] == [2.0, 2.0, 0.5]
    assert invoke("compare", base, 3).exit_code == 0
    unmatched = invoke("compare", base, randtrim)  # sequential and random trims are different tests
    assert unmatched.exit_code == 2 and "no test in common" in unmatched.output


def test_the_html_report_has_the_trim_figures(tmp_path):
    trim, trimwrite = imported("trim", "trimwrite")
    out = tmp_path / "r.html"
    result = invoke("report", trim, trimwrite, "-o", out)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    iops = fixture("trim")["jobs"][0]["trim"]["iops"]
    assert '<td>rw-trim</td><td class="figure">trim</td>' in page and f"{iops:,.0f}" in page
    assert '<td>rw-trimwrite</td><td class="figure">trim</td>' in page
    assert '<td>rw-trimwrite</td><td class="figure">write</td>' in page
