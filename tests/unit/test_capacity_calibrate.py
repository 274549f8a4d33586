"""Calibrate: a drive model fitted to stored sweeps, saved as a drive file that layouts can use."""

import json

import pytest
from click.testing import CliRunner

from disklab.capacity.drive_time import ssd_op_time
from disklab.capacity.calibrate import Fit, DriveFacts, fit_drive, fit_line
from disklab.capacity.catalogue import load_drive
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
    # the drive file keeps the fitted random transfer rates, and the model gets the fitted times back from it
    drive = result.drive
    assert (drive.rand_read_bytes_per_s, drive.rand_write_bytes_per_s) == (pytest.approx(1e9), pytest.approx(400e6))
    for size in SIZES:
        assert ssd_op_time(drive, "read", size) == pytest.approx(20e-6 + size / 1e9)
        assert ssd_op_time(drive, "write", size) == pytest.approx(10e-6 + size / 400e6)
    assert drive.latency_read_s == pytest.approx(4 * (20e-6 + 4 * KIB / 1e9))  # QD1, smallest block
    # a perfect sweep: R² 1, no error at any size, nothing to warn about
    assert read.r_squared == pytest.approx(1) and read.max_error_percent == pytest.approx(0, abs=1e-9)
    assert result.warnings == ()


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


# --- goodness of fit ---

def test_goodness_of_fit_by_hand():
    # Times 1, 2, 2 ms at 4, 8, 12 KiB, weights 1/t^2 = 1, 1/4, 1/4 (in ms): the weighted line is
    # t = 10/21 ms + 4/7 ms per 4 KiB; residuals -1/21, 8/21, -4/21 ms give a weighted residual sum of 1/21,
    # the weighted mean 4/3 ms a total sum of 1/3, so R² = 1 - (1/21) / (1/3) = 6/7.
    fit = fit_line([(4 * KIB, 1e-3), (8 * KIB, 2e-3), (12 * KIB, 2e-3)], "read")
    assert fit.access_s == pytest.approx(10 / 21 * 1e-3) and fit.bytes_per_s == pytest.approx(4 * KIB / (4 / 7 * 1e-3))
    assert fit.r_squared == pytest.approx(6 / 7)
    # fitted IOPS against measured: 21/22, 42/34 and 42/46 of the measured, less one
    assert fit.errors_percent == pytest.approx((-100 / 22, 800 / 34, -400 / 46))
    assert (fit.median_error_percent, fit.max_error_percent) == (pytest.approx(400 / 46), pytest.approx(800 / 34))


def test_a_fits_errors_are_its_iops_against_the_measured():
    # 100 us + size / 1 GB/s: 200 us at 100 kB, 400 us at 300 kB, 1 ms at 900 kB; measured 250, 320, 1,000 us
    fit = Fit("read", 100e-6, 1e9, ((100_000, 250e-6), (300_000, 320e-6), (900_000, 1e-3)), 0.9)
    assert fit.errors_percent == pytest.approx((25, -20, 0))
    assert (fit.median_error_percent, fit.max_error_percent, fit.best_measured_iops) == (
        pytest.approx(20), pytest.approx(25), pytest.approx(4000))  # 1 / 250 us


def _sweep(direction, access, rate, sizes):
    return [(f"{direction} {bs}", {"pattern": "random", "direction": direction, "bs": bs, "iodepth": 32},
             [job(direction, 1 / (access + bs / rate), bs, 1e-3)]) for bs in sizes]


def test_a_poor_fit_is_warned_about_and_a_fair_one_is_not(store):
    fair = stored_run(store, [(f"read {bs}", {"pattern": "random", "direction": "read", "bs": bs, "iodepth": 32},
                               [job("read", 1 / t, bs, 1e-3)]) for bs, t in ((4 * KIB, 1e-3), (8 * KIB, 2e-3),
                                                                              (12 * KIB, 2e-3))])
    assert fit_drive([fair], DriveFacts("d", 10**12, "sata-6g")).warnings == ()  # worst point 23.5 % off
    poor = stored_run(store, [(f"read {bs}", {"pattern": "random", "direction": "read", "bs": bs, "iodepth": 32},
                               [job("read", 1 / t, bs, 1e-3)]) for bs, t in ((4 * KIB, 1e-3), (8 * KIB, 3e-3),
                                                                              (12 * KIB, 3e-3))])
    (warning,) = fit_drive([poor], DriveFacts("d", 10**12, "sata-6g")).warnings
    assert warning.startswith("the read fit is poor: a point is 38 % off (median 8 %)")


