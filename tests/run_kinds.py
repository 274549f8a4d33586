"""Every kind of run disklab can store, made for real in one store: the run-kinds x commands tests read it back
through every command and page that reads runs (tests/integration/test_run_kinds.py), and the installed-package
tier makes some of them with the wheel a user installs (tests/installed/).

Each kind is made by the real `disklab` command (the one given), with real fio on small files, a loop device, fio
servers in network namespaces and a private PostgreSQL; what a kind needs and this machine lacks is left out with
the reason (`Zoo.missing`), never imitated. Everything attached, mounted or started is released when the `with`
block ends, also after a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from pathlib import Path

from tests.children import Children

FIXTURES = Path(__file__).parent / "fixtures"
# Generous: a 2-core machine running other tests may be many times slower than a laptop.
COMMAND_TIMEOUT_S = 600
SHORT = ("--runtime", "1s", "--ramp", "0", "--size", "16MiB")

# A small suite of two tests; with log_interval, so that its runs carry time series.
SMALL_SUITE = """
name = "small"
description = "random 4 KiB read, then write, IOPS logged every 500 ms"

[defaults]
runtime = "1s"
ramp = "0s"
pause = "0s"
size = "16M"
log_interval = "500ms"

[[group]]
name = "RND4K"
label = "RND4K Q4 {direction}"
pattern = "random"
bs = "4k"
iodepth = 4
direction = ["read", "write"]
"""
# fio's client/server mode has no interval logs.
HOSTS_SUITE = SMALL_SUITE.replace('log_interval = "500ms"\n', "")
assert HOSTS_SUITE != SMALL_SUITE

# A short saturation search (two depths at one job, then the ten load levels: 12 steps of 0.3 s), and steady-state
# and write-saturation rounds (tests/integration/test_method_charts.py draws their charts too).
SATURATE_SUITE = """
name = "saturate-small"
mode = "saturate"

[saturate]
max_iodepth = 2
max_jobs = 1
p99 = "1ms"

[defaults]
size = "16M"
runtime = "300ms"

[[group]]
name = "RND4K read"
metric = "iops"
pattern = "random"
direction = "read"
bs = "4k"
"""

ROUNDS_SUITE = """
name = "rounds-small"
mode = "{mode}"

[steady]
{steady}
max_rounds = 4
precondition = false
purge = false

[defaults]
size = "16M"
runtime = "300ms"

[[group]]
name = "RND4K write"
metric = "iops"
pattern = "random"
direction = "write"
bs = "4k"
iodepth = 4
"""
STEADY_SUITE = ROUNDS_SUITE.format(mode="steady", steady="window = 3")
# A multiple (16 GB) that 1.2 s of writing cannot reach: the four rounds run; steady state is judged on the default
# window of 5.
WRITE_SATURATION_SUITE = ROUNDS_SUITE.format(mode="write-saturation", steady="written_multiple = 1000")

# Its second test, {failing}, is one that fio cannot run (tests/integration/test_errors.py fills it in).
FAILING_SUITE = """
name = "second-test-fails"

[defaults]
size = "16MiB"
runtime = "1s"
ramp = "0s"
direct = true

[[group]]
name = "works"
pattern = "random"
direction = "read"
bs = "4k"

