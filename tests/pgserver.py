"""A private PostgreSQL server for the store's tests and bench/store_scale.py: a lab's server in miniature.

It is made in a fresh folder and runs as disklab's pgbench server runs (database/postgres.py: the unprivileged server
user when we are root, environment without PG* variables). It listens on 127.0.0.1 at a free port and on a socket in
a private folder, and lets in one role, `lab`, with a password (scram-sha-256, on TCP and on the socket), so that
locations carry credentials as a lab's do; the server's OS user administers it over the socket (peer). Each database
handed out is new (CREATE DATABASE under a unique name) and owned by `lab`, which is no superuser.

The postmaster is this process's child in a session of its own: a Ctrl-C at the terminal does not reach it, and it
dies with this process even when that is killed outright (its backends follow). `stop` ends it with `pg_ctl stop -m
immediate`, kills what is left and removes the folder. Imported by bench/store_scale.py too, so nothing here needs
pytest.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from disklab.database.postgres import (
    OsUser, ServerBinaries, credentials, find_binaries, free_port, run_tool, server_user, stop_server,
    tool_environment,
)
from disklab.errors import DatabaseError
from disklab.fio.executor import die_with_parent
from disklab.system.host import process_alive

ROLE = "lab"
START_TIMEOUT_S = 120  # a busy 2-core machine starts a server in seconds; this bounds a hang, it measures nothing
PORT_ATTEMPTS = 3
# What a test server need not do: survive a power cut. Concurrency and locking are as shipped.
NOT_DURABLE = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


FOLDER_PREFIX = "disklab-pgtest-"  # then the pid of the process that made the folder
DATA_PARENT = "/var/tmp"
SOCKET_PARENT = "/tmp"  # a socket's path must stay under 108 bytes


class ServerMissing(Exception):
    """PostgreSQL's server binaries are not installed: tests that need a server are skipped, with this reason."""


