"""Files written for the user: whole or not at all, never over a device node, a FIFO or a folder, and nothing left
behind by a failure or (at the next write) by a killed disklab."""

import os
import signal
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.errors import UserError
from disklab.system.outputs import PARTIAL_SUFFIX, checked_output, whole_file, write_whole
from disklab.system.signals import heeded, interrupt_on_termination
from tests.unit.test_leftovers import dead_pid

FIXTURE = Path(__file__).parents[1] / "fixtures" / "fio" / "import-two-jobs.json.json"


def null_device_node(folder: Path) -> Path:
    """A private character device with /dev/null's numbers: what a mistyped `-o /dev/null` would meet."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = folder / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return node


def test_a_new_file_is_written_whole(tmp_path: Path) -> None:
    write_whole(tmp_path / "out.txt", "text\n")
    assert (tmp_path / "out.txt").read_text() == "text\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_a_fifo_is_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="exists and is not a regular file"):
        write_whole(fifo, "text")
    assert fifo.is_fifo() and os.listdir(tmp_path) == ["out"]


def test_a_device_node_is_refused_and_stays_a_node(tmp_path: Path) -> None:
    node = null_device_node(tmp_path)
    with pytest.raises(UserError, match="is not a regular file"):
        write_whole(node, b"bytes")
    assert node.is_char_device()


def test_a_folder_and_a_dangling_link_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is a folder"):
        checked_output(tmp_path)
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises(UserError, match="symbolic link to nothing"):
        write_whole(tmp_path / "link", "text")
    assert not (tmp_path / "nowhere").exists()


def test_a_link_to_a_regular_file_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to("real.txt")
    write_whole(tmp_path / "link.txt", "new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"


def test_a_failure_in_the_block_leaves_the_old_file_and_no_partial(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError), whole_file(target) as out:
        out.write("half of the new")
        raise RuntimeError("the writer failed")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]


def test_a_file_written_again_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o600)
    write_whole(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_missing_folder_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"cannot write .*/missing/out.txt: No such file or directory"):
        write_whole(tmp_path / "missing" / "out.txt", "text")


def test_the_partial_a_killed_writer_left_is_removed_by_the_next_write(tmp_path: Path) -> None:
    dead = tmp_path / f".out.txt.{dead_pid()}{PARTIAL_SUFFIX}"
    live = tmp_path / f".out.txt.{os.getppid()}{PARTIAL_SUFFIX}"  # a live process's: left alone
    dead.write_text("half")
    live.write_text("half")
    write_whole(tmp_path / "out.txt", "whole")
    assert sorted(os.listdir(tmp_path)) == sorted(["out.txt", live.name])


@pytest.mark.parametrize("command", [
    ["runs", "--format", "csv"],
    ["report", "1"],
])
def test_commands_refuse_a_fifo_or_device_output(tmp_path: Path, command: list[str]) -> None:
    runner = CliRunner()
    store = ["--db", str(tmp_path / "results.db")]
    assert runner.invoke(cli, [*store, "import", str(FIXTURE)]).exit_code == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for output in (fifo, *([null_device_node(tmp_path)] if os.geteuid() == 0 else [])):
        result = runner.invoke(cli, [*store, *command, "-o", str(output)])
        assert result.exit_code == 2, result.output
        assert "is not a regular file" in result.output
    assert fifo.is_fifo()


def test_a_signal_ignored_at_start_stays_ignored() -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert heeded(signal.SIGHUP, signal.SIGTERM) == (signal.SIGTERM,)
        with interrupt_on_termination():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_IGN, signal.SIG_DFL)
    finally:
        signal.signal(signal.SIGHUP, previous)
