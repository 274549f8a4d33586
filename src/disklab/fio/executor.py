"""Run fio as a child process: the seam under which tests can replay captured output."""

import ctypes
import os
import re
import select
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from disklab.system.leftovers import owned_prefix, remove_dead
from disklab.errors import FioError
from disklab.fio.logs import LOG_PREFIX
from disklab.fio.status import STATUS_INTERVAL_S, LiveFigures, StatusReader, final_output

# How long fio gets to stop after SIGTERM before it is killed.
STOP_GRACE_S = 5.0
_PR_SET_PDEATHSIG = 1
# fio's private folders carry the PID of the disklab that made them, so that one killed with SIGKILL is swept later.
FOLDER_PREFIX = "disklab-fio-"


@dataclass(frozen=True)
class FioRun:
    output: str  # fio's JSON output, verbatim
    stderr: str
    returncode: int
    logs: dict[str, str] = field(default_factory=dict)  # fio's log files (log_interval), file name -> text


class Executor(Protocol):
    def run(self, jobfile: str, on_tick: Callable[[], None] | None = None,
            on_status: Callable[[LiveFigures], None] | None = None,
            status_interval_s: float = STATUS_INTERVAL_S) -> FioRun: ...


class SubprocessExecutor:
    """Real fio. Interrupts stop fio cleanly, and fio dies with disklab even on SIGKILL."""

    def __init__(self, fio_path: str, output_format: str = "json+"):
        self.fio_path = fio_path
        self.output_format = output_format

    def run(self, jobfile: str, on_tick: Callable[[], None] | None = None,
            on_status: Callable[[LiveFigures], None] | None = None,
            status_interval_s: float = STATUS_INTERVAL_S) -> FioRun:
        """With on_status, fio writes an interim report every status_interval_s (--status-interval, in ms) that
        on_status gets as the figures of that span; the output kept is fio's final report alone (fio/status.py)."""
        with private_folder() as folder:
            job_path, out_path = Path(folder) / "test.fio", Path(folder) / "output.json"
            job_path.write_text(jobfile)
            command = [self.fio_path, f"--output-format={self.output_format}", f"--output={out_path}", str(job_path)]
            if on_status:
                command.insert(-1, f"--status-interval={round(status_interval_s * 1000)}ms")
            returncode, error_text = run_fio_command(command, folder, _following(out_path, on_tick, on_status))
            output = out_path.read_text() if out_path.exists() else ""
            if on_status:
                output = final_output(output)
            logs = {path.name: path.read_text() for path in sorted(Path(folder).glob(f"{LOG_PREFIX}_*.log"))}
        if returncode != 0 or not output.strip():
            raise FioError(f"fio failed (exit {returncode}): {summarise_stderr(error_text or output)}")
        return FioRun(output=output, stderr=error_text, returncode=returncode, logs=logs)


def _following(out_path: Path, on_tick: Callable[[], None] | None,
               on_status: Callable[[LiveFigures], None] | None) -> Callable[[], None] | None:
    """The tick that also hands on each new interim report of fio's output file."""
    if on_status is None:
        return on_tick
    reader = StatusReader(out_path)

    def tick() -> None:
        figures = reader.poll()
        if figures is not None:
            on_status(figures)
        if on_tick:
            on_tick()

    return tick


@contextmanager
def private_folder() -> Iterator[str]:
    """A folder of fio's own for one run (job file, output, logs), removed after it; those of dead disklabs too."""
    remove_dead(tempfile.gettempdir(), FOLDER_PREFIX)
    with tempfile.TemporaryDirectory(prefix=owned_prefix(FOLDER_PREFIX)) as folder:
        yield folder


def run_fio_command(command: list[str], folder: str, on_tick: Callable[[], None] | None) -> tuple[int, str]:
    """fio run to its end (or stopped on an interrupt) in `folder`; its exit code and its stderr."""
    with open(Path(folder) / "stderr", "w+") as stderr:
        # Own session: the terminal's Ctrl-C reaches disklab only, which then stops fio itself.
        # Working directory in the private folder: fio writes its log files (log_interval) there.
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
            preexec_fn=die_with_parent, cwd=folder,
        )
        try:
            _wait_ticking(process, on_tick)
        except BaseException:
            stop_process(process)
            raise
        stderr.seek(0)
        return process.returncode, stderr.read()


def _wait_ticking(process: subprocess.Popen, on_tick: Callable[[], None] | None) -> None:
    """Ticks every 0.2 s and returns the moment fio exits: the kernel wakes a poll on the process's pidfd, where
    Popen.wait(timeout) would sleep in steps of up to 50 ms."""
    exited = os.pidfd_open(process.pid)
    try:
        poller = select.poll()
        poller.register(exited, select.POLLIN)
        while process.poll() is None:
            if on_tick:
                on_tick()
            poller.poll(200)
    finally:
        os.close(exited)


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        # fio leads its own process group (own session): take down anything it forked too.
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


# fio's job error line: "fio: pid=1, err=1/file:filesetup.c:805, func=open(/x), error=Operation not p" (fio cuts it).
_JOB_ERROR = re.compile(r"err=(?P<errno>\d+)/file:\S+, func=(?P<func>[^(,]+)(?:\((?P<arg>.*)\))?, error=")


def summarise_stderr(text: str) -> str:
    """fio's most telling line: a job error spelled out from its errno, else the first error line, else the last."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "no message"
    for line in lines:
        match = _JOB_ERROR.search(line)
        if match:
            what = f"{match['func'].strip()} {match['arg']}" if match["arg"] else match["func"].strip()
            return f"{what}: {os.strerror(int(match['errno']))}"
    for line in lines:
        if "error" in line.lower() or line.startswith("fio:"):
            return line
    return lines[-1]


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """In a child before exec: the kernel sends it `signum` when disklab dies, even by SIGKILL."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signum)
    # The parent may have died between fork and prctl.
    if os.getppid() == 1:
        os._exit(1)
