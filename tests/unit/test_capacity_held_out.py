"""The published tables the model never saw: each row planned from its catalogue stand-in, or listed as not planned
with the reason, and set against the band the planner prints beside such a prediction."""

import csv
import json
from importlib import resources

import pytest
from click.testing import CliRunner

from disklab.capacity.held_out import HELD_OUT, HeldOutPoint, held_out
from disklab.capacity.validation import Band, shipped_catalogue
from disklab.cli.main import cli


def published(name: str) -> list[dict[str, str]]:
    with (resources.files("disklab.capacity") / "published" / name).open(newline="") as f:
        return list(csv.DictReader(f))


def test_every_held_out_row_is_planned_or_says_why_not():
    studies = {study.source: study for study in held_out(shipped_catalogue())}
    assert set(studies) == set(HELD_OUT)
    for name, study in studies.items():
        rows = published(name)
        assert len(study.points) == len(rows)
        for row, point in zip(rows, study.points):
            factor = {"IOPS": 1, "MB/s": 1, "MiB/s": 2**20 / 1e6}[row["unit"]]
            assert point.published == pytest.approx(float(row["published"]) * factor), "the source's figure"
            assert (point.predicted is None) == (point.why_not is not None)
    raidz2 = [p for p in studies["nas-hdd-raidz2-draid2.csv"].points if p.predicted is not None]
    assert raidz2 and all(p.array == "5 x nl-sas-7.2k-12t raidz2 record=1MiB" for p in raidz2)
    assert all(p.band.percent is None and p.inside is None for p in raidz2), "a ZFS pool has no validated band"
    draid = [p for p in studies["nas-hdd-raidz2-draid2.csv"].points if p.predicted is None]
    assert draid and all(p.why_not == "the planner has no level draid2:3d:5c:0s" for p in draid)
    assert {p.why_not for p in studies["nas-ssd-raid-levels.csv"].points} == {
        "the source does not say whether the I/O was sequential or random"}


def test_a_figure_inside_its_band_and_one_outside():
    band = Band("ssd", 40.0, 20, "test")
    assert HeldOutPoint("a", "p", "IOPS", 1000.0, 1300.0, band).inside
    assert not HeldOutPoint("a", "p", "IOPS", 1000.0, 2000.0, band).inside
    assert HeldOutPoint("a", "p", "IOPS", 1000.0, None, None, "why").inside is None


def test_validate_reports_the_held_out_share_inside_the_band():
    result = CliRunner().invoke(cli, ["capacity", "validate", "-f", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert [s["source"] for s in document["held_out"]] == list(HELD_OUT)
    assert sum(len(s["points"]) for s in document["held_out"]) == sum(len(published(n)) for n in HELD_OUT)
    (line,) = [n for n in document["notes"] if n.startswith("held out: ")]
    assert "the bands above are in-sample" in line
