"""The model's terms, each on a case worked by hand: zones, positioning with queued requests, SSD caps and rates,
the controller's cache and read-ahead, sequential streams, where the data lies, ZFS, and the path."""

import dataclasses
import math

import pytest

from disklab.capacity.catalogue import INTERFACE_BYTES_PER_S, load_catalogue
from disklab.capacity.drive_time import Region, positioning_time, ssd_op_time, transfer_rate, zone_rate
from disklab.capacity.layout import parse_layout
from disklab.capacity.model import (
    CACHE_WRITE_LATENCY_S, LIMIT_CONCURRENCY, LIMIT_DRIVES, LIMIT_HOST, LIMIT_TARGET, Ceilings, Workload,
    data_region, predict,
)
from disklab.errors import UserError

KIB, MIB, GB = 1024, 1024**2, 10**9
NONE = Ceilings(None)


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def with_drive(catalogue, name, **changes):
    """The catalogue with a copy of `name` changed, under the name 'probe'."""
    return {**catalogue, "probe": dataclasses.replace(catalogue[name], name="probe", **changes)}


def io(size, read_share, outstanding=1, **kwargs):
    return Workload("test", ((size, 1.0),), read_share, outstanding, **kwargs)


# --- zones ---

def test_zone_rate_over_the_whole_drive_is_the_mean_of_outer_and_inner():
    # time per byte averaged over capacity: 2 / ((1 + k) outer) with k = inner / outer, i.e. (outer + inner) / 2
    assert zone_rate(200e6, 100e6, Region(0, 1)) == pytest.approx(150e6)
    assert zone_rate(200e6, 100e6, Region(0, 0)) == pytest.approx(200e6)  # the outermost track
    assert zone_rate(200e6, 100e6, Region(1, 1)) == pytest.approx(100e6)  # the innermost
    assert zone_rate(200e6, 200e6, Region(0.3, 0.6)) == 200e6  # no zones


def test_first_and_last_5gb_of_an_hdd_array_differ_as_its_zones_do(catalogue):
    drives = with_drive(catalogue, "nl-sas-7.2k-12t", seq_inner_bytes_per_s=125e6)
    array = parse_layout("4 x probe raid0", drives)
    first, last = (predict(array, io(MIB, 1.0, region=r, sequential=True), NONE) for r in ("first:5GB", "last:5GB"))
    assert first.bw_bytes_per_s == pytest.approx(4 * 250e6, rel=1e-3)
    assert last.bw_bytes_per_s == pytest.approx(4 * 125e6, rel=1e-3)
    ssd = parse_layout("4 x sata-ssd-1.6t raid0", catalogue)
    assert (predict(ssd, io(MIB, 1.0, region="first:5GB", sequential=True), NONE).iops
            == predict(ssd, io(MIB, 1.0, region="last:5GB", sequential=True), NONE).iops)


def test_the_region_is_the_same_share_of_every_drive(catalogue):
    array = parse_layout("4 x sas-hdd-10k-2.4t raid10", catalogue)  # 4.8 TB net
    assert data_region(array, io(4096, 1.0, region="first:10%")) == Region(0.0, pytest.approx(0.1))
    assert data_region(array, io(4096, 1.0, region="last:4.8GB")) == Region(pytest.approx(0.999), 1.0)
    assert data_region(array, io(4096, 1.0, data_set_bytes=480 * GB)) == Region(0.0, pytest.approx(0.1))


# --- HDD positioning ---

def test_one_request_waits_an_average_seek_and_half_a_turn(catalogue):
    drive = catalogue["sas-hdd-10k-2.4t"]
    # the distance between two uniform points has E[sqrt(x)] = 8/15 of the stroke's; seek = track + (avg - track)
    # x sqrt(3x); rotation: half a revolution
    seek = drive.seek_track_s + (drive.seek_read_s - drive.seek_track_s) * math.sqrt(3) * 8 / 15
    half_turn = 30 / drive.rpm
    assert positioning_time(drive, "read", 1.0, 1) == pytest.approx(seek + half_turn, rel=0.01)


def test_queued_requests_on_one_track_wait_a_turn_over_queue_plus_one(catalogue):
    # no seek; the first of q uniform rotational waits comes after a revolution / (q + 1) on average
    drive = catalogue["sas-hdd-10k-2.4t"]
    revolution = 60 / drive.rpm
    for queue in (1, 3, 31):
        assert positioning_time(drive, "write", 0.0, queue) == pytest.approx(revolution / (queue + 1), rel=0.01)