[[group]]
name = "fails"
pattern = "sequential"
{failing}
"""
# A write to a file the kernel refuses to open for writing (chattr +i): fio fails, the run is stored as failed with
# the first test kept.
WRITE_FAILS = 'direction = "write"\nbs = "4k"'

# fio output of several fio versions and layouts, made by real fio (tests/fixtures/fio/layouts/README.md).
IMPORTED = ("layouts/layout-fio-2.20.randrw.json", "layouts/layout-fio-2.20.randrw.jsonplus.json",
            "layouts/layout-fio-3.1.randrw.json", "layouts/layout-fio-3.36.randread.json",
            "layouts/client-one-host.jsonplus.json", "import-client-two-hosts.json", "layouts/numjobs4-ungrouped.json",
            "layouts/rw-randtrim.json", "layouts/failed-dev-full.json", "layouts/json-terse.txt",
            "layouts/clat-percentiles-off.json", "layouts/steadystate.json", "layouts/jsonplus-write-fsync.jsonplus.json")


@dataclass
class Zoo:
    """The store and what is in it: run numbers by kind, and the kinds left out here with the reason."""

    home: Path
    env: dict[str, str]
    command: Sequence[str]
    runs: dict[str, list[int]] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def store(self) -> Path:
        return self.home / "results.db"

    def __call__(self, *args: str, env: dict[str, str] | None = None, check: bool = True,
                 timeout: float = COMMAND_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*self.command, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              env=env or self.env, timeout=timeout)
        if check and done.returncode != 0:
            raise AssertionError(f"disklab {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
        return done

    def last_run(self) -> int:
        return json.loads(self("show", "last", "-f", "json").stdout)["run"]["id"]

    def stored(self, kind: str, *args: str, env: dict[str, str] | None = None, check: bool = True,
               runs: int = 1) -> subprocess.CompletedProcess[str]:
        """Make `runs` runs of a kind with `disklab ARGS`, and file their numbers under it."""
        before = self._newest()
        done = self(*args, env=env, check=check)
        made = list(range(before + 1, self._newest() + 1))
        assert len(made) == runs, f"{kind}: {len(made)} runs stored, {runs} expected\n{done.stderr}"
        self.runs.setdefault(kind, []).extend(made)
        return done

    def _newest(self) -> int:
        """The highest run number stored so far (0 before the store is made), read from the store itself."""
        if not self.store.exists():
            return 0
        with closing(sqlite3.connect(f"file:{self.store}?mode=ro", uri=True, timeout=30)) as conn:
            return conn.execute("SELECT coalesce(max(id), 0) FROM runs").fetchone()[0]

    def all_runs(self) -> list[int]:
        return sorted(run_id for ids in self.runs.values() for run_id in ids)


def make_zoo(folder: Path, command: Sequence[str], stack: ExitStack, children: Children,
             kinds: Sequence[str] | None = None) -> Zoo:
    """Every kind (or those named) stored in folder/home/results.db; releases go onto `stack`."""
    home = folder / "home"
    env = {**os.environ, "DISKLAB_HOME": str(home), "DISKLAB_CONFIG": "", "COLUMNS": "250"}
    for name in ("DISKLAB_DB", "DISKLAB_STORE", "DISKLAB_REPEAT"):
        env.pop(name, None)
    zoo = Zoo(home, env, tuple(command))
    for kind, make in MAKERS.items():
        if kinds is None or kind in kinds:
            reason = make(zoo, folder / kind.replace(" ", "-"), stack, children)
            if reason:
                zoo.missing[kind] = reason
    return zoo


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _suite(folder: Path, text: str, name: str = "suite.toml") -> str:
    path = _folder(folder) / name
    path.write_text(text)
    return str(path)


def _builtin_default_passes(zoo, folder, stack, children):
    """The quick profile's read tests with the default 5 passes; named, with a note."""
    zoo.stored("builtin default passes", "run", "quick", "--read-only", "--target", str(_folder(folder)), *SHORT,
               "--name", "first look")
    zoo("note", "last", "read tests only, 5 passes")


def _builtin_repeat_1(zoo, folder, stack, children):
    zoo.stored("builtin repeat 1", "run", "quick", "--repeat", "1", "--target", str(_folder(folder)), *SHORT,
               "--name", "Größe ✓ 日本 <b>&amp;")


def _best_of(zoo, folder, stack, children):
    zoo.stored("best of", "run", "quick", "--read-only", "--best-of", "2", "--target", str(_folder(folder)), *SHORT)


def _precision(zoo, folder, stack, children):
    zoo.stored("precision", "run", _suite(folder, SMALL_SUITE), "--precision", "40%", "--max-time", "8s",
               "--target", str(_folder(folder / "target")))


def _adhoc(zoo, folder, stack, children):
    target = str(_folder(folder))
    zoo.stored("ad-hoc", "run", "--rw", "randrw", "--rwmixread", "70", "--bs", "8k", "--iodepth", "8",
               "--target", target, *SHORT)
    for rw, bs in (("randread", "4KiB"), ("read", "1m"), ("write", "65536"), ("randwrite", "16K")):
        zoo.stored("ad-hoc", "run", "--rw", rw, "--bs", bs, "--numjobs", "2", "--repeat", "1", "--target", target,
                   *SHORT)


def _jobfile(zoo, folder, stack, children):
    """fio's own example, and one of options handed to fio as written (split bs, bssplit, fsync, zipf, loops ...)
    with the default passes."""
    zoo.stored("fio job file", "run", str(FIXTURES / "jobfiles" / "ssd-test.fio"), "--repeat", "1",
               "--target", str(_folder(folder)))
    zoo.stored("fio job file", "run", str(FIXTURES / "jobfiles" / "as-written.fio"), "--runtime", "1s",
               "--target", str(_folder(folder)))


