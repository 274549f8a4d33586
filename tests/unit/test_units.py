import pytest
from hypothesis import given, strategies as st

from disklab.units import fio_size, format_duration, format_size, parse_duration, parse_size


@pytest.mark.parametrize(
    "text, expected",
    [("4096", 4096), ("4k", 4096), ("4KiB", 4096), ("1M", 2**20), ("256M", 256 * 2**20), ("1GiB", 2**30),
     ("5GB", 5 * 10**9), ("1.5G", 3 * 2**29), (512, 512)],
)
def test_sizes_follow_fio_binary_suffixes_and_decimal_words(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "4x", "-1k", "1.3"])
def test_bad_sizes_are_rejected(text):
    with pytest.raises(ValueError):
        parse_size(text)


@given(st.integers(min_value=1, max_value=2**50))
def test_fio_size_round_trips(n):
    assert parse_size(fio_size(n)) == n


@pytest.mark.parametrize("text, seconds", [("5", 5), ("5s", 5), ("500ms", 0.5), ("2m", 120), ("1h", 3600), (3, 3)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_duration_formatting():
    assert [format_duration(s) for s in (5, 65, 3725)] == ["5s", "1m05s", "1h02m"]


@pytest.mark.parametrize(
    "n, text",
    [(4096, "4KiB"), (2**30, "1GiB"), (10**9, "1GB"), (256 * 10**6, "256MB"), (4 * 10**9, "4GB"),
     (3 * 2**29, "1536MiB"), (512, "512B"), (1500, "1.5KiB")],
)
def test_sizes_are_shown_in_the_largest_exact_unit(n, text):
    assert format_size(n) == text
