"""M3's database test as one run: a private server on the target, pgbench's data set, the client sweep, each step
stored the moment it finishes; the server stopped and its cluster removed whatever happens."""

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

from disklab.analysis.traps import memory_target
from disklab.database.pgbench import Initialised, Step, StepResult, initialise, run_step, server_settings
from disklab.database.placement import Placement
from disklab.database.postgres import EXTRA_CONNECTIONS, Server, private_server
from disklab.suite.pgbench import PgbenchSettings
from disklab.errors import UserError
from disklab.fio.logs import Series, SeriesPoint
from disklab.fio.parse import DirectionMetrics, JobResult
from disklab.store.repository import Store
from disklab.units import human_size

TRANSACTION = "transaction"  # the direction a pgbench step's figures are stored under
# M3: the data set is at least twice the machine's RAM, so the page cache cannot serve the benchmark.
RAM_MULTIPLE = 2
OUTCOME_KEY = "pgbench"


@dataclass(frozen=True)
class PgbenchOverrides:
    """The command line's pgbench options; each wins over the suite's [pgbench] value."""

    scale: int | None = None
    clients: tuple[int, ...] | None = None
    transactions: int | None = None
    time_s: float | None = None
    settings: tuple[tuple[str, str], ...] = ()  # --pg-set, added after (and so winning over) the suite's

    def apply(self, settings: PgbenchSettings) -> PgbenchSettings:
        if self.transactions is not None and self.time_s is not None:
            raise UserError("give --transactions (per client) or --time (per step), not both")
        changed = replace(settings, settings=tuple({**dict(settings.settings), **dict(self.settings)}.items()))
        if self.scale is not None:
            changed = replace(changed, scale=self.scale)
        if self.clients is not None:
            changed = replace(changed, clients=self.clients)
        if self.transactions is not None:
            changed = replace(changed, transactions=self.transactions, time_s=None)
        if self.time_s is not None:
            changed = replace(changed, time_s=self.time_s, transactions=None)
        _check_room_for_clients(changed)
        return changed


def _check_room_for_clients(settings: PgbenchSettings) -> None:
    """A max_connections the user chose must fit the sweep; one left alone is raised by disklab (postgres.py)."""
    chosen = dict(settings.settings).get("max_connections")
    needed = max(settings.clients) + EXTRA_CONNECTIONS
    if chosen is not None and (not chosen.isdigit() or int(chosen) < needed):
        raise UserError(f"max_connections={chosen} leaves no room for {max(settings.clients)} clients; set at least "
                        f"{needed} or leave it to disklab")


def whole_scale(scale: float) -> int:
    """--scale serves fio suites (a shrink factor) and pgbench suites (pgbench's whole scale factor)."""
    if scale != int(scale) or scale < 1:
        raise UserError(f"--scale {scale:g}: a pgbench suite's scale is pgbench's scale factor, a whole number of "
                        "100,000 account rows (about 16 MB) each, at least 1")
    return int(scale)


def run_database_benchmark(
    store: Store, run_id: int, settings: PgbenchSettings, steps: tuple[Step, ...], placement: Placement,
    keep_cluster: bool, say: Callable[[str], None], show_progress: Callable[[str], None],
) -> dict:
    """Returns the run's pgbench outcome (also stored, step by step, as run outcome 'pgbench').

    `say` prints a line; `show_progress` replaces the last progress line (pgbench's report of every second).
    """
    keep_run = run_id if keep_cluster else None
    env = store.run_values("run_env", run_id)
    with private_server(placement, settings.settings, max(s.clients for s in steps), keep_run) as server:
        for deviation in server.deviations:
            say(f"note: {deviation}")
        where = "" if placement.tablespace is None else f", its tablespace {placement.tablespace}"
        say(f"PostgreSQL {server.binaries.version} on {server.folder}{where} (port {server.port}); loading pgbench's "
            f"data set at scale {settings.scale}")
        initialised = initialise(server, settings.scale)
        outcome = _outcome(server, settings, initialised)
        if outcome["data_set"]["below_ram_multiple"]:
            say(f"warning: {outcome['data_set']['warning']}")
        store.set_run_values("run_outcomes", run_id, {OUTCOME_KEY: outcome})
        for seq, step in enumerate(steps):
            say(f"{step.label}: " + (f"{step.transactions:,} transactions each" if step.transactions
                                     else f"{step.time_s:g} s"))
            result = run_step(server, step, lambda p, step=step: show_progress(
                f"{step.label}: {p.t_s:g} s, {p.tps:,.1f} tps, latency {p.latency_mean_ms:,.2f} ms"
                + (f", {p.failed} failed" if p.failed else "")))
            test_id = store_step(store, run_id, seq, result)
            for flag, message in step_flags(env, outcome["data_set"]):
                store.add_flag(test_id, flag, message)
            outcome["steps"][str(step.clients)] = step_figures(result)
            store.set_run_values("run_outcomes", run_id, {OUTCOME_KEY: outcome})
    if keep_run is not None:
        for line in placement.kept_lines(run_id):
            say(line)
    return outcome


