"""`disklab run` against real loop devices: what is refused, what runs, and what reaches the store."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.conftest import NEEDS_FIO, NEEDS_LOOP_DEVICES, Disklab, error_lines, require, run

pytestmark = [pytest.mark.integration, *NEEDS_LOOP_DEVICES, NEEDS_FIO]

DEVICE_BYTES = 256 * 1024 * 1024
IMAGE_NAME = "device.img"


@pytest.fixture
def device(attach_loop: Callable[..., str]) -> str:
    """A blank 256 MiB loop device backed by a sparse image in tmp_path."""
    return attach_loop(IMAGE_NAME, size_bytes=DEVICE_BYTES)


@pytest.fixture
def image(tmp_path: Path) -> Path:
    return tmp_path / IMAGE_NAME


@pytest.fixture
def ext4_device(device: str) -> str:
    require("mkfs.ext4")
    run("mkfs.ext4", "-q", device)
    return device


def assert_refused(result: subprocess.CompletedProcess[str], disklab: Disklab, *fragments: str) -> str:
    """Exit 3, the reason as the only line on stderr, and nothing stored."""
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and error_lines(result.stderr) == lines, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert disklab.runs() == []
    return lines[0]


def assert_complete_run(result: subprocess.CompletedProcess[str], disklab: Disklab, device: str, tests: int) -> list:
    """Exit 0 and one complete run of `tests` tests on the device, each with I/O in every direction it tests."""
    assert result.returncode == 0, result.stderr
    (stored,) = disklab.runs()
    assert (stored["status"], stored["target_kind"], stored["test_path"]) == ("complete", "device", device)
    rows = disklab.tests(stored["id"])
    assert len(rows) == tests
    for row in rows:
        params = json.loads(row["params_json"])
        assert params["size"] <= DEVICE_BYTES
        metrics = disklab.metrics(row["id"])
        assert [m["direction"] for m in metrics] == [params["direction"]], row["label"]
        assert all(m["iops"] > 0 and m["io_bytes"] > 0 for m in metrics)
    return rows


def test_blank_device_without_a_flag_is_refused(device: str, image: Path, disklab: Disklab) -> None:
    result = disklab("run", "quick", "--target", device, "--runtime", "1")

    assert_refused(result, disklab, "--destroy-data", "--read-only", device)
    assert image.stat().st_blocks == 0, "nothing may have been written to the device"


def test_read_only_run_on_a_blank_device_reads_only(device: str, image: Path, disklab: Disklab) -> None:
    result = disklab("run", "quick", "--target", device, "--read-only", "--runtime", "1", "--size", "64M")

    rows = assert_complete_run(result, disklab, device, tests=4)
    assert all(json.loads(row["params_json"])["direction"] == "read" for row in rows)
    # The sparse backing image gains blocks on the first write that reaches the device.
    assert image.stat().st_blocks == 0, "a read-only run wrote to the device"


def test_ext4_device_needs_force_as_well(ext4_device: str, disklab: Disklab) -> None:
    refused = disklab("run", "quick", "--target", ext4_device, "--destroy-data", "--runtime", "1", "--size", "64M")
    assert_refused(refused, disklab, "ext4", "--force")

    forced = disklab(
        "run", "quick", "--target", ext4_device, "--destroy-data", "--force", "--runtime", "1", "--size", "64M"
    )
    rows = assert_complete_run(forced, disklab, ext4_device, tests=8)
    directions = sorted(json.loads(row["params_json"])["direction"] for row in rows)
    assert directions == ["read"] * 4 + ["write"] * 4


def test_mounted_device_is_never_written_but_can_be_read(
    ext4_device: str, mount: Callable[[str], Path], disklab: Disklab
) -> None:
    mount_point = mount(ext4_device)
    kept = mount_point / "kept.txt"
    kept.write_text("still here\n")

    refused = disklab(
        "run", "quick", "--target", ext4_device, "--destroy-data", "--force", "--runtime", "1", "--size", "64M"
    )
    line = assert_refused(refused, disklab, "mounted", str(mount_point))
    assert "not even with --force" in line

    result = disklab("run", "quick", "--target", ext4_device, "--read-only", "--runtime", "1", "--size", "64M")
    assert_complete_run(result, disklab, ext4_device, tests=4)
    assert kept.read_text() == "still here\n"
