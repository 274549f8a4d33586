"""Drive files: the keys, unknown power and price, the physics a file must obey, and the shipped drives' figures."""

import json

import pytest
from click.testing import CliRunner

from disklab.capacity.catalogue import (
    INTERFACE_BYTES_PER_S, drive_from_dict, drive_to_toml, load_catalogue, load_drive, shipped_drive_files,
)
from disklab.capacity.drive_time import transfer_rate
from disklab.cli.main import cli
from disklab.errors import UserError

SSD = {"name": "x", "description": "x", "kind": "ssd", "interface": "sata-6g", "capacity": "1TB",
       "seq_read_mbps": 500, "seq_write_mbps": 450, "rand_read_iops": 90_000, "rand_write_iops": 30_000,
       "source": {"all": "made up for a test"}}
HDD = {"name": "h", "description": "h", "kind": "hdd", "interface": "sas-12g", "capacity": "2TB",
       "seq_read_mbps": 250, "seq_write_mbps": 240, "rpm": 7200, "seek_read_ms": 8.5, "seek_write_ms": 9.5,
       "seek_track_ms": 0.8, "source": {"all": "made up for a test"}}


def test_new_keys_load_in_bytes_per_s_and_survive_a_round_trip(tmp_path):
    ssd = drive_from_dict({**SSD, "rand_read_mbps": 400, "rand_write_mbps": 120}, "x.toml")
    assert (ssd.rand_read_bytes_per_s, ssd.rand_write_bytes_per_s) == (400e6, 120e6)
    hdd = drive_from_dict({**HDD, "seq_inner_mbps": 120}, "h.toml")
    assert hdd.seq_inner_bytes_per_s == 120e6
    for drive in (ssd, hdd):
        path = tmp_path / f"{drive.name}.toml"
        path.write_text(drive_to_toml(drive))
        assert load_drive(path) == drive.__class__(**{**drive.__dict__, "origin": str(path)})


def test_missing_power_and_price_are_unknown_and_stay_out_of_the_file():
    drive = drive_from_dict(SSD, "x.toml")
    assert (drive.power_idle_w, drive.power_active_w, drive.price_eur) == (None, None, None)
    text = drive_to_toml(drive)
    assert "power_" not in text and "price_eur" not in text
    priced = drive_from_dict({**SSD, "power_idle_w": 1, "power_active_w": 6.5, "price_eur": 400}, "x.toml")
    assert (priced.power_idle_w, priced.power_active_w, priced.price_eur) == (1, 6.5, 400)
    assert "price_eur = 400\n" in drive_to_toml(priced)


@pytest.mark.parametrize("key", ["power_idle_w", "power_active_w", "price_eur"])
def test_zero_power_or_price_is_refused_not_taken_for_unknown(key):
    with pytest.raises(UserError, match=f"drive file x.toml: {key} = 0: leave the key out when the figure is unknown"):
        drive_from_dict({**SSD, key: 0}, "x.toml")


@pytest.mark.parametrize("base, change, message", [
    (SSD, {"seq_read_mbps": 1040}, "seq_read_mbps 1,040 MB/s is faster than sata-6g allows (600 MB/s)"),
    (SSD, {"seq_write_mbps": 601}, "seq_write_mbps 601 MB/s is faster than sata-6g allows (600 MB/s)"),
    (SSD, {"rand_read_mbps": 650}, "rand_read_mbps 650 MB/s is faster than sata-6g allows (600 MB/s)"),
    (SSD, {"rand_write_mbps": 610}, "rand_write_mbps 610 MB/s is faster than sata-6g allows (600 MB/s)"),
    # 200,000 x 4,096 bytes = 819.2 MB/s
    (SSD, {"rand_read_iops": 200_000}, "rand_read_iops 200,000 x 4 KiB = 819 MB/s is faster than sata-6g allows"),
    (HDD, {"seq_read_mbps": 1300}, "seq_read_mbps 1,300 MB/s is faster than sas-12g allows (1,200 MB/s)"),
    (HDD, {"seq_inner_mbps": 245}, "seq_inner_mbps 245 MB/s is faster than seq_write_mbps 240 MB/s: the inner zone"),
    (SSD, {"seq_inner_mbps": 100}, 'seq_inner_mbps is the innermost zone of a hard disk: only for kind "hdd"'),
    (SSD, {"power_idle_w": 8, "power_active_w": 6}, "power_idle_w 8 W is above power_active_w 6 W"),
])
def test_a_file_that_breaks_physics_is_one_line_naming_the_key_and_figure(base, change, message):
    with pytest.raises(UserError) as caught:
        drive_from_dict({**base, **change}, "x.toml")
    assert str(caught.value).startswith(f"drive file x.toml: {message}")


