"""fio's client mode: one fio process starts a job file on every host's `fio --server` at once and collects them.

fio carries on when a server cannot be reached or drops out, and reports only the hosts it heard from; so each
host's presence in the output is checked here, and a missing one is named with what fio said about it.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from disklab.errors import FioError
from disklab.fio.clientstats import client_entries, entry_document, entry_host
from disklab.fio.executor import private_folder, run_fio_command, summarise_stderr
from disklab.fio.parse import extract_json
from disklab.hosts.hosts import Host

# A server's lines come prefixed with its hostname in angle brackets: "<h1> fio: /x is not a directory".
_SERVER_LINE = re.compile(r"^<[^>]*> (?P<text>.*)$", re.MULTILINE)


@dataclass(frozen=True)
class ClientRun:
    per_host: dict[str, str]  # host name -> that host's fio JSON, as a document of its own
    combined: str  # every host's job in one fio document ("jobs"), the aggregate's raw output
    stderr: str


class HostFailed(FioError):
    """A host that gave no result: unreachable, or its server stopped during the test."""


class ClientExecutor:
    def __init__(self, fio_path: str, output_format: str = "json+"):
        self.fio_path = fio_path
        self.output_format = output_format

    def run(self, jobfiles: Mapping[Host, str], on_tick: Callable[[], None] | None = None) -> ClientRun:
        """Each host runs its own job file (its own test file path); all start together."""
        with private_folder() as folder:
            command = [self.fio_path, f"--output-format={self.output_format}", f"--output={Path(folder) / 'output'}"]
            for n, (host, jobfile) in enumerate(jobfiles.items()):
                job_path = Path(folder) / f"host{n}.fio"
                job_path.write_text(jobfile)
                command += [f"--client={host.fio_client}", str(job_path)]
            returncode, error_text = run_fio_command(command, folder, on_tick)
            out_path = Path(folder) / "output"
            output = out_path.read_text() if out_path.exists() else ""
        return split_by_host(output, error_text, tuple(jobfiles), returncode)


def split_by_host(output: str, error_text: str, hosts: tuple[Host, ...], returncode: int) -> ClientRun:
    """fio's client output cut into one document per host; a host without a result fails the test, named."""
    said = f"{output}\n{error_text}"
    try:
        data = extract_json(output)
    except FioError:
        data = {}
    entries = {entry_host(e): e for e in client_entries(data)} if "client_stats" in data else {}
    for host in hosts:
        if host.name not in entries:
            raise HostFailed(f"host {host.name}: {host_trouble(said, host)}")
    if set(entries) - {h.name for h in hosts} or not entries:
        raise FioError(f"fio's client output names other hosts than asked (exit {returncode}): "
                       f"{summarise_stderr(error_text or output)}")
    return ClientRun(
        per_host={h.name: entry_document(data, [entries[h.name]], h.name) for h in hosts},
        combined=entry_document(data, [entries[h.name] for h in hosts], None), stderr=error_text,
    )


def host_trouble(said: str, host: Host) -> str:
    """What fio said about a host that gave no result; every host answered the check before the run started."""
    spelled = re.escape(host.address)
    complaint = server_complaint(said)
    if re.search(rf"failed to connect to \[?{spelled}\]?[:,]{host.port}\b", said):
        reason = next((line.removeprefix("fio: ").strip() for line in said.splitlines()
                       if line.startswith("fio: connect:")), "connection failed")
    elif re.search(rf"host={spelled} disconnected", said):
        reason = "it disconnected during the test"
    elif complaint:
        return f"fio server gave no result (a server said: {complaint})"
    else:
        reason = "fio received no result from it"
    return f"fio server stopped responding ({reason})"


def server_complaint(said: str) -> str | None:
    """The first 'fio:' line a server sent (servers' lines come as '<hostname> fio: ...'), without the prefixes."""
    lines = [m["text"].strip() for m in _SERVER_LINE.finditer(said)]
    complaint = next((line for line in lines if line.startswith("fio:")), None)
    return complaint.removeprefix("fio: ").strip() if complaint else None