def test_iops_above_anything_measured_or_above_the_rating_are_warned_about(store):
    # swept from 64 KiB only: the fit's 4 KiB figure, 1 / (20 us + 4,096 B / 1 GB/s) = 41,501 IOPS, is above the
    # best measured, 1 / (20 us + 65,536 B / 1 GB/s) = 11,691 IOPS at 64 KiB
    record = stored_run(store, _sweep("read", 20e-6, 1e9, SIZES[2:]))
    (warning,) = fit_drive([record], DriveFacts("d", 10**12, "nvme-pcie4-x4")).warnings
    assert warning == ("the read fit gives 41,501 IOPS at 4 KiB, above the best measured at any block size (11,691 "
                       "IOPS): the drive file's IOPS rating is higher than anything measured (the sweep starts at "
                       "64KiB: extend it down to 4 KiB)")
    # a real write sweep (profile suite on an overlay file system): 4 KiB no faster than 8 KiB, so the line
    # overshoots at 4 KiB by 17 %, above the best measured by 16 %
    measured = ((4 * KIB, 37_686), (8 * KIB, 37_901), (64 * KIB, 6_856))
    real = stored_run(store, [(f"write {bs}", {"pattern": "random", "direction": "write", "bs": bs, "iodepth": 32},
                               [job("write", iops, bs, 1e-3)]) for bs, iops in measured])
    (warning,) = fit_drive([real], DriveFacts("d", 10**12, "nvme-pcie4-x4")).warnings
    assert warning.startswith("the write fit gives 43,9") and warning.endswith(
        "above the best measured at any block size (37,901 IOPS): the drive file's IOPS rating is higher than "
        "anything measured (the line misses the small blocks: see the error per block size)")
    full = stored_run(store, _sweep("read", 20e-6, 1e9, SIZES))
    (warning,) = fit_drive([full], DriveFacts("d", 10**12, "nvme-pcie4-x4", rated_read_iops=30_000)).warnings
    assert warning == "the read fit gives 41,501 IOPS at 4 KiB, above the read rating given (30,000 IOPS)"


# --- physics ---

def test_a_fitted_rate_faster_than_the_interface_is_refused(store):
    record = stored_run(store, sweep_tests())  # reads at 1 GB/s
    with pytest.raises(UserError) as caught:
        fit_drive([record], DriveFacts("d", 10**12, "sata-6g"))
    assert str(caught.value) == ("random read transfer rate (fitted) 1,000 MB/s is faster than sata-6g allows "
                                 "(600 MB/s): a cache answered; measure the raw drive with direct I/O")


def test_a_sequential_rate_faster_than_the_interface_is_refused(store):
    sequential = ("seq read 1M", {"pattern": "sequential", "direction": "read", "bs": 1024 * KIB, "iodepth": 32},
                  [job("read", 1.04e9 / (1024 * KIB), 1024 * KIB, 1e-3)])
    record = stored_run(store, [*_sweep("read", 100e-6, 500e6, SIZES), sequential])
    with pytest.raises(UserError) as caught:
        fit_drive([record], DriveFacts("d", 10**12, "sata-6g"))
    assert str(caught.value) == ("sequential read 1,040 MB/s is faster than sata-6g allows (600 MB/s): a cache "
                                 "answered; measure the raw drive with direct I/O")


def test_idle_power_above_the_power_under_load_is_refused(store):
    record = stored_run(store, sweep_tests())
    with pytest.raises(UserError, match="idle power 9 W is above the power under load 6 W"):
        fit_drive([record], DriveFacts("d", 10**12, "nvme-pcie4-x4", power_idle_w=9, power_active_w=6))


# --- the command ---

def test_calibrate_shows_the_fit_and_leaves_unknown_power_and_price_out(tmp_path, store):
    stored_run(store, sweep_tests())
    path = tmp_path / "mine.toml"
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "results.db"), "capacity", "calibrate", "last", "--as",
                                      "mine", "--capacity", "1TB", "--interface", "nvme-pcie4-x4",
                                      "--rated-read-iops", "30000", "-o", str(path)])
    assert result.exit_code == 0, result.output
    assert ("  goodness of fit: R² 1.000 (relative errors, as fitted); IOPS error median 0.0 %, max 0.0 %"
            in result.output)
    assert "4KiB: measured 41,501 IOPS, fit 41,501 IOPS (+0.0 %)" in result.output
    assert result.stderr == ("warning: the read fit gives 41,501 IOPS at 4 KiB, above the read rating given "
                             "(30,000 IOPS)\n")
    text = path.read_text()
    assert "power_" not in text and "price_eur" not in text and 'price = "not given: unknown"' in text
    assert "rand_read_mbps = 1000\n" in text and "rand_write_mbps = 400\n" in text
    drive = load_drive(path)
    assert (drive.power_idle_w, drive.power_active_w, drive.price_eur) == (None, None, None)


def test_calibrate_refusal_is_one_line(tmp_path, store):
    stored_run(store, sweep_tests())
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "results.db"), "capacity", "calibrate", "last", "--as",
                                      "x", "--capacity", "1TB", "--interface", "sata-6g"])
    assert result.exit_code == 2
    assert result.output == ("disklab: error: random read transfer rate (fitted) 1,000 MB/s is faster than sata-6g "
                             "allows (600 MB/s): a cache answered; measure the raw drive with direct I/O\n")
