"""Bad input to the real `disklab` command: a non-zero exit code and one `disklab: error:` line, never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from disklab.env.doctor import _store_check
from disklab.store.file_system import StoreFileSystem
from disklab.system.mounts import mount_of
from tests.integration.conftest import (
    COMMAND_TIMEOUT_S, NEEDS_FIO, Disklab, error_lines, needs, require, wait_for,
)
from tests.integration.sshfs import NEEDS_SSHFS, sshfs_mount
from tests.run_kinds import FAILING_SUITE, WRITE_FAILS

pytestmark = pytest.mark.integration

SMALL_RUN = ("--runtime", "1", "--size", "16M")


def assert_one_error(result: subprocess.CompletedProcess[str], exit_code: int, *fragments: str) -> str:
    """Refused before anything ran: the error is the whole of stderr."""
    assert result.returncode == exit_code, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and error_lines(result.stderr) == lines, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def test_fio_missing(disklab: Disklab, tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "disklab", "run", "quick", "--target", str(target), *SMALL_RUN],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, env={**disklab.env, "PATH": str(empty)}, timeout=120,
    )

    assert_one_error(result, 4, "fio not found", "install")
    assert disklab.runs() == []
    assert list(target.iterdir()) == []


def test_unknown_suite(disklab: Disklab, tmp_path: Path) -> None:
    result = disklab("run", "no-such-suite", "--target", str(tmp_path), *SMALL_RUN)

    assert_one_error(result, 2, "unknown suite 'no-such-suite'", "quick")


@pytest.mark.parametrize(
    ("group_line", "field"),
    [
        ('bs = "huge"', "bs"),
        ("iodepth = 0", "iodepth"),
        ("block_size = 4096", "block_size"),  # blocksize is fio's word, accepted: a misspelling of it is not
        ('direction = ["read", "sideways"]', "direction"),
    ],
)
def test_malformed_suite_file_names_the_file_and_the_field(
    disklab: Disklab, tmp_path: Path, group_line: str, field: str
) -> None:
    suite = tmp_path / "broken.toml"
    suite.write_text(f'name = "broken"\n\n[[group]]\nname = "g"\n{group_line}\n')

    line = assert_one_error(disklab("run", str(suite), "--target", str(tmp_path), *SMALL_RUN), 2, str(suite))
    assert f"{field}:" in line or f"'{field}'" in line, line
    assert disklab.runs() == []


def test_target_in_a_directory_that_does_not_exist(disklab: Disklab, tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "dir"

    assert_one_error(disklab("run", "quick", "--target", str(missing), *SMALL_RUN), 2, str(missing), "does not exist")
    assert not missing.parent.exists()


def test_a_target_that_does_not_exist_is_refused_naming_the_fix(disklab: Disklab) -> None:
    """A typo must not silently become a new test file on the parent's file system (issue 23)."""
    missing = f"/var/tmp/does-not-exist-{os.getpid()}"
    assert not Path(missing).exists()

    assert_one_error(disklab("run", "quick", "--target", missing, "--repeat", "1", *SMALL_RUN), 2,
                     f"target {missing} does not exist: create the directory, or give --new-file to make a test file "
                     "at that path")
    assert not Path(missing).exists() and disklab.runs() == []


def test_missing_directory_written_as_a_directory_is_not_made_a_file(disklab: Disklab, tmp_path: Path) -> None:
    missing = f"{tmp_path / 'missing'}/"

    assert_one_error(disklab("run", "quick", "--target", missing, "--dry-run", *SMALL_RUN), 2, "does not exist")


