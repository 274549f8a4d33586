"""`--spec DRIVE`: a drive's rated figures, from a drive file of the capacity catalogue (by name, or a .toml path),
for the findings' spec check (M3/M4: do the results reach the spec sheet?). Given to `run`, they are kept with the
run; given to `show` or `report`, they replace those."""

from dataclasses import asdict, replace
from pathlib import Path

import click

from disklab.analysis.findings import Spec
from disklab.store.records import RunRecord


def drive_spec(name: str) -> dict:
    """The drive's ratings as the run keeps them (Spec's fields); an unknown drive is one line naming the known."""
    from disklab.capacity.catalogue import find_drive, load_catalogue, load_drive

    path = Path(name)
    drive = load_drive(path) if name.endswith(".toml") or path.is_file() else find_drive(load_catalogue(), name)
    return asdict(Spec(drive.name, drive.seq_read_bytes_per_s / 1e6, drive.seq_write_bytes_per_s / 1e6,
                       drive.rand_read_iops, drive.rand_write_iops))


spec_option = click.option(
    "--spec", metavar="DRIVE", callback=lambda ctx, param, value: None if value is None else drive_spec(value),
    help="Check the results against this drive's rated figures: a drive of the capacity catalogue ('disklab "
         "capacity drives') or a drive file (.toml); the findings say whether each rating is reached.")


def with_spec(record: RunRecord, spec: dict | None) -> RunRecord:
    """The run as if it had been made with --spec (its findings check that drive's ratings); unchanged without."""
    if spec is None:
        return record
    return replace(record, info=replace(record.info, options={**record.info.options, "spec": spec}))
