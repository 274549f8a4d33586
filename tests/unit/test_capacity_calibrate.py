"""Calibrate: a drive model fitted to stored sweeps, saved as a drive file that layouts can use."""

import json

import pytest
from click.testing import CliRunner

from disklab.capacity.calibrate import DriveFacts, fit_drive, fit_line
from disklab.capacity.catalogue import load_drive
from disklab.capacity.model import drive_timing
from disklab.cli.main import cli
from disklab.errors import UserError
from disklab.fio.parse import DirectionMetrics, JobResult
from disklab.store.repository import Store
from tests.unit.test_compare import fixture_job, stored_run

KIB = 1024
SIZES = (4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, 1024 * KIB)
# A drive whose I/O takes access + size / rate: reads 20 us + 1 GB/s, writes 10 us + 400 MB/s.
READ, WRITE = (20e-6, 1e9), (10e-6, 400e6)


def job(direction: str, iops: float, bs: int, lat_s: float) -> JobResult:
    metrics = DirectionMetrics(direction, int(iops * bs), int(iops), iops, iops * bs, 1000, lat_s * 1e9,
                               lat_s * 1e9, lat_s * 2e9, {})
    return JobResult("t", 0, 1.0, 1.0, (metrics,))


def sweep_tests():
    """Per direction and size: at queue depth 32 the drive's full rate, at depth 1 four times slower."""
    tests = []
    for direction, (access, rate) in (("read", READ), ("write", WRITE)):
        for bs in SIZES:
            t = access + bs / rate
            tests.append((f"{direction} {bs} QD32", {"pattern": "random", "direction": direction, "bs": bs,
                                                      "iodepth": 32}, [job(direction, 1 / t, bs, 32 * t)]))
            tests.append((f"{direction} {bs} QD1", {"pattern": "random", "direction": direction, "bs": bs,
                                                     "iodepth": 1}, [job(direction, 0.25 / t, bs, 4 * t)]))
    return tests


@pytest.fixture
def store(tmp_path):
    with Store(tmp_path / "results.db") as s:
        yield s


def test_the_fit_recovers_access_time_and_rate_from_the_best_queue_depth(store):
    record = stored_run(store, sweep_tests())
    result = fit_drive([record], DriveFacts("my-drive", 3_840_000_000_000, "nvme-pcie4-x4"))
    read, write = result.fits
    assert (read.direction, read.access_s, read.bytes_per_s) == ("read", pytest.approx(20e-6), pytest.approx(1e9))
    assert (write.access_s, write.bytes_per_s) == (pytest.approx(10e-6), pytest.approx(400e6))
    # the saved figures give the model back the fitted times
    timing = drive_timing(result.drive)
    assert timing.read_access_s == pytest.approx(20e-6) and timing.write_bytes_per_s == pytest.approx(400e6)
    assert timing.write_access_s == pytest.approx(10e-6)
    assert result.drive.latency_read_s == pytest.approx(4 * (20e-6 + 4 * KIB / 1e9))  # QD1, smallest block


def test_the_fit_holds_the_small_blocks_as_well_as_the_large():
    # 4 KiB to 64 MiB, times from 50 us to 64 ms, each point 5 % off the line, up and down in turn: an unweighted
    # fit would follow the large blocks and miss the small ones by far more.
    sizes = [4 * KIB * 2**i for i in range(15)]
    points = [(size, (50e-6 + size / 1e9) * (1.05 if i % 2 else 0.95)) for i, size in enumerate(sizes)]
    fit = fit_line(points, "read")
    assert all(abs(fit.time_s(size) / seconds - 1) < 0.1 for size, seconds in points)
    assert fit.access_s == pytest.approx(50e-6, rel=0.1) and fit.bytes_per_s == pytest.approx(1e9, rel=0.1)


def test_only_a_mixed_sweep_stands_in_for_both_directions(store):
    record = stored_run(store, [
        (f"mixed {bs}", {"pattern": "random", "direction": "mixed", "rwmixread": 50, "bs": bs, "jobs": 16},
         [job("read", 0.5 / (20e-6 + bs / 1e9), bs, 1e-3)]) for bs in SIZES
    ])
    result = fit_drive([record], DriveFacts("m", 10**12, "sata-6g"))
    (mixed,) = result.fits
    assert mixed.direction == "mixed" and mixed.bytes_per_s == pytest.approx(0.5e9)
    assert result.notes == ("no random read sweep: reads use the mixed fit",
                            "no random write sweep: writes use the mixed fit")


def test_one_block_size_is_not_a_sweep(store):
    record = stored_run(store, [("RND4K Q32", {"pattern": "random", "direction": "read", "bs": 4096, "iodepth": 32},
                                 [fixture_job("randread-4k-q32.json.json")])])
    with pytest.raises(UserError, match="needs a block-size sweep"):
        fit_drive([record], DriveFacts("x", 10**12, "sata-6g"))


def test_calibrate_writes_a_drive_file_that_a_layout_uses(tmp_path, store):
    stored_run(store, sweep_tests())
    runner = CliRunner()
    db = str(tmp_path / "results.db")
    result = runner.invoke(cli, ["--db", db, "capacity", "calibrate", "last", "--as", "my-nvme", "--capacity",
                                 "3.84TB", "--interface", "nvme-pcie4-x4", "--watts-active", "12", "--price", "700"])
    assert result.exit_code == 0, result.output
    assert "read: time per I/O = 20.0 µs + size / 1,000 MB/s, fitted to 5 block sizes" in result.output
    path = tmp_path / "disklab-home" / "drives" / "my-nvme.toml"  # $DISKLAB_HOME of the test
    drive = load_drive(path)
    assert (drive.kind, drive.capacity_bytes, drive.price_eur) == ("measured", 3_840_000_000_000, 700)

    planned = runner.invoke(cli, ["capacity", "show", "12 x my-nvme raid6", "-f", "json", "-w", "mixed"])
    assert planned.exit_code == 0, planned.output
    (array,) = json.loads(planned.output)["arrays"]
    assert array["drive"] == "my-nvme" and array["net_capacity_bytes"] == 10 * 3.84e12
    assert array["costs"]["purchase"] == 12 * 700


def test_calibrate_bad_name_is_one_line(tmp_path, store):
    stored_run(store, sweep_tests())
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "results.db"), "capacity", "calibrate", "last", "--as",
                                      "my drive/x", "--capacity", "1TB", "--interface", "sata-6g"])
    assert result.exit_code == 2 and result.output.startswith("disklab: error: 'my drive/x' is not a drive name")