def test_not_enough_space(disklab: Disklab, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()

    result = disklab("run", "quick", "--target", str(target), "--size", "100T")

    assert_one_error(result, 2, "not enough space", "--size")
    assert list(target.iterdir()) == []
    assert disklab.runs() == []


def test_corrupt_store(disklab: Disklab) -> None:
    disklab.home.mkdir()
    garbage = b"this is not an SQLite database\n" * 512
    disklab.store_path.write_bytes(garbage)

    assert_one_error(disklab("runs"), 5, "corrupt", str(disklab.store_path))
    assert disklab.store_path.read_bytes() == garbage, "disklab must not overwrite a store it cannot read"


def test_show_a_run_that_does_not_exist(disklab: Disklab) -> None:
    assert_one_error(disklab("show", "999"), 2, "no run 999")


def test_existing_file_is_not_overwritten_without_destroy_data(disklab: Disklab, tmp_path: Path) -> None:
    existing = tmp_path / "precious.bin"
    content = os.urandom(1024 * 1024)
    existing.write_bytes(content)

    assert_one_error(disklab("run", "quick", "--target", str(existing), *SMALL_RUN), 3, str(existing), "--destroy-data")
    assert existing.read_bytes() == content
    assert disklab.runs() == []




@pytest.fixture
def immutable_file(tmp_path: Path):
    """A 16 MiB file the kernel refuses to open for writing, even for root (chattr +i)."""
    require("chattr")
    path = tmp_path / "locked.bin"
    path.write_bytes(os.urandom(16 * 1024**2))
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip(f"the file system of {path} has no immutable attribute")
    yield path
    subprocess.run(["chattr", "-i", str(path)], check=True)


@NEEDS_FIO
def test_fio_failing_during_a_run(disklab: Disklab, tmp_path: Path, immutable_file: Path) -> None:
    """The first test reads the file; the second writes it, and fio fails opening it (EPERM)."""
    suite = tmp_path / "failing.toml"
    suite.write_text(FAILING_SUITE.format(failing=WRITE_FAILS))

    result = disklab("run", str(suite), "--target", str(immutable_file), "--destroy-data")

    assert result.returncode == 4, result.stderr
    assert "Traceback" not in result.stderr
    errors = error_lines(result.stderr)
    assert len(errors) == 1 and result.stderr.splitlines()[-1] == errors[0], result.stderr
    assert errors[0].startswith("disklab: error: test 'fails': fio failed") and "Operation not permitted" in errors[0]
    (run,) = disklab.runs()
    assert run["status"] == "failed"
    assert run["error"] == errors[0].removeprefix("disklab: error: ")
    (stored,) = disklab.tests(run["id"])  # the test before the failing one is kept
    assert stored["label"] == "works"
    assert [m["direction"] for m in disklab.metrics(stored["id"])] == ["read"]
    assert immutable_file.stat().st_size == 16 * 1024**2


def test_a_block_larger_than_the_data_set_is_refused_before_anything_runs(disklab: Disklab, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    suite = tmp_path / "too-big.toml"
    suite.write_text(FAILING_SUITE.format(failing='bs = "32MiB"'))

    result = disklab("run", str(suite), "--target", str(target))

    assert result.returncode == 2, result.stderr
    (error,) = error_lines(result.stderr)
    assert "'fails'" in error and "32MiB" in error and "--size" in error
    assert disklab.runs() == []
    assert list(target.iterdir()) == []


NEEDS_MOUNT = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("mount") is None,
                                 reason="mounting a small tmpfs needs root")
FIO_JSON = Path(__file__).parents[1] / "fixtures" / "fio" / "import-two-jobs.jsonplus.json"


@pytest.fixture
def tmpfs(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """A 2 MiB tmpfs of our own: it can be filled to the last byte and remounted read-only."""
    mount_point = tmp_path / "tmpfs"
    mount_point.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "disklab-test", str(mount_point)], check=True)
    request.addfinalizer(lambda: subprocess.run(["umount", "-l", str(mount_point)], check=False))
    return mount_point


def _store_with_one_run(disklab: Disklab, store: Path) -> None:
    result = disklab("--db", str(store), "import", str(FIO_JSON))
    assert result.returncode == 0, result.stderr


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:  # every last block
        while os.write(descriptor, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(descriptor)
    return filler


@NEEDS_MOUNT
def test_a_store_on_read_only_media_lists_and_shows_but_does_not_store(disklab: Disklab, tmpfs: Path) -> None:
    store = tmpfs / "results.db"
    _store_with_one_run(disklab, store)
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)

    for command in (("runs",), ("show", "1"), ("show", "1", "-f", "json"), ("report", "1", "-o", "-")):
        result = disklab("--db", str(store), *command)
        assert result.returncode == 0 and result.stderr.count("disklab: error") == 0, (command, result.stderr)
    assert_one_error(disklab("--db", str(store), "import", str(FIO_JSON)), 5, "is read-only", str(store))


