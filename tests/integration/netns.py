"""Real hosts on one machine: network namespaces joined to the root namespace by veth pairs, a fio server in each.

Every namespace and server is removed in a finalizer, even when the test fails; servers also die with the test
process (a parent-death signal), so a killed test run leaves no fio server listening.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.children import as_a_user_started_it
from tests.integration.conftest import wait_for

FIO_PORT = 8765
# One subnet per test process, so that two test runs on one machine do not collide.
_SUBNET = 100 + os.getpid() % 100
# Host numbers never reused within a test process: a deleted namespace may linger a moment after its last process.
_HOST_NUMBERS = itertools.count(1)

NEEDS_NAMESPACES = [
    pytest.mark.skipif(os.geteuid() != 0, reason="creating network namespaces needs root"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="ip (iproute2) is not installed"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]


@dataclass
class FioHost:
    """One namespace with its own address and fio server; `kill` takes the host down as a crash would."""

    namespace: str
    veth: str  # the root namespace's end of the pair; deleting it deletes both ends
    address: str
    log: Path
    server: subprocess.Popen | None = None

    def start_server(self) -> None:
        self.server = subprocess.Popen(
            ["ip", "netns", "exec", self.namespace, "fio", f"--server=ip:{self.address},{FIO_PORT}"],
            stdin=subprocess.DEVNULL, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
            preexec_fn=as_a_user_started_it(),  # the fixture ends it; at the latest it dies with the test process
        )
        if not wait_for(lambda: listening(self.address) or self.server.poll() is not None, seconds=30):
            raise RuntimeError(f"fio server in {self.namespace} did not start listening")
        if self.server.poll() is not None:
            raise RuntimeError(f"fio server in {self.namespace} exited: {self.log.read_text()}")

    def processes(self) -> list[int]:
        done = subprocess.run(["ip", "netns", "pids", self.namespace], capture_output=True, text=True)
        return [int(pid) for pid in done.stdout.split()]

    def busy(self) -> bool:
        """fio's server forks a process for each client it serves: more than one process means a job is on."""
        return len(self.processes()) > 1

    def kill(self) -> None:
        """SIGKILL to every process in the namespace: the server and the job processes it forked."""
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.server is not None:
            self.server.wait(timeout=30)


class HostNamespaces:
    """Namespaces made on demand (`create`), each reachable at its own address; `remove` takes them all down."""

    def __init__(self, folder: Path):
        self.folder = folder  # the fio servers' logs
        self.made: list[FioHost] = []

    def create(self, count: int, servers: bool = True) -> list[FioHost]:
        """Raises NoNamespaces where this machine cannot make one."""
        hosts = []
        for n in itertools.islice(_HOST_NUMBERS, count):
            namespace, veth = f"dl-{os.getpid()}-{n}", f"dl{os.getpid()}v{n}"
            host = FioHost(namespace, veth, f"10.{_SUBNET}.{n}.2", self.folder / f"fio-server-{n}.log")
            added = subprocess.run(["ip", "netns", "add", namespace], capture_output=True, text=True)
            if added.returncode != 0:
                raise NoNamespaces(f"cannot create network namespaces here: {added.stderr.strip()}")
            self.made.append(host)
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", namespace)
            _ip("addr", "add", f"10.{_SUBNET}.{n}.1/24", "dev", veth)
            _ip("link", "set", veth, "up")
            _ip("-n", namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
            _ip("-n", namespace, "link", "set", "eth0", "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
            if servers:
                host.start_server()
            hosts.append(host)
        return hosts

    def remove(self) -> None:
        for host in self.made:
            host.kill()
            subprocess.run(["ip", "link", "del", host.veth], capture_output=True)
            subprocess.run(["ip", "netns", "del", host.namespace], capture_output=True)
        self.made.clear()


class NoNamespaces(RuntimeError):
    """This machine (or container) cannot make a network namespace."""


@contextmanager
def host_namespaces(count: int, folder: Path) -> Iterator[list[FioHost]]:
    """`count` hosts with a fio server each, removed when the block ends."""
    namespaces = HostNamespaces(folder)
    try:
        yield namespaces.create(count)
    finally:
        namespaces.remove()


@pytest.fixture
def fio_hosts(request: pytest.FixtureRequest, tmp_path: Path):
    """`fio_hosts(n, servers=True)`: n namespaces, each reachable at its own address, with a fio server if asked."""
    namespaces = HostNamespaces(tmp_path)
    request.addfinalizer(namespaces.remove)

    def create(count: int, servers: bool = True) -> list[FioHost]:
        try:
            return namespaces.create(count, servers)
        except NoNamespaces as exc:
            pytest.skip(str(exc))

    return create


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def listening(address: str) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((address, FIO_PORT)) == 0
