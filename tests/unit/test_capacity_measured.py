"""The planner held to measured arrays, on real runs: tests/fixtures/arrays/delayed-md-arrays.json.gz holds the runs
the kernel tier's guest made by `disklab run` (tests/fixtures/capture_arrays.py: one NVMe namespace behind dm-delay
measured alone, then md raid0, raid1, raid5, raid6 and raid10 over four, exported by `disklab export-run`)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.capacity.layout import LEVELS
from disklab.capacity.measured import array_shape, hold_array, hold_series, member_drive, member_layout
from disklab.capacity.member_runs import held_to_members
from disklab.capacity.model import Ceilings, Workload, predict
from disklab.cli.main import cli
from disklab.store.bundle import insert_entry, origin_of
from disklab.store.bundle_file import read_bundle
from disklab.store.repository import Store

BUNDLE = Path(__file__).parents[1] / "fixtures" / "arrays" / "delayed-md-arrays.json.gz"
LEVEL_ORDER = ["raid0", "raid1", "raid5", "raid6", "raid10"]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("arrays") / "results.db"
    document = read_bundle(BUNDLE)
    with Store(path) as store, store.transaction():
        heads: dict[str, int] = {}
        for entry in document["runs"]:
            insert_entry(store, entry, origin_of(entry, document, "2025-01-01T00:00:00Z"), heads)
    return path


@pytest.fixture(scope="module")
def runs(store_path):
    with Store(store_path, read_only=True) as store:
        return [store.get_run(info.id) for info in sorted(store.list_runs(), key=lambda i: i.id)]


def test_each_array_run_is_predicted_from_the_member_run_found_in_the_store(store_path, runs):
    member, arrays = runs[0], runs[1:]
    with Store(store_path, read_only=True) as store:
        held = held_to_members(store, arrays)
    levels = [array_shape(a.run).level for a in held.arrays]
    assert [a.member_run.id for a in held.arrays] == [member.info.id] * len(arrays)
    assert levels == LEVEL_ORDER
    assert member.info.options["configuration"]["member_alone"] == member.info.target  # --measure-member made it
    assert [a.run.options["series"] for a in held.arrays] == [member.info.id] * len(arrays)
    assert [a.layout for a in held.arrays] == [f"4 x member {level}" + (" strip=64KiB" if level != "raid1" else "")
                                               for level in levels]
    assert all(len(a.figures) == 6 and not a.left_out and a.reason is None for a in held.arrays)


def test_md_over_delayed_members_lies_within_25_percent_of_the_planners_prediction(runs):
    held = hold_series([(array, runs[0]) for array in runs[1:]])
    errors = {(array_shape(a.run).level, f.test): round(f.error_percent) for a in held.arrays for f in a.figures}
    assert sorted({level for level, _ in errors}) == sorted(LEVEL_ORDER) and len(errors) == 30, errors
    assert all(abs(e) <= 25 for e in errors.values()), errors
    assert held.band.validated and held.band.low > 0.75 and held.band.high < 1.25, held.band


def test_raid5_and_raid6_writes_wait_for_a_read_then_a_write_and_mirrors_for_one_write(runs):
    """md's arithmetic, as the model has it: one I/O at a time, a parity write costs two of the member's delays, a
    mirror's or a stripe's write one; a read one everywhere."""
    held = hold_series([(array, runs[0]) for array in runs[1:]])
    member = {f.test: f.member_iops for f in held.arrays[0].figures}
    qd1 = {array_shape(a.run).level: {f.params["direction"]: f for f in a.figures if f.params["iodepth"] == 1}
           for a in held.arrays}
    for level in qd1:
        write = qd1[level]["write"]
        ratio = write.predicted_iops / member[write.test]
        assert ratio == pytest.approx(0.5 if level in ("raid5", "raid6") else 1.0, rel=0.1), (level, ratio)
        assert ratio == pytest.approx(write.measured_iops / member[write.test], rel=0.25), level


def test_no_member_run_and_a_degraded_array_each_say_why(runs):
    array = runs[-1]
    assert "no run of a member alone" in hold_array(array, None).reason
    degraded = replace(array.info, options=json.loads(json.dumps(array.info.options)))
    degraded.options["configuration"]["array"]["state"] = "degraded"
    held = hold_array(replace(array, info=degraded), runs[0])
    assert held.reason == "the model plans arrays whose members all work, not a degraded one"


def test_the_member_drive_is_the_members_own_figures(runs):
    member = runs[0]
    drive = member_drive(member)
    best = {d: max(sum(m.iops for m in t.metrics) for t in member.tests if t.params["direction"] == d)
            for d in ("read", "write")}
    assert (drive.rand_read_iops, drive.rand_write_iops) == (best["read"], best["write"])
    one = [t for t in member.tests if t.params["iodepth"] == 1 and t.params["direction"] == "read"][0]
    assert drive.latency_read_s == pytest.approx(one.metrics[0].lat_mean_ns / 1e9)
    # The member alone, through the model: its own QD1 figure back, as one I/O in flight over its latency.
    layout = member_layout(array_shape(runs[1].info), drive)
    single = replace(layout, count=1, level=LEVELS["raid0"])
    predicted = predict(single, Workload("qd1", ((4096, 1.0),), 1.0, 1), Ceilings(None)).iops
    assert predicted == pytest.approx(1 / drive.latency_read_s)


def test_compare_series_prints_and_exports_the_prediction_beside_each_figure(store_path, runs):
    series = f"series:{runs[1].info.id}"
    table = CliRunner().invoke(cli, ["--store", str(store_path), "compare", series], prog_name="disklab")
    assert table.exit_code == 0, table.output
    assert "The planner's prediction from the member measured alone" in table.output
    assert f"from member run {runs[0].info.id}" in table.output and "band these runs support" in table.output
    exported = CliRunner().invoke(cli, ["--store", str(store_path), "compare", series, "-f", "json"],
                                  prog_name="disklab")
    planner = json.loads(exported.output)["planner"]
    assert [len(a["figures"]) for a in planner["arrays"]] == [6] * (len(runs) - 1)
    assert {"predicted_iops", "measured_iops", "error_percent", "member_iops"} <= set(planner["arrays"][0]["figures"][0])


def test_capacity_validate_runs_and_the_report_show_the_same(store_path, runs, tmp_path):
    series = f"series:{runs[1].info.id}"
    validated = CliRunner().invoke(cli, ["--store", str(store_path), "capacity", "validate", "--runs", series, "-f",
                                         "csv"], prog_name="disklab")
    assert validated.exit_code == 0, validated.output
    lines = validated.output.strip().splitlines()
    assert lines[0].startswith("run,array,layout,member_run,test") and len(lines) == 1 + 6 * (len(runs) - 1)
    page = tmp_path / "report.html"
    reported = CliRunner().invoke(cli, ["--store", str(store_path), "report", series, "-o", str(page)],
                                  prog_name="disklab")
    assert reported.exit_code == 0, reported.output
    html = page.read_text()
    assert 'id="planner"' in html and "band these runs support" in html


def test_a_named_member_must_be_a_single_device_run(store_path, runs):
    result = CliRunner().invoke(cli, ["--store", str(store_path), "compare", f"series:{runs[1].info.id}",
                                      "--member", str(runs[2].info.id)], prog_name="disklab")
    assert result.exit_code == 2 and "was made on an array, not on one member alone" in result.output


@pytest.mark.parametrize("kind, level, stripe, layout", [
    ("lvm", "striped", 65536, "4 x member raid0 strip=64KiB"),  # dm-stripe
    ("lvm", "raid0", 65536, "4 x member raid0 strip=64KiB"),  # md's raid0 under dm-raid
    ("lvm", "raid5", None, "4 x member raid5 strip=64KiB"),  # LVM's default stripe size, as the planner's
    ("btrfs", "raid10", None, None),
])
def test_an_lvm_volume_is_planned_as_the_md_level_of_its_shape_and_btrfs_is_not(runs, kind, level, stripe, layout):
    md = runs[1]
    options = json.loads(json.dumps(md.info.options))
    members = options["configuration"]["array"]["members"]
    options["configuration"]["array"] = {"kind": kind, "level": level, "state": "clean", "members": members,
                                         "stripe_size_bytes": stripe}
    held = hold_array(replace(md, info=replace(md.info, options=options)), runs[0])
    if layout is None:
        assert held.reason == f"the planner has no {kind} {level} layout" and not held.figures
        return
    assert held.layout == layout and held.reason is None and len(held.figures) == 6
    if level != "raid5":  # the same shape as md's raid0 of the fixture: the same predictions
        md_figures = hold_array(md, runs[0]).figures
        assert [f.predicted_iops for f in held.figures] == [f.predicted_iops for f in md_figures]
