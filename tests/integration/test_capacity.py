"""`disklab capacity calibrate` on runs of real fio: a drive capped at a known rate is fitted back to that rate."""

import json
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, Disklab

pytestmark = [pytest.mark.integration, NEEDS_FIO]

KIB = 1024
RATE = 4 * 1024 * KIB  # bytes/s: fio's cap, the "transfer rate" of the drive under test

SUITE = f"""
name = "capped-sweep"
description = "random reads and writes across block sizes, capped at {RATE} bytes/s"

[defaults]
runtime = "2s"
size = "32M"

[[group]]
name = "RND"
label = "RND {{bs}} {{direction}}"
pattern = "random"
direction = ["read", "write"]
bs = ["4k", "16k", "64k"]
rate = {RATE}
"""


def test_calibrate_fits_the_capped_rate_and_plans_an_array_with_it(disklab: Disklab, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    suite = tmp_path / "capped.toml"
    suite.write_text(SUITE)
    ran = disklab("run", str(suite), "--target", str(target))
    assert ran.returncode == 0, ran.stderr

    drive_file = tmp_path / "capped-drive.toml"
    fitted = disklab("capacity", "calibrate", "last", "--as", "capped", "--capacity", "1TB", "--interface",
                     "sata-6g", "-o", str(drive_file))
    assert fitted.returncode == 0, fitted.stderr
    assert "read: time per I/O" in fitted.stdout and "write: time per I/O" in fitted.stdout
    text = drive_file.read_text()
    assert 'kind = "measured"' in text

    # Four drives in RAID0 reading 64 KiB blocks move four capped drives' worth, 4 x 4 MiB/s, give or take noise.
    (tmp_path / "read64k.toml").write_text(
        'name = "read64k"\ndescription = "64 KiB random reads"\n[[group]]\nname = "r"\npattern = "random"\n'
        'direction = "read"\nbs = "64k"\niodepth = 32\n')
    planned = disklab("capacity", "show", "4 x capped raid0", "--drives", str(drive_file), "--format", "json",
                      "--workload", str(tmp_path / "read64k.toml"))
    assert planned.returncode == 0, planned.stderr
    (array,) = json.loads(planned.stdout)["arrays"]
    assert array["predictions"][0]["bw_bytes_per_s"] == pytest.approx(4 * RATE, rel=0.15)
