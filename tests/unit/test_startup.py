"""Plain commands start without the plotting stack: a fresh Python per command, then a look at what it imported.

Only the commands that write HTML (report, capacity's HTML) may load jinja2; none loads matplotlib or numpy. Nor does
a command load parts of disklab it does not use: `runs` reads the runs table only, and a run of a suite file on a
directory leaves out what only a replay, a dry run, a fio job file or a network file system needs.
Timing is bench/startup.py's and bench/overhead.py's, not a test's.
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


def imported(args: list[str], prefixes: tuple[str, ...], as_installed: bool = False) -> list[str]:
    """The modules whose names start with one of `prefixes` that `disklab ARGS...` imported, in a fresh Python.
    `as_installed`: without setuptools-scm, so that disklab reads its version from the build's file as an installed
    one does, not from git as in this checkout (whose cost is a developer's only)."""
    probe = PROBE.replace(f"set({HEAVY!r})", f"{{m for m in sys.modules if m.startswith({prefixes!r})}}")
    if as_installed:
        probe = probe.replace("import sys\n", "import sys\nsys.modules['setuptools_scm'] = None\n", 1)
    result = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stderr.strip().splitlines()[-1].split()[1:]


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


def test_runs_reads_the_store_without_the_target_analysis_or_suite_packages(two_runs):
    unused = ("disklab.targets", "disklab.analysis", "disklab.suite", "disklab.env", "disklab.plan")
    assert imported(["runs"], unused) == []
    assert "disklab.targets.target" in imported(["runs", "--target", "/tmp"], unused)  # its path resolved: seen


def test_runs_and_show_leave_the_version_alone(two_runs):
    """Working the version out (setuptools-scm and git, in a checkout: disklab/__init__.py) is for the commands that
    print or record it."""
    version = ("setuptools_scm", "vcs_versioning", "disklab._version")
    assert imported(["runs"], version) == [] and imported(["show"], version) == []
    assert "setuptools_scm" in imported(["--version"], version)  # seen where it is done


def test_the_probe_sees_what_a_command_imports(two_runs):
    """`show` prints the findings: the analysis package must be seen, or the checks above prove nothing."""
    assert "disklab.analysis.findings" in imported(["show"], ("disklab.analysis",))
    assert imported(["show", "--env"], ("disklab.analysis",)) == []  # the environment alone: no findings


def test_reading_a_stored_suite_without_configurations_leaves_the_device_tools_out(two_runs):
    """`show` parses the run's suite again for its view; only [configurations] need the targets package's parsers."""
    device_tools = ("disklab.targets.condition", "disklab.targets.filesystem", "disklab.targets.write_cache",
                    "disklab.targets.target", "disklab.targets.blockdev")
    assert imported(["show", "1"], device_tools) == []


@pytest.mark.integration
def test_a_run_of_a_suite_file_loads_nothing_only_a_replay_a_dry_run_a_job_file_or_a_network_mount_needs(tmp_path):
    suite = tmp_path / "one.toml"
    suite.write_text('name = "one"\n[defaults]\nruntime = "1s"\nramp = "0s"\nsize = "4MiB"\n'
                     '[[group]]\nname = "read"\npattern = "random"\nbs = "4k"\niodepth = 1\ndirection = "read"\n')
    unused = ("disklab.trace.", "disklab.report.plans", "disklab.suite.fio_jobfile", "configparser", "socket")
    assert imported(["run", str(suite), "--target", str(tmp_path), "--repeat", "1"], unused, as_installed=True) == []
    # Nothing recorded is lost: the environment and SMART's note are kept with the run as before.
    shown = CliRunner().invoke(cli, ["show", "last", "--env", "--format", "json"])
    assert shown.exit_code == 0, shown.output
    assert '"fio_version"' in shown.output and '"smart"' in shown.output
