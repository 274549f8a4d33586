"""A named run with real fio: its name survives a kill and a resume; delete refuses it while its disklab is alive."""

import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, Disklab, error_lines, wait_for

pytestmark = [pytest.mark.integration, NEEDS_FIO]


@pytest.fixture
def target():
    folder = Path(tempfile.mkdtemp(prefix="disklab-curate-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_name_is_kept_on_resume_and_a_live_run_is_not_deleted(disklab: Disklab, target: Path) -> None:
    process = disklab.start("run", "quick", "--target", str(target), "--runtime", "1", "--ramp", "0", "--size", "16M",
                            "--name", "nightly ✓ [raid]")
    try:
        assert wait_for(lambda: disklab.count_tests() >= 2, seconds=120, interval=0.1)
        refused = disklab("delete", "last", "--yes")
        assert refused.returncode == 2 and error_lines(refused.stderr) == [refused.stderr.strip()]
        assert "run 1 is still running on " in refused.stderr and "nothing was deleted" in refused.stderr
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    (run,) = disklab.runs()
    assert run["name"] == "nightly ✓ [raid]" and "name" not in run["options_json"]

    resumed = disklab("resume", "last")
    assert resumed.returncode == 0, resumed.stderr
    (run,) = disklab.runs()
    assert run["status"] == "complete" and run["name"] == "nightly ✓ [raid]"
    assert "nightly ✓ [raid] (run 1)" in disklab("show", "last").stdout

    deleted = disklab("delete", "last", "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert disklab.runs() == [] and disklab.count_tests() == 0
