"""Pre-flight checks: each says what it found and, when something is wrong, the exact remedy."""

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from disklab.errors import FioError
from disklab.fio.executor import FOLDER_PREFIX
from disklab.fio.features import ENGINE_PREFERENCE, FioInfo, detect_fio, engine_works
from disklab.store.file_system import store_file_system
from disklab.system.leftovers import Leftover, dead_entries, remove_leftovers
from disklab.targets.filesystem import mount_leftovers
from disklab.targets.array_kinds import leftover_arrays
from disklab.targets.target import stale_entries
from disklab.targets.write_cache import cache_leftovers
from disklab.trace.leftovers import capture_leftovers, replay_leftovers


PROBE_TIMEOUT_S = 60


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok, warn or fail
    detail: str
    lines: tuple[str, ...] = ()  # printed after the table, one each, too long for a cell (a list of paths)


def run_checks(target: str | None, store_path: Path | str,
               more_leftovers: Callable[[str | None], list[Leftover]] = lambda target: []) -> list[Check]:
    """`more_leftovers`: what killed commands of a layer above this one left (a pgbench run's server and cluster)."""
    checks = []
    try:
        fio = detect_fio()
    except FioError as exc:
        return [Check("fio", "fail", str(exc))]
    checks.append(Check("fio", "ok", f"{fio.version_text} at {fio.path}"))
    checks += [_engine_check(fio, engine) for engine in ENGINE_PREFERENCE[:2]]
    if target:
        checks.append(_direct_io_check(fio, target))
    checks.append(_store_check(store_path))
    checks.append(_leftovers_check(target, more_leftovers(target)))
    checks.append(
        Check("smartctl", "ok", shutil.which("smartctl"))
        if shutil.which("smartctl")
        else Check("smartctl", "warn", "not found; drive health is not recorded (apt-get install smartmontools)")
    )
    return checks


def _engine_check(fio: FioInfo, engine: str) -> Check:
    if engine_works(fio, engine):
        return Check(f"engine {engine}", "ok", "works")
    if engine not in fio.engines:
        return Check(f"engine {engine}", "warn", "not built into this fio")
    return Check(f"engine {engine}", "warn", "built in, but the kernel or a sandbox refuses it")


def _direct_io_check(fio: FioInfo, target: str) -> Check:
    """fio itself opens a small file with O_DIRECT in the target directory."""
    folder = Path(target)
    if not folder.is_dir():
        return Check("direct I/O", "warn", f"{target} is not a directory; checked only for directories")
    if not os.access(folder, os.W_OK):
        return Check("direct I/O", "fail", f"cannot write in {target}: permission denied")
    try:
        with tempfile.TemporaryDirectory(prefix=".disklab-doctor-", dir=folder) as probe_dir:
            result = subprocess.run(
                [fio.path, "--name=direct-probe", "--ioengine=psync", "--direct=1", f"--directory={probe_dir}",
                 "--size=1m", "--bs=4k", "--rw=write", "--output-format=json"],
                capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
            )
    except OSError as exc:  # /proc, a read-only mount, a full disk: access(2) said yes, the file system says no
        return Check("direct I/O", "fail", f"cannot write in {target}: {exc.strerror or exc}")
    except subprocess.TimeoutExpired:
        return Check("direct I/O", "fail", f"fio took over {PROBE_TIMEOUT_S}s to write 1 MiB in {target}; "
                                           "the device is hung or far too slow to measure")
    if result.returncode == 0:
        return Check("direct I/O", "ok", f"O_DIRECT works in {target}")
    return Check(
        "direct I/O", "fail",
        f"O_DIRECT is refused in {target} (file systems such as old tmpfs do not support it); test another directory",
    )


def _leftovers_check(target: str | None, more: list[Leftover]) -> Check:
    """What killed disklab processes left (SIGKILL cannot be caught): found by the PID in each name, and removed."""
    found = capture_leftovers() + replay_leftovers() + mount_leftovers() + leftover_arrays() + cache_leftovers() + more
    found += [Leftover(path, "a killed run's fio folder") for path in dead_entries(tempfile.gettempdir(), FOLDER_PREFIX)]
    if target and Path(target).is_dir():
        found += [Leftover(path, "a killed run's test file") for path in stale_entries(target, ("testfile", "files"))]
    if not found:
        return Check("leftovers", "ok", "nothing left by killed disklab processes")
    removed = remove_leftovers(found)
    kept = [leftover for leftover in found if leftover not in removed]
    lines = tuple(f"removed {leftover.what}: {leftover.path}" for leftover in removed) + tuple(
        f"cannot remove {leftover.what}: {leftover.path}" for leftover in kept)
    detail = f"removed {len(removed)} left by killed disklab processes (listed below)" + (
        f"; {len(kept)} could not be removed" if kept else "")
    return Check("leftovers", "fail" if kept else "warn", detail, lines)


def _store_check(store_path: Path | str) -> Check:
    if isinstance(store_path, str):  # a database the lab shares: reached, and its schema this disklab's
        return _database_check(store_path)
    folder = store_path.parent
    existing = folder if folder.exists() else next((p for p in folder.parents if p.exists()), Path("/"))
    if not os.access(existing, os.W_OK):
        return Check("results store", "fail", f"{existing} is not writable; set DISKLAB_HOME or use --db")
    try:  # root passes access(2) on /proc and /sys; only making a file tells
        with tempfile.TemporaryFile(prefix=".disklab-doctor-", dir=existing):
            pass
    except OSError as exc:
        return Check("results store", "fail", f"cannot write in {existing}: {exc.strerror or exc}; set DISKLAB_HOME "
                                              "or use --db")
    file_system = store_file_system(folder)
    refusal = file_system.refusal(store_path)
    if refusal:
        return Check("results store", "fail", refusal)
    if file_system.shared:
        return Check("results store", "ok", f"{store_path} (on {file_system.named}: a rollback journal, not a "
                                            "write-ahead log)")
    return Check("results store", "ok", str(store_path))


def _database_check(url: str) -> Check:
    from disklab.errors import StoreError
    from disklab.store.repository import Store

    try:
        with Store(url, read_only=True) as store:
            return Check("results store", "ok", f"{store.name} ({store.count_runs():,} runs)")
    except StoreError as exc:
        return Check("results store", "fail", str(exc))
