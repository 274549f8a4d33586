"""pgbench against the private server: the data set loaded once, then one measured step per client count."""

import os
import shlex
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from disklab.system.cpu import CpuUse, cpu_use, read_cpu_times
from disklab.database.pgbench_output import (
    PgbenchSummary, ProgressPoint, parse_progress, parse_summary, percentiles_ns, transaction_latencies_us,
)
from disklab.database.placement import TABLESPACE
from disklab.database.postgres import Server, credentials, disk_full, run_tool, tool_environment
from disklab.suite.pgbench import PgbenchSettings
from disklab.errors import DatabaseError
from disklab.fio.executor import die_with_parent, stop_process
from disklab.store.db import now_iso
from disklab.units import format_duration

# Server settings recorded with every run, beside any the suite or --pg-set changed: those that decide how fast
# a commit is and how much the server caches.
RECORDED_SETTINGS = (
    "server_version", "shared_buffers", "max_connections", "effective_cache_size", "work_mem", "maintenance_work_mem",
    "wal_buffers", "max_wal_size", "min_wal_size", "checkpoint_timeout", "checkpoint_completion_target", "fsync",
    "synchronous_commit", "full_page_writes", "wal_sync_method", "wal_level", "data_checksums", "huge_pages",
    "effective_io_concurrency", "random_page_cost", "autovacuum", "block_size", "wal_segment_size",
)
_LOG_PREFIX = "pgbench_log"


@dataclass(frozen=True)
class Step:
    """One measured pgbench run of the sweep."""

    clients: int
    threads: int
    scale: int
    transactions: int | None  # per client; None: time-based
    time_s: float | None
    vacuum: bool

    @property
    def label(self) -> str:
        return f"pgbench {self.clients} client" + ("s" if self.clients > 1 else "")

    def params(self) -> dict:
        """Stored with the test; `benchmark` tells show and compare that this test is no fio test."""
        return {"benchmark": "pgbench", "clients": self.clients, "threads": self.threads, "scale": self.scale,
                "transactions": self.transactions, "time_s": self.time_s, "vacuum": self.vacuum}

    def arguments(self) -> list[str]:
        length = ["-t", str(self.transactions)] if self.transactions else ["-T", f"{self.time_s:g}"]
        return ([] if self.vacuum else ["-n"]) + ["-c", str(self.clients), "-j", str(self.threads), *length]


def plan_steps(settings: PgbenchSettings, cpus: int) -> tuple[Step, ...]:
    """Threads: as given, else one per client up to the CPUs (pgbench's own threads should not be the limit)."""
    return tuple(
        Step(clients, min(settings.threads or cpus, clients), settings.scale, settings.transactions, settings.time_s,
             settings.vacuum)
        for clients in settings.clients
    )


def pgbench_duration(settings: PgbenchSettings) -> str:
    """A sweep by transactions lasts as long as the disk takes; one by time, its steps plus loading the data set."""
    if settings.time_s is None:
        return f"as the disk allows: {settings.transactions:,} transactions per client, after loading the data set"
    return f"{format_duration(settings.time_s * len(settings.clients))}, after loading the data set"


@dataclass(frozen=True)
class StepResult:
    step: Step
    command: str  # as a shell would take it, for `show --jobfile`
    started_at: str
    stdout: str
    stderr: str
    summary: PgbenchSummary
    progress: tuple[ProgressPoint, ...]
    percentiles_ns: dict[str, float]  # from the per-transaction log
    latency_max_ns: float
    cpu: CpuUse  # the whole machine's, during the step


@dataclass(frozen=True)
class Initialised:
    seconds: float
    output: str
    database_bytes: int


def initialise(server: Server, scale: int) -> Initialised:
    """`pgbench -i -s S`: the tables loaded, vacuumed and indexed; with --tablespace-only, in the tablespace on the
    target."""
    started = time.monotonic()
    placed = []
    if server.placement.tablespace is not None:
        location = str(server.placement.tablespace).replace("'", "''")
        query(server, f"CREATE TABLESPACE {TABLESPACE} LOCATION '{location}'")
        placed = [f"--tablespace={TABLESPACE}", f"--index-tablespace={TABLESPACE}"]
    code, stdout, stderr = _run(server, ["pgbench", "-i", "-q", "-s", str(scale), *placed, *server.connection_args()])
    if code != 0:
        output = stdout + stderr
        if disk_full(output):
            where, folder = server.placement.out_of_space(output)
            raise DatabaseError(f"{where} is full: loading pgbench's data set at scale {scale} ran out of space "
                                f"in {folder} ({_error_line(output)}); use a smaller --scale")
        raise DatabaseError(f"pgbench -i failed (exit {code}): {_error_line(output)}")
    seconds = time.monotonic() - started
    size = query(server, "SELECT pg_database_size(current_database())")
    return Initialised(seconds, stdout + stderr, int(size[0][0]))


