import os
import posixpath
import re
import shutil
import socket
import subprocess
import tempfile

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from disklab.errors import SafetyError, UserError
from disklab.system.mounts import mount_of, parse_fstab, read_fstab
from disklab.targets.target import (
    check_target, keep_test_file, leave_test_files, remove_stale_test_files, remove_test_file, resolve_target,
)


def test_a_directory_gets_a_test_file_named_for_this_process(tmp_path):
    target = resolve_target(str(tmp_path))
    assert target.kind == "directory" and target.disklab_owns_file
    assert target.test_path == str(tmp_path / f"disklab-{socket.gethostname()}-{os.getpid()}.testfile")


def test_a_new_file_is_made_and_removed_an_existing_one_is_kept(tmp_path):
    new = resolve_target(str(tmp_path / "new.dat"), new_file=True)
    assert new.kind == "file" and new.disklab_owns_file
    existing = tmp_path / "old.dat"
    existing.write_bytes(b"x" * 8192)
    old = resolve_target(str(existing))
    assert not old.disklab_owns_file and old.capacity_bytes == 8192
    remove_test_file(old)
    assert existing.exists()


def test_missing_targets_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        resolve_target(str(tmp_path / "no" / "such" / "dir"))


def test_a_missing_device_is_refused_never_made_as_a_file_in_dev():
    """A typo or an absent disk (/dev/sdz) must not become a test file among the device nodes."""
    missing = next(f"/dev/sd{letter}{n}" for n in range(1000) for letter in "xyz" if not Path(f"/dev/sd{letter}{n}").exists())
    with pytest.raises(UserError, match="no such device"):
        resolve_target(missing)
    assert not Path(missing).exists()


def test_writing_over_an_existing_file_needs_consent(tmp_path):
    existing = tmp_path / "data.bin"
    existing.write_bytes(b"precious")
    target = resolve_target(str(existing))
    with pytest.raises(SafetyError, match="--destroy-data"):
        check_target(target, 4096, writes=True, destroy_data=False, force=False)
    check_target(target, 4096, writes=False, destroy_data=False, force=False)
    check_target(target, 4096, writes=True, destroy_data=True, force=False)


def test_not_enough_space_states_the_numbers(tmp_path):
    target = resolve_target(str(tmp_path))
    with pytest.raises(UserError, match=r"not enough space .* needs 100TiB .* is free; use --size"):
        check_target(target, 100 * 1024**4, writes=True, destroy_data=False, force=False)


def test_the_free_space_is_a_human_size(tmp_path):
    """It said '81371508KiB is free'."""
    target = resolve_target(str(tmp_path))
    with pytest.raises(UserError) as refused:
        check_target(target, 100 * 1024**4, writes=True, destroy_data=False, force=False)
    free = re.search(r", (\S+) is free", str(refused.value)).group(1)
    assert re.fullmatch(r"\d{1,4}(\.\d)?[KMGTPE]?i?B", free), free


def test_stale_files_of_dead_processes_are_removed_others_kept(tmp_path):
    host = socket.gethostname()
    stale = tmp_path / f"disklab-{host}-2147483646.testfile"
    live = tmp_path / f"disklab-{host}-{os.getpid()}.testfile"
    foreign = tmp_path / "disklab-otherhost-2147483646.testfile"
    kept = tmp_path / "disklab-run7.testfile"
    for path in (stale, live, foreign, kept):
        path.write_bytes(b"")
    assert remove_stale_test_files(str(tmp_path)) == [str(stale)]
    assert not stale.exists() and live.exists() and foreign.exists() and kept.exists()


def test_kept_files_are_renamed_out_of_stale_clean_up(tmp_path):
    target = resolve_target(str(tmp_path))
    open(target.test_path, "wb").close()
    os.mkdir(target.file_set_dir)
    kept = keep_test_file(target, 12)
    assert kept == [str(tmp_path / "disklab-run12.testfile"), str(tmp_path / "disklab-run12.files")]
    assert all(os.path.exists(k) for k in kept)
    assert remove_stale_test_files(str(tmp_path)) == []


