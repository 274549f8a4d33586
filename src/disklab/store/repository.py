"""Read and write runs and tests. Each finished test is committed at once, so a crash loses only the one in flight."""

import json
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from disklab.system.host import login_name, process_alive
from disklab.errors import UserError
from disklab.fio.logs import Series
from disklab.fio.parse import PERCENTILES, JobResult
from disklab.store.curation import delete_runs
from disklab.store.db import connect, now_iso, remember_checked, translate_errors
from disklab.store.dialect import POSTGRESQL, SQLITE
from disklab.store.filters import RUN_ORDERS, RunFilter, searched_apart, where_clause
from disklab.store.postgres import PostgresConnection, is_url
from disklab.store.reading import raw_texts, read_runs
from disklab.store.records import RunInfo, RunRecord, recorded_bins, run_columns, run_info


@dataclass(frozen=True)
class NewRun:
    suite_name: str
    suite_source: str
    suite_text: str
    target: str
    target_kind: str
    test_path: str
    options: dict
    disklab_version: str
    fio_version: str
    fio_engine: str
    hostname: str
    kernel: str
    planned_tests: int
    name: str | None = None  # what the user calls the run, e.g. "old array"
    started_at: str | None = None  # None: now; an imported run keeps the time fio ran it
    user: str | None = None  # None: the login name of this process (login_name)


