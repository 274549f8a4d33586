"""A private PostgreSQL cluster for the disk under test: made, started, stopped and removed by disklab alone.

The cluster lives in `disklab-HOST-PID.pgcluster` in the target directory (data and WAL both there) or, with
--tablespace-only, off the target with only a tablespace on it (database/placement.py). It listens on
127.0.0.1 at a free port and on a socket in a private temporary directory, and lets in only its own OS user (peer
authentication on the socket, TCP rejected). As root it runs as the `postgres` system user, or `nobody`. An
existing cluster or the system's PostgreSQL service is never looked at.
"""

import glob
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from disklab.database.placement import Placement
from disklab.system.host import process_alive
from disklab.system.signals import heeded
from disklab.errors import DatabaseError, UserError
from disklab.fio.executor import die_with_parent

SOCKET_PREFIX = "disklab-pg-"
# Where the socket folder (with pgbench's logs) goes, whatever TMPDIR says: a socket path must stay under 108
# bytes, and the server user must be able to reach it.
RUNTIME_PARENT = "/tmp"
INSTALL_HINT = "install PostgreSQL's server with 'apt-get install postgresql' ('make postgresql' in disklab's checkout does)"
# Connections beyond pgbench's clients: its own first connection, and a margin for disklab's queries.
EXTRA_CONNECTIONS = 5
START_TIMEOUT_S = 120
STOP_TIMEOUT_S = 120
# How often a start is retried on another port when the free one was taken in between.
PORT_ATTEMPTS = 3
_NO_SPACE = "No space left on device"
# How PostgreSQL says the disk is full: the errno's text, or (a short write) its own words and hint.
_DISK_FULL = (_NO_SPACE, "could not extend file", "Check free disk space")
# The server's log line prefix as shipped: "2026-11-21 22:51:58.910 GMT [27938] FATAL:  message".
_LOG_LINE = re.compile(r"^\S+ \S+ \S+ \[\d+\] (?P<level>[A-Z]+):\s+(?P<message>.*)$")


@dataclass(frozen=True)
class ServerBinaries:
    bindir: Path
    version: str  # "15.18 (Debian 15.18-0+deb12u1)"

    def tool(self, name: str) -> str:
        return str(self.bindir / name)


@dataclass(frozen=True)
class OsUser:
    """The unprivileged user the server and pgbench run as when disklab runs as root."""

    name: str
    uid: int
    gid: int


@dataclass(frozen=True)
class Server:
    """A running private server."""

    placement: Placement
    socket_dir: Path
    port: int
    binaries: ServerBinaries
    user: OsUser | None  # None: disklab's own user
    deviations: tuple[str, ...]  # settings disklab had to change from what PostgreSQL ships, and why

    @property
    def folder(self) -> Path:
        return self.placement.cluster

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def log_path(self) -> Path:
        return self.folder / "server.log"

    def connection_args(self) -> list[str]:
        """Last on a pgbench or psql command line: the socket, and the database as the positional argument (pgbench's
        -d is --debug)."""
        return ["-h", str(self.socket_dir), "-p", str(self.port), "postgres"]


