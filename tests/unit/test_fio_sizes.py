"""fio/sizes.py reads sizes as fio 3.33 does: every case below was run through fio (size=CASE, bs=1, ioengine=null)
and fio's io_bytes noted; tests/integration/test_import.py re-checks a sample against the local fio."""

import pytest

from disklab.fio.sizes import (
    is_percent, kb_base, option_bases, parse_bssplit, parse_fio_size, parse_range, per_direction,
)

# case: (bytes with fio's default kb_base=1024, bytes with kb_base=1000), as fio 3.33 wrote them.
FIO_3_33 = {
    "1MiB": (1_000_000, 1_048_576), "1MB": (1_048_576, 1_000_000), "1M": (1_048_576, 1_000_000),
    "1Mi": (1_048_576, 1_000_000), "1mi": (1_048_576, 1_000_000), "1m": (1_048_576, 1_000_000),
    "1Kb": (1024, 1000), "1KiB": (1000, 1024), "2kib": (2000, 2048), "1kB": (1024, 1000), "1K": (1024, 1000),
    "1k": (1024, 1000), "1kx": (1024, 1000), "1g": (1024**3, 1000**3), "1000": (1000, 1000),
    "1.5k": (1, 1),  # fio reads whole numbers: the suffix must follow the digits
    "0x100k": (256, 256),  # hexadecimal; the 'x' hides the suffix
    "1B": (1, 1), "1b": (1, 1), "1e3": (1, 1), "1 k": (1, 1), " 2k": (2, 2),
}


@pytest.mark.parametrize("case", sorted(FIO_3_33))
def test_sizes_are_read_as_fio_reads_them(case):
    assert (parse_fio_size(case), parse_fio_size(case, 1000)) == FIO_3_33[case]


def test_the_larger_prefixes_follow_the_same_rule():
    assert parse_fio_size("3t") == 3 * 1024**4 and parse_fio_size("3TiB") == 3 * 1000**4
    assert parse_fio_size("1p", 1000) == 1000**5 and parse_fio_size("1PiB", 1000) == 1024**5
    assert parse_fio_size("50000Mi") == 50000 * 1024**2


@pytest.mark.parametrize("case", ["", "k", "abc", "50%", "-4k", "(4*1024)"])
def test_what_fio_would_not_read_as_a_size_is_refused(case):
    with pytest.raises(ValueError):
        parse_fio_size(case)


def test_a_percentage_is_a_share_not_a_size():
    assert is_percent("50%") and is_percent("10%") and not is_percent("4k")


# Per direction, as fio 3.33 used them (rw=randrw, ioengine=null: io_bytes / total_ios of each direction;
# trim: rw=randtrim).
@pytest.mark.parametrize("value, expected", [
    ("1k,2k", (1024, 2048, 2048)),
    (",2k", (None, 2048, 2048)),  # None: fio's default (4k)
    ("1k,", (1024, None, None)),
    ("2KiB", (2000, 2000, 2000)),
    ("1k,2k,3k", (1024, 2048, 3072)),
    ("1k-4k", (1024, 4096, 4096)),  # to bs, '-' and ':' separate directions like ','
    ("2k:4k", (2048, 4096, 4096)),
    ("1k/2k", (1024, 1024, 1024)),  # a '/' ends the suffix; the rest is ignored
    ("1k,2k,", (1024, 2048, None)),
])
def test_per_direction_values_follow_fios_splits(value, expected):
    assert tuple(per_direction(value).values()) == expected


def test_ranges_and_splits():
    assert parse_range("4k:1k")["read"] == (1024, 4096)
    assert parse_range("1k-4k,8k-16k") == {"read": (1024, 4096), "write": (8192, 16384), "trim": (8192, 16384)}
    assert parse_bssplit("4k/20:64KB/80")["write"] == ((4096, 20), (65536, 80))
    split = parse_bssplit("2k/50:4k/50,4k/90:8k")
    assert split["read"] == ((2048, 50), (4096, 50)) and split["write"] == ((4096, 90), (8192, None))
    with pytest.raises(ValueError):
        parse_bssplit("4k/x")


def test_kb_base_is_1024_or_1000():
    assert kb_base({}) == 1024 and kb_base({"kb_base": "1000"}) == 1000
    with pytest.raises(ValueError, match="kb_base=1001"):
        kb_base({"kb_base": "1001"})


def test_kb_base_applies_to_the_options_fio_reads_after_it():
    """fio 3.33: `--size=1MiB --kb_base=1000` wrote 1,000,000 bytes; a job's kb_base does not reach global options."""
    assert option_bases({"size": "1MiB", "kb_base": "1000"}) == {"size": 1024, "kb_base": 1000}
    assert option_bases({"size": "1MiB"}, {"kb_base": "1000", "bs": "1"}) == {"size": 1024, "kb_base": 1000, "bs": 1000}
    assert option_bases({"kb_base": "1000"}, {"size": "1MiB"})["size"] == 1000


@pytest.mark.parametrize("bssplit, size", [
    ("4KB/50:64KiB/50", 5 * 1000**3), ("4k/20:64k/50:256k/20:2m/10", 5 * 1024**3), ("1.5k/50:3MB/50", 1_500_000_000),
])
def test_exported_job_files_mean_to_fio_what_the_suite_says(bssplit, size):
    """A suite's 5GB (10^9) and 4KB (1000) reach fio as bytes or k/m/g, which fio reads as the suite means them."""
    from dataclasses import replace

    from disklab.plan.jobfile import render_jobfile
    from disklab.plan.build import expand_suite
    from disklab.suite.loader import load_suite
    from disklab.units import parse_size

    test = replace(expand_suite(load_suite("quick"))[0], bssplit=bssplit, size=size)
    options = dict(line.split("=", 1) for line in render_jobfile(test, "/dev/x", "/tmp", "t").splitlines()
                   if "=" in line and not line.startswith(";"))
    assert parse_fio_size(options["size"]) == size
    written = [b for b, _ in parse_bssplit(options["bssplit"])["read"]]
    assert written == [parse_size(part.partition("/")[0]) for part in bssplit.split(":")]
