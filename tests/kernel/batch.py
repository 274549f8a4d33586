"""The kernel tier's checks (tests/kernel/checks/check_*.py), run by pytest inside one boot of the guest: a boot
costs ~12 s and every Python start several seconds under emulation, so one boot serves them all. The host's tests
(test_kernel_tier.py) read each check's outcome from the guest's JUnit XML.

The batch starts as soon as the test session has collected a kernel-tier test, in a thread of its own, so that the
guest's emulated CPUs run beside the rest of the suite (QEMU at a lower priority: the host's tests come first); the
first kernel-tier test waits for it. By hand, for one check file or a -k expression:

    .venv/bin/python -m tests.kernel.batch [-k EXPR] [CHECK_FILE ...]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import threading
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.kernel.guest import ROOT, Finished, Missing, run_script, scratch_folder

CHECKS = Path(__file__).parent / "checks"
ARTIFACTS = ROOT / "tests" / "artifacts" / "kernel-tier"  # the last batch's console, output and kernel log
# A bound on the whole batch: a guest that hangs is killed there, and every check not reported fails with its log.
BATCH_TIMEOUT_S = float(os.environ.get("DISKLAB_KERNEL_TIMEOUT", 2400))


@dataclass
class Outcome:
    passed: bool
    skipped: str | None = None  # why it did not run
    text: str = ""  # the failure: pytest's report of it


@dataclass
class Report:
    finished: Finished | None
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)  # check module::function -> each item's
    missing: str | None = None  # why the tier could not run here at all
    faulted: tuple[str, ...] = ()  # the devices checks made fail on purpose (checks/conftest.py's faulted)

    def of(self, check: str) -> list[Outcome]:
        return self.outcomes.get(check, [])


def guest_script(selection: list[str]) -> str:
    """pytest over the checks inside the guest, with this checkout's venv, its JUnit XML onto the out share."""
    python = ROOT / ".venv" / "bin" / "python"
    args = ["-m", "pytest", "-p", "no:cacheprovider", "-o", "python_files=check_*.py", "-o",
            "python_functions=check_*", "-o", "addopts=", "-rA", "--junitxml=$GUEST_OUT/junit.xml", *selection]
    quoted = " ".join(shlex.quote(a) if not a.startswith("--junitxml") else f'"{a}"' for a in args)
    return f"cd {shlex.quote(str(ROOT))}\nexport DISKLAB_IN_GUEST=1\n{shlex.quote(str(python))} {quoted}\n"


def run_batch(selection: list[str] | None = None, niceness: int = 0) -> Report:
    """Boot once, run the checks (all, or the pytest `selection`), read their outcomes."""
    folder = scratch_folder()
    try:
        finished = run_script(guest_script(selection or [str(CHECKS)]), folder, BATCH_TIMEOUT_S, niceness=niceness)
    except Missing as exc:
        shutil.rmtree(folder, ignore_errors=True)
        return Report(None, missing=str(exc))
    try:
        _keep(folder)
        faulted = (folder / "out" / "faulted").read_text().split() if (folder / "out" / "faulted").exists() else ()
        return Report(finished, _outcomes(folder / "out" / "junit.xml"), faulted=tuple(faulted))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _keep(folder: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, source in (("console.log", folder / "console.log"), ("stdout.txt", folder / "out" / "stdout.txt"),
                         ("stderr.txt", folder / "out" / "stderr.txt"), ("dmesg.txt", folder / "out" / "dmesg.txt"),
                         ("junit.xml", folder / "out" / "junit.xml")):
        if source.exists():
            shutil.copy(source, ARTIFACTS / name)


def _outcomes(junit: Path) -> dict[str, list[Outcome]]:
    """check_file.py::check_name -> the outcome of each of its items (a parametrised check has several)."""
    if not junit.exists():
        return {}
    outcomes: dict[str, list[Outcome]] = {}
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        check = f"{module}.py::{case.get('name', '').split('[')[0]}"
        failed = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        outcomes.setdefault(check, []).append(Outcome(
            passed=failed is None and skipped is None,
            skipped=None if skipped is None else skipped.get("message", "skipped"),
            text="" if failed is None else f"{case.get('name')}: {failed.get('message', '')}\n{failed.text or ''}"))
    return outcomes


class Background:
    """One batch per test session, started once the session has collected a kernel-tier test."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._report: Report | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="kernel-tier", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        try:
            self._report = run_batch(niceness=10)
        except BaseException as exc:  # the tests say it; a thread's exception would only be printed
            self._report = Report(None, missing=f"the batch failed on the host: {type(exc).__name__}: {exc}")

    def report(self) -> Report:
        self.start()
        self._thread.join()
        return self._report


# Where the test session keeps its batch (tests/conftest.py starts it).
BATCH = pytest.StashKey[Background]()


def main() -> int:
    parser = argparse.ArgumentParser(description="Run kernel-tier checks in one boot of the guest.")
    parser.add_argument("-k", help="pytest's -k expression")
    parser.add_argument("checks", nargs="*", help="check files or node ids (default: every check)")
    options = parser.parse_args()
    selection = [*(["-k", options.k] if options.k else []), *(options.checks or [str(CHECKS)])]
    report = run_batch(selection)
    if report.missing:
        print(f"not run: {report.missing}", file=sys.stderr)
        return 2
    print(report.finished.stdout, end="")
    print(report.finished.stderr, end="", file=sys.stderr)
    print(f"guest: exit {report.finished.status} after {report.finished.seconds:.0f} s; console, output and "
          f"kernel log in {ARTIFACTS}", file=sys.stderr)
    for alert in report.finished.alerts:
        print(f"kernel log: {alert}", file=sys.stderr)
    return report.finished.status


if __name__ == "__main__":
    sys.exit(main())
