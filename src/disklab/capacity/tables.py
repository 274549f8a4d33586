"""The published tables disklab ships (published/, its README says where each comes from) and the shipped drives
they are planned with."""

import csv
from importlib import resources

from disklab.capacity.catalogue import Drive, load_drive, shipped_drive_files


def published_rows(name: str) -> list[dict[str, str]]:
    with (resources.files("disklab.capacity") / "published" / name).open(newline="") as f:
        return list(csv.DictReader(f))


def shipped_catalogue() -> dict[str, Drive]:
    """The drives disklab ships (not the user's folder): what the error bands describe."""
    drives = [load_drive(path) for path in shipped_drive_files()]
    return {d.name: d for d in drives}