def test_file_sets_are_removed_with_the_test_file_and_as_stale_leftovers(tmp_path):
    target = resolve_target(str(tmp_path))
    os.mkdir(target.file_set_dir)
    (tmp_path / os.path.basename(target.file_set_dir) / "set.0.0").write_bytes(b"x")
    remove_test_file(target)
    assert list(tmp_path.iterdir()) == []
    stale = tmp_path / f"disklab-{socket.gethostname()}-2147483646.files"
    stale.mkdir()
    (stale / "f").write_bytes(b"x")
    assert remove_stale_test_files(str(tmp_path)) == [str(stale)]
    assert not stale.exists()


def test_a_test_file_that_cannot_be_removed_is_left_in_place_in_a_line(tmp_path):
    """As on a disk that failed under the run, whose file system went read-only: an immutable folder (root too is
    refused) keeps the file, and the line says so instead of an error hiding the run's own."""
    target = resolve_target(str(tmp_path))
    Path(target.test_path).write_bytes(b"x")
    if subprocess.run(["chattr", "+i", str(tmp_path)], capture_output=True).returncode != 0:
        pytest.skip(f"the file system of {tmp_path} has no immutable attribute")
    try:
        assert leave_test_files(target, keep_file=False, run_id=3) == [
            f"test file {target.test_path} left in place (Operation not permitted): the next run in that folder "
            "removes it"]
        assert leave_test_files(target, keep_file=True, run_id=3)[0].startswith(f"test file {target.test_path} left")
    finally:
        subprocess.run(["chattr", "-i", str(tmp_path)], check=True)
    assert leave_test_files(target, keep_file=False, run_id=3) == [] and list(tmp_path.iterdir()) == []


def test_a_missing_path_is_refused_with_the_fix_unless_a_new_file_is_asked_for(tmp_path):
    """A typo (/var/tmp/tpyo) or a disk not mounted must never silently become a test file on the disk beneath."""
    missing = tmp_path / "typo"
    with pytest.raises(UserError, match=f"^target {missing} does not exist: create the directory, or give --new-file "
                                        "to make a test file at that path$"):
        resolve_target(str(missing))
    assert not missing.exists()
    with pytest.raises(UserError, match="nor does its folder"):
        resolve_target(str(tmp_path / "no" / "file.dat"), new_file=True)
    with pytest.raises(UserError, match="already exists: leave out --new-file"):
        resolve_target(str(tmp_path), new_file=True)


FSTAB = """\
# /etc/fstab: static file system information.
#
# <file system>  <mount point>  <type>  <options>  <dump>  <pass>
UUID=0a1b2c3d-0000-4000-8000-000000000001  /  ext4  errors=remount-ro  0  1
   # an indented comment {data}
/dev/sdb1\t{data}/\text4\tdefaults,nofail\t0\t2
LABEL=big\\040disk  {spaced}  xfs  noauto,user  0  0
/swapfile  none  swap  sw  0  0
UUID=0a1b2c3d-0000-4000-8000-000000000002  swap  swap  defaults  0  0
tmpfs  {mounted}  tmpfs  defaults  0  0
broken-line-with-one-field
"""


@pytest.fixture
def fstab(tmp_path):
    """A fake fstab naming real, unmounted directories of tmp_path, and the mount that really holds tmp_path."""
    data, spaced = tmp_path / "data", tmp_path / "big disk"
    (data / "sub").mkdir(parents=True)
    spaced.mkdir()
    path = tmp_path / "fstab"
    text = FSTAB.format(data=data, spaced=str(spaced).replace(" ", "\\040"), mounted=mount_of(str(tmp_path)).mount_point)
    path.write_text(text)
    return path


