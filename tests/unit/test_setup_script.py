"""scripts/setup.sh and the Makefile: `make demo` needs fio and Python only; PostgreSQL and Chromium come with the
tests (`make test`) or the pgbench suite (`make postgresql`).

The script runs with --dry-run on a PATH that holds nothing but what it needs to decide, so every tool counts as
missing and the printed list is what a bare machine would get.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
POSTGRESQL_PRESENT = any(Path("/usr/lib/postgresql").glob("*/bin/initdb"))  # found by path, not on PATH
LIBPQ_PRESENT = any(Path("/usr/lib").glob("*/libpq.so.5"))


def missing_on_bare_machine(tmp_path: Path, purpose: str) -> set[str]:
    bare = tmp_path / "bin"
    bare.mkdir(exist_ok=True)
    for tool, path in (("dirname", shutil.which("dirname")), ("python3", sys.executable)):
        if not (bare / tool).exists():
            (bare / tool).symlink_to(path)
    result = subprocess.run([shutil.which("bash"), str(ROOT / "scripts" / "setup.sh"), "--dry-run", purpose],
                            env={"PATH": str(bare)}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return set(result.stdout.removeprefix("missing:").split())


def test_the_demo_needs_fio_and_the_labs_own_tools_only(tmp_path):
    missing = missing_on_bare_machine(tmp_path, "lab")
    assert missing - {"libpq5"} == {"fio", "util-linux", "smartmontools", "blktrace", "e2fsprogs", "xfsprogs",
                                    "btrfs-progs", "pciutils"}
    assert ("libpq5" in missing) is not LIBPQ_PRESENT  # a PostgreSQL results store's client library


def test_the_tests_get_chromium_postgresql_and_the_device_and_network_tools(tmp_path):
    missing = missing_on_bare_machine(tmp_path, "tests")
    assert {"fio", "chromium", "e2fsprogs", "fdisk", "iproute2", "groff-base", "sshfs", "poppler-utils",
            "pipx"} <= missing
    # the kernel tier's guest and the tools of its devices (busybox-static is found by its path, /bin/busybox)
    assert {"qemu-system-x86", "cpio", "kmod", "udev", "nvme-cli", "hdparm", "sdparm", "mdadm",
            "lvm2", "nfs-kernel-server"} <= missing
    assert not {"qemu-system-x86", "nvme-cli", "mdadm"} & missing_on_bare_machine(tmp_path, "lab")
    assert ("postgresql" in missing) is not POSTGRESQL_PRESENT
    assert ("postgresql" in missing_on_bare_machine(tmp_path, "postgresql")) is not POSTGRESQL_PRESENT
    assert "chromium" not in missing_on_bare_machine(tmp_path, "postgresql")
    # psycopg's C implementation is built where PostgreSQL is used: a compiler is found on PATH, the headers by path
    assert "gcc" in missing and "gcc" in missing_on_bare_machine(tmp_path, "postgresql")


def test_an_unknown_purpose_is_refused_with_the_usage(tmp_path):
    result = subprocess.run(["bash", str(ROOT / "scripts" / "setup.sh"), "--dry-run", "everything"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "usage: scripts/setup.sh" in result.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("target", "setup"), [("demo", "lab"), ("setup", "lab"), ("postgresql", "postgresql"),
                                                ("test", "tests"), ("man", "lab")])  # man: click alone
def test_each_make_target_installs_what_it_needs(tmp_path, target, setup):
    """On a fresh checkout (no .venv yet), as make would run it (-n: print, run nothing)."""
    for name in ("Makefile", "pyproject.toml", "scripts/setup.sh"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    commands = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert commands.returncode == 0, commands.stderr
    assert [line for line in commands.stdout.splitlines() if "setup.sh" in line] == [f"scripts/setup.sh {setup}"]