def _saturate(zoo, folder, stack, children):
    zoo.stored("saturate", "run", _suite(folder, SATURATE_SUITE), "--target", str(_folder(folder / "target")))


def _steady(zoo, folder, stack, children):
    zoo.stored("steady", "run", _suite(folder, STEADY_SUITE), "--target", str(_folder(folder / "target")))


def _write_saturation(zoo, folder, stack, children):
    zoo.stored("write saturation", "run", _suite(folder, WRITE_SATURATION_SUITE),
               "--target", str(_folder(folder / "target")))


def _sync(zoo, folder, stack, children):
    """Commit latency: fio's sync direction beside the writes."""
    zoo.stored("sync", "run", "sync", "--repeat", "1", "--target", str(_folder(folder)), *SHORT)


def _file_sets(zoo, folder, stack, children):
    """Suites of many files and frames (their own views): video and fill, shrunk."""
    target = str(_folder(folder))
    zoo.stored("file sets", "run", "video", "--repeat", "1", "--scale", "0.004", "--target", target,
               "--runtime", "1", "--ramp", "0", "--pause", "0")
    zoo.stored("file sets", "run", "fill", "--repeat", "1", "--size", "16M", "--target", target,
               "--runtime", "1", "--ramp", "0", "--pause", "0")


def _pgbench(zoo, folder, stack, children):
    if not list(Path("/usr/lib/postgresql").glob("*/bin/initdb")) or shutil.which("pgbench") is None \
            and not list(Path("/usr/lib/postgresql").glob("*/bin/pgbench")):
        return "PostgreSQL's server and pgbench are not installed"
    # A folder the server's user (postgres, as the tests run as root) can reach: pytest's own are private.
    target = Path(tempfile.mkdtemp(prefix="disklab-zoo-pgbench-", dir="/tmp"))
    target.chmod(0o755)
    stack.callback(shutil.rmtree, target, ignore_errors=True)
    zoo.stored("pgbench", "run", "pgbench", "--target", str(target), "--scale", "1", "--clients", "1,2",
               "--time", "1s")


def _replay(zoo, folder, stack, children):
    """A trace fio itself wrote (write_iolog), replayed as fast as fio can."""
    _folder(folder)
    trace = folder / "app.trace"
    subprocess.run(
        ["fio", "--name=app", f"--filename={folder / 'source.dat'}", "--size=4m", "--rw=randrw", "--rwmixread=70",
         "--bssplit=4k/50:8k/50", "--direct=1", "--ioengine=libaio", "--iodepth=4", "--rate_iops=300",
         "--runtime=1", "--time_based=1", f"--write_iolog={trace}", "--output-format=json"],
        check=True, capture_output=True, text=True,
    )
    (folder / "source.dat").unlink()
    zoo.stored("replay", "run", "replay", "--trace", str(trace), "--speed", "max",
               "--target", str(_folder(folder / "target")))


def _hosts(zoo, folder, stack, children):
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return "fio servers in network namespaces need root and iproute2"
    from tests.integration.netns import host_namespaces

    try:
        hosts = stack.enter_context(host_namespaces(2, _folder(folder)))
    except RuntimeError as exc:
        return f"no network namespaces here: {exc}"
    target = _folder(folder / "shared")
    zoo.stored("hosts", "run", _suite(folder, HOSTS_SUITE), "--hosts", ",".join(h.address for h in hosts),
               "--repeat", "1", "--target", str(target))


def _configured(zoo, folder, stack, children):
    """Series of loop devices: two file systems (mkfs.xfs makes nothing under 300 MB), two conditions and two
    spare-area levels of a small device (the full condition writes it twice over)."""
    if os.geteuid() != 0 or shutil.which("losetup") is None or shutil.which("mkfs.xfs") is None:
        return "configured series need root, losetup and mkfs.xfs (a loop device with file systems)"
    suite = _suite(folder, HOSTS_SUITE)
    large = stack.enter_context(loop_device(_folder(folder) / "large.img", 512 * 1024**2))
    zoo.stored("configured series", "run", suite, "--repeat", "1", "--target", large, "--destroy-data",
               "--fs", "ext4", "--fs", "xfs", runs=2)
    small = stack.enter_context(loop_device(folder / "small.img", 64 * 1024**2))
    zoo.stored("configured series", "run", suite, "--repeat", "1", "--target", small, "--destroy-data",
               "--condition", "fresh,full", runs=2)
    zoo.stored("configured series", "run", suite, "--repeat", "1", "--target", small, "--destroy-data",
               "--overprovision", "0,50", runs=2)


