"""`disklab capacity` at its edges (issue 24): drive files of other bytes, special files and absurd figures, layouts
of absurd counts, numeric options out of range, outputs that are FIFOs. For every input: exit 0 with finite figures,
or exit 2 with one `disklab: error:` line; never an internal error (70), a traceback, a hang or "inf" printed.

Bad drive files are copies of the shipped ones with one thing changed.
"""

import json
import os
import re
import stat

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st

from disklab.capacity.catalogue import load_drive, shipped_drive_files
from disklab.capacity.drive_time import Region, zone_rate
from disklab.capacity.layout import LEVELS, MAX_DRIVES, OPTIONS
from disklab.cli.main import cli
from disklab.store.repository import Store
from disklab.system.outputs import PARTIAL_SUFFIX
from tests.unit.test_capacity_calibrate import sweep_tests
from tests.unit.test_compare import stored_run
from tests.unit.test_fuzz_input import FUZZ
from tests.unit.test_trace_edges import assert_0_or_2, run_bounded

SHIPPED = {path.stem: path for path in shipped_drive_files()}
SSD, HDD = "sata-ssd-1.6t", "nl-sas-7.2k-12t"
NOT_FINITE = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)


def run(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert_0_or_2(result.exit_code, result.stderr, result.exception)
    assert result.exit_code or not NOT_FINITE.search(result.stdout), result.stdout
    return result


def plan(*args):
    """A plan of one workload, as CSV: quick to make and every figure visible."""
    return run("capacity", *args, "-w", "quick", "-f", "csv")


def drive_copy(tmp_path, name=SSD, change=lambda text: text) -> "os.PathLike":
    path = tmp_path / f"{name}.toml"
    path.write_bytes(change(SHIPPED[name].read_bytes()))
    return path


# --- drive files ---

@pytest.mark.parametrize("change", [
    lambda b: b.replace(b"enterprise SATA SSD", b"enterprise SATA \xff SSD"),  # in a string
    lambda b: b.replace(b"dwpd", b"dw\xe9pd"),  # in a key (Latin-1)
    lambda b: b"\xfe\xff" + b,  # a UTF-16 byte-order mark
    lambda b: b + b"\x80",
])
def test_a_drive_file_of_bytes_other_than_utf8_is_one_line(tmp_path, change):
    path = drive_copy(tmp_path, change=change)
    for args in (("drives", "--drives", path), ("show", f"4 x {SSD} raid5", "--drives", path, "-w", "quick")):
        result = run("capacity", *args)  # was UnicodeDecodeError
        assert result.exit_code == 2 and "not UTF-8" in result.stderr


@pytest.mark.parametrize("key, value, says", [
    ("seq_read_mbps", "9" * 400, "seq_read_mbps"),  # OverflowError multiplying into bytes/s
    ("rand_read_iops", "9" * 400, "rand_read_iops"),
    ("price_eur", "1e300", "price_eur"),
    ("power_active_w", "9" * 5000, "thousands of digits"),  # tomllib's own ValueError
    ("dwpd", "[" * 3000 + "]" * 3000, "nested too deeply"),  # RecursionError
    ("name", "5", "name must be a string"),
    ("name", '"two words"', "name must be one word"),
    ("description", "[1, 2]", "description must be a string"),
])
def test_absurd_figures_in_a_drive_file_are_one_line_naming_the_key(tmp_path, key, value, says):
    path = drive_copy(tmp_path, change=lambda b: re.sub(rb"(?m)^" + key.encode() + rb" = .*$",
                                                          f"{key} = {value}".encode(), b))
    result = plan("show", f"4 x {SSD} raid5", "--drives", path)
    assert result.exit_code == 2 and says in result.stderr


def test_special_files_as_drive_files_are_refused_unread(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    for special in ("/dev/zero", fifo):  # /dev/zero was read until memory ran out; a FIFO waited for a writer
        result = run_bounded("capacity", "drives", "--drives", special)
        assert result.returncode == 2 and "not a regular file" in result.stderr
    result = run("capacity", "drives", "--drives", "/proc/self/mem")  # a regular file that refuses to be read
    assert result.exit_code == 2 and "cannot read drive file" in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_fifo_in_the_users_drive_folder_is_refused_unread(tmp_path):
    folder = tmp_path / "disklab-home" / "drives"  # $DISKLAB_HOME of the test
    folder.mkdir(parents=True)
    os.mkfifo(folder / "mine.toml")
    result = run_bounded("capacity", "drives")
    assert result.returncode == 2 and "mine.toml is not a regular file" in result.stderr


# --- layouts ---

@pytest.mark.parametrize("spec, says", [
    (f"{'9' * 50} * {HDD} raid6", "more than an array holds"),  # ZeroDivisionError in the zone rate
    (f"{MAX_DRIVES + 1} x {HDD} raid6", "more than an array holds"),
    (f"{'9' * 5000} x {HDD} raid6", "more than an array holds"),
    (f"12 x {HDD} raid60/{'9' * 5000}", "more than an array holds"),  # int() of 5,000 digits: ValueError
])
def test_absurd_counts_are_one_line(spec, says):
    result = plan("compare", spec, f"8 x {SSD} raid6")
    assert result.exit_code == 2 and says in result.stderr


@pytest.mark.parametrize("region", ["first:1", "first:512", "last:1", "last:512"])
@pytest.mark.parametrize("spec", [f"{MAX_DRIVES} x {HDD} raid6", f"{MAX_DRIVES} x {HDD} raidz2",
                                  f"{MAX_DRIVES} x {HDD} mirror arc=1G", f"4 x {HDD} raid5"])
def test_a_data_set_of_a_few_bytes_on_the_largest_array_has_finite_figures(tmp_path, spec, region):
    """A share of the array below what a float tells from 0 or 1 was a ZeroDivisionError (zone rate, ARC)."""
    suite = tmp_path / "tiny.toml"
    suite.write_text(f'name = "tiny"\n[[group]]\nname = "g"\nbs = "4k"\nsize = "512"\nregion = "{region}"\n')
    result = run("capacity", "show", spec, "-w", suite, "-f", "json")
    assert result.exit_code == 0, result.output
    assert all(p["iops"] > 0 for p in json.loads(result.stdout)["arrays"][0]["predictions"])


def test_the_zone_rate_of_a_region_narrower_than_a_float_tells_apart_is_the_rate_there():
    outer, inner = 250e6, 125e6
    assert zone_rate(outer, inner, Region(0.0, 1e-20)) == outer
    assert zone_rate(outer, inner, Region(1.0, 1.0)) == pytest.approx(inner)
    assert zone_rate(outer, inner, Region(0.0, 1.0)) == pytest.approx((outer + inner) / 2)


# --- numeric options ---

@pytest.mark.parametrize("option, value", [
    ("--price-kwh", "1e309"), ("--price-kwh", "nan"), ("--host-mbps", "inf"), ("--host-mbps", "-inf"),
    ("--controller-mbps", "9" * 400), ("--watts", "1e400"), ("--pue", "0.5"), ("--pue", "inf"),
    ("--host-mbps", "0"),
])
def test_numeric_options_out_of_range_are_one_line_naming_the_option(option, value):
    """--price-kwh 1e309 and --host-mbps inf printed "inf"."""
    result = plan("show", f"8 x {SSD} raid6", option, value)
    assert result.exit_code == 2 and option in result.stderr


@pytest.fixture
def calibration_store(tmp_path):
    with Store(tmp_path / "results.db") as store:
        stored_run(store, sweep_tests())
    return tmp_path / "results.db"


@pytest.mark.parametrize("option, value", [
    ("--capacity", "0"), ("--watts-active", "inf"), ("--watts-idle", "nan"), ("--price", "1e309"),
    ("--rated-read-iops", "9" * 400),
])
def test_calibrate_numbers_out_of_range_are_one_line(tmp_path, calibration_store, option, value):
    result = run("--db", calibration_store, "capacity", "calibrate", "last", "--as", "d", "--capacity", "1TB",
                 "--interface", "nvme-pcie4-x4", option, value, "-o", tmp_path / "d.toml")
    assert result.exit_code == 2 and option in result.stderr and not (tmp_path / "d.toml").exists()


# --- outputs that are not regular files ---

@pytest.mark.parametrize("args", [("--html", "{fifo}"), ("-f", "json", "-o", "{fifo}")])
def test_plan_outputs_to_a_fifo_leave_the_fifo_as_it_was(tmp_path, args):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run_bounded("capacity", "show", f"8 x {SSD} raid6", "-w", "quick",
                         *(a.format(fifo=fifo) for a in args))  # writing --html waited for a reader
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_calibrate_to_a_fifo_leaves_the_fifo_as_it_was(tmp_path, calibration_store):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run_bounded("--db", calibration_store, "capacity", "calibrate", "last", "--as", "d", "--capacity", "1TB",
                         "--interface", "nvme-pcie4-x4", "-o", fifo)
    assert result.returncode == 2 and "not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_reports_and_drive_files_are_written_whole_beside_the_target(tmp_path, calibration_store):
    html, drive = tmp_path / "plan.html", tmp_path / "d.toml"
    assert plan("show", f"8 x {SSD} raid6", "--html", html).exit_code == 0
    assert run("--db", calibration_store, "capacity", "calibrate", "last", "--as", "d", "--capacity", "1TB",
               "--interface", "nvme-pcie4-x4", "-o", drive).exit_code == 0
    assert html.read_text().startswith("<!DOCTYPE html>") and load_drive(drive).name == "d"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(PARTIAL_SUFFIX)]


# --- generated input ---

_TOML_VALUES = st.one_of(
    st.integers(-10, 10**6), st.integers(min_value=10**15, max_value=10**400), st.floats().map(repr),
    st.sampled_from(["inf", "-inf", "nan", "0", "0.0", "-0.0", "1e308", "9" * 5000, "true", "[]", "{}", '""',
                     '"1TB"', '"0"', '"1EiB"', '"hdd"', '"ssd"', '"measured"', '"sata-6g"', '"nvme-pcie4-x4"',
                     '"x y"', "[1, [2, [3]]]", "{a = 1}", "[" * 500 + "]" * 500, '"\\u0000"', "1979-05-27"]),
    st.text(max_size=12).map(json.dumps),
)
_DRIVE_KEYS = ("name", "description", "kind", "interface", "capacity", "seq_read_mbps", "seq_write_mbps",
               "seq_inner_mbps", "rpm", "seek_read_ms", "seek_write_ms", "seek_track_ms", "rand_read_iops",
               "rand_write_iops", "rand_read_mbps", "rand_write_mbps", "latency_read_us", "latency_write_us",
               "power_idle_w", "power_active_w", "price_eur", "endurance_tbw", "dwpd", "colour")


@st.composite
def drive_files(draw):
    """A shipped drive file with values replaced, keys dropped or added; or other bytes spliced in, or cut short."""
    name = draw(st.sampled_from([SSD, HDD, "nvme-u3-960g"]))
    content = SHIPPED[name].read_bytes()
    how = draw(st.sampled_from(["values", "values", "values", "bytes", "cut"]))
    if how == "bytes":
        at = draw(st.integers(0, len(content)))
        return name, content[:at] + draw(st.binary(min_size=1, max_size=6)) + content[at:]
    if how == "cut":
        return name, content[:draw(st.integers(0, len(content)))]
    text = content.decode()
    for key, value in draw(st.lists(st.tuples(st.sampled_from(_DRIVE_KEYS), st.one_of(st.just(None), _TOML_VALUES)),
                                    min_size=1, max_size=3)):
        line = re.compile(rf"(?m)^{key} = .*$")
        text = line.sub("", text) if value is None else (
            line.sub(lambda _: f"{key} = {value}", text) if line.search(text) else f"{key} = {value}\n" + text)
    return name, text.encode("utf-8", "surrogatepass")


@FUZZ
@given(case=drive_files(), level=st.sampled_from(["raid0", "raid5", "raid10", "raidz1"]))
def test_fuzzed_drive_files(tmp_path, case, level):
    name, content = case
    path = tmp_path / "fuzzed.toml"
    path.write_bytes(content)
    plan("show", f"4 x {name} {level}", "--drives", path)
    run("capacity", "drives", name, "--drives", path)


_COUNTS = st.one_of(st.integers(0, 30).map(str), st.sampled_from(
    ["0", "00008", "-4", "10000", "10001", "9" * 50, "9" * 5000, "٣", "８", "1e3", "x", ""]))
_SIZES = st.one_of(st.sampled_from(["4k", "512", "511", "0", "none", "1152921504606846976", "1152921504606846977",
                                    "9" * 30, "1.5k", "-1", "inf", "nan", ""]), st.integers(0, 2**62).map(str))
_OPTION = st.tuples(st.sampled_from([*OPTIONS, "colour"]),
                    st.one_of(_SIZES, st.sampled_from(["on", "off", "iscsi:25GbE", "nvme-rdma:100GbE:jumbo", "local",
                                                       "fc:64GFC", "nfs:1GbE", "x:y:z", "fresh", "steady", "FRESH",
                                                       "3749.5", "1e9", "1e10", "0.5"])))
_LAYOUTS = st.one_of(
    st.builds(lambda count, sep, drive, level, groups, options: f"{count} {sep} {drive} {level}{groups} "
              + " ".join(f"{key}={value}" for key, value in options),
              _COUNTS, st.sampled_from(["x", "X", "*", "×", "by"]),
              st.one_of(st.sampled_from(sorted(SHIPPED)), st.sampled_from(["nope", "x" * 300, "SATA-SSD-1.6T"])),
              st.one_of(st.sampled_from(sorted(LEVELS)), st.sampled_from(["RAID6", "raid7", "raidz4", "jbod"])),
              st.one_of(st.just(""), _COUNTS.map(lambda c: "/" + c)),
              st.lists(_OPTION, max_size=3)),
    st.text(max_size=40).filter(lambda s: "\x00" not in s),
)


@FUZZ
@given(layouts=st.lists(_LAYOUTS, min_size=1, max_size=3))
def test_fuzzed_layouts(layouts):
    plan("show" if len(layouts) == 1 else "compare", *layouts)


_NUMBERS = st.one_of(
    st.floats().map(repr), st.integers(-10, 10**12).map(str),
    st.integers(min_value=10**300, max_value=10**400).map(str),
    st.sampled_from(["0", "-0", "1e-320", "1e308", "1e309", "-1e309", "inf", "-inf", "nan", "Infinity", "1_000",
                     "0x10", "9" * 5000, "1,5", "", " 5 ", "٣", "4k", "256KiB"]),
    st.text(max_size=8).filter(lambda s: "\x00" not in s))
_PLAN_OPTIONS = ("--strip", "--controller-mbps", "--host-mbps", "--watts", "--price-kwh", "--pue", "--years")


@FUZZ
@given(options=st.lists(st.tuples(st.sampled_from(_PLAN_OPTIONS), _NUMBERS), min_size=1, max_size=4),
       spec=st.sampled_from([f"8 x {SSD} raid6", f"24 x {HDD} raid60/2", "4 x nvme-u3-960g raidz1"]))
def test_fuzzed_numeric_options(options, spec):
    plan("show", spec, *[arg for option, value in options for arg in (option, value)])


_CALIBRATE_OPTIONS = ("--capacity", "--watts-idle", "--watts-active", "--price", "--rated-read-iops",
                      "--rated-write-iops")


@FUZZ
@given(options=st.lists(st.tuples(st.sampled_from(_CALIBRATE_OPTIONS), _NUMBERS), min_size=1, max_size=3))
def test_fuzzed_calibrate_options(tmp_path, calibration_store, options):
    """What calibrate writes, a layout reads back."""
    drive = tmp_path / "fuzzed.toml"
    drive.unlink(missing_ok=True)
    given_options = {option: value for option, value in options}
    args = [arg for option, value in {"--capacity": "1TB", **given_options}.items() for arg in (option, value)]
    result = run("--db", calibration_store, "capacity", "calibrate", "last", "--as", "fuzzed", "--interface",
                 "nvme-pcie4-x4", *args, "-o", drive)
    if result.exit_code == 0:
        plan("show", "4 x fuzzed raid5", "--drives", drive)
        assert load_drive(drive).name == "fuzzed"
