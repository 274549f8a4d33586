"""What a prediction stands on (capacity/caveats.py) and the model's terms for what users change: the drives' own
write cache, an SSD's condition, a CPU ceiling, ZFS's streaming writes, and the typical latency of an SSD whose file
gives none. Each on a case worked by hand."""

import dataclasses
import tomllib

import pytest
from click.testing import CliRunner

from disklab.capacity.catalogue import drive_from_dict, drive_to_toml, load_catalogue
from disklab.capacity.caveats import NVME_ARRAY, SEQUENTIAL_ARRAY, WRITE_THROUGH, ZFS, caveats, features
from disklab.capacity.layout import parse_layout
from disklab.capacity.model import LIMIT_CPU, SSD_TYPICAL_LATENCY_S, Ceilings, Workload, ceilings_for, predict
from disklab.cli.main import cli
from disklab.errors import UserError

NONE = Ceilings(None)


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def io(size, read_share, outstanding=1, **kwargs):
    return Workload("test", ((size, 1.0),), read_share, outstanding, **kwargs)


def texts(layout, workload):
    return [(c.text, c.out_of_model) for c in caveats(layout, workload)]


# --- caveats and features ---

def test_a_stand_in_drive_and_an_assumed_cache_mode_are_said_beside_the_figure(catalogue):
    assumed = parse_layout("8 x nl-sas-7.2k-12t raid6", catalogue)
    found = texts(assumed, io(4096, 0.5))
    assert found == [
        ("nl-sas-7.2k-12t is typical for its class, not your drive: give your drive's file (--drives) or calibrate "
         "one from runs", False),
        ("the controller's cache mode is not given: write-back with 2 GiB assumed (say cache=SIZE or cache=none)",
         False)]
    stated = parse_layout("8 x nl-sas-7.2k-12t raid6 cache=4GiB", catalogue)
    assert len(texts(stated, io(4096, 0.5))) == 1
    assert len(texts(assumed, io(4096, 1.0))) == 1  # reads do not depend on the cache mode
    assert texts(parse_layout("8 x sata-ssd-1.6t raid6 cache=none", catalogue), io(4096, 0.5)) == []  # a sheet's drive


def test_an_ssd_without_its_write_cache_or_with_a_fresh_only_rating_is_out_of_the_model(catalogue):
    off = texts(parse_layout("4 x sata-ssd-1.6t raid10 cache=none write_cache=off", catalogue), io(4096, 0.0))
    assert off == [("an SSD with its write cache off: drives without power-loss protection then write each command "
                    "to flash, at a rate no spec sheet gives", True)]
    fresh_rated = parse_layout("4 x sata-ssd-consumer-1t raid5 cache=none", catalogue)
    (text, beyond), = texts(fresh_rated, io(4096, 0.0))
    assert beyond and text.startswith("sata-ssd-consumer-1t rates random writes fresh")
    assert texts(fresh_rated, io(4096, 1.0)) == []  # reads: the condition does not change them
    assert texts(fresh_rated, io(1024**2, 0.0, sequential=True)) == []
    assert texts(parse_layout("4 x sata-ssd-consumer-1t raid5 cache=none condition=fresh", catalogue),
                 io(4096, 0.0)) == []
    (steady_only,) = texts(parse_layout("4 x sata-ssd-1.6t raid5 cache=none condition=fresh", catalogue),
                           io(4096, 0.0))
    assert steady_only == ("sata-ssd-1.6t rates random writes in steady state only: an empty drive writes faster "
                           "than predicted", False)


def test_a_nas_or_zfs_on_nvme_says_its_cpu_is_not_charged_until_given(catalogue):
    nas = parse_layout("4 x nvme-u3-3.84t raidz1", catalogue)
    (text, beyond), = texts(nas, io(1024**2, 1.0, sequential=True))
    assert not beyond and text.startswith("ZFS on NVMe drives is often bound by the CPU")
    assert texts(parse_layout("4 x nvme-u3-3.84t raidz1 cpu_mbps=3749", catalogue), io(1024**2, 1.0)) == []
    remote = parse_layout("4 x nvme-u3-3.84t raid0 via=iscsi:25GbE", catalogue)
    assert texts(remote, io(4096, 1.0)) == [
        ("the NAS's or target's CPU and file system are not charged (give cpu_mbps=)", False)]


def test_features_name_what_a_prediction_has_beyond_a_local_array_under_random_io(catalogue):
    def of(spec, workload):
        layout = parse_layout(spec, catalogue)
        return features(layout, ceilings_for(layout), workload)

    assert of("8 x sata-ssd-1.6t raid6", io(4096, 0.5)) == frozenset()
    assert of("8 x sata-ssd-1.6t raid6 cache=none", io(4096, 0.5, sequential=True)) == {WRITE_THROUGH,
                                                                                         SEQUENTIAL_ARRAY}
    assert of("1 x sata-ssd-1.6t raid0 cache=none", io(4096, 0.5, sequential=True)) == frozenset()  # one drive
    assert of("4 x nvme-u3-3.84t raidz1", io(4096, 0.5)) == {ZFS, NVME_ARRAY}


# --- the model's terms ---