def run_step(server: Server, step: Step, on_progress: Callable[[ProgressPoint], None] | None = None) -> StepResult:
    # Beside the socket, off the disk under test, in a folder the clean-up of a killed run removes too.
    with tempfile.TemporaryDirectory(prefix="log-", dir=server.socket_dir) as folder:
        if server.user is not None:
            os.chown(folder, server.user.uid, server.user.gid)
        arguments = ["pgbench", *step.arguments(), "-P", "1", "-l", f"--log-prefix={folder}/{_LOG_PREFIX}",
                     *server.connection_args()]
        started_at = now_iso()
        before = read_cpu_times()
        code, stdout, stderr = _run(server, arguments, Path(folder), on_progress)
        cpu = cpu_use(before, read_cpu_times())
        if code != 0:
            output = stderr + stdout
            what = f"{server.placement.out_of_space(output)[0]} is full" if disk_full(output) else "failed"
            raise DatabaseError(f"pgbench with {step.clients} clients {what} (exit {code}): {_error_line(output)}")
        latencies: list[int] = []
        for log in sorted(Path(folder).glob(f"{_LOG_PREFIX}.*")):
            latencies += transaction_latencies_us(log.read_text())[0]
    return StepResult(
        step=step, command=shlex.join([server.binaries.tool(arguments[0]), *arguments[1:]]), started_at=started_at,
        stdout=stdout, stderr=stderr, summary=parse_summary(stdout), progress=parse_progress(stderr),
        percentiles_ns=percentiles_ns(latencies), latency_max_ns=max(latencies, default=0) * 1000.0, cpu=cpu,
    )


def query(server: Server, sql: str) -> list[list[str]]:
    done = run_tool(server.binaries, server.user, ["psql", "-X", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                                                   "-c", sql, *server.connection_args()], cwd=server.folder)
    if done.returncode != 0:
        raise DatabaseError(f"psql failed: {_error_line(done.stderr)}")
    return [line.split("\t") for line in done.stdout.splitlines() if line]


def server_settings(server: Server, extra: tuple[str, ...]) -> dict[str, str]:
    """The recorded settings as the server reports them, units included ("128MB")."""
    names = ", ".join("'" + name.replace("'", "''") + "'" for name in dict.fromkeys((*RECORDED_SETTINGS, *extra)))
    rows = query(server, f"SELECT name, current_setting(name) FROM pg_settings WHERE name IN ({names}) ORDER BY name")
    return {name: value for name, value in rows}


def _run(server: Server, arguments: list[str], cwd: Path | None = None,
         on_progress: Callable[[ProgressPoint], None] | None = None) -> tuple[int, str, str]:
    """pgbench in its own session (Ctrl-C reaches disklab only, which stops it), dying with disklab; its progress
    lines handed on as they come."""
    # Its output beside the socket: the clean-up of a killed run removes that folder, never a file in $TMPDIR.
    with tempfile.TemporaryFile("w+", dir=server.socket_dir) as out, \
            tempfile.NamedTemporaryFile("w", dir=server.socket_dir) as err, open(err.name) as err_reader:
        process = subprocess.Popen(
            [server.binaries.tool(arguments[0]), *arguments[1:]], stdout=out, stderr=err, stdin=subprocess.DEVNULL,
            cwd=cwd or server.folder, env=tool_environment(server.user), start_new_session=True,
            preexec_fn=die_with_parent, **credentials(server.user),
        )
        stderr = ""
        try:
            while process.poll() is None:
                time.sleep(0.1)
                stderr += err_reader.read()  # its own file offset: pgbench's writes are not disturbed
                points = parse_progress(stderr[stderr.rfind("progress: "):]) if on_progress else ()
                if points:
                    on_progress(points[-1])
        except BaseException:
            stop_process(process)
            raise
        out.seek(0)
        return process.returncode, out.read(), stderr + err_reader.read()


def _error_line(text: str) -> str:
    """pgbench's first error line, else its last line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower() or "FATAL" in line:
            return line.removeprefix("pgbench: error: ")
    return lines[-1] if lines else "no message"
