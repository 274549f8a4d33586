"""The published tables the model never saw: each row planned from its catalogue stand-in, or listed as not planned
with the reason, and set against the band the planner prints beside such a prediction."""

import csv
import json
from importlib import resources

import pytest
from click.testing import CliRunner

from disklab.capacity import validation
from disklab.capacity.bands import Band
from disklab.capacity.held_out import HELD_OUT, HeldOutPoint, held_out
from disklab.capacity.tables import shipped_catalogue
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
    raidz2 = studies["nas-hdd-raidz2-draid2.csv"].points
    assert {p.array for p in raidz2 if p.predicted is not None} == {"5 x sata-hdd-7.2k-12t raidz2 record=1MiB"}
    assert {p.why_not for p in raidz2 if "sync=1" in p.label or p.why_not and "ZIL" in p.why_not} == {
        "synchronous writes go to ZFS's intent log (ZIL), which the planner does not model"}
    draid = [p for p in raidz2 if p.array.startswith("tank_draid")]
    assert draid and all(p.why_not == "the planner has no level draid2:3d:5c:0s" for p in draid)
    assert {p.why_not for p in studies["nas-ssd-raid-levels.csv"].points} == {
        "the source does not say whether the I/O was sequential or random"}
    mx200 = studies["array-ssd-raid0-md-mx200.csv"].points
    writes = [p for p in mx200 if p.label.startswith("randwrite")]
    assert writes and all(p.why_not.startswith("out of the model: sata-ssd-consumer-1t rates random writes fresh")
                          for p in writes), "a fresh rating does not plan a drive of unknown state"
    assert all(p.predicted is not None for p in mx200 if p.label.startswith("randread"))


def test_a_mixed_tests_figure_is_set_against_its_directions_share_of_the_prediction():
    (study,) = [s for s in held_out(shipped_catalogue()) if s.source == "array-hdd-raid5-md-8x2tb.csv"]
    mixed = [p for p in study.points if p.label.startswith("randrw")]
    reads = {p.label.replace("(read)", ""): p.predicted for p in mixed if p.label.endswith("(read)")}
    writes = {p.label.replace("(write)", ""): p.predicted for p in mixed if p.label.endswith("(write)")}
    assert reads and reads == pytest.approx(writes)  # 50 % reads: each side is half the predicted IOPS


def test_a_figure_inside_its_band_and_one_outside():
    band = Band("ssd", 0.6, 1.4, 20, 3, "test")
    assert HeldOutPoint("a", "p", "IOPS", 1300.0, 1000.0, band=band).inside
    assert not HeldOutPoint("a", "p", "IOPS", 2000.0, 1000.0, band=band).inside
    assert HeldOutPoint("a", "p", "IOPS", 1000.0, None, why_not="why").inside is None


def test_each_held_out_point_carries_the_band_built_without_its_study():
    result = validation.validate(shipped_catalogue())
    for study in result.held_out:
        others = [c for c in result.studies if c.study != study.source]
        for point in study.planned:
            kind_others = [c for c in others if c.kind == point.kind]
            assert point.band.points == sum(c.points for c in kind_others)


def test_validate_reports_the_held_out_share_inside_the_band():
    result = CliRunner().invoke(cli, ["capacity", "validate", "-f", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert [s["source"] for s in document["held_out"]] == list(HELD_OUT)
    assert sum(len(s["points"]) for s in document["held_out"]) == sum(len(published(n)) for n in HELD_OUT)
    (line,) = [n for n in document["notes"] if n.startswith("held out: ")]
    assert "with a band built without their study" in line and "where the band promises 90%" in line


def test_figures_a_cache_answered_or_the_source_leaves_unreadable_are_not_planned():
    (iozone,) = [s for s in held_out(shipped_catalogue()) if s.source == "array-hdd-r720xd-iozone.csv"]
    rows = published("array-hdd-r720xd-iozone.csv")
    cached = [p for p in iozone.points if p.why_not and "a cache answered them" in p.why_not]
    # 16 KiB random reads of RAID0 at 2,918 IOPS and random writes of RAID5/6 at 1,449-1,676 IOPS, one at a time:
    # more than 1 / 0.8 ms (the stand-in's single-track seek) = 1,250; RAID0/10's writes need no read first
    assert sorted((p.array.split()[3], p.label.split()[0]) for p in cached) == [
        ("raid0", "randread"), ("raid5", "randwrite"), ("raid6", "randwrite")]
    threads = [p for p, row in zip(iozone.points, rows) if int(row["jobs"]) > 1]
    assert threads and all(p.why_not.startswith("the source does not say whether iozone's -t figures") for p in threads)
    planned = [p for p in iozone.points if p.predicted is not None]
    assert len(planned) == len(rows) - len(threads) - len(cached)