def find_binaries() -> ServerBinaries:
    """$DISKLAB_PG_BINDIR, else `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin with initdb."""
    candidates = []
    if os.environ.get("DISKLAB_PG_BINDIR"):
        candidates.append(Path(os.environ["DISKLAB_PG_BINDIR"]))
    else:
        pg_config = shutil.which("pg_config")
        if pg_config:
            found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
            if found.returncode == 0 and found.stdout.strip():
                candidates.append(Path(found.stdout.strip()))
        candidates += sorted((Path(p) for p in glob.glob("/usr/lib/postgresql/*/bin")),
                             key=lambda p: _version_key(p.parent.name), reverse=True)
    for bindir in candidates:
        if all((bindir / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres", "pgbench", "psql")):
            version = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, text=True, check=False)
            return ServerBinaries(bindir, version.stdout.strip().removeprefix("postgres (PostgreSQL) "))
    where = ", ".join(str(c) for c in candidates) or "no pg_config, no /usr/lib/postgresql/*/bin"
    raise DatabaseError(f"PostgreSQL's server binaries (initdb, pg_ctl, postgres, pgbench, psql) not found "
                        f"(looked in: {where}); {INSTALL_HINT}")


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def server_user() -> OsUser | None:
    """PostgreSQL refuses to run as root: as root, the `postgres` system user, else `nobody`."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return OsUser(name, entry.pw_uid, entry.pw_gid)
    raise DatabaseError("running as root, and neither a 'postgres' nor a 'nobody' user exists to run the server as")


def check_cluster_target(target_dir: Path) -> OsUser | None:
    """Refuse a directory the cluster (or its tablespace) cannot be made in, before anything is stored; the server's
    user."""
    if not os.access(target_dir, os.W_OK | os.X_OK):
        raise UserError(f"cannot create a PostgreSQL cluster in {target_dir}: permission denied")
    user = server_user()
    _check_reachable(target_dir, user)
    return user


def _check_reachable(folder: Path, user: OsUser | None) -> None:
    """The server user must be able to enter every folder above its cluster, or initdb fails half-way."""
    if user is None:
        return
    for parent in (folder, *folder.parents):
        st = parent.stat()
        if st.st_uid == user.uid:
            allowed = st.st_mode & stat.S_IXUSR
        elif st.st_gid == user.gid:
            allowed = st.st_mode & stat.S_IXGRP
        else:
            allowed = st.st_mode & stat.S_IXOTH
        if not allowed:
            raise UserError(f"the PostgreSQL server runs as user {user.name!r}, which cannot enter {parent} "
                            f"(mode {stat.S_IMODE(st.st_mode):o}); allow it (chmod o+x {parent}) or choose another "
                            "target directory")


def run_tool(binaries: ServerBinaries, user: OsUser | None, args: list[str], cwd: Path,
             timeout: float | None = None) -> subprocess.CompletedProcess:
    """A PostgreSQL tool as the server user, in its own session (the terminal's Ctrl-C reaches disklab only),
    dying with disklab."""
    command = [binaries.tool(args[0]), *args[1:]]
    try:
        return subprocess.run(
            command, capture_output=True, text=True, cwd=cwd, env=tool_environment(user), start_new_session=True,
            preexec_fn=die_with_parent, timeout=timeout, stdin=subprocess.DEVNULL, check=False, **credentials(user),
        )
    except subprocess.TimeoutExpired as exc:
        raise DatabaseError(f"{args[0]} did not finish within {timeout:g} s") from exc


def credentials(user: OsUser | None) -> dict:
    return {} if user is None else {"user": user.uid, "group": user.gid, "extra_groups": []}


def tool_environment(user: OsUser | None) -> dict[str, str]:
    """No PG* variables of the caller leak in; messages in English, so that they can be recognised."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(LC_ALL="C", LANG="C")
    if user is not None:
        env.update(HOME=str(pwd.getpwuid(user.uid).pw_dir), USER=user.name, LOGNAME=user.name)
    return env


@contextmanager
def private_server(placement: Placement, settings: tuple[tuple[str, str], ...], max_clients: int,
                   keep_run: int | None = None) -> Iterator[Server]:
    """A fresh cluster (and with --tablespace-only an empty folder for its tablespace on the target), running;
    stopped and removed afterwards whatever happens.

    `keep_run` keeps the stopped cluster and tablespace instead, named after that run (--keep-cluster).
    """
    binaries = find_binaries()
    user = check_cluster_target(placement.target_dir)
    folder = placement.cluster
    socket_dir = Path(tempfile.mkdtemp(prefix=SOCKET_PREFIX, dir=RUNTIME_PARENT))
    server = None
    interrupted = False
    try:
        for path in (folder, placement.tablespace):
            if path is not None:
                path.mkdir()
        for path in (folder, placement.tablespace, socket_dir):
            if user is not None and path is not None:
                os.chown(path, user.uid, user.gid)
        _initdb(binaries, user, placement)
        deviations = _configure(binaries, user, folder, settings, max_clients)
        server = _start(Server(placement, socket_dir, 0, binaries, user, deviations))
        yield server
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        with _signals_held():
            if server is not None or (folder / "data" / "postmaster.pid").exists():
                stop_server(binaries, user, folder / "data", immediate=interrupted)
            shutil.rmtree(socket_dir, ignore_errors=True)
            if keep_run is not None:
                placement.keep(keep_run)
            else:
                for path in (folder, placement.tablespace):
                    if path is not None:
                        shutil.rmtree(path, ignore_errors=True)


def _initdb(binaries: ServerBinaries, user: OsUser | None, placement: Placement) -> None:
    folder = placement.cluster
    done = run_tool(binaries, user, ["initdb", "-D", str(folder / "data"), "--auth-local=peer", "--auth-host=reject",
                                     "--encoding=UTF8", "--locale=C"], cwd=folder)
    if done.returncode != 0:
        output = done.stdout + done.stderr
        if disk_full(output):
            where, parent = placement.out_of_space()
            raise DatabaseError(f"{where} is full: initdb ran out of space in {parent} ({_NO_SPACE}); "
                                "a PostgreSQL cluster needs about 40 MB before any data")
        raise DatabaseError(f"initdb failed (exit {done.returncode}): {_last_line(output)}")


def _configure(binaries: ServerBinaries, user: OsUser | None, folder: Path, settings: tuple[tuple[str, str], ...],
               max_clients: int) -> tuple[str, ...]:
    """The suite's settings, where the server listens, and room for every client (appended: the last value wins)."""
    shipped = run_tool(binaries, user, ["postgres", "-D", str(folder / "data"), "-C", "max_connections"], cwd=folder)
    shipped_connections = int(shipped.stdout.strip()) if shipped.stdout.strip().isdigit() else 100
    chosen = dict(settings)
    deviations = []
    needed = max_clients + EXTRA_CONNECTIONS
    if "max_connections" not in chosen and needed > shipped_connections:
        chosen["max_connections"] = str(needed)
        deviations.append(f"max_connections raised from {shipped_connections} (as shipped) to {needed}: "
                          f"{max_clients} clients and pgbench's own connection must fit")
    lines = [f"{name} = {_quoted(value)}" for name, value in chosen.items()]
    with open(folder / "data" / "postgresql.conf", "a") as conf:
        conf.write("\n# disklab: the run's settings\n" + "\n".join(lines) + "\n")
    return tuple(deviations)


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _start(server: Server) -> Server:
    """On a free port; when another process takes that port before the server binds it, on another one."""
    for _attempt in range(PORT_ATTEMPTS):
        port = free_port()
        listen = server.data_dir / "postgresql.auto.conf"
        listen.write_text(f"listen_addresses = '127.0.0.1'\nport = {port}\n"
                          f"unix_socket_directories = {_quoted(str(server.socket_dir))}\n")
        if server.user is not None:
            os.chown(listen, server.user.uid, server.user.gid)
        started = run_tool(server.binaries, server.user,
                           ["pg_ctl", "-D", str(server.data_dir), "-l", str(server.log_path), "-w",
                            "-t", str(START_TIMEOUT_S), "start"], cwd=server.folder)
        if started.returncode == 0:
            return replace(server, port=port)
        log = server.log_path.read_text(errors="replace") if server.log_path.exists() else ""
        if "Address already in use" not in log:
            if disk_full(log):
                where, _ = server.placement.out_of_space()
                raise DatabaseError(f"{where} is full: the PostgreSQL server cannot start in {server.folder} "
                                    f"({_NO_SPACE})")
            raise DatabaseError(f"the PostgreSQL server did not start: {summarise_log(log) or _last_line(started.stderr)}")
        server.log_path.unlink()
    raise DatabaseError(f"the PostgreSQL server did not start: {PORT_ATTEMPTS} free ports on 127.0.0.1 were taken "
                        "before it could bind them")


def disk_full(output: str) -> bool:
    return any(sign in output for sign in _DISK_FULL)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def summarise_log(log: str) -> str:
    """The server's FATAL and PANIC lines, with the LOG and ERROR lines that explain them (bad settings, ports)."""
    messages = []
    for line in log.splitlines():
        match = _LOG_LINE.match(line.strip())
        if match and match["level"] in ("FATAL", "PANIC", "ERROR", "LOG") and (
            match["level"] != "LOG" or re.search(r"parameter|invalid|could not|No space", match["message"])
        ):
            messages.append(match["message"])
    return "; ".join(dict.fromkeys(messages))


def stop_server(binaries: ServerBinaries, user: OsUser | None, data_dir: Path, immediate: bool) -> None:
    """`pg_ctl stop`: fast (sessions ended, a clean checkpoint) or, after an interrupt, immediate; killed if it hangs."""
    mode = "immediate" if immediate else "fast"
    stopped = run_tool(binaries, user, ["pg_ctl", "-D", str(data_dir), "-m", mode, "-w", "-t", str(STOP_TIMEOUT_S),
                                        "stop"], cwd=data_dir.parent, timeout=STOP_TIMEOUT_S + 10)
    if stopped.returncode != 0:
        kill_postmaster(data_dir)


def kill_postmaster(data_dir: Path) -> bool:
    """The postmaster of `data_dir` (from its postmaster.pid), if still running, ended: SIGQUIT, then SIGKILL."""
    pid = _postmaster_pid(data_dir)
    if pid is None:
        return False
    os.kill(pid, signal.SIGQUIT)  # immediate shutdown: the postmaster takes its backends with it
    deadline = time.monotonic() + 10
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if process_alive(pid):
        os.kill(pid, signal.SIGKILL)
    return True


def _postmaster_pid(data_dir: Path) -> int | None:
    """The running postmaster of this data directory: its pid file's first line, checked against the process's
    working directory, which PostgreSQL sets to the data directory (a recycled pid is left alone)."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        return pid if Path(os.readlink(f"/proc/{pid}/cwd")) == data_dir.resolve() else None
    except (OSError, ValueError):
        return None


@contextmanager
def _signals_held() -> Iterator[None]:
    """Clean-up runs to its end: a second Ctrl-C or SIGTERM waits until the server is stopped and removed."""
    received = []
    held = heeded(signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, lambda signum, frame: received.append(signum)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        raise KeyboardInterrupt


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