def test_rates_at_the_interface_limit_and_an_inner_zone_as_fast_as_the_outer_are_allowed():
    assert drive_from_dict({**SSD, "seq_read_mbps": 600, "rand_read_mbps": 600}, "x.toml").seq_read_bytes_per_s == 600e6
    assert drive_from_dict({**HDD, "seq_inner_mbps": 240}, "h.toml").seq_inner_bytes_per_s == 240e6


# The Micron 7450 PRO U.3 family as shared/data/spec-nvme-u3-example.csv gives it:
# name, capacity, seq read/write MB/s, random read/write IOPS, TBW
MICRON_7450_PRO = [
    ("nvme-u3-960g", 960e9, 6800, 1400, 530_000, 85_000, 1700),
    ("nvme-u3-1.92t", 1.92e12, 6800, 2700, 800_000, 120_000, 3650),
    ("nvme-u3-3.84t", 3.84e12, 6800, 5300, 1_000_000, 180_000, 7300),
    ("nvme-u3-7.68t", 7.68e12, 6800, 5600, 1_000_000, 215_000, 14000),
    ("nvme-u3-15.36t", 15.36e12, 6800, 5600, 1_000_000, 250_000, 28000),
]


@pytest.mark.parametrize("name, capacity, seq_read, seq_write, rand_read, rand_write, tbw", MICRON_7450_PRO)
def test_every_micron_7450_pro_capacity_is_its_spec_sheet(name, capacity, seq_read, seq_write, rand_read, rand_write,
                                                           tbw):
    drive = load_catalogue()[name]
    assert (drive.capacity_bytes, drive.seq_read_bytes_per_s, drive.seq_write_bytes_per_s) == (
        capacity, seq_read * 1e6, seq_write * 1e6)
    assert (drive.rand_read_iops, drive.rand_write_iops, drive.endurance_tbw, drive.dwpd) == (
        rand_read, rand_write, tbw, 1)
    assert (drive.latency_read_s, drive.latency_write_s) == (pytest.approx(80e-6), pytest.approx(15e-6))
    assert "Micron 7450 PRO" in dict(drive.sources)["performance"]


def test_the_new_capacities_leave_power_and_price_unknown_and_say_so():
    for name in ("nvme-u3-960g", "nvme-u3-1.92t", "nvme-u3-15.36t"):
        drive = load_catalogue()[name]
        assert (drive.power_idle_w, drive.power_active_w, drive.price_eur) == (None, None, None)
        assert dict(drive.sources)["price"].startswith("unknown")


def test_study_m2_hdds_spin_at_10500_rpm_and_both_hdds_have_a_slower_inner_zone():
    catalogue = load_catalogue()
    assert catalogue["sas-hdd-10k-2.4t"].rpm == 10_500
    assert "10.5k" in dict(catalogue["sas-hdd-10k-2.4t"].sources)["rpm"]
    for name, inner in (("sas-hdd-10k-2.4t", 125e6), ("nl-sas-7.2k-12t", 120e6)):
        drive = catalogue[name]
        assert drive.seq_inner_bytes_per_s == inner < min(drive.seq_read_bytes_per_s, drive.seq_write_bytes_per_s)
        assert "typical for the class" in dict(drive.sources)["inner"]


def test_capacity_drives_shows_unknown_power_and_price():
    result = CliRunner().invoke(cli, ["capacity", "drives", "nvme-u3-960g"])
    assert result.exit_code == 0, result.output
    assert "W idle/active: unknown\n" in result.output and "Price: unknown\n" in result.output
    hdd = CliRunner().invoke(cli, ["capacity", "drives", "sas-hdd-10k-2.4t"]).output
    assert "Seq MB/s r/w: 240/240, inner 125\n" in hdd and "W idle/active: 4.6/6.9\n" in hdd


# The drives of issue 27's "nearest catalogue drive" classes, figures as their files' [source] tables give them:
# name, interface, capacity bytes, seq read/write MB/s, random read/write IOPS (SSD) or rpm, seek r/w ms, inner MB/s
NEW_SSDS = [
    ("sata-ssd-consumer-1t", "sata-6g", 1e12, 560, 530, 98_000, 88_000),  # Samsung 870 EVO 1TB
    ("nvme-pcie4-consumer-2t", "nvme-pcie4-x4", 2e12, 7450, 6900, 1_400_000, 1_550_000),  # Samsung 990 PRO 2TB
]
NEW_HDDS = [
    ("sas-hdd-15k-600g", "sas-12g", 600e9, 204, 204, 15_000, 2.9, 3.1, 122),
    ("sata-hdd-7.2k-12t", "sata-6g", 12e12, 210, 210, 7_200, 8.5, 9.5, 99),
]


