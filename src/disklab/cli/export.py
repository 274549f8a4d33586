"""`disklab export`: a suite as plain fio job files, so anyone can check disklab's numbers with fio alone."""

from pathlib import Path

import click

from disklab.cli.common import stderr_console
from disklab.cli.completion import complete_suite
from disklab.cli.helptext import examples
from disklab.cli.options import plan_options
from disklab.run.prepare import plan_for_target, plan_remarks
from disklab.errors import FioError, UserError
from disklab.fio.features import choose_engine, detect_fio
from disklab.plan.jobfile import render_jobfile, write_jobfiles
from disklab.plan.build import build_plan, fit_to_target, resolve_engines
from disklab.suite.loader import load_suite
from disklab.targets.target import resolve_target

# Without a target, the job files name it through fio's own environment-variable expansion.
TARGET_PLACEHOLDER = "${DISKLAB_TARGET}"
DIRECTORY_PLACEHOLDER = "${DISKLAB_DIR}"
# For 'auto' when no fio is installed here to say what works.
FALLBACK_ENGINE = "libaio"
# The first line of every job file disklab writes (fio/jobfile.py), by which an earlier export is recognised.
OWN_JOBFILE_HEADER = b"; disklab "
# Logical block size assumed without a target: the smallest there is, so no size is skipped.
ASSUMED_LOGICAL_BLOCK_SIZE = 512


@click.command(epilog=examples(
    "disklab export quick --fio quick-jobs/                       # the suite as plain fio job files",
    "disklab export matrix --fio matrix-jobs/ --target /dev/sdX   # fitted to a device",
    "disklab export quick --fio short/ --runtime 10s --size 4GiB"))
@click.argument("suite", shell_complete=complete_suite)
@click.option("--fio", "folder", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder to write the job files to (made if missing).")
@click.option("--target", "-t", help="Fit the tests to this target; without it the files use ${DISKLAB_TARGET}.")
@click.option("--new-file", is_flag=True, help="--target is a test file yet to be made (the path does not exist).")
@plan_options
def export(suite, folder, target, new_file, overrides, read_only):
    """Write SUITE as one fio job file per test, plus run-all.sh, into a folder.

    The folder's earlier disklab job files are replaced; a folder holding other .fio files is refused, since
    run-all.sh runs every .fio file in it.
    """
    if str(folder) == "-":
        raise UserError("--fio -: job files go to a folder, one per test, beside the run-all.sh that runs them "
                        "(a stored run's job files print with 'disklab show RUN --jobfile')")
    _refuse_foreign_jobfiles(folder)
    if new_file and not target:
        raise UserError("--new-file says what --target is (a test file yet to be made); give --target too")
    if target:
        resolved = resolve_target(target, new_file)
        plan = plan_for_target(load_suite(suite), overrides, read_only, resolved)
        filename, directory = resolved.test_path, resolved.file_set_dir
    else:
        plan = build_plan(load_suite(suite), overrides, read_only)
        plan = fit_to_target(plan, None, ASSUMED_LOGICAL_BLOCK_SIZE, is_directory=True)
        filename, directory = TARGET_PLACEHOLDER, DIRECTORY_PLACEHOLDER
    try:
        fio = detect_fio()
        plan = resolve_engines(plan, lambda wanted: choose_engine(fio, wanted))
    except FioError:
        plan = resolve_engines(plan, lambda wanted: FALLBACK_ENGINE if wanted == "auto" else wanted)
        stderr_console().print(f"fio is not installed here: tests set to 'auto' use {FALLBACK_ENGINE}")
    for line in plan_remarks(plan):
        stderr_console().print(line)
    jobfiles = [(t.label, render_jobfile(t, filename, directory, plan.suite.name)) for t in plan.tests]
    try:
        _clear_earlier_export(folder)
        written = write_jobfiles(jobfiles, folder)
    except OSError as exc:
        raise UserError(f"cannot write job files to {folder}: {exc.strerror or exc}") from None
    stderr_console().print(f"wrote {len(written)} fio job files and run-all.sh to {folder}")
    if not target:
        stderr_console().print("set DISKLAB_TARGET (and DISKLAB_DIR for file sets) in the environment before running them")


def _jobfiles(folder: Path) -> tuple[list[Path], list[Path]]:
    """(disklab's own, others') .fio files in the folder."""
    own, others = [], []
    for path in sorted(folder.glob("*.fio")) if folder.is_dir() else ():
        header = b""
        if path.is_file():  # never opened otherwise: a FIFO named x.fio would wait for a writer
            try:
                with path.open("rb") as file:
                    header = file.read(len(OWN_JOBFILE_HEADER))
            except OSError:
                pass
        (own if header == OWN_JOBFILE_HEADER else others).append(path)
    return own, others


def _refuse_foreign_jobfiles(folder: Path) -> None:
    _, others = _jobfiles(folder)
    if others:
        raise UserError(f"{folder} holds fio job files disklab did not write ({others[0].name}"
                        f"{f' and {len(others) - 1} more' if len(others) > 1 else ''}), which its run-all.sh would "
                        "run too; export into a new or empty folder")


def _clear_earlier_export(folder: Path) -> None:
    """An earlier export's job files go, so that a suite of fewer tests leaves none behind; results stay."""
    own, _ = _jobfiles(folder)
    for path in own:
        path.unlink()
