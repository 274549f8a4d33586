"""Do the store commands stay fast with 10,000 stored runs? Time them on a generated store, in fresh processes.

Run by hand (not part of the tests):

    .venv/bin/python bench/store_scale.py --rounds 5

The store holds RUNS runs of the quick suite's 8 tests. A few template runs are written through the Store API
from real fio json+ output (tests/fixtures/fio/) with this machine's real environment; the rest are copies of
them made in SQL in one transaction (new ids, times 10 minutes apart, every tenth run named). It is cached under
/var/tmp, keyed by the schema version and the number of runs, so a second bench starts at once.

Each round runs every command once, in turn, in a fresh process; `disklab --version` is timed the same way, so
that what a command adds to Python's and disklab's start-up shows apart. Wall time is what a user waits; CPU time
(user + system) is steadier on a shared machine. The processes get compiled bytecode as an installed disklab has
(cached under /var/tmp, whatever PYTHONDONTWRITEBYTECODE says). The issue's goal: every store command under 0.5 s
at 10,000 runs.
"""

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

from disklab import __version__
from disklab.env.capture import record_environment
from disklab.plan.jobfile import render_jobfile
from disklab.fio.parse import parse_fio_output
from disklab.plan.build import expand_suite
from disklab.store.db import now_iso
from disklab.store.migrations import LATEST_VERSION
from disklab.store.repository import NewRun, Store
from disklab.suite.loader import load_suite

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "fio"
# A read test gets fio's output of a random read, a write test that of a sequential write (both json+, with bins).
OUTPUT_BY_DIRECTION = {"read": "randread-4k-q32.jsonplus.json", "write": "seqwrite-1m-q8.jsonplus.json"}
# Hosts and targets the template runs differ by, so that the runs list has something to filter.
TEMPLATES = (("lab-a", "/mnt/ssd"), ("lab-a", "/mnt/hdd"), ("lab-b", "/mnt/ssd"), ("lab-b", "/mnt/nvme"))


def commands(runs: int, out: Path) -> dict[str, list[str]]:
    """What is timed: a name, and the arguments after `disklab --db STORE`."""
    return {
        "--version": ["--version"],
        "runs": ["runs"],
        "runs --all -f csv": ["runs", "--all", "-f", "csv", "-o", "/dev/null"],
        f"show {runs // 2}": ["show", str(runs // 2)],
        f"compare 1 {runs}": ["compare", "1", str(runs)],
        "report 1 2 3": ["report", "1", "2", "3", "-o", str(out)],
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
    suite = load_suite("quick")
    tests = expand_suite(suite)
    outputs = {d: (FIXTURES / name).read_text() for d, name in OUTPUT_BY_DIRECTION.items()}
    jobs = {d: parse_fio_output(text).jobs[0] for d, text in outputs.items()}
    with Store(path) as store:
        for hostname, target in TEMPLATES:
            run_id = store.create_run(NewRun(
                suite_name=suite.name, suite_source=suite.source, suite_text=suite.text, target=target,
                target_kind="directory", test_path=f"{target}/disklab-quick.dat", options={"runtime": 60.0},
                disklab_version=__version__, fio_version="fio-3.33", fio_engine="io_uring", hostname=hostname,
                kernel=os.uname().release, planned_tests=len(tests),
            ))
            record_environment(store, run_id, "/var/tmp", False, shutil.which("fio") or "fio", ["io_uring"])
            for seq, test in enumerate(tests):
                jobfile = render_jobfile(test, f"{target}/disklab-quick.dat", f"{target}/disklab-files", suite.name)
                store.add_test(run_id, seq, test.label, test.params(), jobfile, outputs[test.direction], "", now_iso(),
                               jobs[test.direction])
            store.finish_run(run_id, "complete")


def copy_runs(path: Path, template: Path, runs: int) -> None:
    """The template runs copied round-robin into runs 1..RUNS; tables and columns are read from the schema, so
    later migrations need no change here (a new table must have a run_id or a test_id)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
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
        }
        conn.execute("BEGIN")
        tables = [row[0] for row in conn.execute(
            "SELECT name FROM t.sqlite_master WHERE type = 'table' AND name NOT IN ('schema_migrations', 'sqlite_stat1')")]
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


def timed(disklab: list[str], store: Path, args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = "/var/tmp/disklab-bench-pycache"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    result = subprocess.run([*disklab, "--db", str(store), *args], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"disklab {' '.join(args)} failed ({result.returncode}): {result.stderr.strip()}")
    return seconds, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="stored runs (default 10,000)")
    parser.add_argument("--rounds", type=int, default=5, help="times each command runs (default 5)")
    args = parser.parse_args()
    store = cached_store(args.runs)
    disklab = [str(Path(sys.executable).with_name("disklab"))]
    with tempfile.TemporaryDirectory() as scratch:
        to_time = commands(args.runs, Path(scratch) / "report.html")
        for command in to_time.values():  # a round not counted: it fills the bytecode and page caches
            timed(disklab, store, command)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in to_time}
        for _ in range(args.rounds):
            for name, command in to_time.items():
                times[name].append(timed(disklab, store, command))
    start_up = [statistics.median(t[i] for t in times["--version"]) for i in (0, 1)]
    print(f"{args.runs:,} runs in {store} ({store.stat().st_size / 1e6:,.0f} MB), {args.rounds} rounds, seconds:")
    print(f"{'':<22} {'wall':^28}  {'CPU':^28}")
    print(f"{'command':<22} {'min':>6} {'median':>7} {'max':>6} {'-start':>6}  {'min':>6} {'median':>7} {'max':>6} "
          f"{'-start':>6}")
    for name, pairs in times.items():
        cells = []
        for i in (0, 1):
            values = [pair[i] for pair in pairs]
            median = statistics.median(values)
            cells.append(f"{min(values):6.2f} {median:7.2f} {max(values):6.2f} {median - start_up[i]:+6.2f}")
        print(f"{name:<22} {cells[0]}  {cells[1]}")
    print("-start: the median less that of `disklab --version` (Python and disklab starting)")


if __name__ == "__main__":
    main()
