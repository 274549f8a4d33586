"""LVM and btrfs arrays as the user writes them (`--array lvm:striped:stripes=2`, `btrfs:data=raid0:metadata=raid1`):
parsed, labelled, refused with what is allowed; the commands each is built with; the states and configurations
each refuses; btrfs's reports read. LVM and btrfs themselves are in the kernel tier
(tests/kernel/checks/check_arrays_lvm_btrfs.py)."""

import pytest

from disklab.errors import UserError
from disklab.run.configured import Variations
from disklab.targets.array import ArraySpec, parse_array_spec, parse_array_specs
from disklab.targets.array_kinds import dry_run_steps, undo_step
from disklab.targets.btrfs_array import mkfs_command, mount_command, parse_df, parse_show, parse_usage
from disklab.targets.filesystem import parse_fs_spec
from disklab.targets.condition import Condition
from disklab.targets.lvm import create_commands

FOUR = ("/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1")


@pytest.mark.parametrize("text, spec, label", [
    ("lvm:striped", ArraySpec("lvm", "striped"), "lvm striped"),
    ("LVM:striped:stripes=2:stripesize=64K", ArraySpec("lvm", "striped", 65536, stripes=2),
     "lvm striped stripes 2 stripesize 64KiB"),
    ("lvm:raid5:stripesize=128k", ArraySpec("lvm", "raid5", 131072), "lvm raid5 stripesize 128KiB"),
    ("lvm:raid10", ArraySpec("lvm", "raid10"), "lvm raid10"),
    ("btrfs:raid10", ArraySpec("btrfs", "raid10", metadata="raid10"), "btrfs raid10"),
    ("btrfs:data=raid0:metadata=raid1", ArraySpec("btrfs", "raid0", metadata="raid1"),
     "btrfs data raid0 metadata raid1"),
    ("btrfs:raid0:metadata=raid1c3", ArraySpec("btrfs", "raid0", metadata="raid1c3"),
     "btrfs data raid0 metadata raid1c3"),
    ("btrfs:data=single", ArraySpec("btrfs", "single", metadata="single"), "btrfs single"),
])
def test_lvm_and_btrfs_arrays_as_written(text, spec, label):
    assert parse_array_spec(text) == spec and spec.label == label


@pytest.mark.parametrize("text, words", [
    ("lvm:raid4", "LVM's segment type is one of striped, raid0, raid1, raid5, raid6, raid10"),
    ("lvm:raid1:stripes=2", "raid1 mirrors every member and has no stripes"),
    ("lvm:raid5:stripes=1", "raid5's stripes is a whole number of at least 2, not 1"),
    ("lvm:striped:stripes=two", "at least 1, not two"),
    ("lvm:striped:stripesize=48K", "a power of two of at least 4 KiB"),
    ("lvm:striped:chunk=64K", "lvm arrays take stripes and stripesize, not chunk"),
    ("btrfs:raid7", "btrfs's data profile is one of single, dup, raid0"),
    ("btrfs:raid10:metadata=raid7", "btrfs's metadata profile is one of"),
    ("btrfs", "e.g. btrfs:raid10 or btrfs:data=raid0:metadata=raid1"),
    ("btrfs:raid0:data=raid1", "the data profile is given twice"),
    ("btrfs:raid10:chunk=64K", "btrfs arrays take data and metadata, not chunk"),
])
def test_a_wrong_lvm_or_btrfs_array_says_what_is_allowed(text, words):
    with pytest.raises(ValueError) as raised:
        parse_array_spec(text)
    assert words in str(raised.value)


def test_md_lvm_and_btrfs_arrays_are_one_series():
    specs = parse_array_specs(["md:raid0", "lvm:striped", "btrfs:raid10"])
    assert [c.label for c in Variations(arrays=specs).configurations()] == [
        "md raid0 · clean", "lvm striped · clean", "btrfs raid10 · clean"]


@pytest.mark.parametrize("spec, count, words", [
    (ArraySpec("lvm", "raid6"), 4, "lvm:raid6 takes at least 5 members; --members names 4"),
    (ArraySpec("lvm", "raid10"), 3, "at least 4"),
    (ArraySpec("lvm", "striped", stripes=5), 4, "lvm striped stripes 5 takes 5 members; --members names 4"),
    (ArraySpec("lvm", "raid5", stripes=4), 4, "takes 5 members"),
    (ArraySpec("btrfs", "raid0", metadata="raid1c4"), 3, "btrfs:raid0 takes at least 4 members"),
])
def test_too_few_members_for_lvm_or_btrfs_are_refused(spec, count, words):
    with pytest.raises(ValueError, match=words):
        spec.check_members(count)


def test_the_lvm_commands_use_every_member_unless_stripes_say_fewer():
    pv, vg, lv = create_commands(parse_array_spec("lvm:striped:stripesize=64K"), "disklab-array-1-1", FOUR, False)
    assert pv == ["pvcreate", "--yes", *FOUR] and vg == ["vgcreate", "--yes", "disklab-array-1-1", *FOUR]
    assert lv == ["lvcreate", "--yes", "--type", "striped", "--stripes", "4", "--stripesize", "64k", "--extents",
                  "100%FREE", "--name", "volume", "disklab-array-1-1", *FOUR]
    for text, shape in (("lvm:raid5", ["--stripes", "3"]), ("lvm:raid10", ["--stripes", "2"]),
                        ("lvm:raid1", ["--mirrors", "3"]), ("lvm:raid0", ["--stripes", "4"])):
        assert create_commands(parse_array_spec(text), "g", FOUR, False)[2][4:6] == shape, text
    pv, _, lv = create_commands(parse_array_spec("lvm:striped:stripes=2"), "g", FOUR, False)
    assert pv[2:] == list(FOUR[:2]) and lv[-2:] == list(FOUR[:2])
    assert "--nosync" in create_commands(parse_array_spec("lvm:raid5"), "g", FOUR, True)[2]
    assert "--nosync" not in create_commands(parse_array_spec("lvm:striped"), "g", FOUR, True)[2]


