"""`--spec DRIVE`: a drive's rated figures, from a drive file of the capacity catalogue (by name, or a .toml path),
for the findings' spec check (M3/M4: do the results reach the spec sheet?). Given to `run`, they are kept with the
run; given to `show` or `report`, they replace those."""

from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

import click

from disklab.env.registry import ARRAY, DEVICE_PREFIX, device_key
from disklab.store.records import RunRecord


def drive_spec(name: str) -> dict:
    """The drive's ratings as the run keeps them (Spec's fields); an unknown drive is one line naming the known."""
    from disklab.capacity.catalogue import find_drive, load_catalogue, load_drive

    path = Path(name)
    drive = load_drive(path) if name.endswith(".toml") or path.is_file() else find_drive(load_catalogue(), name)
    return _spec_of(drive)


def spec_by_model(env: dict, say: Callable[[str], None]) -> dict | None:
    """Without --spec: the ratings of the catalogue's drive file that names the model of a disk under the target
    (`env`: env/collect.py's collect_target; a drive file of the user's own with `model = "..."` checks every run on
    that drive); None: no file names it."""
    if env.get(device_key(ARRAY, "model")):
        return None  # an array's figures are not one drive's: no drive file's ratings hold them
    models = [v for k, v in env.items() if k.startswith(DEVICE_PREFIX) and k.endswith(".model") and v]
    if not models:
        return None  # no disk names its model (a VM's, a loop device): the catalogue is not even loaded
    from disklab.capacity.catalogue import drive_of_model, load_catalogue

    catalogue = load_catalogue()
    for model in models:
        drive = drive_of_model(catalogue, model)
        if drive is not None:
            spec = _spec_of(drive, f"model {model!r}")
            say(f"results checked against drive file {drive.name} ({spec['matched_by']}): see the findings")
            return spec
    return None


def _spec_of(drive, matched_by: str | None = None) -> dict:
    from disklab.analysis.findings import Spec  # the analysis package: only when a drive's ratings are looked up

    return asdict(Spec(drive.name, drive.seq_read_bytes_per_s / 1e6, drive.seq_write_bytes_per_s / 1e6,
                       drive.rand_read_iops, drive.rand_write_iops, matched_by, drive.interface,
                       drive.interface_bytes_per_s / 1e6))


spec_option = click.option(
    "--spec", metavar="DRIVE", callback=lambda ctx, param, value: None if value is None else drive_spec(value),
    help="Check the results against this drive's rated figures: a drive of the capacity catalogue ('disklab "
         "capacity drives') or a drive file (.toml); the findings say whether each rating is reached.")


def with_spec(record: RunRecord, spec: dict | None) -> RunRecord:
    """The run as if it had been made with --spec (its findings check that drive's ratings); unchanged without."""
    if spec is None:
        return record
    return replace(record, info=replace(record.info, options={**record.info.options, "spec": spec}))