def test_queue_depth_32_gives_the_2_to_3_times_an_hdd_sheet_shows(catalogue):
    drive = catalogue["nl-sas-7.2k-12t"]
    gain = positioning_time(drive, "read", 1.0, 1) / positioning_time(drive, "read", 1.0, 32)
    assert 2.0 < gain < 3.0


# --- SSD ---

def test_the_iops_rating_caps_every_block_size_below_4k_too(catalogue):
    nvme = catalogue["nvme-u3-3.84t"]  # 1,000,000 reads and 180,000 writes at 4 KiB
    for size in (512, 1024, 2048, 4096):
        assert ssd_op_time(nvme, "read", size) == pytest.approx(1 / 1_000_000)
        assert ssd_op_time(nvme, "write", size) == pytest.approx(1 / 180_000)
    one = parse_layout("1 x nvme-u3-3.84t raid0", catalogue)
    assert predict(one, io(512, 0.0, outstanding=256), NONE).iops == pytest.approx(180_000)


def test_a_large_block_random_write_rate_replaces_the_4k_rating_per_byte(catalogue):
    # A drive rated 950 IOPS at 4 KiB that writes 1 MiB at random at 90 MB/s: command time + size / rate.
    drives = with_drive(catalogue, "sata-ssd-1.6t", rand_write_iops=950, rand_write_bytes_per_s=90e6)
    probe = drives["probe"]
    command = 1 / 950 - 4096 / 90e6
    assert ssd_op_time(probe, "write", MIB) == pytest.approx(command + MIB / 90e6)
    assert MIB / ssd_op_time(probe, "write", MIB) / 1e6 == pytest.approx(82.8, abs=0.1)  # not 950 x 4 KiB = 3.9
    # without the figure, flash pays random writes per byte at the rating (study M2's SSD array, 8 KiB-64 MiB)
    plain = catalogue["sata-ssd-1.6t"]
    assert transfer_rate(plain, "write", sequential=False) == pytest.approx(28_000 * 4096)
    assert transfer_rate(plain, "write", sequential=True) == plain.seq_write_bytes_per_s


def test_rates_never_exceed_the_interface(catalogue):
    drives = with_drive(catalogue, "sata-ssd-1.6t", rand_read_bytes_per_s=None)
    assert transfer_rate(drives["probe"], "read", sequential=True) <= INTERFACE_BYTES_PER_S["sata-6g"]


# --- the controller ---

def test_write_back_cache_takes_the_writes_wait_off_the_host(catalogue):
    cached = parse_layout("4 x sas-hdd-10k-2.4t raid10", catalogue)
    through = parse_layout("4 x sas-hdd-10k-2.4t raid10 cache=none write_cache=off", catalogue)
    assert cached.controller.cache_bytes == 2 * 1024**3 and not through.controller.write_back
    one_write = io(4 * KIB, 0.0, outstanding=1)
    fast, slow = predict(cached, one_write, NONE), predict(through, one_write, NONE)
    assert fast.idle_latency_s == pytest.approx(CACHE_WRITE_LATENCY_S)
    assert slow.limit == LIMIT_CONCURRENCY and slow.idle_latency_s > 3e-3
    # the drives still do every write, sorted: at full load the cache helps by reordering only
    assert fast.limit == LIMIT_DRIVES and fast.iops > slow.iops


def test_sequential_writes_behind_a_cache_fill_full_stripes(catalogue):
    cached = parse_layout("4 x nl-sas-7.2k-12t raid5", catalogue)
    through = parse_layout("4 x nl-sas-7.2k-12t raid5 cache=none", catalogue)
    assert cached.write_ops(64 * KIB, sequential=True).read_accesses == 0
    assert through.write_ops(64 * KIB, sequential=True).read_then_write
    # one stream, whole stripes: three data drives' worth of the zone-averaged rate
    rate = zone_rate(catalogue["nl-sas-7.2k-12t"].seq_write_bytes_per_s,
                     catalogue["nl-sas-7.2k-12t"].seq_inner_bytes_per_s or 250e6, Region(0, 1))
    stream = predict(cached, io(MIB, 0.0, sequential=True), NONE)
    assert stream.bw_bytes_per_s == pytest.approx(3 * rate, rel=1e-3)


