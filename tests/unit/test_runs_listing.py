"""`disklab runs`: pages, filters and formats, through the CLI."""

import csv
import io
import json

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.fio.parse import parse_fio_output
from disklab.store.repository import Store
from tests.conftest import fixture_text
from tests.unit.test_store import new_run


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def stored(commands_store):
    """25 runs a day apart from 2026-01-01: every fifth named 'Nightly N', every other on /mnt/b; run 2 on a server."""
    output = fixture_text("randread-4k-q32.json.json")
    (job,) = parse_fio_output(output).jobs
    with Store(commands_store) as store:
        for n in range(1, 26):
            run_id = store.create_run(new_run(
                name=f"Nightly {n}" if n % 5 == 0 else None, target="/mnt/b" if n % 2 == 0 else "/mnt/a",
                started_at=f"2026-01-{n:02d}T00:00:00+00:00", planned_tests=1,
            ))
            store.add_test(run_id, 0, "t", {}, "", output, "", "2026-01-01T00:00:00+00:00", job,
                           host="server-a" if n == 2 else None)
            store.finish_run(run_id, "complete")


def table_ids(output: str) -> list[int]:
    return [int(line.split("│")[1]) for line in output.splitlines() if line.startswith("│")]


def test_the_newest_20_are_listed_and_the_rest_counted(stored):
    result = invoke("runs")
    assert result.exit_code == 0 and table_ids(result.stdout) == list(range(25, 5, -1))
    assert result.stdout.splitlines()[-1] == "20 of 25 runs; --all or --limit N for more"
    everything = invoke("runs", "--all")
    assert table_ids(everything.stdout) == list(range(25, 0, -1)) and everything.stdout.endswith("\n25 runs\n")
    assert table_ids(invoke("runs", "--limit", "3").stdout) == [25, 24, 23]


def test_filters_narrow_the_list_and_the_count(stored):
    result = invoke("runs", "--name", "NIGHTLY", "--target", "/mnt/a", "--since", "2026-01-10")
    assert table_ids(result.stdout) == [25, 15] and result.stdout.splitlines()[-1] == "2 matching runs"
    assert table_ids(invoke("runs", "--host", "server-a").stdout) == [2]
    assert table_ids(invoke("runs", "--suite", "quick", "--limit", "1").stdout) == [25]
    assert invoke("runs", "--suite", "quick", "--limit", "1").stdout.splitlines()[-1] == (
        "1 of 25 matching runs; --all or --limit N for more")
    nothing = invoke("runs", "--suite", "other")
    assert nothing.exit_code == 0 and nothing.stdout == "no stored run matches\n"
    assert table_ids(invoke("runs", "--since", "1d").stdout) == []


def test_formats_carry_every_listed_run(stored, tmp_path):
    document = json.loads(invoke("runs", "--format", "json", "--name", "nightly").stdout)
    assert document["format"] == "disklab-runs" and document["matched"] == 5
    assert [(r["id"], r["name"], r["finished_tests"]) for r in document["runs"]][:2] == [
        (25, "Nightly 25", 1), (20, "Nightly 20", 1)]
    result = invoke("runs", "-f", "csv", "--all", "-o", str(tmp_path / "runs.csv"))
    rows = list(csv.DictReader(io.StringIO((tmp_path / "runs.csv").read_text())))
    assert result.exit_code == 0 and [int(r["id"]) for r in rows] == list(range(25, 0, -1))
    assert json.loads(rows[0]["options"]) == {"runtime": 1.0} and rows[0]["target"] == "/mnt/a"
    cut = invoke("runs", "-f", "markdown", "--limit", "2")
    assert cut.stdout.splitlines()[2].startswith("| 25 | Nightly 25 | 2026-01-25T00:00:00+00:00 | quick |")
    assert len(cut.stdout.splitlines()) == 4 and cut.stderr == "2 of 25 runs; --all or --limit N for more\n"


def test_every_run_streams_in_batches_as_the_whole_document_would_read(commands_store, tmp_path):
    """--all in a format is written as it is read, a batch of rows at a time (1,000 rows a batch, a server's cursor on
    PostgreSQL): byte for byte what the whole list at once writes, in every format."""
    with Store(commands_store) as store, store.transaction():
        for n in range(1, 2102):
            store.create_run(new_run(name=f"run {n} \"ü\"" if n % 7 else None, planned_tests=n))
    with Store(commands_store, read_only=True) as store:
        infos = store.list_runs(None)
    assert [info.id for info in infos] == list(range(2101, 0, -1))
    whole = {"format": "disklab-runs", "format_version": 2, "matched": 2101, "runs": [
        {**vars(info), "tool": info.tool} for info in infos]}
    assert invoke("runs", "--all", "-f", "json").stdout == json.dumps(whole, indent=2) + "\n"
    assert invoke("runs", "--all", "-f", "json", "--suite", "none").stdout == json.dumps(
        {**whole, "matched": 0, "runs": []}, indent=2) + "\n"
    assert invoke("runs", "-n", "1", "-f", "json").stdout == json.dumps(
        {**whole, "runs": whole["runs"][:1]}, indent=2) + "\n"
    result = invoke("runs", "--all", "-f", "csv", "-o", str(tmp_path / "runs.csv"))
    rows = list(csv.DictReader(io.StringIO((tmp_path / "runs.csv").read_text())))
    assert result.exit_code == 0 and [int(row["planned_tests"]) for row in rows] == list(range(2101, 0, -1))
    markdown = invoke("runs", "--all", "-f", "markdown").stdout.splitlines()
    assert len(markdown) == 2 + 2101 and markdown[-1].startswith("| 1 | run 1 \"ü\" |")


@pytest.mark.parametrize("args", [
    ("--all", "--limit", "3"), ("--since", "last tuesday"), ("--since", "999999w"), ("-o", "x.txt"), ("--limit", "0"),
])
def test_bad_options_are_one_line_and_exit_2(stored, args):
    result = invoke("runs", *args)
    assert result.exit_code == 2 and "Traceback" not in result.output + result.stderr and result.stdout == ""


def test_a_page_of_any_order_is_that_slice_of_the_whole_list(stored, commands_store):
    """A page reads its runs' numbers first, then their rows (PostgreSQL would count the tests of every skipped run):
    in every order, with ties and NULLs (names), it is the slice of the whole list."""
    from disklab.store.filters import RUN_ORDERS

    with Store(commands_store) as store:
        for key in RUN_ORDERS:
            for order in (key, f"-{key}"):
                whole = [info.id for info in store.list_runs(None, order=order)]
                for offset in (0, 3, 20, 24, 30):
                    page = [info.id for info in store.list_runs(4, order=order, offset=offset)]
                    assert page == whole[offset:offset + 4], (order, offset)
