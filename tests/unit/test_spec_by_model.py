"""A drive file that names its model (`model = "..."`) checks every run on a disk of that model against its
ratings without --spec; class drives and measured drives match nothing."""

from pathlib import Path

import pytest

from disklab.capacity.catalogue import drive_of_model, drive_to_toml, load_catalogue, load_drive
from disklab.cli import spec as spec_module
from disklab.errors import UserError

MODEL_DRIVE = """
name = "my-990"
description = "the user's own drive, from its spec sheet"
model = "Samsung SSD 990 PRO 2TB"
kind = "ssd"
interface = "nvme-pcie4-x4"
capacity = "2TB"
seq_read_mbps = 6900
seq_write_mbps = 6500
rand_read_iops = 1400000
rand_write_iops = 1550000
[source]
performance = "the maker's data sheet"
"""


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("DISKLAB_HOME", str(tmp_path))
    (tmp_path / "drives").mkdir()
    (tmp_path / "drives" / "my-990.toml").write_text(MODEL_DRIVE)
    return tmp_path


def test_a_drive_file_is_found_by_its_model_whatever_the_case_and_spacing(home):
    catalogue = load_catalogue()
    assert drive_of_model(catalogue, "  samsung ssd  990 PRO 2TB ").name == "my-990"
    assert drive_of_model(catalogue, "Samsung SSD 990 PRO 1TB") is None
    # the shipped 990 PRO file names the same model: the user's own file, loaded later, wins
    assert catalogue["nvme-pcie4-consumer-2t"].model == "Samsung SSD 990 PRO 2TB"
    assert {name for name, drive in catalogue.items() if drive.model} == {"my-990", "nvme-pcie4-consumer-2t"}
    again = home / "again.toml"
    again.write_text(drive_to_toml(catalogue["my-990"]))
    assert load_drive(again).model == "Samsung SSD 990 PRO 2TB"


def test_a_run_on_that_model_is_checked_against_its_ratings(home):
    said = []
    spec = spec_module.spec_by_model({"device.nvme0n1.model": "Samsung SSD 990 PRO 2TB"}, said.append)
    assert spec == {"name": "my-990", "seq_read_mb_per_s": 6900.0, "seq_write_mb_per_s": 6500.0,
                    "rand_read_iops": 1400000, "rand_write_iops": 1550000,
                    "matched_by": "model 'Samsung SSD 990 PRO 2TB'", "interface": "nvme-pcie4-x4",
                    "interface_mb_per_s": pytest.approx(7876.9, abs=0.1)}  # 16 GT/s x 4 lanes, 128b/130b
    assert said == ["results checked against drive file my-990 (model 'Samsung SSD 990 PRO 2TB'): see the findings"]
    assert spec_module.spec_by_model({"device.vda.model": None}, said.append) is None


def test_a_model_that_is_not_text_is_refused_naming_the_file(home):
    bad = home / "bad.toml"
    bad.write_text(MODEL_DRIVE.replace('model = "Samsung SSD 990 PRO 2TB"', "model = 990"))
    with pytest.raises(UserError, match=r"bad.toml: model must be a string"):
        load_drive(bad)


def test_without_a_file_of_their_own_a_990_pro_is_checked_against_the_shipped_ratings(tmp_path, monkeypatch):
    monkeypatch.setenv("DISKLAB_HOME", str(tmp_path))
    said = []
    spec = spec_module.spec_by_model({"device.nvme0n1.model": "Samsung SSD 990 PRO 2TB"}, said.append)
    assert (spec["name"], spec["seq_read_mb_per_s"], spec["rand_write_iops"]) == (
        "nvme-pcie4-consumer-2t", 7450.0, 1550000)


def test_an_array_of_drives_of_that_model_is_not_checked_against_one_drives_ratings(home):
    """Four 990 PROs in RAID 0 read faster than one: no drive file's ratings say what the array should do."""
    member = {"devices": "nvme0n1", "device.nvme0n1.model": "Samsung SSD 990 PRO 2TB"}
    said = []
    assert spec_module.spec_by_model(member, said.append)["name"] == "my-990"
    assert spec_module.spec_by_model({**member, "device.array.model": "md raid0, 4 members, chunk 512KiB"},
                                     said.append) is None
    assert len(said) == 1
