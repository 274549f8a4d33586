import os
import socket

from pathlib import Path

import pytest

from disklab.errors import SafetyError, UserError
from disklab.targets.target import (
    check_target, keep_test_file, remove_stale_test_files, remove_test_file, resolve_target,
)


def test_a_directory_gets_a_test_file_named_for_this_process(tmp_path):
    target = resolve_target(str(tmp_path))
    assert target.kind == "directory" and target.disklab_owns_file
    assert target.test_path == str(tmp_path / f"disklab-{socket.gethostname()}-{os.getpid()}.testfile")


def test_a_new_file_is_made_and_removed_an_existing_one_is_kept(tmp_path):
    new = resolve_target(str(tmp_path / "new.dat"))
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
