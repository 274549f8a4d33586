"""`series:RUN` names the runs of one series where runs are named for reading; a run made alone is no series."""

from pathlib import Path

from click.testing import CliRunner

from disklab.cli.main import cli

FIXTURE = Path(__file__).parents[1] / "fixtures" / "fio" / "import-two-jobs.json.json"


def test_a_run_of_no_series_is_refused_in_one_line(store_location):
    runner = CliRunner()
    store = ["--store", str(store_location)]
    assert runner.invoke(cli, [*store, "import", str(FIXTURE)]).exit_code == 0
    for command in (["compare", "series:1", "1"], ["report", "series:last", "-o", "-"]):
        result = runner.invoke(cli, [*store, *command])
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [
            f"disklab: error: {command[1]}: run 1 is of no series (a series is made by run --condition, --fs, "
            "--write-cache or --overprovision)"]
    result = runner.invoke(cli, [*store, "compare", "series:9"])
    assert result.exit_code == 2 and "there is no run 9" in result.output
