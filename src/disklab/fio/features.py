"""Which fio is installed, how new it is, and which I/O engine works on this kernel.

Asking fio costs a few tenths of a second (the engine probe is a real fio job), so `disklab run` keeps the
answers in a cache file: a fio binary's version and engines for as long as the binary is the same file, and
which engines work for as long as the kernel is the same boot with the same io_uring switch and sandbox.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from disklab.errors import FioError, UserError
from disklab.system.outputs import write_whole

MIN_VERSION = (3, 16)
INSTALL_HINT = "install it with 'apt-get install fio' (Debian/Ubuntu) or 'dnf install fio'"
# In order of preference; psync is the last resort that every fio has.
ENGINE_PREFERENCE = ("io_uring", "libaio", "psync")


@dataclass(frozen=True)
class FioInfo:
    path: str
    version_text: str
    version: tuple[int, ...]
    engines: frozenset[str]
    cache: Path | None = None  # where the answers about this binary are kept across runs; None: ask fio every time
    works: dict[str, bool] = field(default_factory=dict, compare=False)  # engine -> probed (this boot) or cached


def detect_fio(fio: str | None = None, cache: Path | None = None) -> FioInfo:
    """With `cache`, fio is asked only what it has not answered since its binary last changed."""
    path = shutil.which(fio or "fio")
    if path is None:
        raise FioError(f"fio not found{' at ' + fio if fio else ' on PATH'}; {INSTALL_HINT}")
    known = _cached(cache, path)
    version_text = known["version_text"] if known else _output([path, "--version"]).strip()
    match = re.search(r"fio-(\d+)\.(\d+)", version_text)
    if not match:
        raise FioError(f"{path} does not look like fio (it says {version_text!r}); {INSTALL_HINT}")
    version = (int(match.group(1)), int(match.group(2)))
    if version < MIN_VERSION:
        raise FioError(
            f"{path} is {version_text}, disklab needs fio {'.'.join(map(str, MIN_VERSION))} or newer; {INSTALL_HINT}"
        )
    if known:
        engines = frozenset(known["engines"])
    else:
        engines_text = _output([path, "--enghelp"])
        engines = frozenset(line.strip() for line in engines_text.splitlines()[1:] if line.strip())
    info = FioInfo(path=path, version_text=version_text, version=version, engines=engines, cache=cache,
                   works=dict(known["works"]) if known and known["kernel"] == _kernel_identity() else {})
    if cache is not None and not known:
        _remember(info)
    return info


def engine_works(info: FioInfo, engine: str) -> bool:
    """Compiled in is not enough (io_uring may be blocked by the kernel or a sandbox): let fio try it, once per boot."""
    if engine not in info.engines:
        return False
    if engine not in info.works:
        info.works[engine] = _probe(info, engine)
        if info.cache is not None:
            _remember(info)
    return info.works[engine]


def _probe(info: FioInfo, engine: str) -> bool:
    with tempfile.TemporaryDirectory(prefix="disklab-probe-") as folder:
        probe = [
            info.path, "--name=probe", f"--ioengine={engine}", f"--filename={Path(folder) / 'probe'}",
            "--size=64k", "--bs=4k", "--rw=read", "--output-format=json",
        ]
        result = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    return result.returncode == 0 and '"error" : 0' in result.stdout


def device_engine_error(info: FioInfo, engine: str, device: str, writes: bool) -> str | None:
    """What fio says when `engine` fails on `device` itself, None when it works: a short direct job in the device's
    first 16 MiB, random reads, and writes too where the run writes (io_uring has failed on md RAID5 with EAGAIN
    where the probe on a file worked: fio issues 1374 and 1401)."""
    probe = [info.path, "--name=engine-probe", f"--ioengine={engine}", f"--filename={device}", "--direct=1",
             f"--rw={'randrw' if writes else 'randread'}", "--bs=4k", "--iodepth=8", "--size=16M",
             "--number_ios=256", "--output-format=json"]
    try:
        result = subprocess.run(probe, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"{engine} did not finish 256 I/Os on {device} in 60 s"
    if result.returncode == 0 and '"error" : 0' in result.stdout:
        return None
    said = " ".join(line.strip() for line in (result.stderr or result.stdout).splitlines() if line.strip())
    return said[:300] or f"fio exited {result.returncode}"


def choose_engine(info: FioInfo, wanted: str = "auto") -> str:
    if wanted != "auto":
        if not engine_works(info, wanted):
            raise FioError(f"fio engine {wanted!r} does not work here (built-in engines: {', '.join(sorted(info.engines))})")
        return wanted
    for engine in ENGINE_PREFERENCE:
        if engine_works(info, engine):
            return engine
    raise FioError(f"none of the fio engines {', '.join(ENGINE_PREFERENCE)} works on this machine")


def _cached(cache: Path | None, path: str) -> dict | None:
    """The cached answers about the fio at `path`, if that is still the same file; None when fio must be asked."""
    if cache is None:
        return None
    try:
        entry = json.loads(cache.read_text()).get(path)
        if (entry["binary"] == _binary_identity(path) and isinstance(entry["version_text"], str)
                and isinstance(entry["kernel"], str)
                and isinstance(entry["engines"], list) and all(isinstance(e, str) for e in entry["engines"])
                and all(isinstance(k, str) and isinstance(v, bool) for k, v in entry["works"].items())):
            return entry
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass  # no cache yet, or one we cannot read or trust: ask fio again
    return None


def _remember(info: FioInfo) -> None:
    """Best effort: a cache that cannot be written only means fio is asked again next time."""
    try:
        entries = json.loads(info.cache.read_text())
    except (OSError, ValueError):
        entries = {}
    try:
        entry = {"binary": _binary_identity(info.path), "version_text": info.version_text,
                 "engines": sorted(info.engines), "kernel": _kernel_identity(), "works": info.works}
        entries = {**(entries if isinstance(entries, dict) else {}), info.path: entry}
        info.cache.parent.mkdir(parents=True, exist_ok=True)
        write_whole(info.cache, json.dumps(entries), "fio's feature cache")  # a concurrent run reads old or new
    except (OSError, UserError):
        pass


def _binary_identity(path: str) -> list[int]:
    """Another fio installed at the same path (an upgrade, a rebuild) is another file: new inode, ctime or size."""
    stat = os.stat(path)
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def _kernel_identity() -> str:
    """What decides whether an engine works: this boot (so this kernel), its io_uring switch, our sandbox."""
    def read(path: str) -> str:
        try:
            return Path(path).read_text().strip()
        except OSError:
            return "?"

    status = read("/proc/self/status").splitlines()
    sandbox = " ".join(line.split()[-1] for line in status if line.startswith(("Seccomp:", "NoNewPrivs:")))
    boot, switch = read("/proc/sys/kernel/random/boot_id"), read("/proc/sys/kernel/io_uring_disabled")
    return f"{boot} io_uring_disabled={switch} seccomp={sandbox}"


def _output(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FioError(f"cannot run {command[0]}: {exc}; {INSTALL_HINT}") from exc