def postgres_pids(folder: Path) -> list[int]:
    """PostgreSQL processes working in `folder`: the postmaster and its children run in their data directory."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if (entry.name.isdigit() and os.readlink(entry / "cwd").startswith(str(folder))
                    and (entry / "comm").read_text().strip() in ("postgres", "postmaster", "pgbench")):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def stop_postgres_under(folder: Path) -> None:
    """A server a failed or killed run left (disklab starts it in a session of its own): never let it outlive a test."""
    for pid in postgres_pids(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def remove_leftovers() -> None:
    """Folders of a server whose process was killed outright (its postmaster died with it; no finalizer ran)."""
    for parent in (DATA_PARENT, SOCKET_PARENT):
        for folder in Path(parent).glob(f"{FOLDER_PREFIX}*-*"):
            owner = folder.name.removeprefix(FOLDER_PREFIX).split("-")[0]
            if owner.isdigit() and not process_alive(int(owner)) and not postgres_pids(folder):
                shutil.rmtree(folder, ignore_errors=True)


@dataclass
class PrivateServer:
    folder: Path
    socket_dir: Path
    binaries: ServerBinaries
    user: OsUser | None
    password: str
    port: int = 0
    process: subprocess.Popen | None = None

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @classmethod
    def start(cls, durable: bool = False) -> PrivateServer:
        """Made and running; `durable` keeps fsync and its kin as shipped (for timing, not for tests)."""
        try:
            binaries = find_binaries()
        except DatabaseError as exc:
            raise ServerMissing(str(exc)) from exc
        user = server_user()
        remove_leftovers()
        prefix = f"{FOLDER_PREFIX}{os.getpid()}-"
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=DATA_PARENT))
        server = cls(folder, Path(tempfile.mkdtemp(prefix=prefix, dir=SOCKET_PARENT)), binaries, user,
                     "pw" + secrets.token_hex(8))
        try:
            for path in (folder, server.socket_dir):
                if user is not None:
                    os.chown(path, user.uid, user.gid)
            server._initdb(durable)
            server._run()
            server._admin(f"CREATE ROLE {ROLE} LOGIN CREATEDB PASSWORD '{server.password}'")
        except BaseException:
            server.stop()
            raise
        return server

    def _initdb(self, durable: bool) -> None:
        done = run_tool(self.binaries, self.user, ["initdb", "-D", str(self.data_dir), "--auth-local=peer",
                                                   "--auth-host=reject", "--encoding=UTF8", "--locale=C"],
                        cwd=self.folder)
        if done.returncode != 0:
            raise DatabaseError(f"initdb failed (exit {done.returncode}): {done.stderr.strip()}")
        admin = self.user.name if self.user else pwd.getpwuid(os.geteuid()).pw_name
        hba = f"local all {admin} peer\nlocal all all scram-sha-256\nhost all all 127.0.0.1/32 scram-sha-256\n"
        settings = {"listen_addresses": "127.0.0.1", "unix_socket_directories": str(self.socket_dir),
                    "password_encryption": "scram-sha-256", **({} if durable else NOT_DURABLE)}
        (self.data_dir / "pg_hba.conf").write_text(hba)
        with open(self.data_dir / "postgresql.conf", "a") as conf:
            conf.write("".join(f"{name} = '{value}'\n" for name, value in settings.items()))

    def _run(self) -> None:
        """The postmaster as our child, on a free port; on another one when the port was taken in between."""
        log_path = self.folder / "postgres.log"
        for _attempt in range(PORT_ATTEMPTS):
            self.port = free_port()
            with open(log_path, "w") as log:
                self.process = subprocess.Popen(
                    [self.binaries.tool("postgres"), "-D", str(self.data_dir), "-p", str(self.port)],
                    cwd=self.folder, env=tool_environment(self.user), stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=die_with_parent,
                    **credentials(self.user),
                )
            if self._ready():
                return
            said = log_path.read_text(errors="replace")
            if "Address already in use" not in said:
                raise DatabaseError(f"the test's PostgreSQL server did not start: {said[-2000:]}")
        raise DatabaseError(f"the test's PostgreSQL server did not start: {PORT_ATTEMPTS} ports were taken")

    def _ready(self) -> bool:
        """As `pg_ctl -w` waits: until postmaster.pid says 'ready' (its 8th line); False when the server ended."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
            except OSError:
                lines = []
            if len(lines) >= 8 and lines[7].strip() == "ready":
                return True
            time.sleep(0.05)
        raise DatabaseError(f"the test's PostgreSQL server was not ready within {START_TIMEOUT_S} s")

    def _admin(self, sql: str) -> None:
        """As the server's superuser, over the socket."""
        done = run_tool(self.binaries, self.user, ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h",
                                                   str(self.socket_dir), "-p", str(self.port), "-d", "postgres",
                                                   "-c", sql], cwd=self.folder, timeout=START_TIMEOUT_S)
        if done.returncode != 0:
            raise DatabaseError(f"psql failed: {done.stderr.strip()}")

    def url(self, database: str, *, password: str | None = None, socket: bool = False, role: str = ROLE) -> str:
        """The location of `database` as a lab writes it: role and password in the URL, over TCP or the socket."""
        where = f"?host={self.socket_dir}&port={self.port}" if socket else ""
        host = "" if socket else f"127.0.0.1:{self.port}"
        return f"postgresql://{role}:{quote(password or self.password, safe='')}@{host}/{database}{where}"

    def add_role(self, name: str, password: str) -> None:
        """Another member of the lab, with no rights but to log in; the role grants it more in its databases."""
        quoted = password.replace("'", "''")
        self._admin(f"CREATE ROLE {name} LOGIN PASSWORD '{quoted}'")

    def create_database(self) -> str:
        """A new empty database owned by the role; its name."""
        name = "store_" + secrets.token_hex(6)
        self._as_role(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        """Whoever is still connected (a leaked store, a killed writer's backend) is put out first, by the superuser:
        an autovacuum worker busy in the database (after an import) runs under no role, and the role's own DROP ...
        WITH (FORCE) is refused ("must be a member of the role whose process is being terminated", once in CI)."""
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def _as_role(self, sql: str) -> None:
        import psycopg  # the PostgreSQL store's own driver; imported only when a server is asked for

        with psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=START_TIMEOUT_S) as conn:
            conn.execute(sql)

    def stop(self) -> None:
        """Immediate (nothing here need be kept), then whatever is left killed; the folders removed."""
        try:
            if self.process is not None and self.process.poll() is None:
                stop_server(self.binaries, self.user, self.data_dir, immediate=True)
        finally:
            stop_postgres_under(self.folder)
            if self.process is not None:
                self.process.wait()
            shutil.rmtree(self.folder, ignore_errors=True)
            shutil.rmtree(self.socket_dir, ignore_errors=True)
