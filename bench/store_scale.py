"""Do the store commands stay fast with 10,000 stored runs, in a SQLite file and in PostgreSQL? And how fast do
writers at once fill one PostgreSQL store? Time them on generated stores, in fresh processes.

Run by hand (not part of the tests):

    .venv/bin/python bench/store_scale.py --rounds 5 [--backends sqlite,postgresql] [--writers 4]

The store holds RUNS runs of the quick suite's 8 tests. A few template runs are written through the Store API
from real fio json+ output (tests/fixtures/fio/) with this machine's real environment; the rest are copies of
them made in SQL in one transaction (new ids, times 10 minutes apart, every tenth run named). It is cached under
/var/tmp, keyed by the schema version and the number of runs, so a second bench starts at once.

Each round runs every command once, in turn, in a fresh process; `disklab --version` is timed the same way, so
that what a command adds to Python's and disklab's start-up shows apart (from a checkout, --version also asks git
for the commit, some 0.1 s of CPU that an installed disklab does not spend: the -start figures are that much low). Wall time is what a user waits; CPU time
(user + system) is steadier on a shared machine. The processes get compiled bytecode as an installed disklab has
(cached under /var/tmp, whatever PYTHONDONTWRITEBYTECODE says). The issue's goal: every store command under 0.5 s
at 10,000 runs.

PostgreSQL (issue 31): a private server, made and removed by the bench with the tests' code (tests/pgserver.py,
imported from the checkout: fsync and synchronous commits on, as shipped), its role's password in the store's URL.
WRITERS processes at once each store RUNS / WRITERS runs through the Store API, as `disklab run` stores them: a
quick run whose tests are the template runs' (real fio json+ output), whose environment is one recorded on this
machine by record_environment and then set on each run. Their runs per second, and a check that RUNS distinct
runs (numbers and uids) are there at the end. Then every command is timed on both stores, the backends taking
turns (A B A B), and so is serve's runs list (a request to a running `disklab serve`, as bench/web.py fetches
pages). The SQLite store holds the same runs (the template runs copied in SQL), not written by the writers.
"""

import argparse
import contextlib
import multiprocessing
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import disklab
from disklab.env.capture import record_environment
from disklab.plan.jobfile import render_jobfile
from disklab.fio.parse import parse_fio_output
from disklab.plan.build import expand_suite
from disklab.store.db import now_iso
from disklab.store.migrations import LATEST_VERSION
from disklab.store.repository import NewRun, Store
from disklab.suite.loader import load_suite
from web import fetch, serving  # bench/ is on the path of a script run from it

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # for tests.pgserver: the tests' private server, whose code the bench shares
FIXTURES = REPO / "tests" / "fixtures" / "fio"
# A read test gets fio's output of a random read, a write test that of a sequential write (both json+, with bins).
OUTPUT_BY_DIRECTION = {"read": "randread-4k-q32.jsonplus.json", "write": "seqwrite-1m-q8.jsonplus.json"}
# Hosts and targets the template runs differ by, so that the runs list has something to filter.
TEMPLATES = (("lab-a", "/mnt/ssd"), ("lab-a", "/mnt/hdd"), ("lab-b", "/mnt/ssd"), ("lab-b", "/mnt/nvme"))


