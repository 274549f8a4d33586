import shutil
import subprocess
from dataclasses import replace

import pytest

from disklab.plan.jobfile import render_jobfile
from disklab.plan.build import expand_suite
from disklab.suite.loader import load_suite

QUICK = [replace(t, engine="io_uring") for t in expand_suite(load_suite("quick"))]


def options(jobfile: str) -> dict[str, str]:
    pairs = [line.split("=", 1) for line in jobfile.splitlines() if "=" in line and not line.startswith(";")]
    return {k: v for k, v in pairs}


def test_a_random_read_renders_every_option_disklab_relies_on():
    test = replace(QUICK[4], runtime=1.5, ramp=0.0, size=256 * 2**20)
    opts = options(render_jobfile(test, "/mnt/data/f", "/files", "quick"))
    assert opts == {
        "ioengine": "io_uring", "direct": "1", "filename": "/mnt/data/f", "size": "256m", "time_based": "1",
        "runtime": "1500ms", "ramp_time": "0", "group_reporting": "1", "thread": "1", "randrepeat": "0", "rw": "randread",
        "bs": "4k", "iodepth": "32", "numjobs": "1",
    }


def test_mixed_tests_carry_their_read_share_and_colons_are_escaped():
    test = replace(QUICK[4], direction="mixed", rwmixread=70, engine="libaio")
    opts = options(render_jobfile(test, "/mnt/a:b/f", "/files", "s"))
    assert opts["ioengine"] == "libaio"
    assert opts["rw"] == "randrw" and opts["rwmixread"] == "70"
    assert opts["filename"] == "/mnt/a\\:b/f"


def test_a_logged_test_makes_fio_write_windowed_logs_named_disklab():
    opts = options(render_jobfile(replace(QUICK[4], log_interval=0.25), "/f", "/files", "s"))
    assert {k: opts[k] for k in ("write_iops_log", "write_bw_log", "write_lat_log", "log_avg_msec")} == {
        "write_iops_log": "disklab", "write_bw_log": "disklab", "write_lat_log": "disklab", "log_avg_msec": "250",
    }
    assert "log_avg_msec" not in options(render_jobfile(QUICK[4], "/f", "/files", "s"))


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("test", QUICK, ids=lambda t: t.label)
def test_fio_accepts_every_rendered_job_file(test, tmp_path):
    path = tmp_path / "t.fio"
    path.write_text(render_jobfile(test, str(tmp_path / "f"), "/files", "quick"))
    result = subprocess.run(["fio", "--parse-only", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_writing_tests_refill_their_buffers_with_incompressible_data_and_reading_tests_do_not():
    writes = [t for t in QUICK if t.writes]
    reads = [t for t in QUICK if not t.writes]
    assert writes and reads
    assert all(options(render_jobfile(t, "/f", "/files", "q")).get("refill_buffers") == "1" for t in writes)
    assert all("refill_buffers" not in options(render_jobfile(t, "/f", "/files", "q")) for t in reads)