def test_fstab_is_parsed_as_mount_reads_it(fstab, tmp_path):
    entries = parse_fstab(fstab.read_text())
    assert [(e.source, e.mount_point, e.fs_type) for e in entries] == [
        ("UUID=0a1b2c3d-0000-4000-8000-000000000001", "/", "ext4"),
        ("/dev/sdb1", str(tmp_path / "data"), "ext4"),  # the trailing slash normalised away
        ("LABEL=big disk", str(tmp_path / "big disk"), "xfs"),  # \040 is a space
        ("tmpfs", mount_of(str(tmp_path)).mount_point, "tmpfs"),
    ]  # comments, swap, 'none' and the one-field line left out
    assert entries[2].options == ("noauto", "user")
    assert read_fstab(str(tmp_path / "no-fstab")) == []


def test_a_mount_point_of_fstab_with_nothing_mounted_is_refused_with_the_reason(fstab, tmp_path):
    data = tmp_path / "data"
    holder = mount_of(str(tmp_path))
    with pytest.raises(UserError, match=rf"^target {data} is a mount point in {fstab} \(/dev/sdb1\) but nothing is "
                                        r"mounted there: it would test .*; mount it first \('mount "):
        resolve_target(str(data), fstab=str(fstab))
    with pytest.raises(UserError, match=f"target {data}/sub is under {data}, a mount point in {fstab}"):
        resolve_target(str(data / "sub"), fstab=str(fstab))
    with pytest.raises(UserError, match="where nothing is mounted"):
        resolve_target(str(data / "new.dat"), new_file=True, fstab=str(fstab))
    with pytest.raises(UserError, match=r"\(LABEL=big disk, noauto\) but nothing is mounted there"):
        resolve_target(str(tmp_path / "big disk"), fstab=str(fstab))
    named = "the root disk" if holder.mount_point == "/" else f"{holder.fs_type} mounted at {holder.mount_point}"
    with pytest.raises(UserError, match=f"it would test {named}"):
        resolve_target(str(data), fstab=str(fstab))
    # A directory of a file system that is mounted, as fstab says, is the disk meant.
    assert resolve_target(str(tmp_path), fstab=str(fstab)).kind == "directory"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a folder in /mnt needs root")
def test_an_empty_folder_under_mnt_on_the_root_file_system_is_warned_of_naming_the_root_disk():
    root = mount_of("/")
    if mount_of("/mnt").mount_point != "/":
        pytest.skip("/mnt is not on the root file system here")
    folder = Path(tempfile.mkdtemp(prefix="disklab-test-", dir="/mnt"))
    try:
        (warning,) = resolve_target(str(folder)).warnings
        assert warning == (f"warning: {folder} is an empty directory on the root file system: if a disk belongs "
                           f"there, it is not mounted, and this run measures the root disk ({root.source}); mount "
                           "the disk first to test it")
        assert resolve_target(str(folder / "t.dat"), new_file=True).warnings == (warning,)
        (folder / "data").write_bytes(b"x")
        assert resolve_target(str(folder)).warnings == ()
    finally:
        shutil.rmtree(folder)


def test_folders_elsewhere_get_no_warning(tmp_path):
    assert resolve_target(str(tmp_path)).warnings == ()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(["/", "/mnt//x/", "UUID=1", "\\040", "\\011", "\\134", "\\000", "\\777", "#", "none",
                              "swap", "nfs", "\t", " ", "noauto", "defaults", ".", "..", "/./a/../b"]),
             max_size=7).map(" ".join),
), max_size=8).map("\n".join))
def test_any_fstab_parses_to_absolute_normal_mount_points_and_never_breaks_a_target(tmp_path, text):
    for entry in parse_fstab(text):
        assert entry.mount_point == posixpath.normpath("/" + entry.mount_point.lstrip("/"))
        assert entry.mount_point.startswith("/") and entry.fs_type != "swap"
    path = tmp_path / "fuzzed-fstab"
    path.write_text(text, errors="surrogateescape")
    try:
        resolve_target(str(tmp_path), fstab=str(path))
    except UserError as refused:
        assert "a mount point in" in str(refused)


@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=30))
def test_an_escaped_mount_point_reads_back_as_written(name):
    escaped = "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in name)
    (entry,) = parse_fstab(f"/dev/sdb1 /mnt/{escaped} ext4 defaults 0 2\n")
    assert entry.mount_point == posixpath.normpath("/mnt/" + name).replace("//", "/")