class Store:
    """A results store: a SQLite file (a Path), or a PostgreSQL database (a postgresql:// URL) a lab shares."""

    def __init__(self, location: Path | str, read_only: bool = False, say: Callable[[str], None] | None = None):
        """`say` hears what a SQLite file's file system makes the store do (a rollback journal; store/db.py)."""
        self.location = location  # a URL may hold a password: it is used to connect, never shown
        self.read_only = read_only
        if is_url(location):
            self.path = None
            self.conn = PostgresConnection(location, read_only)
            self.name = self.conn.shown
            self.dialect = POSTGRESQL
        else:
            self.path = Path(location)
            self.conn = connect(self.path, read_only, say)
            self.conn.create_function("casefold", 1, _casefold, deterministic=True)
            self.name = str(self.path)
            self.dialect = SQLITE
        self.run_columns = run_columns(self.dialect)
        self.closed = False

    def close(self) -> None:
        self.conn.close()
        self.closed = True
        if not self.read_only and self.path is not None:
            remember_checked(self.path)

    def errors(self):
        """SQLite's failures as one StoreError line (a PostgreSQL connection raises its own)."""
        return translate_errors(self.path) if self.path is not None else nullcontext()

    @contextmanager
    def transaction(self):
        """Everything inside lands together or not at all, nested ones with the outermost (an import's whole run)."""
        with self._within(self.dialect.begin):
            yield

    @contextmanager
    def snapshot(self):
        """Reads inside see the store as it was at the first of them, while other processes write to it."""
        with self._within(self.dialect.snapshot):
            yield

    @contextmanager
    def _within(self, begin: str):
        """A transaction begun by `begin`, or the one already begun."""
        if self.conn.in_transaction:
            yield
            return
        with self.errors():
            self.conn.execute(begin)
            try:
                yield
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:  # a Ctrl-C just after COMMIT has nothing to roll back
                    self.conn.execute("ROLLBACK")
                raise

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def create_run(self, run: NewRun) -> int:
        return self.insert_run({
            "suite_name": run.suite_name, "suite_source": run.suite_source, "suite_text": run.suite_text,
            "target": run.target, "target_kind": run.target_kind, "test_path": run.test_path,
            "options_json": json.dumps(run.options, sort_keys=True), "status": "running",
            "started_at": run.started_at or now_iso(), "disklab_version": run.disklab_version,
            "fio_version": run.fio_version, "fio_engine": run.fio_engine, "hostname": run.hostname,
            "kernel": run.kernel, "pid": os.getpid(), "planned_tests": run.planned_tests, "name": run.name,
            "uid": uuid.uuid4().hex, "user_name": run.user or login_name(),
        })

    def insert_run(self, columns: dict) -> int | None:
        """A runs row of these columns under the store's next number, which it returns; None when a run of its uid is
        there (stored meanwhile by another writer of a shared store: PostgreSQL waits for it, then finds it)."""
        number = self.dialect.next_run_id
        names = ", ".join((*(("id",) if number else ()), *columns))
        values = ", ".join((*((number,) if number else ()), *("?" * len(columns))))
        with self.errors():
            rows = self.conn.execute(
                f"INSERT INTO runs ({names}) VALUES ({values}) ON CONFLICT (uid) DO NOTHING RETURNING id",
                tuple(columns.values()),
            ).fetchall()  # every row fetched: SQLite ends an INSERT ... RETURNING only then
        return rows[0][0] if rows else None

    def add_test(
        self, run_id: int, seq: int, label: str, params: dict, jobfile: str, fio_output: str, fio_stderr: str,
        started_at: str, job: JobResult, series: tuple[Series, ...] = (), plan_index: int | None = None,
        attempt: int = 1, host: str | None = None,
    ) -> int:
        """One transaction per test: the test, its metrics and its series land together or not at all."""
        with self.transaction():
            test_id = self.conn.execute(
                """INSERT INTO tests (run_id, seq, label, params_json, jobfile, fio_output, fio_stderr, started_at,
                   finished_at, usr_cpu_percent, sys_cpu_percent, plan_index, attempt, host)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
                (
                    run_id, seq, label, json.dumps(params, sort_keys=True), jobfile, fio_output, fio_stderr,
                    started_at, now_iso(), job.usr_cpu_percent, job.sys_cpu_percent,
                    seq if plan_index is None else plan_index, attempt, host,
                ),
            ).fetchall()[0][0]
            for m in job.directions:
                self.conn.execute(
                    f"""INSERT INTO metrics (test_id, direction, iops, bw_bytes_per_s, io_bytes, total_ios, runtime_ms,
                       lat_mean_ns, clat_mean_ns, clat_max_ns, {_PERCENTILE_COLUMNS}, clat_bins_json)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {', '.join('?' * len(PERCENTILES))}, ?)""",
                    (
                        test_id, m.direction, m.iops, m.bw_bytes_per_s, m.io_bytes, m.total_ios, m.runtime_ms,
                        m.lat_mean_ns, m.clat_mean_ns, m.clat_max_ns,
                        *(m.clat_percentiles_ns.get(p) for p in PERCENTILES.values()),
                        recorded_bins(fio_output, m.direction),
                    ),
                )
            self.conn.executemany(
                "INSERT INTO series (test_id, kind, direction, t_ms, value) VALUES (?, ?, ?, ?, ?)",
                ((test_id, s.kind, s.direction, p.t_ms, p.value) for s in series for p in s.points),
            )
        return test_id

    def next_seq(self, run_id: int) -> int:
        """The seq of the run's next test (a step on many hosts stores one test per host and their aggregate)."""
        with self.errors():
            row = self.conn.execute("SELECT COALESCE(MAX(seq) + 1, 0) FROM tests WHERE run_id = ?", (run_id,)).fetchone()
            return row[0]

    def remove_host_tests(self, run_id: int, plan_index: int, attempt: int) -> None:
        """A step on many hosts is stored host by host, then its aggregate: one cut off in between is run again whole."""
        with self.errors():
            self.conn.execute(
                "DELETE FROM tests WHERE run_id = ? AND plan_index = ? AND attempt = ? AND host IS NOT NULL",
                (run_id, plan_index, attempt),
            )

    def add_flag(self, test_id: int, flag: str, message: str) -> None:
        with self.errors():
            self.conn.execute(
                "INSERT INTO test_flags (test_id, flag, message) VALUES (?, ?, ?)"
                " ON CONFLICT (test_id, flag) DO UPDATE SET message = excluded.message", (test_id, flag, message)
            )

    def set_run_values(self, table: str, run_id: int, values: dict) -> None:
        """Key/value facts of a run: its environment (run_env) or what its analysis concluded (run_outcomes)."""
        if table not in ("run_env", "run_outcomes"):
            raise ValueError(table)
        with self.transaction():  # one commit, not one per key
            self.conn.executemany(
                f"INSERT INTO {table} (run_id, key, value_json) VALUES (?, ?, ?)"
                " ON CONFLICT (run_id, key) DO UPDATE SET value_json = excluded.value_json",
                ((run_id, key, json.dumps(value)) for key, value in values.items()),
            )

    def run_values(self, table: str, run_id: int) -> dict:
        if table not in ("run_env", "run_outcomes"):
            raise ValueError(table)
        with self.errors():
            rows = self.conn.execute(f"SELECT key, value_json FROM {table} WHERE run_id = ? ORDER BY key", (run_id,))
            return {row["key"]: json.loads(row["value_json"]) for row in rows}

    def add_smart(self, run_id: int, device: str, phase: str, data: dict) -> None:
        with self.errors():
            self.conn.execute(
                "INSERT INTO run_smart (run_id, device, phase, data_json) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (run_id, device, phase) DO UPDATE SET data_json = excluded.data_json",
                (run_id, device, phase, json.dumps(data)),
            )

    def smart(self, run_id: int) -> dict[str, dict[str, dict]]:
        """{device: {phase: data}} as smartctl reported it."""
        with self.errors():
            rows = self.conn.execute("SELECT device, phase, data_json FROM run_smart WHERE run_id = ?", (run_id,))
            result: dict[str, dict[str, dict]] = {}
            for row in rows:
                result.setdefault(row["device"], {})[row["phase"]] = json.loads(row["data_json"])
            return result

    def reopen_run(self, run_id: int) -> None:
        """A resumed run runs again, in this process; its options keep when ('resumed'), for its header to say."""
        with self.transaction():
            (options_json,) = self.conn.execute("SELECT options_json FROM runs WHERE id = ?", (run_id,)).fetchone()
            options = json.loads(options_json)
            options["resumed"] = [*options.get("resumed", ()), now_iso()]
            self.conn.execute("UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, pid = ?, "
                              "options_json = ? WHERE id = ?",
                              (os.getpid(), json.dumps(options, sort_keys=True), run_id))

    def finish_run(self, run_id: int, status: str, error: str | None = None) -> None:
        with self.errors():
            self.conn.execute("UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?",
                              (status, error, now_iso(), run_id))

    def abandoned_runs(self, hostname: str) -> list[int]:
        """Runs still running whose process is gone: this host's, and imports (fio names their hosts); reading only."""
        with self.errors():
            rows = self.conn.execute("SELECT id, pid, hostname, options_json FROM runs WHERE status = 'running'")
            return [row["id"] for row in rows if (row["hostname"] == hostname or "imported_from" in
                                                  json.loads(row["options_json"])) and not process_alive(row["pid"])]

    def mark_abandoned_runs(self, hostname: str) -> None:
        """Abandoned runs are marked interrupted; an import is one only when an older disklab was killed in it."""
        for run_id in self.abandoned_runs(hostname):
            self.finish_run(run_id, "interrupted", "the disklab process ended without finishing the run")

    def list_runs(
        self, limit: int | None = None, where: RunFilter = RunFilter(), order: str = "-id", offset: int = 0,
    ) -> list[RunInfo]:
        """Newest first, or by `order` (a key of RUN_ORDERS, '-' before it for descending), skipping `offset`;
        reads the runs table and counts tests through an index, never the tests' raw text."""
        limit = limit if limit is None else min(limit, _SQLITE_MAX_INT)  # more than SQLite can count is all
        clause, args, ordering = self._runs_query(where, order)
        sql = f"SELECT {self.run_columns} FROM runs{clause}{ordering}"
        if limit:  # the page's numbers first: PostgreSQL would count the tests of every run the offset skips
            sql = (f"SELECT {self.run_columns} FROM runs WHERE runs.id IN "
                   f"(SELECT runs.id FROM runs{clause}{ordering} LIMIT ? OFFSET ?){ordering}")
            args = (*args, limit, offset)
        with self.errors():
            rows = self.conn.execute(sql, args).fetchall()
        return [run_info(row) for row in rows]

    def iter_runs(self, where: RunFilter = RunFilter(), order: str = "-id") -> Iterator[RunInfo]:
        """Every run `where` takes, as list_runs orders them, read a batch of rows at a time: a list of 100,000 runs
        in flat memory; in a snapshot (a count inside the same one agrees with it)."""
        clause, args, ordering = self._runs_query(where, order)
        sql = f"SELECT {self.run_columns} FROM runs{clause}{ordering}"
        with self.snapshot(), self.errors():
            batches = self.conn.batches(sql, args) if self.path is None else _batches(self.conn.execute(sql, args))
            for rows in batches:
                yield from map(run_info, rows)

    def _runs_query(self, where: RunFilter, order: str) -> tuple[str, tuple, str]:
        """The WHERE that takes the runs and its parameters, and the ORDER BY of `order`."""
        clause, args = self._where(where)
        column = RUN_ORDERS[order.removeprefix("-")]
        direction = "DESC" if order.startswith("-") else "ASC"
        nulls = " NULLS LAST" if order.startswith("-") else " NULLS FIRST"  # SQLite's own order, said for both
        text_order = "" if column == "runs.id" else self.dialect.text_order
        return clause, args, f" ORDER BY {column}{text_order} {direction}{nulls}, runs.id {direction}"

    def count_runs(self, where: RunFilter = RunFilter()) -> int:
        clause, args = self._where(where)
        with self.errors():
            return self.conn.execute(f"SELECT COUNT(*) FROM runs{clause}", args).fetchone()[0]

    def _where(self, where: RunFilter) -> tuple[str, tuple]:
        return where_clause(where, self.dialect, searched_apart(where, self.conn, self.dialect))

    def resolve_run_id(self, ref: str) -> int:
        """'last', 'last~1' (the one before), or a run number."""
        with self.errors():
            if ref == "last" or ref.startswith("last~"):
                back = ref.removeprefix("last").removeprefix("~") or "0"
                if not _run_number(back):
                    raise UserError(f"{ref!r} is not a run: use a run number, 'last' or 'last~N'")
                row = self.conn.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (int(back),)).fetchone()
                if row is None:
                    raise UserError("no runs stored yet" if back == "0" else f"there is no run {ref}")
                return row["id"]
            if not _run_number(ref):
                raise UserError(f"{ref!r} is not a run: use a run number, 'last' or 'last~N'")
            if self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (int(ref),)).fetchone() is None:
                raise UserError(f"there is no run {ref} in {self.name}")
            return int(ref)

    def rename_run(self, run_id: int, name: str | None) -> None:
        """None removes the name; the name is checked by store/names.py's run_name before it gets here."""
        with self.errors():
            if self.conn.execute("UPDATE runs SET name = ? WHERE id = ?", (name, run_id)).rowcount == 0:
                raise UserError(f"there is no run {run_id} in {self.name}")

    def delete_runs(self, run_ids: Sequence[int]) -> None:
        """The runs and everything of theirs, all in one transaction or none of it."""
        with self.transaction():
            delete_runs(self.conn, run_ids)

    def get_run(self, run_id: int, per_host: bool = False) -> RunRecord:
        """A run on many hosts (options 'hosts') shows its per-step aggregates; `per_host` adds each host's tests."""
        return read_runs(self, [run_id], per_host)[0]

    def get_runs(self, run_ids: Sequence[int]) -> list[RunRecord]:
        """Several runs read together (each table asked once), in the order asked."""
        return read_runs(self, run_ids)

    def raw_text(self, run_id: int) -> dict[int, tuple[str, str]]:
        """{test id: (jobfile, fio_output)} of a run."""
        return raw_texts(self, (run_id,))[run_id]


_SQLITE_MAX_INT = 2**63 - 1
_PERCENTILE_COLUMNS = ", ".join(f"clat_{p}_ns" for p in PERCENTILES.values())


def _run_number(text: str) -> bool:
    """Plain digits that fit SQLite's integers ('٣' and a 400-digit number are not run numbers)."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def _casefold(text: str | None) -> str | None:
    return None if text is None else text.casefold()


def _batches(cursor, size: int = 1000) -> Iterator[list]:
    while rows := cursor.fetchmany(size):
        yield rows
