"""Before a run: is each host's fio server reachable, is its fio the local fio's version, is the target there?

Asked through fio only: a tiny job sent with `fio --client` makes the server introduce itself (its version) and,
with a target, writes and unlinks one 4 KiB file in the target directory on that host.
"""

import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from disklab.errors import FioError
from disklab.hosts.client import server_complaint
from disklab.hosts.hosts import Host

# A server that neither answers nor refuses (a dropped route) would keep fio's connect waiting for minutes.
CHECK_TIMEOUT_S = 15.0
# fio's client prints the server's introduction: "hostname=h1, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, ..."
_INTRODUCTION = re.compile(r"^hostname=(?P<hostname>[^,]*),.*\bfio=(?P<version>[^,\s]+)", re.MULTILINE)
# fio's report of a job that ran: "disklab-check: (groupid=0, jobs=1): err= 0: ..."
_JOB_REPORT = re.compile(r"disklab-check: \(groupid=\d+, jobs=\d+\): err= 0:")


@dataclass(frozen=True)
class HostCheck:
    host: Host
    fio_version: str | None  # None: the server did not answer
    target_present: bool | None  # None: no target named, or the server did not answer
    problem: str | None  # one line saying what is wrong; None when the host is ready

    @property
    def ok(self) -> bool:
        return self.problem is None


def check_hosts(hosts: tuple[Host, ...], fio_path: str, local_version: str, target: str | None) -> tuple[HostCheck, ...]:
    """Every host at once; a slow host does not hold the others' answers back."""
    with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        return tuple(pool.map(lambda host: check_host(host, fio_path, local_version, target), hosts))


def require_ready(checks: tuple[HostCheck, ...]) -> None:
    """The run starts only when every host is ready; the first problem is the error, the others are counted."""
    problems = [c for c in checks if not c.ok]
    if problems:
        more = f" (and {len(problems) - 1} more host(s) not ready; see 'disklab hosts check')" if len(problems) > 1 else ""
        raise FioError(f"host {problems[0].host.name}: {problems[0].problem}{more}")


def check_host(host: Host, fio_path: str, local_version: str, target: str | None) -> HostCheck:
    with tempfile.TemporaryDirectory(prefix="disklab-check-") as folder:
        job_path = Path(folder) / "check.fio"
        job_path.write_text(check_job(target))
        try:
            done = subprocess.run(
                [fio_path, f"--client={host.fio_client}", str(job_path)], capture_output=True, text=True,
                stdin=subprocess.DEVNULL, timeout=CHECK_TIMEOUT_S, cwd=folder,
            )
        except subprocess.TimeoutExpired:
            return HostCheck(host, None, None, f"no answer within {CHECK_TIMEOUT_S:.0f} s (a firewall or a wrong address?)")
    return read_check(host, done.stdout + done.stderr, done.returncode, local_version, target)


def check_job(target: str | None) -> str:
    """With a target: one 4 KiB file written and unlinked there; without: no I/O at all (the null engine)."""
    if target is None:
        return "[disklab-check]\nioengine=null\nsize=4k\nrw=read\n"
    return f"[disklab-check]\ndirectory={target}\nfilename=disklab-check-{os.getpid()}\nsize=4k\nrw=write\nunlink=1\n"


def read_check(host: Host, said: str, returncode: int, local_version: str, target: str | None) -> HostCheck:
    """What fio's client said, as a verdict on the host."""
    introduction = _INTRODUCTION.search(said)
    if introduction is None:
        if "Connection refused" in said:
            reason = "connection refused: is 'fio --server' running there, on this port?"
        elif re.search(rf"host={re.escape(host.address)} disconnected", said):
            reason = "the connection closed before a fio server answered: wrong address or port?"
        else:
            reason = _first_complaint(said)
        return HostCheck(host, None, None, f"fio server not reachable: {reason}")
    version = introduction["version"]
    if version != local_version:
        return HostCheck(host, version, None, f"runs {version}, this machine {local_version}; install the same fio "
                                              "version on every host (fio's client and servers must match)")
    # fio's client exits 0 even when the server dropped the job (a missing directory): only a report proves it ran.
    ran = returncode == 0 and _JOB_REPORT.search(said) is not None
    if target is None:
        return HostCheck(host, version, None, None if ran else "the check job failed: " + _first_complaint(said))
    if ran:
        return HostCheck(host, version, True, None)
    return HostCheck(host, version, False, f"target {target} is not usable there: {_first_complaint(said)}")


def _first_complaint(said: str) -> str:
    """The server's first 'fio:' line, else fio's own first line."""
    lines = [line.strip() for line in said.splitlines() if line.strip()]
    own = next((line for line in lines if line.startswith("fio:")), lines[0] if lines else "no message")
    return server_complaint(said) or own.removeprefix("fio: ").strip()