def _interrupted(zoo, folder, stack, children):
    """Ctrl-C once the first test is stored: the run keeps it and is marked interrupted."""
    first = zoo._newest()
    process = children.start([*zoo.command, "run", "quick", "--repeat", "1", "--target", str(_folder(folder)),
                              "--runtime", "2s", "--ramp", "0", "--size", "16MiB"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=zoo.env)
    deadline = time.monotonic() + COMMAND_TIMEOUT_S
    while not _has_tests(zoo, first + 1):
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the run to interrupt ended first: {process.communicate()[1]}")
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=COMMAND_TIMEOUT_S)
    assert process.returncode == 130, stderr
    zoo.runs["interrupted"] = [first + 1]


def _has_tests(zoo: Zoo, run_id: int) -> bool:
    shown = zoo("show", str(run_id), "-f", "json", check=False)
    return shown.returncode == 0 and bool(json.loads(shown.stdout)["tests"])


def _failed(zoo, folder, stack, children):
    if shutil.which("chattr") is None:
        return "chattr (e2fsprogs) is not installed: no file the kernel refuses to write"
    locked = _folder(folder) / "locked.bin"
    locked.write_bytes(os.urandom(16 * 1024**2))
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode != 0:
        return f"the file system of {folder} has no immutable attribute"
    stack.callback(subprocess.run, ["chattr", "-i", str(locked)], check=True)
    done = zoo.stored("failed", "run", _suite(folder, FAILING_SUITE.format(failing=WRITE_FAILS)), "--repeat", "1",
                      "--target", str(locked),
                      "--destroy-data", check=False)
    assert done.returncode == 4, done.stderr


def _imported(zoo, folder, stack, children):
    for name in IMPORTED:
        zoo.stored("imported fio output", "import", str(FIXTURES / "fio" / name))


def _bundle(zoo, folder, stack, children):
    """A run made in another store, moved by export-run and import."""
    other = {**zoo.env, "DISKLAB_HOME": str(folder / "other-home")}
    zoo(*("run", _suite(folder, SMALL_SUITE), "--repeat", "1", "--target", str(_folder(folder / "target"))),
        env=other)
    zoo("export-run", "last", "-o", str(folder / "run.json.gz"), env=other)
    zoo.stored("imported bundle", "import", str(folder / "run.json.gz"))


def _array_series(zoo, folder, stack, children):
    """A member measured alone, then md RAID 0, 1, 5, 6 and 10 over four members, as one series: made by the kernel
    tier's guest, where md exists (tests/fixtures/capture_arrays.py), moved here by export-run and import."""
    zoo.stored("array series", "import", str(FIXTURES / "arrays" / "delayed-md-arrays.json.gz"), runs=6)


MAKERS: dict[str, Callable[[Zoo, Path, ExitStack, Children], str | None]] = {
    "builtin default passes": _builtin_default_passes, "builtin repeat 1": _builtin_repeat_1, "best of": _best_of,
    "precision": _precision, "ad-hoc": _adhoc, "fio job file": _jobfile, "saturate": _saturate, "steady": _steady,
    "write saturation": _write_saturation, "sync": _sync, "file sets": _file_sets, "pgbench": _pgbench,
    "replay": _replay, "hosts": _hosts, "configured series": _configured, "interrupted": _interrupted,
    "failed": _failed, "imported fio output": _imported, "imported bundle": _bundle, "array series": _array_series,
}


class loop_device:
    """A sparse image attached as a loop device; detached on exit."""

    def __init__(self, image: Path, size_bytes: int):
        self.image, self.size_bytes = image, size_bytes
        self.device: str | None = None

    def __enter__(self) -> str:
        with self.image.open("wb") as handle:
            handle.truncate(self.size_bytes)
        attached = subprocess.run(["losetup", "--find", "--show", str(self.image)], capture_output=True, text=True,
                                  check=True)
        self.device = attached.stdout.strip()
        return self.device

    def __exit__(self, *exc) -> None:
        subprocess.run(["losetup", "-d", self.device], capture_output=True)
