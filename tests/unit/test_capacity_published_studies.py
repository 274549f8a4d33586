"""The published tables disklab ships (capacity/published/): each parses, has the columns its kind needs, holds
only positive figures, and has a row in the folder's README that names its source; a study's row names the
catalogue drive its arrays map to. The tables are the validation's only ground truth, so a typo in one would
quietly move every band.
"""

import csv
import math
import re
from importlib import resources
from pathlib import Path

import pytest

from disklab.capacity.catalogue import load_catalogue

PACKAGE = Path(str(resources.files("disklab.capacity") / "published"))
TABLES = sorted(p.name for p in PACKAGE.glob("*.csv"))
# the columns shared by the studies gathered for issue 27 (README: "Studies gathered for out-of-sample checks")
STUDY_COLUMNS = ("layout", "drive_model", "drive_count", "raid_level", "host", "file_system", "tool", "workload",
                 "block_size_bytes", "queue_depth", "jobs", "read_percent", "direction", "metric", "published",
                 "unit", "note")
STUDY_WHOLE_NUMBERS = ("drive_count", "block_size_bytes", "queue_depth", "jobs")
UNITS = {"iops": {"IOPS"}, "bandwidth": {"MB/s", "MiB/s"}}
# the figures of the M2/M4 tables: every column that holds a measured or specified quantity
FIGURE_COLUMN = re.compile(r"_(iops|mbps|us_typ|tbw|hours|gb|bytes)$|^(dwpd|warranty_years)$")


def rows(name: str) -> list[dict[str, str]]:
    with (PACKAGE / name).open(newline="") as f:
        return list(csv.DictReader(f))


def readme_rows() -> dict[str, list[str]]:
    """Table rows of the README keyed by the file they describe (the first cell, `name.csv`)."""
    found = {}
    for line in (PACKAGE / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.match(r"`([\w.-]+\.csv)`", cells[0]) if line.startswith("|") else None
        if match:
            found[match.group(1)] = cells
    return found


def is_study(name: str) -> bool:
    return "published" in rows(name)[0]


def positive(text: str) -> bool:
    value = float(text.replace(",", ""))
    return math.isfinite(value) and value > 0


def test_the_package_ships_the_m2_m4_tables_and_at_least_three_studies():
    assert {"arrays-setup.csv", "blocksize-arrays.csv", "mixed-arrays.csv", "spec-nvme-u3-example.csv"} <= set(TABLES)
    assert sum(is_study(name) for name in TABLES) >= 3


@pytest.mark.parametrize("name", TABLES)
def test_every_table_parses_into_complete_rows(name):
    table = rows(name)
    assert table, name
    width = len(table[0])
    assert all(len(row) == width and None not in row and None not in row.values() for row in table), name


@pytest.mark.parametrize("name", [n for n in TABLES if is_study(n)])
def test_a_study_has_every_column_and_positive_figures_in_a_known_unit(name):
    table = rows(name)
    assert tuple(table[0]) == STUDY_COLUMNS
    for row in table:
        assert positive(row["published"]), row
        assert row["unit"] in UNITS[row["metric"]], row
        assert all(row[column].isdigit() and int(row[column]) > 0 for column in STUDY_WHOLE_NUMBERS), row
        assert row["direction"] in ("read", "write") and 0 <= int(row["read_percent"]) <= 100, row
        assert row["drive_model"] and row["raid_level"] and row["host"], row


@pytest.mark.parametrize("name", [n for n in TABLES if not is_study(n)])
def test_the_m2_m4_figures_are_positive(name):
    figures = [(column, value) for row in rows(name) for column, value in row.items() if FIGURE_COLUMN.search(column)]
    if name == "arrays-setup.csv":  # a long table: parameter, one column per array, unit
        figures = [(row["parameter"], row[array]) for row in rows(name) for array in ("ssd_array", "hdd_array")
                   if row["unit"]]
    assert figures, name
    assert all(positive(value) for _, value in figures), name


@pytest.mark.parametrize("name", TABLES)
def test_every_table_has_a_row_in_the_readme(name):
    assert name in readme_rows()


@pytest.mark.parametrize("name", [n for n in TABLES if is_study(n)])
def test_a_studys_readme_row_gives_an_address_a_date_and_a_catalogue_drive(name):
    source, setup, caveats, nearest = readme_rows()[name][1:5]
    assert re.search(r"https://\S+", source) and re.search(r"\b(19|20)\d\d\b|undated", source), source
    assert setup and caveats
    named = re.findall(r"`([\w.-]+)`", nearest)
    assert named and set(named) <= set(load_catalogue()), nearest
