"""Shared by the integration tests: real loop devices and mounts, the real `disklab` command, its store.

Everything a test attaches, mounts or starts is released in a finalizer, even when the test fails.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.children import Children

IMAGE_BYTES = 64 * 1024 * 1024
# Generous: a 2-core CI machine running other tests may be many times slower than a laptop.
COMMAND_TIMEOUT_S = 300

NEEDS_LOOP_DEVICES = [
    pytest.mark.skipif(os.geteuid() != 0, reason="attaching loop devices needs root"),
    pytest.mark.skipif(shutil.which("losetup") is None, reason="losetup (util-linux) is not installed"),
    pytest.mark.skipif(shutil.which("blkid") is None, reason="blkid (util-linux) is not installed"),
]
NEEDS_FIO = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def needs(marks: list) -> Callable:
    """Each skip mark of a list (NEEDS_LOOP_DEVICES ...) on one test."""
    def marked(test: Callable) -> Callable:
        for mark in marks:
            test = mark(test)
        return test
    return marked


def run(*command: str) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL).stdout


def require(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")


def wait_for(condition: Callable[[], bool], seconds: float = 3.0, interval: float = 0.05) -> bool:
    """Poll until `condition` holds or the deadline passes; the deadline bounds a hang, it measures nothing."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True


def partition_dirs(device: str) -> list[Path]:
    disk = Path("/sys/class/block") / Path(device).name
    return [child for child in disk.iterdir() if (child / "partition").is_file()]


@pytest.fixture
def attach_loop(tmp_path: Path, request: pytest.FixtureRequest, children: Children) -> Callable[..., str]:
    """Attach a fresh sparse image as a loop device; always detached afterwards, even on failure, once what the test
    started (a capture tracing it, a run on it) is stopped."""

    def attach(
        image_name: str = "disk.img", *, size_bytes: int = IMAGE_BYTES, losetup_options: tuple[str, ...] = ()
    ) -> str:
        image = tmp_path / image_name
        if not image.exists():
            with image.open("wb") as handle:
                handle.truncate(size_bytes)
        attached = subprocess.run(
            ["losetup", "--find", "--show", *losetup_options, str(image)], capture_output=True, text=True
        )
        if attached.returncode != 0:
            pytest.skip(f"cannot attach a loop device here: {attached.stderr.strip()}")
        device = attached.stdout.strip()
        request.addfinalizer(lambda: (children.end_all(), detach(device)))
        return device

    return attach


def detach(device: str) -> None:
    # Partitions added by partx (BLKPG) outlive `losetup -d` unless they are deleted first.
    if partition_dirs(device):
        subprocess.run(["partx", "-d", device], capture_output=True)
    subprocess.run(["losetup", "-d", device], check=True, capture_output=True)


@pytest.fixture
def mount(request: pytest.FixtureRequest, tmp_path: Path, children: Children) -> Callable[[str], Path]:
    """Mount a device on a fresh directory; unmounted afterwards (once what the test started is stopped: a run's fio
    would hold it busy), before its loop device is detached."""

    def mount_device(device: str) -> Path:
        mount_point = tmp_path / f"mnt-{Path(device).name}"
        mount_point.mkdir()
        run("mount", device, str(mount_point))
        request.addfinalizer(lambda: (children.end_all(), run("umount", str(mount_point))))
        return mount_point

    return mount_device


def disklab_command() -> list[str]:
    """The installed console script beside this interpreter, as a user runs it."""
    script = Path(sys.executable).with_name("disklab")
    return [str(script)] if script.exists() else [sys.executable, "-m", "disklab"]


@dataclass(frozen=True)
class Disklab:
    """The real `disklab` command with a private store; the store is read with sqlite3 directly."""

    home: Path
    env: dict[str, str]
    children: Children  # what `start` started, stopped at the test's teardown

    @property
    def store_path(self) -> Path:
        return self.home / "results.db"

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*disklab_command(), *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
            env=env or self.env, timeout=COMMAND_TIMEOUT_S,
        )

    def start(self, *args: str, env: dict[str, str] | None = None,
              under: tuple[str, ...] = ()) -> subprocess.Popen[str]:
        """Running on while the test signals it: it takes SIGINT as Ctrl-C; stopped at teardown if it still runs.
        `under` is a command that execs disklab (nohup), so the process is disklab's."""
        return self.children.start(
            [*under, *disklab_command(), *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env or self.env,
        )

    def query(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        """Read-only, so that polling never creates a store or takes a write lock from the run being watched."""
        if not self.store_path.exists():
            return []
        with closing(sqlite3.connect(f"file:{self.store_path}?mode=ro", uri=True, timeout=10)) as conn:
            conn.row_factory = sqlite3.Row
            return conn.execute(sql, params).fetchall()

    def count_tests(self, run_id: int | None = None) -> int:
        """For polling: 0 while the store or its schema does not exist yet."""
        try:
            rows = self.query(
                "SELECT COUNT(*) FROM tests" + (" WHERE run_id = ?" if run_id is not None else ""),
                (run_id,) if run_id is not None else (),
            )
        except sqlite3.Error:
            return 0
        return rows[0][0] if rows else 0

    def runs(self) -> list[sqlite3.Row]:
        return self.query("SELECT * FROM runs ORDER BY id")

    def tests(self, run_id: int) -> list[sqlite3.Row]:
        return self.query("SELECT * FROM tests WHERE run_id = ? ORDER BY seq", (run_id,))

    def metrics(self, test_id: int) -> list[sqlite3.Row]:
        return self.query("SELECT * FROM metrics WHERE test_id = ? ORDER BY direction", (test_id,))


@pytest.fixture
def disklab(tmp_path: Path, children: Children) -> Disklab:
    home = tmp_path / "disklab-home"
    # Wide tables: no cell wraps. One pass per test unless a test asks for more (or unsets DISKLAB_REPEAT to get the
    # default passes): most tests check what a run does, not its spread, and five passes would make each 5x longer.
    env = {**os.environ, "DISKLAB_HOME": str(home), "COLUMNS": "250", "DISKLAB_REPEAT": "1"}
    env.pop("DISKLAB_DB", None)
    return Disklab(home=home, env=env, children=children)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("disklab: error:")]


def table_rows(text: str) -> list[list[str]]:
    """The cells of each body row of a rich table as printed to a pipe."""
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]