def test_the_btrfs_commands_name_both_profiles_and_every_member():
    spec = parse_array_spec("btrfs:data=raid0:metadata=raid1")
    assert mkfs_command(spec, "disklab-array-1-1", FOUR) == [
        "mkfs.btrfs", "-f", "-L", "disklab-array-1-1", "-d", "raid0", "-m", "raid1", *FOUR]
    assert mount_command(FOUR, "/tmp/m") == [
        "mount", "-t", "btrfs", "-o", ",".join(f"device={m}" for m in FOUR), FOUR[0], "/tmp/m"]


def test_a_dry_run_names_each_kind_s_commands_and_how_it_is_taken_apart():
    steps = dry_run_steps(parse_array_spec("lvm:raid10"), FOUR, "clean")
    assert steps[0].startswith("pvcreate --yes") and steps[-1] == "the raid's initial sync waited for"
    assert "pvremove" in undo_step(parse_array_spec("lvm:raid10"))
    assert dry_run_steps(parse_array_spec("btrfs:raid10"), FOUR, "clean")[0].startswith("mkfs.btrfs -f -L")
    assert "wipefs" in undo_step(parse_array_spec("btrfs:raid10"))
    assert dry_run_steps(parse_array_spec("md:raid5"), FOUR, "clean")[0].startswith("mdadm --create")


@pytest.mark.parametrize("text, state, words", [
    ("lvm:raid5", "degraded", "lvm raid5 is not run degraded: LVM fails a raid leg only when its device is gone"),
    ("lvm:raid5", "rebuilding", "is not run rebuilding"),
    ("lvm:raid6", "assume-clean", "lvcreate refuses --nosync for raid6"),
    ("btrfs:raid10", "assume-clean", "btrfs raid10 is only built clean"),
    ("btrfs:raid1", "degraded", "only built clean"),
    ("md:raid0", "degraded", "md raid0 has no redundancy"),
])
def test_states_an_array_cannot_be_brought_to_are_refused_in_one_line(text, state, words):
    with pytest.raises(UserError, match=words) as raised:
        Variations(arrays=(parse_array_spec(text),), array_states=(state,))
    assert "\n" not in str(raised.value)


def test_lvm_arrays_take_every_state_they_can_reach():
    assert len(Variations(arrays=(parse_array_spec("lvm:raid5"),), array_states=("clean", "assume-clean"))
               .configurations()) == 2


@pytest.mark.parametrize("other", [{"specs": (parse_fs_spec("xfs"),)}, {"levels": (20,)},
                                   {"conditions": (Condition("full", passes=1),)}])
def test_a_btrfs_array_is_the_file_system_and_has_no_device_to_configure(other):
    with pytest.raises(UserError, match="btrfs raid10 is a file system over its members, with no device for --fs"):
        Variations(arrays=(parse_array_spec("btrfs:raid10"),), **other)
    Variations(arrays=(parse_array_spec("lvm:striped"),), **other)


# What btrfs-progs 6.2 printed for a raid10 over the kernel tier's four NVMe namespaces.
DF = """Data, RAID10: total=134217728, used=0
System, RAID10: total=16777216, used=16384
Metadata, RAID10: total=107347968, used=131072
GlobalReserve, single: total=5767168, used=0
"""
USAGE = """Overall:
    Device size:\t\t        2147483648
    Device allocated:\t\t         516685824
    Used:\t\t\t            294912
    Free (estimated):\t\t         949616640\t(min: 949616640)
    Data ratio:\t\t\t              2.00
    Global reserve:\t\t           5767168\t(used: 0)
    Multiple profiles:\t\t                no

Data,RAID10: Size:134217728, Used:0 (0.00%)
   /dev/nvme0n1\t  67108864
"""
SHOW = """Label: 'disklab-array-7-1'  uuid: 5e8ad811-3bc7-4666-9e50-12b2f9f90386
\tTotal devices 4 FS bytes used 147456
\tdevid    1 size 536870912 used 129171456 path /dev/nvme0n1
\tdevid    2 size 536870912 used 129171456 path /dev/nvme1n1
"""


def test_btrfs_reports_are_read_in_bytes():
    assert parse_df(DF)["Data"] == {"profile": "RAID10", "total": 134217728, "used": 0}
    assert parse_df(DF)["GlobalReserve"]["profile"] == "single"
    assert parse_usage(USAGE) == {"Device size": 2147483648, "Device allocated": 516685824, "Used": 294912,
                                  "Free (estimated)": 949616640, "Data ratio": 2.0, "Global reserve": 5767168}
    assert parse_show(SHOW) == [{"devid": 1, "size": 536870912, "used": 129171456, "path": "/dev/nvme0n1"},
                                {"devid": 2, "size": 536870912, "used": 129171456, "path": "/dev/nvme1n1"}]
