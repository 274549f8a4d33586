"""`run --condition`: the device states a suite can start from, the command that makes a device fresh, and the
read-back of what it left: real O_DIRECT reads and writes of a file standing in for the device, erased the ways drives
erase (tests/kernel/checks/check_device_features.py does it on NVMe, tests/integration/test_file_systems.py on a loop
device)."""

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from disklab.errors import UserError
from disklab.run.condition import condition_device
from disklab.targets.blockdev import BlockDevice
from disklab.targets.condition import Condition, erase_command, parse_conditions
from disklab.targets.readback import ReadBack, mark, read_back
from disklab.targets.target import Target


def test_states_their_methods_and_passes():
    assert parse_conditions("fresh,full") == (Condition("fresh"), Condition("full", passes=2))
    assert parse_conditions(" Fresh:secure-erase , full:5") == (Condition("fresh", "secure-erase"),
                                                                Condition("full", passes=5))
    assert [c.label for c in parse_conditions("fresh,fresh:secure-erase,full:3")] == [
        "fresh", "fresh (secure erase)", "full (written 3x)"]


@pytest.mark.parametrize("text", ["", "stale", "full:0", "full:101", "full:x", "fresh,fresh", "full,full:2",
                                  "fresh:format", "full;fresh"])
def test_what_is_not_a_condition_says_why(text):
    with pytest.raises(ValueError):
        parse_conditions(text)


@given(st.text(max_size=40))
def test_any_text_is_conditions_or_a_value_error(text):
    try:
        conditions = parse_conditions(text)
    except ValueError as exc:
        assert "\n" not in str(exc)
    else:
        assert conditions and all(c.state in ("fresh", "full") for c in conditions)


def test_fresh_is_a_discard_or_the_namespaces_own_format():
    target = Target(kind="device", path="/dev/nvme0n1", test_path="/dev/nvme0n1", disklab_owns_file=False,
                    capacity_bytes=2**30, device=None)
    assert erase_command(Condition("fresh"), target) == ["blkdiscard", "--force", "/dev/nvme0n1"]
    assert erase_command(Condition("fresh", "secure-erase"), target) == [
        "nvme", "format", "/dev/nvme0n1", "--ses=1", "--force"]


SIZE = 64 * 1024**2


@pytest.fixture
def image(tmp_path) -> Target:
    """A sparse file standing in for a device of SIZE bytes (512-byte sectors), read and written with O_DIRECT."""
    path = tmp_path / "disk.img"
    with path.open("wb") as handle:
        handle.truncate(SIZE)
    device = BlockDevice(str(path), "disk", 7, 0, SIZE, 512, 4096, False, False)
    return Target(kind="device", path=str(path), test_path=str(path), disklab_owns_file=False, capacity_bytes=SIZE,
                  device=device)


def test_the_read_back_tells_zeros_the_marker_and_a_drives_own_fill(image):
    marked = mark(image.test_path, SIZE, 512)
    assert len(marked.offsets) == 16 and (marked.offsets[0], marked.offsets[-1]) == (0, SIZE - 4096)
    assert read_back(marked) == ReadBack(blocks=16, block_bytes=4096, zeros=0, marker=16, other=0)
    with open(image.test_path, "r+b") as handle:
        for n, offset in enumerate(marked.offsets[:12]):
            handle.seek(offset)
            handle.write(bytes(4096) if n < 8 else b"\xff" * 4096)
    assert read_back(marked) == ReadBack(blocks=16, block_bytes=4096, zeros=8, marker=4, other=4)


def drive(erases: bytes | None):
    """The erase or discard command as a drive carries it out: its blocks then read as `erases`, or it is ignored."""
    def carry_out(command: list[str], what: str, timeout_s: float) -> str:
        if erases is not None:
            Path(command[-1] if command[0] == "blkdiscard" else command[2]).write_bytes(erases * SIZE)
        return ""
    return carry_out


def test_a_discard_read_back_as_zeros_is_recorded_with_what_reading_cannot_show(image, monkeypatch):
    monkeypatch.setattr("disklab.run.condition.run_checked", drive(erases=b"\0"))
    said = []
    recorded = condition_device(Condition("fresh"), image, said.append)
    assert recorded["command"] == f"blkdiscard --force {image.test_path}"
    assert said == [f"condition fresh: {recorded['command']}"]
    assert recorded["read_back"] == {"blocks": 16, "block_bytes": 4096, "zeros": 16, "marker": 0, "other": 0}
    assert recorded["verified"] == (f"16 blocks of 4,096 bytes spread over {image.test_path}, written with a marker "
                                    "before the discard and read back after it (O_DIRECT): all read as zeros")
    assert recorded["not_verified"].startswith("when the drive frees the flash behind the discarded blocks")


def test_a_discard_the_device_ignored_is_recorded_and_said(image, monkeypatch):
    monkeypatch.setattr("disklab.run.condition.run_checked", drive(erases=None))
    said = []
    recorded = condition_device(Condition("fresh"), image, said.append)
    assert recorded["read_back"]["marker"] == 16 and recorded["verified"].endswith("all still held the marker")
    assert recorded["not_verified"].startswith("that the device is fresh")
    assert said[-1] == ("condition fresh: 16 of 16 blocks read back still hold what was written before the discard: "
                        "the device ignored or deferred it")


def test_a_format_that_left_data_is_an_error_and_one_that_did_not_says_what_is_not_known(image, monkeypatch):
    monkeypatch.setattr("disklab.run.condition.run_checked", drive(erases=None))
    with pytest.raises(UserError, match=r"16 of 16 blocks written with a marker before nvme format .* still held it "
                                        r"after: the drive did not erase them"):
        condition_device(Condition("fresh", "secure-erase"), image, lambda line: None)
    monkeypatch.setattr("disklab.run.condition.run_checked", drive(erases=b"\xff"))
    recorded = condition_device(Condition("fresh", "secure-erase"), image, lambda line: None)
    assert recorded["verified"].endswith("all held neither zeros nor the marker (the drive's own fill)")
    assert "cryptographic" in recorded["not_verified"] and recorded["method"] == "secure-erase"