def share_of_ram(size: float, ram: float) -> str:
    """'0.35x RAM'; a data set too small for two decimals is 'less than 0.01x RAM', never '0.00x RAM'."""
    return f"{size / ram:.2f}x RAM" if size / ram >= 0.01 else "less than 0.01x RAM"


def data_set_outcome(size: int, scale: int, ram: int) -> dict:
    """The loaded database (pg_database_size) against RAM; below M3's twice RAM, the warning every step is flagged
    with, said once in each output (the flag lines and findings join steps that share it)."""
    below = size < RAM_MULTIPLE * ram
    fitting_scale = int(RAM_MULTIPLE * ram / (size / scale)) + 1
    warning = (f"the data set ({human_size(size)} at scale {scale}) is {share_of_ram(size, ram)} "
               f"({ram / 1024**3:,.1f} GiB): the page cache can hold it, and the SSD review (M3) asks for at least "
               f"{RAM_MULTIPLE}x RAM; use --scale {fitting_scale} or more")
    return {"bytes": size, "ram_bytes": ram, "ram_multiple": size / ram, "below_ram_multiple": below,
            "warning": warning if below else None}


def step_flags(env: dict, data_set: dict) -> list[tuple[str, str]]:
    """Each step's flags: a target in RAM (PostgreSQL's I/O goes through the page cache), a data set it can hold."""
    flags = memory_target(env, direct=False)
    if data_set["below_ram_multiple"]:
        flags.append(("page-cache", data_set["warning"]))
    return flags


def _outcome(server: Server, settings: PgbenchSettings, initialised: Initialised) -> dict:
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    size = initialised.database_bytes
    return {
        "summary": (f"pgbench: PostgreSQL {server.binaries.version}, scale {settings.scale}, data set "
                    f"{human_size(size)} ({share_of_ram(size, ram)}), loaded in {initialised.seconds:.1f} s; "
                    f"{server.placement.description()}" + "".join(f"; {d}" for d in server.deviations)),
        "placement": {"tablespace_only": server.placement.off_target is not None,
                      "on_target": str(server.placement.on_target),
                      "off_target": None if server.placement.off_target is None else str(server.folder),
                      "off_target_disks": list(server.placement.off_target_disks)},
        "postgresql_version": server.binaries.version,
        "server_settings": server_settings(server, tuple(name for name, _ in settings.settings)),
        "settings_changed": dict(settings.settings),
        "deviations": list(server.deviations),
        "init": {"seconds": initialised.seconds, "output": initialised.output},
        "data_set": data_set_outcome(size, settings.scale, ram),
        "steps": {},
    }


def step_figures(result: StepResult) -> dict:
    """A step's figures beyond its stored metrics, keyed by clients in the outcome."""
    s = result.summary
    return {
        "tps_excluding_connections": s.tps, "tps_including_connections": s.tps_including_connections,
        "initial_connection_ms": s.connection_ms, "failed_transactions": s.failed, "processed_transactions": s.processed,
        "latency_stddev_ms": s.latency_stddev_ms, "iowait_percent": result.cpu.iowait_percent,
    }


def store_step(store: Store, run_id: int, seq: int, result: StepResult) -> int:
    """TPS (excluding connection set-up) as the 'transaction' direction's IOPS, latency in ns; TPS and latency per
    second as series; the machine's CPU use as the test's."""
    s = result.summary
    lat_ns = s.latency_mean_ms * 1e6
    runtime_ms = round(s.processed / s.tps * 1000) if s.tps else 0
    metrics = DirectionMetrics(
        direction=TRANSACTION, io_bytes=0, total_ios=s.processed, iops=s.tps, bw_bytes_per_s=0.0, runtime_ms=runtime_ms,
        lat_mean_ns=lat_ns, clat_mean_ns=lat_ns, clat_max_ns=result.latency_max_ns,
        clat_percentiles_ns=result.percentiles_ns,
    )
    job = JobResult(result.step.label, 0, result.cpu.usr_percent, result.cpu.sys_percent, (metrics,))
    series = tuple(
        Series(kind, TRANSACTION, tuple(SeriesPoint(round(p.t_s * 1000), value(p)) for p in result.progress))
        for kind, value in (("iops", lambda p: p.tps), ("lat_mean_ns", lambda p: p.latency_mean_ms * 1e6))
    ) if result.progress else ()
    return store.add_test(run_id, seq, result.step.label, result.step.params(), result.command, result.stdout,
                          result.stderr, result.started_at, job, series=series)
