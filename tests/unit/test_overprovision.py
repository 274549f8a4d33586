"""`run --overprovision`: the levels as the user writes them, the share of the device each leaves to the suite, and
the refusal of a device that cannot discard (its unused share would not be spare area)."""

from pathlib import Path

import pytest

from disklab.errors import UserError
from disklab.targets.blockdev import BlockDevice
from disklab.targets.overprovision import parse_levels, usable
from disklab.targets.purge import check_discard
from disklab.targets.target import Target

MIB = 1024 * 1024


def device_target(sysfs: Path, discard_max: str) -> Target:
    folder = sysfs / "block" / "sdz"
    (folder / "queue").mkdir(parents=True)
    (folder / "queue" / "discard_max_bytes").write_text(discard_max + "\n")
    (sysfs / "dev" / "block").mkdir(parents=True)
    (sysfs / "dev" / "block" / "8:240").symlink_to(folder)
    device = BlockDevice("/dev/sdz", "sdz", 8, 240, 1000 * MIB + 4096, 512, 4096, False, False)
    return Target("device", "/dev/sdz", "/dev/sdz", False, device.size_bytes, device)


@pytest.mark.parametrize("text, levels", [("0,20,40,60", (0, 20, 40, 60)), ("50", (50,)), ("0%, 28%", (0, 28))])
def test_levels(text, levels):
    assert parse_levels(text) == levels


@pytest.mark.parametrize("text", ["", "91", "-5", "20,20", "a lot", "1e2"])
def test_bad_levels(text):
    with pytest.raises(ValueError):
        parse_levels(text)


def test_each_level_leaves_the_first_share_whole_mib(tmp_path):
    target = device_target(tmp_path, "2147483136")
    assert usable(target, 0).capacity_bytes == 1000 * MIB
    assert usable(target, 28).capacity_bytes == 720 * MIB
    assert usable(target, 60).capacity_bytes == 400 * MIB
    check_discard(target, "--overprovision", str(tmp_path))  # discards: no refusal


def test_a_device_that_cannot_discard_is_refused(tmp_path):
    with pytest.raises(UserError, match=r"does not support discard \(queue/discard_max_bytes is 0\)"):
        check_discard(device_target(tmp_path, "0"), "--overprovision", str(tmp_path))