def test_streams_sharing_hdds_move_the_heads_once_per_run_the_drives_read_ahead(catalogue):
    # each drive's segmented cache reads a stream 1 MiB ahead: one positioning per 16 requests of 64 KiB, not one
    # per request (which would cost each 4-12 ms against 0.3 ms of transfer)
    for spec in ("4 x nl-sas-7.2k-12t raid5", "4 x nl-sas-7.2k-12t raid5 readahead=on"):
        array = parse_layout(spec, catalogue)
        shared = predict(array, io(64 * KIB, 1.0, outstanding=4, sequential=True, streams=4), NONE).iops
        alone = predict(array, io(64 * KIB, 1.0, outstanding=4, sequential=True), NONE).iops
        assert 0.3 * alone < shared < alone, spec
    off = parse_layout("4 x nl-sas-7.2k-12t raid5 cache=none write_cache=off", catalogue)  # nothing gathers writes
    writes = io(64 * KIB, 0.0, outstanding=4, sequential=True, streams=4)
    assert predict(off, writes, NONE).iops < 0.5 * predict(parse_layout("4 x nl-sas-7.2k-12t raid5 cache=none",
                                                                         catalogue), writes, NONE).iops


# --- ZFS ---

def test_raidz_reads_a_whole_record_from_every_data_drive(catalogue):
    raidz = parse_layout("3 x sata-ssd-1.6t raidz1", catalogue)  # 2 data drives, 128 KiB records
    ops = raidz.read_ops(4 * KIB)
    assert (ops.read_accesses, ops.read_bytes) == (2, 128 * KIB)
    mirror = parse_layout("2 x sata-ssd-1.6t mirror", catalogue)
    assert (mirror.read_ops(4 * KIB).read_accesses, mirror.read_ops(4 * KIB).read_bytes) == (1, 128 * KIB)
    stripe = parse_layout("2 x sata-ssd-1.6t stripe", catalogue)  # each record on one drive
    assert (stripe.read_ops(4 * KIB).read_accesses, stripe.write_ops(128 * KIB).write_bytes) == (1, 128 * KIB)
    drive = catalogue["sata-ssd-1.6t"]
    expected = 3 / (2 * ssd_op_time(drive, "read", 64 * KIB))
    assert predict(raidz, io(4 * KIB, 1.0, outstanding=1024), NONE).iops == pytest.approx(expected)


def test_zfs_small_writes_read_the_record_then_write_it_whole_in_order(catalogue):
    raidz = parse_layout("4 x nl-sas-7.2k-12t raidz1 record=64k", catalogue)
    ops = raidz.write_ops(4 * KIB)
    assert ops.read_then_write and ops.writes_in_order and ops.read_bytes == 64 * KIB
    assert ops.write_bytes == pytest.approx(64 * KIB * 4 / 3)  # record plus parity, no parity read
    whole = raidz.write_ops(64 * KIB)
    assert whole.read_accesses == 0


def test_the_arc_answers_its_share_of_reads(catalogue):
    cold = parse_layout("4 x nl-sas-7.2k-12t mirror", catalogue)
    warm = parse_layout("4 x nl-sas-7.2k-12t mirror arc=8GiB", catalogue)
    reads = io(4 * KIB, 1.0, outstanding=64, data_set_bytes=16 * 1024**3)
    assert predict(warm, reads, NONE).iops == pytest.approx(2 * predict(cold, reads, NONE).iops, rel=1e-6)


# --- the path ---

def test_a_network_path_adds_its_latency_link_and_target_limit(catalogue):
    local = parse_layout("4 x nvme-u3-3.84t raid0", catalogue)
    iscsi = parse_layout("4 x nvme-u3-3.84t raid0", catalogue, via="iscsi:25GbE")
    qd1 = io(4 * KIB, 1.0)
    assert (predict(iscsi, qd1, NONE).idle_latency_s - predict(local, qd1, NONE).idle_latency_s
            == pytest.approx(iscsi.via.per_io_latency_s))
    from disklab.capacity.model import ceilings_for
    big = predict(iscsi, io(MIB, 1.0, outstanding=64), ceilings_for(iscsi))
    assert big.limit == LIMIT_HOST and big.bw_bytes_per_s == pytest.approx(iscsi.via.link_bytes_per_s)
    many = predict(iscsi, io(4 * KIB, 1.0, outstanding=100_000), ceilings_for(iscsi))
    assert many.limit == LIMIT_TARGET and many.iops == pytest.approx(1 / iscsi.via.per_io_busy_s)


# --- layout options ---

