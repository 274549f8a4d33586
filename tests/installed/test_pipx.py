"""`pipx install`, the documented way to install disklab outside a checkout (docs/installing.md), of the wheel the
tier built, offline: its dependencies from the wheelhouse, pipx's own venvs in a folder of the test's."""

import json
import shutil
import subprocess

import pytest

from tests.conftest import FIO_FIXTURES
from tests.installed.conftest import WHEELHOUSE, offline
from tests.run_kinds import COMMAND_TIMEOUT_S

pytestmark = [pytest.mark.installed,
              pytest.mark.skipif(shutil.which("pipx") is None,
                                 reason="pipx is not installed (Debian's pipx: scripts/setup.sh tests installs it)")]


def test_pipx_installs_the_wheel_and_its_disklab_reports(built, installed, version, tmp_path):
    pipx_bin = tmp_path / "bin"
    env = {**installed.env, "PATH": installed.env["PATH"].split(":", 1)[1],  # not the tier's venv: pipx's own
           "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(pipx_bin), "DISKLAB_HOME": str(tmp_path / "home"),
           # pipx 1.1 (Debian 12) makes its shared venv with pip, setuptools and wheel before it reads --pip-args
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE)}
    done = subprocess.run([*offline(), "pipx", "install", "--pip-args", f"--no-index --find-links {WHEELHOUSE}",
                           str(built.wheel)], cwd=installed.folder, env=env, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S)
    assert done.returncode == 0 and "Failed" not in done.stderr, done.stdout + done.stderr

    def disklab(*args: str) -> str:
        ran = subprocess.run([str(pipx_bin / "disklab"), *args], cwd=installed.folder, env=env, capture_output=True,
                             text=True, timeout=COMMAND_TIMEOUT_S)
        assert ran.returncode == 0, ran.stderr
        return ran.stdout

    assert disklab("--version") == f"disklab, version {version}\n"
    disklab("import", str(FIO_FIXTURES / "randread-4k-q32.jsonplus.json"))
    assert json.loads(disklab("show", "last", "-f", "json"))["tests"]
    disklab("report", "last", "-o", str(tmp_path / "report.html"))  # the package's templates and script
    assert (tmp_path / "report.html").read_text().rstrip().endswith("</html>")
