"""`run --condition`: the device states a suite can start from, and the command that makes a device fresh."""

import pytest
from hypothesis import given, strategies as st

from disklab.targets.condition import Condition, erase_command, parse_conditions
from disklab.targets.target import Target


def test_states_their_methods_and_passes():
    assert parse_conditions("fresh,full") == (Condition("fresh"), Condition("full", passes=2))
    assert parse_conditions(" Fresh:secure-erase , full:5") == (Condition("fresh", "secure-erase"),
                                                                Condition("full", passes=5))
    assert [c.label for c in parse_conditions("fresh,fresh:secure-erase,full:3")] == [
        "fresh", "fresh (secure erase)", "full (written 3x)"]


@pytest.mark.parametrize("text", ["", "stale", "full:0", "full:101", "full:x", "fresh,fresh", "full,full:2",
                                  "fresh:format", "full;fresh"])
def test_what_is_not_a_condition_says_why(text):
    with pytest.raises(ValueError):
        parse_conditions(text)


@given(st.text(max_size=40))
def test_any_text_is_conditions_or_a_value_error(text):
    try:
        conditions = parse_conditions(text)
    except ValueError as exc:
        assert "\n" not in str(exc)
    else:
        assert conditions and all(c.state in ("fresh", "full") for c in conditions)


def test_fresh_is_a_discard_or_the_namespaces_own_format():
    target = Target(kind="device", path="/dev/nvme0n1", test_path="/dev/nvme0n1", disklab_owns_file=False,
                    capacity_bytes=2**30, device=None)
    assert erase_command(Condition("fresh"), target) == ["blkdiscard", "--force", "/dev/nvme0n1"]
    assert erase_command(Condition("fresh", "secure-erase"), target) == [
        "nvme", "format", "/dev/nvme0n1", "--ses=1", "--force"]