@pytest.mark.parametrize("spec, message", [
    ("4 x sata-ssd-1.6t raid5 colour=red", "not an option"),
    ("4 x sata-ssd-1.6t raid5 cache", "not an option"),
    ("4 x sata-ssd-1.6t raid5 record=64k", "for ZFS levels"),
    ("4 x sata-ssd-1.6t raidz1 cache=1GiB", "ZFS takes record= and arc="),
    ("4 x sata-ssd-1.6t raid5 readahead=maybe", "write on or off"),
    ("4 x sata-ssd-1.6t raid5 strip=100", "smaller than a sector"),
    ("4 x sata-ssd-1.6t raid5 via=carrier-pigeon", "carrier-pigeon"),
])
def test_bad_layout_options_are_one_clear_line(catalogue, spec, message):
    with pytest.raises(UserError, match=message):
        parse_layout(spec, catalogue)


def test_options_override_the_command_line_defaults(catalogue):
    array = parse_layout("8 x sata-ssd-1.6t raid6 strip=64k cache=4GiB readahead=on", catalogue, strip_bytes=KIB * 512)
    assert (array.strip_bytes, array.controller.cache_bytes, array.controller.read_ahead) == (64 * KIB, 4 << 30, True)
    assert parse_layout("4 x nvme-u3-3.84t raid5", catalogue).controller is None  # NVMe: no RAID controller
    assert "cache=4GiB" in array.describe_options()


def test_hdd_arrays_stream_sequential_reads_at_their_data_drives_rate(catalogue):
    # the heads pass over parity strips and over the strips the mirror's other side reads
    one_stream = io(MIB, 1.0, outstanding=8, sequential=True, region="first:1GB")
    rates = {level: predict(parse_layout(f"4 x nl-sas-7.2k-12t {level}", catalogue), one_stream, NONE).bw_bytes_per_s
             for level in ("raid0", "raid5", "raid10")}
    assert rates == {"raid0": pytest.approx(4 * 250e6, rel=1e-3), "raid5": pytest.approx(3 * 250e6, rel=1e-3),
                     "raid10": pytest.approx(2 * 250e6, rel=1e-3)}
    # SSDs skip the parity too: the textbook (n - 1)x of RAID5 reads; RAID0 streams from all four
    ssd = {level: predict(parse_layout(f"4 x sata-ssd-1.6t {level}", catalogue), one_stream, NONE).bw_bytes_per_s
           for level in ("raid0", "raid5", "raid10")}
    assert ssd == {"raid0": pytest.approx(4 * 550e6), "raid5": pytest.approx(3 * 550e6),
                   "raid10": pytest.approx(4 * 550e6)}


def test_a_crossover_says_whether_its_lead_is_beyond_the_models_error(catalogue):
    from disklab.capacity.cost import Money
    from disklab.capacity.planning import plan_arrays, workload_tests
    from disklab.capacity.render import crossover_lead, notes
    m2 = [parse_layout(spec, catalogue) for spec in ("8 x sata-ssd-1.6t raid6", "24 x sas-hdd-10k-2.4t raid10")]
    plan = plan_arrays(m2, workload_tests(["blocksize"]), Money())
    (crossover,) = plan.crossovers
    lead, error = crossover_lead(plan, crossover)
    at_64k = [p.bw_bytes_per_s for p in (a.predictions[4] for a in plan.arrays)]
    assert lead == pytest.approx(at_64k[1] / at_64k[0] - 1)
    ssd, hdd = (validation_band(a) for a in plan.arrays)
    assert crossover.leader == 1  # the HDD array, at the low end of its band; the SSD array at its high end
    assert error == pytest.approx(ssd.high / hdd.low - 1)
    assert lead < error and any("within what the model's error could make up" in line for line in notes(plan))


def validation_band(array):
    from disklab.capacity.validation import band_for
    return band_for(array)


def test_small_sequential_hdd_requests_are_bound_by_the_command_time(catalogue):
    from disklab.capacity.drive_time import HDD_COMMAND_S
    one = parse_layout("1 x nl-sas-7.2k-12t raid0", catalogue)
    tiny = predict(one, io(512, 1.0, outstanding=8, sequential=True), NONE)
    assert tiny.iops == pytest.approx(1 / HDD_COMMAND_S)  # 20,000: not 250 MB/s / 512 B = 488,000
    large = predict(one, io(MIB, 1.0, outstanding=8, sequential=True, region="first:1GB"), NONE)
    assert large.bw_bytes_per_s == pytest.approx(250e6, rel=1e-3)  # the media rate, the command hidden under it
