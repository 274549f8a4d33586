"""The installed-package tier: disklab as a user installs it, not as this checkout runs it.

Once per session, offline: the sdist is built from a copy of this work tree (its files as git sees them, and .git, so
that the version and the sdist's file list are git's, and the checkout gets nothing written), the wheel from that
sdist (python -m build --no-isolation: the build's requirements are in .venv), and the wheel is installed into a
fresh venv with its dependencies from .venv/wheelhouse (scripts/setup.sh tests) and no index. Every command then runs
from a folder outside the tree, with neither the checkout's venv on PATH nor PYTHONPATH, pip's configuration left out,
a private DISKLAB_HOME and no config file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import pytest

from tests.children import Children
from tests.run_kinds import COMMAND_TIMEOUT_S, MAKERS, Zoo, make_zoo

ROOT = Path(__file__).parents[2]
WHEELHOUSE = ROOT / ".venv" / "wheelhouse"  # disklab's dependencies as wheels: scripts/setup.sh tests
# The runs the tier takes through every command: a built-in suite, ad-hoc runs (bs as 8k, 4KiB, 1m, 65536, 16K) and
# a fio job file (tests/run_kinds.py makes them as it does for the run-kinds tests).
KINDS = ("builtin repeat 1", "ad-hoc", "fio job file")


@cache
def offline() -> tuple[str, ...]:
    """A command prefix that takes the network away (a network namespace of its own: loopback only, down), where
    this user may make one; elsewhere nothing, and the builds and installs are offline by their flags alone."""
    if shutil.which("unshare") is None:
        return ()
    tried = subprocess.run(["unshare", "--net", "true"], capture_output=True, timeout=60)
    return ("unshare", "--net") if tried.returncode == 0 else ()


@dataclass(frozen=True)
class Built:
    sdist: Path
    wheel: Path


@dataclass(frozen=True)
class Installed:
    """The venv the wheel went into, and `disklab` run from it as a user would."""

    venv: Path
    env: dict[str, str]
    folder: Path  # outside the tree: every command's working directory

    @property
    def command(self) -> str:
        return str(self.venv / "bin" / "disklab")

    def __call__(self, *args: str, check: bool = True, env: dict[str, str] | None = None
                 ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([self.command, *args], cwd=self.folder, env=env or self.env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
        if check:
            assert done.returncode == 0, f"disklab {' '.join(args)}: exit {done.returncode}\n{done.stderr}"
        return done

    def each(self, *commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
        """Many commands, a few at a time (each a fresh process, mostly start-up): the tier stays quick."""
        with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
            return list(pool.map(lambda args: self(*args), commands))


def outside(env: dict[str, str], venv: Path, home: Path) -> dict[str, str]:
    """`env` as a user's shell has it with `venv` installed: nothing of the checkout on PATH or PYTHONPATH, no
    virtualenv active, pip's settings (an index, extra wheels) and disklab's own left out."""
    kept = {name: value for name, value in env.items()
            if not name.startswith(("PIP_", "PYTHON", "DISKLAB_")) and name != "VIRTUAL_ENV"}
    path = [p for p in env.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p and not Path(p).is_relative_to(ROOT)]
    return {**kept, "PATH": os.pathsep.join([str(venv / "bin"), *path]), "DISKLAB_HOME": str(home),
            "DISKLAB_CONFIG": "", "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def copy_of_work_tree(folder: Path) -> Path:
    """The files git sees (tracked, and new ones not ignored) as they are now, with .git."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, check=True, timeout=120).stdout.decode()
    tree = folder / "disklab"
    for name in filter(None, listed.split("\0")):
        source, copy = ROOT / name, tree / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():  # as git keeps it (fixtures of /sys), not what it points to
            copy.symlink_to(source.readlink())
        elif source.is_file():  # not a file deleted in the work tree, still in git's index
            shutil.copy2(source, copy)
    shutil.copytree(ROOT / ".git", tree / ".git")
    return tree


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Built:
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout, or git is missing: the build takes its version and file list from git")
    folder = tmp_path_factory.mktemp("build")
    dist = folder / "dist"
    done = subprocess.run([*offline(), sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist),
                           str(copy_of_work_tree(folder))], capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,), (wheel,) = dist.glob("disklab-*.tar.gz"), dist.glob("disklab-*.whl")  # the wheel: from the sdist
    return Built(sdist, wheel)


@pytest.fixture(scope="session")
def installed(built, tmp_path_factory) -> Installed:
    if not any(WHEELHOUSE.glob("*.whl")):
        (pytest.fail if os.environ.get("CI") == "true" else pytest.skip)(
            f"no wheels in {WHEELHOUSE}: scripts/setup.sh tests (make test) downloads disklab's dependencies there, "
            "for installing without the network")
    folder = tmp_path_factory.mktemp("installed")
    venv, outside_folder = folder / "venv", folder / "elsewhere"
    outside_folder.mkdir()
    env = outside(dict(os.environ), venv, folder / "home")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, env=env,
                   timeout=COMMAND_TIMEOUT_S)
    done = subprocess.run([*offline(), str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                           "--no-index", "--find-links", str(WHEELHOUSE), str(built.wheel)],
                          cwd=outside_folder, env=env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    return Installed(venv, env, outside_folder)


@pytest.fixture(scope="session")
def zoo(installed, tmp_path_factory) -> Zoo:
    """The KINDS of run, made by the installed disklab, from outside the tree, in one store."""
    children = Children()
    with ExitStack() as stack, pytest.MonkeyPatch.context() as patch:
        stack.callback(children.end_all)
        patch.chdir(installed.folder)
        for name in set(os.environ) - set(installed.env):
            patch.delenv(name)
        for name, value in installed.env.items():
            patch.setenv(name, value)
        folder = tmp_path_factory.mktemp("kinds")
        zoo = make_zoo(folder, [installed.command], stack, children, kinds=KINDS)
        MAKERS["fio job file"](zoo, folder / "fio-job-file-again", stack, children)  # two runs that compare
        return zoo


@pytest.fixture(scope="session")
def lab(installed, zoo) -> Installed:
    """The installed disklab on the zoo's store."""
    return replace(installed, env=zoo.env)


@pytest.fixture(scope="session")
def version(installed) -> str:
    """What the installed `disklab --version` says."""
    return installed("--version").stdout.removeprefix("disklab, version ").strip()
