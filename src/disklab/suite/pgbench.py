"""The [pgbench] table of a database suite: one registry for its keys, defaults, validation and help (M3's values)."""

import re
from dataclasses import dataclass
from typing import Any

from disklab.suite.params import Param, boolean, int_range
from disklab.units import parse_duration

# pgbench's own limits: its scale factor is a whole number; more clients than this is not a disk test any more.
MAX_SCALE = 100_000
MAX_CLIENTS = 10_000
# postgresql.conf names are identifiers, optionally qualified (an extension's "auto_explain.log_min_duration").
_SETTING_NAME = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$")
# Settings disklab itself sets for the private server: where it listens; a suite or --pg-set may not move it.
RESERVED_SETTINGS = ("listen_addresses", "port", "unix_socket_directories", "data_directory", "hba_file",
                     "ident_file", "external_pid_file")


@dataclass(frozen=True)
class PgbenchSettings:
    """What one pgbench suite runs: the data set, the client sweep, how long each step lasts, the server's settings."""

    scale: int  # pgbench -i -s: 100,000 account rows per unit (about 16 MB)
    clients: tuple[int, ...]  # one measured step per count, in this order
    transactions: int | None  # per client (pgbench -t); None when `time` is set
    time_s: float | None  # each step's duration (pgbench -T) instead of transactions
    threads: int | None  # pgbench -j; None: as many as clients, at most the machine's CPUs
    vacuum: bool  # vacuum before each step (M3's command has -n: no vacuum)
    settings: tuple[tuple[str, str], ...]  # postgresql.conf settings; empty: as shipped


def client_counts(value: Any) -> tuple[int, ...]:
    """A list of counts (TOML) or "1,10,50,100" (the command line)."""
    if isinstance(value, str):
        try:
            value = [int(part) for part in value.split(",")]
        except ValueError:
            raise ValueError(f"{value!r} is not a list of client counts such as 1,10,50,100") from None
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise ValueError(f"{value!r} is not a list of client counts such as [1, 10, 50, 100]")
    counts = tuple(int_range(1, MAX_CLIENTS)(count) for count in value)
    if len(set(counts)) != len(counts):
        raise ValueError(f"{value!r} names a client count twice")
    return counts


def duration_s(value: Any) -> float:
    seconds = parse_duration(value)
    if seconds < 1:
        raise ValueError(f"{value!r} is shorter than 1s, pgbench's shortest duration")
    return float(round(seconds))


def setting(name: str, value: Any) -> tuple[str, str]:
    """One postgresql.conf setting; the server itself judges the value when it starts."""
    if not isinstance(name, str) or not _SETTING_NAME.match(name):
        raise ValueError(f"{name!r} is not a PostgreSQL setting name")
    if name in RESERVED_SETTINGS:
        raise ValueError(f"{name} is set by disklab (the private server listens on 127.0.0.1, a free port and "
                         "its own socket directory)")
    if isinstance(value, bool):
        return name, "on" if value else "off"
    if not isinstance(value, (str, int, float)) or "\n" in str(value):
        raise ValueError(f"{name}: {value!r} is not a setting value")
    return name, str(value)


def settings_table(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise ValueError(f"{value!r} is not a table of postgresql.conf settings")
    return tuple(setting(name, item) for name, item in value.items())


def parse_pg_set(text: str) -> tuple[str, str]:
    """--pg-set NAME=VALUE."""
    name, equals, value = text.partition("=")
    if not equals or not value.strip():
        raise ValueError(f"{text!r} is not NAME=VALUE, e.g. shared_buffers=1GB")
    return setting(name.strip(), value.strip())


KEYS: dict[str, Param] = {
    p.name: p
    for p in (
        Param("scale", int_range(1, MAX_SCALE), 100, "pgbench's scale factor: 100,000 account rows (about 16 MB) each"),
        Param("clients", client_counts, (100,), "client counts, one measured step each, e.g. [1, 10, 50, 100]"),
        Param("transactions", int_range(1, 10**9), 10_000, "transactions per client of each step (pgbench -t)"),
        Param("time", duration_s, None, "each step's duration instead of transactions (pgbench -T), e.g. 60s"),
        Param("threads", int_range(1, MAX_CLIENTS), None, "pgbench worker threads (-j); default: clients, at most the CPUs"),
        Param("vacuum", boolean, False, "vacuum the tables before each step (M3's command runs without: -n)"),
        Param("settings", settings_table, (), "postgresql.conf settings of the private server; default: as shipped"),
    )
}


def pgbench_settings(values: dict) -> PgbenchSettings:
    """Validated values (key -> converted value) over the defaults; `time` replaces `transactions`."""
    merged = {name: values.get(name, key.default) for name, key in KEYS.items()}
    time_s = merged["time"]
    return PgbenchSettings(
        scale=merged["scale"], clients=merged["clients"], transactions=None if time_s else merged["transactions"],
        time_s=time_s, threads=merged["threads"], vacuum=merged["vacuum"], settings=merged["settings"],
    )