def commands(runs: int, out: Path) -> dict[str, list[str]]:
    """What is timed: a name, and the arguments after `disklab --store STORE`."""
    return {
        "--version": ["--version"],
        "runs": ["runs"],
        "runs --all -f csv": ["runs", "--all", "-f", "csv", "-o", str(out.with_name("runs.csv"))],
        f"show {runs // 2}": ["show", str(runs // 2)],
        f"compare 1 {runs}": ["compare", "1", str(runs)],
        f"report 1 {runs}": ["report", "1", str(runs), "-o", str(out)],
    }


def cached_store(runs: int) -> Path:
    path = Path("/var/tmp") / f"disklab-store-scale-schema{LATEST_VERSION}-{runs}runs.db"
    if not path.exists():
        started = time.monotonic()
        with tempfile.TemporaryDirectory(dir="/var/tmp") as scratch:
            template = Path(scratch) / "template.db"
            write_templates(template)
            staged = Path(scratch) / "store.db"
            shutil.copyfile(template, staged)
            copy_runs(staged, template, runs)
            staged.replace(path)
        print(f"generated {path} ({path.stat().st_size / 1e6:,.0f} MB) in {time.monotonic() - started:,.0f} s",
              file=sys.stderr)
    return path


def write_templates(path: Path) -> None:
    """One quick run per template through the Store API, as `disklab run` stores it."""
    quick = QuickRuns()
    with Store(path) as store:
        for hostname, target in TEMPLATES:
            quick.store(store, hostname, target)


class QuickRuns:
    """Runs of the quick suite made of the fixtures' real fio output, stored as `disklab run` stores them; the
    environment is recorded on this machine for the first run, and set as it is on the others."""

    def __init__(self):
        self.suite = load_suite("quick")
        self.tests = expand_suite(self.suite)
        self.outputs = {d: (FIXTURES / name).read_text() for d, name in OUTPUT_BY_DIRECTION.items()}
        self.jobs = {d: parse_fio_output(text).jobs[0] for d, text in self.outputs.items()}
        self.env: dict | None = None

    def store(self, store: Store, hostname: str, target: str) -> int:
        run_id = store.create_run(NewRun(
            suite_name=self.suite.name, suite_source=self.suite.source, suite_text=self.suite.text, target=target,
            target_kind="directory", test_path=f"{target}/disklab-quick.dat", options={"runtime": 60.0},
            disklab_version=disklab.version(), fio_version="fio-3.33", fio_engine="io_uring", hostname=hostname,
            kernel=os.uname().release, planned_tests=len(self.tests),
        ))
        if self.env is None:
            record_environment(store, run_id, "/var/tmp", False, shutil.which("fio") or "fio", ["io_uring"])
            self.env = store.run_values("run_env", run_id)
        else:
            store.set_run_values("run_env", run_id, self.env)
        for seq, test in enumerate(self.tests):
            jobfile = render_jobfile(test, f"{target}/disklab-quick.dat", f"{target}/disklab-files", self.suite.name)
            store.add_test(run_id, seq, test.label, test.params(), jobfile, self.outputs[test.direction], "",
                           now_iso(), self.jobs[test.direction])
        store.finish_run(run_id, "complete")
        return run_id


def copy_runs(path: Path, template: Path, runs: int) -> None:
    """The template runs copied round-robin into runs 1..RUNS; tables and columns are read from the schema, so
    later migrations need no change here (a new table must have a run_id or a test_id, or be kept by triggers)."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("ATTACH ? AS t", (str(template),))
        templates = conn.execute("SELECT COUNT(*) FROM t.runs").fetchone()[0]
        per_run = conn.execute("SELECT MAX(seq) + 1 FROM t.tests").fetchone()[0]
        numbers = f"WITH RECURSIVE n(r) AS (SELECT 1 UNION ALL SELECT r + 1 FROM n WHERE r < {runs})"
        template_of = f"(n.r - 1) % {templates} + 1"
        new_test = f"(n.r - 1) * {per_run} + tt.seq + 1"
        run_values = {
            "id": "n.r",
            "started_at": "strftime('%Y-%m-%dT%H:%M:%S+00:00', '2026-01-01', '+' || (n.r * 600) || ' seconds')",
            "finished_at": "strftime('%Y-%m-%dT%H:%M:%S+00:00', '2026-01-01', '+' || (n.r * 600 + 300) || ' seconds')",
            "name": "CASE WHEN n.r % 10 = 0 THEN 'nightly ' || n.r END",
            "uid": "lower(hex(randomblob(16)))",  # each copy a run of its own (migration 10's unique index)
        }
        conn.execute("BEGIN")
        # deleted_runs: numbers of runs deleted, none in the templates; run_groups: kept by the store's triggers as
        # the runs go in
        tables = [row[0] for row in conn.execute(
            "SELECT name FROM t.sqlite_master WHERE type = 'table' AND name NOT IN ('schema_migrations', "
            "'sqlite_stat1', 'deleted_runs', 'run_groups')")]
        for table in tables:
            columns = [row[1] for row in conn.execute(f"PRAGMA t.table_info({table})")]
            if table == "runs":
                values, source = run_values, f"t.runs AS x JOIN n ON x.id = {template_of}"
            elif table == "tests":
                values = {"id": new_test, "run_id": "n.r"}
                source = f"t.tests AS tt JOIN n ON tt.run_id = {template_of}"
            elif "test_id" in columns:
                values = {"test_id": new_test}
                source = f"t.{table} AS x JOIN t.tests AS tt ON tt.id = x.test_id JOIN n ON tt.run_id = {template_of}"
            else:
                values, source = {"run_id": "n.r"}, f"t.{table} AS x JOIN n ON x.run_id = {template_of}"
            alias = "tt" if table == "tests" else "x"
            selected = ", ".join(values.get(c, f"{alias}.{c}") for c in columns)
            conn.execute(f"DELETE FROM main.{table}")
            conn.execute(f"{numbers} INSERT INTO main.{table} ({', '.join(columns)}) SELECT {selected} FROM {source}")
        conn.execute("COMMIT")
        conn.execute("DETACH t")


def postgresql_store(url: str, runs: int, writers: int) -> None:
    """WRITERS processes at once fill the store; their runs per second, and the runs checked. The schema is made
    first, as a lab's first machine makes it (processes making it at once are the tests' concern)."""
    Store(url).close()
    start = multiprocessing.Barrier(writers)
    results = multiprocessing.Queue()
    processes = [multiprocessing.Process(target=writer, args=(url, n, runs // writers, start, results))
                 for n in range(writers)]
    for process in processes:
        process.start()
    spans = [results.get() for _ in processes]
    for process in processes:
        process.join()
    failed = [span for span in spans if isinstance(span, str)]
    if failed:
        raise SystemExit("; ".join(failed))
    begun, ended = min(s[0] for s in spans), max(s[1] for s in spans)
    timed_runs = runs - writers  # each writer's first run is not timed
    each = ", ".join(f"{(runs // writers - 1) / (e - b):,.0f}" for b, e in spans)
    print(f"{writers} writers at once stored {timed_runs:,} runs of {len(expand_suite(load_suite('quick')))} tests "
          f"in {ended - begun:,.1f} s: {timed_runs / (ended - begun):,.0f} runs/s in all (each: {each} runs/s)")
    with Store(url, read_only=True) as store:
        count, numbers, uids, lowest, highest = store.conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT id), COUNT(DISTINCT uid), MIN(id), MAX(id) FROM runs").fetchone()
        tests = store.conn.execute("SELECT COUNT(*) FROM tests").fetchone()[0]
    print(f"stored: {count:,} runs, {numbers:,} distinct numbers ({lowest}-{highest}), {uids:,} distinct uids, "
          f"{tests:,} tests")
    if not count == numbers == uids == runs:
        raise SystemExit(f"expected {runs:,} distinct runs")


def writer(url: str, number: int, runs: int, start, results) -> None:
    """One writer: the store opened (its schema made by whichever writer comes first), then RUNS runs once all are
    ready; (start, end) of its writing, by the clock every process shares."""
    hostname, target = TEMPLATES[number % len(TEMPLATES)]
    quick = QuickRuns()
    try:
        with Store(url) as store:
            quick.store(store, hostname, target)  # its environment recorded, the connection warm: one run not timed
            start.wait()
            begun = time.monotonic()
            for _ in range(runs - 1):
                quick.store(store, hostname, target)
            results.put((begun, time.monotonic()))
    except BaseException as exc:
        start.abort()  # the others stop waiting for this one
        results.put(f"writer {number} failed: {type(exc).__name__}: {exc}")


def timed(disklab: list[str], store: Path | str, args: list[str]) -> tuple[float, float, float]:
    """(wall, CPU) seconds of one fresh process, and its peak memory (MB, its largest resident set); the CPU is
    disklab's own (not a database server's)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = "/var/tmp/disklab-bench-pycache"
    started = time.monotonic()
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen([*disklab, "--store", str(store), *args], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=errors, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            raise SystemExit(f"disklab {' '.join(args)} failed ({process.returncode}): {errors.read().decode().strip()}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="stored runs (default 10,000)")
    parser.add_argument("--rounds", type=int, default=5, help="times each command runs (default 5)")
    parser.add_argument("--backends", default="sqlite,postgresql", help="stores to time, in turn (default both)")
    parser.add_argument("--writers", type=int, default=4, help="processes filling the PostgreSQL store (default 4)")
    args = parser.parse_args()
    backends = args.backends.split(",")
    with contextlib.ExitStack() as stack:
        stores: dict[str, Path | str] = {}
        if "sqlite" in backends:
            stores["sqlite"] = cached_store(args.runs)
        if "postgresql" in backends:
            from tests.pgserver import PrivateServer

            server = PrivateServer.start(durable=True)
            stack.callback(server.stop)
            stores["postgresql"] = server.url(server.create_database())
            postgresql_store(stores["postgresql"], args.runs, args.writers)
        time_commands(stores, args.runs, args.rounds, stack)


def time_commands(stores: dict[str, Path | str], runs: int, rounds: int, stack: contextlib.ExitStack) -> None:
    """Every command once per round on each store, the stores taking turns; then serve's runs list likewise."""
    disklab = [str(Path(sys.executable).with_name("disklab"))]
    scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
    to_time = commands(runs, scratch / "report.html")
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for name, command in to_time.items():  # a round not counted: it fills the bytecode and page caches
        for store in stores.values():
            timed(disklab, store, command)
    for _ in range(rounds):
        for name, command in to_time.items():
            for backend, store in stores.items():
                times.setdefault((name, backend), []).append(timed(disklab, store, command))
    bases = {backend: stack.enter_context(serving(store)) for backend, store in stores.items()}
    for round_number in range(rounds + 1):  # round 0 fills the caches and is not counted
        for backend, base in bases.items():
            seconds, _ = fetch(base + "/")
            if round_number:
                times.setdefault(("serve: / (runs list)", backend), []).append((seconds, float("nan"), float("nan")))
    print(f"{runs:,} runs; {rounds} rounds; seconds (serve: a request to the running server, its CPU not measured):")
    print(f"{'':<34} {'wall':^28}  {'CPU':^28}")
    print(f"{'command':<22} {'backend':<11} {'min':>6} {'median':>7} {'max':>6} {'-start':>6}  {'min':>6} "
          f"{'median':>7} {'max':>6} {'-start':>6}")
    for (name, backend), pairs in times.items():
        start_up = [statistics.median(t[i] for t in times[("--version", backend)]) for i in (0, 1)]
        cells = []
        for i in (0, 1):
            values = [pair[i] for pair in pairs]
            median = statistics.median(values)
            in_process = name.startswith("serve") and i == 1
            cells.append(f"{'-':>6} {'-':>7} {'-':>6} {'-':>6}" if in_process else
                         f"{min(values):6.2f} {median:7.2f} {max(values):6.2f} "
                         + (f"{'-':>6}" if name.startswith("serve") else f"{median - start_up[i]:+6.2f}"))
        print(f"{name:<22} {backend:<11} {cells[0]}  {cells[1]}")
    print("-start: the median less that of `disklab --version` (Python and disklab starting)")
    for (name, backend), measured in times.items():
        if name.startswith("runs --all"):
            print(f"{name} on {backend}: {runs / statistics.median(m[0] for m in measured):,.0f} runs/s, peak memory "
                  f"{statistics.median(m[2] for m in measured):,.0f} MB (`runs`: "
                  f"{statistics.median(m[2] for m in times[('runs', backend)]):,.0f} MB)")
    import psycopg

    print(f"psycopg {psycopg.__version__}, its {psycopg.pq.__impl__} implementation, libpq {psycopg.pq.version()}")
    for backend, store in stores.items():
        if isinstance(store, Path):
            print(f"{backend}: {store} ({store.stat().st_size / 1e6:,.0f} MB)")


if __name__ == "__main__":
    main()
