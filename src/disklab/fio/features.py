"""Which fio is installed, how new it is, and which I/O engine works on this kernel."""

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from disklab.errors import FioError

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


def detect_fio(fio: str | None = None) -> FioInfo:
    path = shutil.which(fio or "fio")
    if path is None:
        raise FioError(f"fio not found{' at ' + fio if fio else ' on PATH'}; {INSTALL_HINT}")
    version_text = _output([path, "--version"]).strip()
    match = re.search(r"fio-(\d+)\.(\d+)", version_text)
    if not match:
        raise FioError(f"{path} does not look like fio (it says {version_text!r}); {INSTALL_HINT}")
    version = (int(match.group(1)), int(match.group(2)))
    if version < MIN_VERSION:
        raise FioError(
            f"{path} is {version_text}, disklab needs fio {'.'.join(map(str, MIN_VERSION))} or newer; {INSTALL_HINT}"
        )
    engines_text = _output([path, "--enghelp"])
    engines = frozenset(line.strip() for line in engines_text.splitlines()[1:] if line.strip())
    return FioInfo(path=path, version_text=version_text, version=version, engines=engines)


def engine_works(info: FioInfo, engine: str) -> bool:
    """Compiled in is not enough (io_uring may be blocked by the kernel or a sandbox): let fio try it."""
    if engine not in info.engines:
        return False
    with tempfile.TemporaryDirectory(prefix="disklab-probe-") as folder:
        probe = [
            info.path, "--name=probe", f"--ioengine={engine}", f"--filename={Path(folder) / 'probe'}",
            "--size=64k", "--bs=4k", "--rw=read", "--output-format=json",
        ]
        result = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    return result.returncode == 0 and '"error" : 0' in result.stdout


def choose_engine(info: FioInfo, wanted: str = "auto") -> str:
    if wanted != "auto":
        if not engine_works(info, wanted):
            raise FioError(f"fio engine {wanted!r} does not work here (built-in engines: {', '.join(sorted(info.engines))})")
        return wanted
    for engine in ENGINE_PREFERENCE:
        if engine_works(info, engine):
            return engine
    raise FioError(f"none of the fio engines {', '.join(ENGINE_PREFERENCE)} works on this machine")


def _output(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FioError(f"cannot run {command[0]}: {exc}; {INSTALL_HINT}") from exc
