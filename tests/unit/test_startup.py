"""Plain commands start without the plotting stack: a fresh Python per command, then a look at what it imported.

Only the commands that write HTML (report, capacity's HTML) may load jinja2; none loads matplotlib or numpy.
Timing is bench/startup.py's, not a test's.
"""

import subprocess
import sys

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from tests.conftest import FIO_FIXTURES

HEAVY = ("jinja2", "matplotlib", "numpy")
# Runs the CLI as `disklab ARGS...` would, then says which heavy modules it imported, whatever the exit.
PROBE = f"""
import sys
from disklab.cli.main import cli
try:
    cli(sys.argv[1:], prog_name="disklab")
finally:
    print("heavy:", *sorted(set(sys.modules) & set({HEAVY!r})), file=sys.stderr)
"""


def imported_heavy(*args: str) -> str:
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stderr.strip().splitlines()[-1]


@pytest.fixture
def two_runs():
    for name in ("randread-4k-q32.json.json", "randread-4k-q32.jsonplus.json"):  # comparable: one test in common
        result = CliRunner().invoke(cli, ["import", str(FIO_FIXTURES / name)])
        assert result.exit_code == 0, result.output


def test_importing_the_cli_loads_no_heavy_library():
    code = f"import sys, disklab.cli.main; print(sorted(set(sys.modules) & set({HEAVY!r})))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("args", ids=" ".join, argvalues=[
    ("--version",), ("--help",), ("runs",), ("show",), ("show", "1", "--format", "csv"), ("compare", "1", "2"),
])
def test_plain_commands_load_no_heavy_library(two_runs, args):
    assert imported_heavy(*args) == "heavy:"


def test_the_probe_sees_a_command_that_draws(two_runs, tmp_path):
    """The check above would pass on anything if the probe could not see an import: `report` must show one."""
    heavy = imported_heavy("report", "1", "-o", str(tmp_path / "r.html")).split()
    assert "jinja2" in heavy and "matplotlib" not in heavy and "numpy" not in heavy  # charts are our own SVG
