"""--array, --array-state and --members as the user writes them: parsed, labelled, refused with what is allowed; the
mdadm command each array is built with; the configurations an array run makes. md itself is in the kernel tier
(tests/kernel/checks/check_arrays.py)."""

import pytest
from hypothesis import given, strategies as st

from disklab.errors import UserError
from disklab.run.configured import Variations
from disklab.targets.array import ArraySpec, parse_array_spec, parse_array_specs, parse_states
from disklab.targets.md import create_command


@pytest.mark.parametrize("text, spec", [
    ("md:raid0", ArraySpec("md", "raid0")),
    ("md:5", ArraySpec("md", "raid5")),
    ("MD:RAID5:chunk=64K", ArraySpec("md", "raid5", 65536)),
    ("md:raid5:chunk=64K:layout=left-symmetric:bitmap=none:metadata=1.2",
     ArraySpec("md", "raid5", 65536, "left-symmetric", "none", "1.2")),
    ("md:raid10:layout=f2", ArraySpec("md", "raid10", layout="f2")),
    ("md:raid6:layout=left-symmetric-6", ArraySpec("md", "raid6", layout="left-symmetric-6")),
    ("md:raid1:bitmap=internal", ArraySpec("md", "raid1", bitmap="internal")),
    ("md:raid5:size=64M", ArraySpec("md", "raid5", size_bytes=64 * 1024**2)),
])
def test_an_array_as_written(text, spec):
    assert parse_array_spec(text) == spec


@pytest.mark.parametrize("text, words", [
    ("zfs:raidz1", "ZFS pools are not built by disklab"),
    ("zfs:mirror", "the kinds built are md (md:raid5), lvm (lvm:striped) and btrfs (btrfs:raid10)"),
    ("hw:raid5", "the array kind is md (mdadm), lvm or btrfs"),
    ("md:raid7", "md's level is one of raid0, raid1, raid4, raid5, raid6, raid10"),
    ("md", "md's level is one of"),
    ("md:raid1:chunk=64K", "raid1 mirrors whole devices and has no chunk"),
    ("md:raid5:chunk=48K", "a power of two of at least 4 KiB"),
    ("md:raid5:chunk=2K", "a power of two of at least 4 KiB"),
    ("md:raid5:chunk=lots", "chunk"),
    ("md:raid10:layout=left-symmetric", "raid10's layout is n, f or o"),
    ("md:raid5:layout=f2", "raid5's layout is one of"),
    ("md:raid0:layout=f2", "raid0 has no layout to choose"),
    ("md:raid5:bitmap=external", "bitmap is one of internal, none"),
    ("md:raid5:metadata=2.0", "metadata is one of 0.90, 1.0, 1.1, 1.2"),
    ("md:raid5:stripes=4", "not stripes"),
    ("md:raid5:size=100K", "at least 1 MiB"),
    ("md:raid5:size=1000001", "whole KiB"),
    ("md:raid5:chunk", "is not KEY=VALUE"),
    ("md:raid5:chunk=64K:chunk=128K", "chunk is given twice"),
    ("md:raid5\x00", "control character"),
])
def test_a_wrong_array_says_what_is_allowed(text, words):
    with pytest.raises(ValueError, match=None) as raised:
        parse_array_spec(text)
    assert words in str(raised.value)


def test_an_array_given_twice_is_refused():
    with pytest.raises(ValueError, match="given twice"):
        parse_array_specs(["md:raid5", "md:5"])


@pytest.mark.parametrize("spec, count, words", [
    (ArraySpec("md", "raid6"), 3, "raid6 takes at least 4 members; --members names 3"),
    (ArraySpec("md", "raid5"), 2, "at least 3"),
    (ArraySpec("md", "raid10", layout="n3"), 2, "keeps 3 copies of each block on 2 members"),
])
def test_too_few_members_are_refused(spec, count, words):
    with pytest.raises(ValueError, match=words):
        spec.check_members(count)


def test_states_as_written():
    assert parse_states("clean, Degraded,rebuilding") == ("clean", "degraded", "rebuilding")
    for text, words in (("clean,clean", "twice"), ("resyncing", "not an array state")):
        with pytest.raises(ValueError, match=words):
            parse_states(text)


def test_the_mdadm_command_names_what_was_asked_and_runs_without_a_terminal():
    spec = parse_array_spec("md:raid5:chunk=64K:layout=left-symmetric:bitmap=none:metadata=1.2:size=1G")
    assert create_command(spec, "/dev/md/disklab-array-1-1", ("/dev/sdb", "/dev/sdc", "/dev/sdd"), False) == [
        "mdadm", "--create", "/dev/md/disklab-array-1-1", "--run", "--level=raid5", "--raid-devices=3",
        "--chunk=64K", "--layout=left-symmetric", "--bitmap=none", "--metadata=1.2", "--size=1048576K", "/dev/sdb",
        "/dev/sdc", "/dev/sdd"]
    assert create_command(ArraySpec("md", "raid1"), "/dev/md/x", ("/dev/sdb", "/dev/sdc"), True)[-3:] == [
        "--assume-clean", "/dev/sdb", "/dev/sdc"]


def test_every_array_in_every_state_is_one_configuration_named_by_both():
    variations = Variations(arrays=(parse_array_spec("md:raid5:chunk=64K"), parse_array_spec("md:raid10")),
                            array_states=("clean", "rebuilding"))
    assert [c.label for c in variations.configurations()] == [
        "md raid5 chunk 64KiB · clean", "md raid5 chunk 64KiB · rebuilding", "md raid10 · clean",
        "md raid10 · rebuilding"]
    assert [c.label for c in Variations(arrays=(ArraySpec("md", "raid0"),)).configurations()] == ["md raid0 · clean"]


def test_a_failed_member_asks_for_a_level_that_survives_one():
    with pytest.raises(UserError, match="md raid0 has no redundancy"):
        Variations(arrays=(ArraySpec("md", "raid0"),), array_states=("degraded",))
    with pytest.raises(UserError, match="give --members and --array"):
        Variations(array_states=("clean",))


@given(st.text(max_size=60))
def test_any_text_is_an_array_or_one_value_error(text):
    try:
        spec = parse_array_spec(text)
    except ValueError as exc:
        assert "\n" not in str(exc) and str(exc)
    else:
        assert spec.kind in ("md", "lvm", "btrfs") and spec.label.startswith(spec.kind)
