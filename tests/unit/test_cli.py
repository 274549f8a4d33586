"""The CLI as a black box, in-process: help, version, documentation and error lines."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab import __version__
from disklab.cli.main import cli
from tests.conftest import FIO_FIXTURES

ROOT = Path(__file__).parents[2]
MANUAL = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]  # the front page and one page per topic
SUITE_FORMAT = ROOT / "docs" / "suites.md"


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and __version__ in result.output


@pytest.mark.parametrize("command", cli.list_commands(None))
def test_every_command_has_help_and_is_documented(command):
    result = invoke(command, "--help")
    assert result.exit_code == 0 and "Usage:" in result.output
    manual = "".join(page.read_text() for page in MANUAL)
    assert f"disklab {command}" in manual, f"neither README nor docs/ documents 'disklab {command}'"


def test_unknown_suite_is_one_line_and_exit_2(tmp_path):
    result = invoke("run", "no-such-suite", "--target", str(tmp_path))
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [result.output.strip()]
    assert result.output.startswith("disklab: error: unknown suite 'no-such-suite'")


def test_bad_size_is_a_usage_error():
    result = invoke("run", "quick", "--target", "/tmp", "--size", "lots")
    assert result.exit_code == 2 and "is not a size" in result.output


def test_corrupt_store_is_exit_5(tmp_path):
    db = tmp_path / "results.db"
    db.write_bytes(b"garbage" * 1000)
    result = invoke("--db", str(db), "runs")
    assert result.exit_code == 5 and "corrupt" in result.output and "Traceback" not in result.output


def test_empty_store_says_how_to_start():
    result = invoke("runs")
    assert result.exit_code == 0 and "disklab run quick" in result.output
    assert invoke("show", "last").exit_code == 2


def test_dry_run_runs_nothing_and_estimates(tmp_path):
    result = invoke("run", "quick", "--target", str(tmp_path), "--dry-run", "--runtime", "2")
    assert result.exit_code == 0 and "estimated duration" in result.output
    assert list(tmp_path.iterdir()) == []


def test_every_suite_parameter_is_documented_with_its_default():
    from disklab.suite.params import PARAMS

    text = SUITE_FORMAT.read_text()
    for name in PARAMS:
        assert f"| `{name}` |" in text, f"docs/suites.md's parameter table lacks {name}"


@pytest.mark.parametrize("args", ids=" ".join, argvalues=[
    ("runs",), ("runs", "--all", "--format", "json"), ("show", "1"), ("show", "1", "--format", "csv"),
    ("compare", "1", "2"),
])
def test_a_closed_output_pipe_ends_quietly_with_the_shells_sigpipe_code(args):
    """`disklab runs | head`: the reader stopped reading; no internal error, no message, nothing changed."""
    for name in ("randread-4k-q32.json.json", "randread-4k-q32.jsonplus.json"):
        assert invoke("import", str(FIO_FIXTURES / name)).exit_code == 0
    store = Path(os.environ["DISKLAB_HOME"]) / "results.db"
    before = store.read_bytes()
    command = [sys.executable, "-c", "from disklab.cli.main import main; main()", *args]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # before disklab writes a byte: its first write meets a closed pipe
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141 and stderr == ""
    assert store.read_bytes() == before