@pytest.mark.parametrize("name, interface, capacity, seq_read, seq_write, rand_read, rand_write", NEW_SSDS)
def test_the_consumer_ssds_load_in_the_models_units(name, interface, capacity, seq_read, seq_write, rand_read,
                                                    rand_write):
    drive = load_catalogue()[name]
    assert (drive.kind, drive.interface, drive.capacity_bytes) == ("ssd", interface, capacity)
    assert (drive.seq_read_bytes_per_s, drive.seq_write_bytes_per_s) == (seq_read * 1e6, seq_write * 1e6)
    assert (drive.rand_read_iops, drive.rand_write_iops) == (rand_read, rand_write)
    # consumer sheets rate random I/O at QD32 on a fresh drive, into the SLC cache: the file says so
    assert "QD32" in dict(drive.sources)["random"] and "not steady state" in dict(drive.sources)["random"]
    assert (drive.power_idle_w, drive.power_active_w, drive.price_eur) == (None, None, None)


@pytest.mark.parametrize("name, interface, capacity, seq_read, seq_write, rpm, seek_read, seek_write, inner", NEW_HDDS)
def test_the_new_hdds_load_in_the_models_units(name, interface, capacity, seq_read, seq_write, rpm, seek_read,
                                               seek_write, inner):
    drive = load_catalogue()[name]
    assert (drive.kind, drive.interface, drive.capacity_bytes, drive.rpm) == ("hdd", interface, capacity, rpm)
    assert (drive.seq_read_bytes_per_s, drive.seq_write_bytes_per_s) == (seq_read * 1e6, seq_write * 1e6)
    assert (drive.seek_read_s, drive.seek_write_s) == (pytest.approx(seek_read / 1e3), pytest.approx(seek_write / 1e3))
    assert drive.seq_inner_bytes_per_s == inner * 1e6
    assert drive.model is None  # figures from several sheets: a class, not one model


def test_a_990_pro_is_neither_refused_nor_clipped_by_its_interface():
    drive = load_catalogue()["nvme-pcie4-consumer-2t"]
    assert drive.model == "Samsung SSD 990 PRO 2TB" and drive.endurance_tbw == 1200
    assert transfer_rate(drive, "read", sequential=True) == 7450e6
    assert transfer_rate(drive, "write", sequential=True) == 6900e6
    # PCIe 4.0 x4: 4 lanes x 16 GT/s x 128/130 / 8 bits = 7,877 MB/s, the ceiling a rating may reach
    assert drive.interface_bytes_per_s == pytest.approx(7_876.9e6, rel=1e-5)
    with pytest.raises(UserError, match=r"seq_read_mbps 7,900 MB/s is faster than nvme-pcie4-x4 allows \(7,877 MB/s\)"):
        drive_from_dict({**SSD, "interface": "nvme-pcie4-x4", "seq_read_mbps": 7900}, "x.toml")


def test_the_interface_ceilings_are_the_coded_line_rates():
    assert {name: round(rate / 1e6) for name, rate in INTERFACE_BYTES_PER_S.items()} == {
        "sata-6g": 600, "sas-12g": 1200, "sas-24g": 2400,  # 8b/10b; SAS-4 22.5 Gbaud at 128b/150b
        "nvme-pcie3-x4": 3938, "nvme-pcie4-x4": 7877, "nvme-pcie5-x4": 15754}  # 8/16/32 GT/s, 128b/130b
    # the 870 EVO's rated 560 MB/s fits SATA 6G (reviews measure 561-564 MB/s)
    assert transfer_rate(load_catalogue()["sata-ssd-consumer-1t"], "read", sequential=True) == 560e6


@pytest.mark.parametrize("path", shipped_drive_files(), ids=lambda path: path.stem)
def test_every_shipped_drives_sources_cover_its_figures(path):
    """Each group of figures a file gives has a [source] topic; power and price say 'unknown' exactly when absent."""
    drive = load_drive(path)
    topics = dict(drive.sources)
    assert {"power", "price"} <= set(topics) and ({"performance", "transfer"} & set(topics)), drive.name
    assert topics["power"].startswith("unknown") == (drive.power_active_w is None), drive.name
    assert topics["price"].startswith("unknown") == (drive.price_eur is None), drive.name
    if drive.kind == "hdd":
        assert "mechanics" in topics, drive.name
    if drive.seq_inner_bytes_per_s is not None:
        assert "inner" in topics, drive.name


@pytest.mark.parametrize("name", [row[0] for row in NEW_SSDS + NEW_HDDS])
def test_capacity_plans_an_array_of_each_new_drive(name):
    shown = CliRunner().invoke(cli, ["capacity", "drives", name])
    assert shown.exit_code == 0 and "Source of price: unknown" in shown.output, shown.output
    result = CliRunner().invoke(cli, ["capacity", "show", f"4 x {name} raid5", "-w", "quick", "-f", "json"])
    assert result.exit_code == 0, result.output
    (array,) = json.loads(result.output)["arrays"]
    assert (array["spec"], array["drive"], array["drives"]) == (f"4 x {name} raid5", name, 4)
    assert array["predictions"] and all(p["iops"] > 0 for p in array["predictions"] if p["iops"] is not None)
