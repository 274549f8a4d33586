import pytest
from hypothesis import given, strategies as st

from disklab.units import fio_size, format_duration, format_size, human_size, parse_duration, parse_size


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


@pytest.mark.parametrize("value", [2**60 + 1, 10**400, "9" * 400, "9" * 400 + "k", "1025P", "2000000T", -1, "4٣k",
                                   "1" + " " * 200 + "k", [4096], None, True, float("nan"), float("inf")])
def test_sizes_beyond_reason_or_of_other_types_are_rejected(value):
    with pytest.raises(ValueError):
        parse_size(value)


def test_sizes_are_exact_integers_up_to_one_exbibyte():
    assert parse_size("1048576T") == 2**60 and parse_size(2**60) == 2**60
    assert parse_size("0.5k") == 512 and parse_size("1.25M") == 1310720


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), 10**400, "9" * 400, "721h",
                                   30 * 86400 + 1, -0.5, "nan", "inf", [5], None, True])
def test_durations_are_finite_and_at_most_thirty_days(value):
    with pytest.raises(ValueError):
        parse_duration(value)


def test_thirty_days_is_the_longest_duration():
    assert parse_duration("720h") == 30 * 86400.0


def test_messages_quote_values_briefly():
    with pytest.raises(ValueError) as caught:
        parse_size("9" * 400)
    assert len(str(caught.value)) < 120


@pytest.mark.parametrize("n, text", [(81371508 * 1024, "77.6GiB"), (19200 * 1024, "18.8MiB"), (4096, "4KiB"),
                                     (5 * 10**9, "5GB"), (1536, "1.5KiB"), (100, "100B"), (2**60, "1.0EiB")])
def test_human_sizes_in_messages(n, text):
    """Messages said '81371508KiB is free' and '19200KiB': exact only while short."""
    assert human_size(n) == text


@given(st.integers(min_value=0, max_value=2**60))
def test_a_human_size_is_short_and_close(n):
    text = human_size(n)
    number = text.rstrip("BKMGTPEi")
    assert len(number) <= 6, text
    if "." in number:
        unit = 1024 ** "BKMGTPE".index(text[len(number)])
        assert abs(float(number) * unit - n) <= 0.05 * unit * (1 + 1e-9)  # 1280 is 1.2KiB: 1.25 rounded half-even
    else:
        assert text == format_size(n)
