"""`disklab import` of the local fio stopped by Ctrl-C: its own words on how it ended make the run interrupted."""

import signal
import subprocess
import time

import pytest

from tests.integration.conftest import NEEDS_FIO

pytestmark = [pytest.mark.integration, NEEDS_FIO]


def test_fio_stopped_by_sigint_imports_as_an_interrupted_run_with_a_flagged_test(tmp_path, disklab):
    """A 10 s time_based job, SIGINT after 1 s, stdout and stderr saved together (> out.json 2>&1)."""
    (tmp_path / "file").write_bytes(b"\1" * 4 * 1024**2)
    output = tmp_path / "out.json"
    with output.open("w") as out:
        fio = subprocess.Popen(["fio", "--name=stopped", f"--filename={tmp_path / 'file'}", "--size=4m", "--bs=4k",
                                "--ioengine=psync", "--rw=randread", "--runtime=10", "--time_based=1",
                                "--output-format=json"], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
        try:
            time.sleep(1)
            fio.send_signal(signal.SIGINT)
            fio.wait(timeout=60)
        finally:
            if fio.poll() is None:
                fio.kill()
                fio.wait()
    assert "fio: terminating on signal 2" in output.read_text()
    result = disklab("import", str(output))
    assert result.returncode == 0 and "interrupted: fio was stopped by signal 2 (SIGINT) after" in result.stderr
    (run,) = disklab.runs()
    assert run["status"] == "interrupted" and "of the 10 s the job asked for: its figures are partial" in run["error"]
    (test,) = disklab.tests(run["id"])
    (flag,) = disklab.query("SELECT flag, message FROM test_flags WHERE test_id = ?", (test["id"],))
    assert flag["flag"] == "fio_stopped" and flag["message"] == run["error"]
    assert len(disklab.metrics(test["id"])) == 1  # what fio measured before the signal is kept, flagged