def test_an_hdd_without_its_write_cache_writes_a_lone_stream_once_per_revolution(catalogue):
    without = parse_layout("1 x nl-sas-7.2k-12t raid0 cache=none write_cache=off", catalogue)
    alone = predict(without, io(4096, 0.0, sequential=True), NONE)
    assert alone.iops == pytest.approx(1 / (60 / 7200 + 50e-6), rel=0.01)  # a revolution and the command: 119.3
    queued = predict(without, io(4096, 0.0, outstanding=32, sequential=True), NONE)
    assert queued.iops > 100 * alone.iops  # queued writes go back to back
    cached = parse_layout("1 x nl-sas-7.2k-12t raid0 cache=none", catalogue)
    assert predict(cached, io(4096, 0.0, sequential=True), NONE).iops > 100 * alone.iops


def test_an_hdds_write_cache_takes_random_writes_off_the_host_but_not_the_reads_parity_needs_first(catalogue):
    cached = parse_layout("4 x nl-sas-7.2k-12t raid0 cache=none", catalogue)
    through = parse_layout("4 x nl-sas-7.2k-12t raid0 cache=none write_cache=off", catalogue)
    write = io(4096, 0.0)
    assert predict(cached, write, NONE).idle_latency_s == pytest.approx(40e-6)
    assert predict(through, write, NONE).idle_latency_s > 3e-3
    parity = predict(parse_layout("4 x nl-sas-7.2k-12t raid5 cache=none", catalogue), write, NONE)
    read = predict(cached, io(4096, 1.0), NONE)
    assert parity.idle_latency_s == pytest.approx(read.idle_latency_s + 40e-6)  # the old data and parity first


def test_a_cpu_ceiling_caps_bytes_through_the_host(catalogue):
    nas = parse_layout("4 x nvme-u3-3.84t raidz1 cpu_mbps=3749", catalogue)
    streams = predict(nas, io(1024**2, 1.0, outstanding=64, sequential=True, streams=8), NONE)
    assert (streams.limit, streams.bw_bytes_per_s) == (LIMIT_CPU, pytest.approx(3749e6))
    assert "cpu_mbps=3749" in nas.describe_options()


def test_zfs_gathers_streaming_writes_into_whole_records_and_reads_the_rest_of_a_record_for_random_ones(catalogue):
    pool = parse_layout("5 x nl-sas-7.2k-12t raidz2 record=1MiB", catalogue)
    streaming, scattered = pool.write_ops(128 * 1024, sequential=True), pool.write_ops(128 * 1024)
    assert streaming.read_bytes == 0 and streaming.write_bytes == pytest.approx(128 * 1024 * 5 / 3)
    assert scattered.read_bytes == 1024**2 and scattered.write_bytes == pytest.approx(1024**2 * 5 / 3)


def test_an_ssd_without_a_typical_latency_waits_the_classs(catalogue):
    bare = dataclasses.replace(catalogue["sata-ssd-1.6t"], name="bare", latency_read_s=None, latency_write_s=None)
    one = parse_layout("1 x bare raid0 cache=none", {"bare": bare})
    assert predict(one, io(4096, 1.0), NONE).idle_latency_s == pytest.approx(SSD_TYPICAL_LATENCY_S["read"])
    assert predict(one, io(4096, 1.0), NONE).iops == pytest.approx(1 / SSD_TYPICAL_LATENCY_S["read"])


# --- the settings in layouts and drive files ---

@pytest.mark.parametrize("option, message", [
    ("write_cache=maybe", "write_cache=maybe: write on or off"),
    ("condition=worn", "condition=worn: write steady or fresh"),
    ("cpu_mbps=0", "cpu_mbps=0: write the MB/s as a number from 1 to 1e9"),
    ("cpu_mbps=nan", "cpu_mbps=nan: write the MB/s as a number from 1 to 1e9"),
    ("cpu_mbps=fast", "cpu_mbps=fast: could not convert string to float: 'fast'"),
])
def test_bad_settings_in_a_layout_are_one_line(catalogue, option, message):
    with pytest.raises(UserError) as raised:
        parse_layout(f"4 x sata-ssd-1.6t raid5 {option}", catalogue)
    assert str(raised.value) == f"'4 x sata-ssd-1.6t raid5 {option}': {message}"


def test_a_drive_file_says_its_write_cache_and_the_condition_of_its_rating_and_keeps_them():
    data = {"name": "d", "description": "d", "kind": "ssd", "interface": "sata-6g", "capacity": "1TB",
            "seq_read_mbps": 500, "seq_write_mbps": 400, "rand_read_iops": 90000, "rand_write_iops": 80000,
            "write_cache": False, "rand_write_condition": "fresh", "source": {"performance": "a sheet"}}
    drive = drive_from_dict(data, "test")
    assert (drive.write_cache, drive.rand_write_condition) == (False, "fresh")
    assert drive_from_dict(tomllib.loads(drive_to_toml(drive)), "again") == dataclasses.replace(drive, origin="again")
    assert parse_layout("2 x d raid1", {"d": drive}).write_cache is False
    for key, value, message in (("write_cache", "yes", "write_cache must be true or false, not 'yes'"),
                                ("rand_write_condition", "worn", "rand_write_condition must be one of steady, "
                                                                 "fresh, not 'worn'")):
        with pytest.raises(UserError, match=message):
            drive_from_dict({**data, key: value}, "test")


def test_show_prints_the_caveats_numbered_beside_the_figures_and_below_the_table():
    result = CliRunner().invoke(cli, ["capacity", "show", "4 x sata-ssd-consumer-1t raid5 cache=none", "-w", "mixed",
                                      "-f", "markdown"])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("| bssplit"))
    assert row.count("(not validated) [1]") == 2
    assert "- [1] out of the model, no error band: sata-ssd-consumer-1t rates random writes fresh" in result.output
