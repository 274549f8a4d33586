"""The kernel tier: each check of tests/kernel/checks, run by pytest in one boot of Debian's kernel under QEMU with
real NVMe, SATA, SCSI, md, dm and nfsd drivers (guest.py, batch.py), is one test here, passing, failing with the
guest's report of it, or skipped with its reason. A machine without QEMU or the unpacked kernel skips the tier,
saying what is missing ('not run: ...'); `make test` installs both."""

from __future__ import annotations

import ast
import re

import pytest

from tests.kernel.batch import BATCH, CHECKS, Background, Report

pytestmark = pytest.mark.kernel
# The kernel's words for an I/O error on a device (blk_update_request / I/O error, dev ...).
IO_ERROR = re.compile(r"I/O error,? dev ([\w-]+)")


def check_names() -> list[str]:
    """check_file.py::check_name of every check, read from the files (nothing of them is imported here)."""
    return [f"{path.name}::{node.name}" for path in sorted(CHECKS.glob("check_*.py"))
            for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.FunctionDef) and node.name.startswith("check_")]


@pytest.fixture(scope="session")
def report(pytestconfig) -> Report:
    background = pytestconfig.stash.get(BATCH, None) or Background()
    found = background.report()
    if found.missing:
        pytest.skip(f"not run: {found.missing}")
    return found


@pytest.mark.parametrize("check", check_names())
def test_in_the_guest(report: Report, check: str):
    outcomes = report.of(check)
    if not outcomes:
        pytest.fail(f"{check} did not report: the guest's batch ended with {report.finished.status} after "
                    f"{report.finished.seconds:.0f} s; the end of its output:\n{report.finished.stdout[-3000:]}\n"
                    f"{report.finished.stderr[-2000:]}", pytrace=False)
    failures = [outcome.text for outcome in outcomes if not outcome.passed and outcome.skipped is None]
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)
    if all(outcome.skipped for outcome in outcomes):
        pytest.skip(outcomes[0].skipped)


def test_the_guest_ran_every_check_and_its_kernel_logged_no_bug_warning_or_stray_io_error(report: Report):
    finished = report.finished
    assert finished.status in (0, 1), f"the guest's pytest ended with {finished.status}:\n{finished.stderr[-3000:]}"
    assert finished.alerts == [], "\n".join(finished.alerts)
    faulted = set(report.faulted)
    stray = [line for line in finished.dmesg.splitlines() if (m := IO_ERROR.search(line)) and m[1] not in faulted]
    assert stray == [], "I/O errors no check caused on purpose:\n" + "\n".join(stray[:20])