@needs(NEEDS_SSHFS)
def test_a_store_on_sshfs_whose_locks_stay_on_this_machine_lists_and_shows_but_does_not_store(
        disklab: Disklab, tmp_path: Path, children, request) -> None:
    point = sshfs_mount(tmp_path / "sshfs", children, request)
    store = point / "results.db"
    _store_with_one_run(disklab, tmp_path / "results.db")  # made on a local disk, as a user would before moving it
    shutil.copy(tmp_path / "results.db", store)
    for command in (("runs",), ("show", "1")):
        result = disklab("--db", str(store), *command)
        assert result.returncode == 0 and result.stderr == "", (command, result.stderr)
    assert_one_error(disklab("--db", str(store), "import", str(FIO_JSON)), 5,
                     f"the results store {store} is on fuse.sshfs (", "whose protocol (SFTP) has no locks",
                     "nothing is stored there: keep the store on a local disk (--store FILE, or DISKLAB_HOME) or use "
                     "a PostgreSQL store (--store postgresql://...)")
    doctor = _store_check(store)
    assert (doctor.status, doctor.detail) == ("fail", str(StoreFileSystem(mount_of(str(point))).refusal(store)))


@NEEDS_MOUNT
def test_a_full_file_system_under_the_store_says_so(disklab: Disklab, tmpfs: Path) -> None:
    store = tmpfs / "results.db"
    _store_with_one_run(disklab, store)
    _fill(tmpfs)
    assert_one_error(disklab("--db", str(store), "import", str(FIO_JSON)), 5, "the store's file system is full",
                     str(store))
    assert disklab("--db", str(store), "runs").returncode == 0  # reading needs no space


@NEEDS_MOUNT
@NEEDS_FIO
def test_a_run_stopped_by_a_full_store_is_listed_and_marked_interrupted_once_there_is_room(
        disklab: Disklab, tmpfs: Path, tmp_path: Path) -> None:
    store = tmpfs / "results.db"
    _store_with_one_run(disklab, store)
    run = disklab.start("--db", str(store), "run", "quick", "--target", str(tmp_path), "--runtime", "3s",
                        "--size", "4m")
    assert wait_for(lambda: disklab("--db", str(store), "runs").stdout.count("running") == 1, seconds=COMMAND_TIMEOUT_S)
    filler = _fill(tmpfs)
    _, stderr = run.communicate(timeout=COMMAND_TIMEOUT_S)
    assert run.returncode == 5 and "the store's file system is full" in stderr, stderr

    for command in (("runs",), ("show", "2")):  # its status cannot be written yet: still listed, and shown
        result = disklab("--db", str(store), *command)
        assert result.returncode == 0 and "disklab: error" not in result.stderr, (command, result.stderr)
    filler.unlink()
    listed = disklab("--db", str(store), "runs")
    assert listed.returncode == 0 and "interrupted" in listed.stdout and "running" not in listed.stdout, listed.stdout


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "/dev/urandom"])
def test_special_files_never_hang_or_exhaust_memory(disklab: Disklab, tmp_path: Path, special: str) -> None:
    path = tmp_path / "suite.toml" if special == "fifo" else Path(special)
    if special == "fifo":
        os.mkfifo(path)
    assert_one_error(disklab("run", str(path), "--dry-run"), 2, "is not a regular file")
    assert_one_error(disklab("run", "quick", "--dry-run", "--target", str(tmp_path), "--hosts", f"@{path}"), 2,
                     "hosts file", "is not a regular file")
    assert_one_error(disklab("import", str(path)), 2, "is not a regular file")


def test_unwritable_outputs_of_every_writing_command(disklab: Disklab, tmp_path: Path) -> None:
    _store_with_one_run(disklab, disklab.store_path)
    for command in (("show", "-f", "csv", "-o", "/nonexistent/x.csv"), ("show", "--jobfile", "-o", "/nonexistent/x"),
                    ("capacity", "show", "4 x sata-ssd-1.6t raid5", "-f", "json", "-o", "/nonexistent/x")):
        assert_one_error(disklab(*command), 2, "cannot write /nonexistent/x")
    assert_one_error(disklab("export", "quick", "--fio", "/proc/nope"), 2, "cannot write job files to /proc/nope")
    assert_one_error(disklab("export", "quick", "--fio", "-"), 2, "job files go to a folder")


def test_doctor_on_an_unwritable_target_is_a_failing_check(disklab: Disklab) -> None:
    result = disklab("doctor", "--target", "/proc")
    assert result.returncode in (0, 1) and "internal error" not in result.stderr, result.stderr
