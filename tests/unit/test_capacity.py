"""Planning arrays: the catalogue, layouts, the model's behaviour against spec sheets, costs, and the CLI."""

import json

import pytest
from click.testing import CliRunner

from disklab.capacity.catalogue import drive_from_dict, drive_to_toml, load_catalogue, load_drive, shipped_drive_files
from disklab.capacity.cost import Money, costs
from disklab.capacity.html import blocksize_charts
from disklab.capacity.layout import LEVELS, parse_layout
from disklab.capacity.model import (
    LIMIT_CONCURRENCY, LIMIT_CONTROLLER, LIMIT_DRIVES, LIMIT_HOST, MODEL_NOTE, Ceilings, Workload, predict,
)
from disklab.capacity.planning import plan_arrays, workload_tests
from disklab.capacity.validation import band_for
from disklab.cli.main import cli
from disklab.errors import UserError
from tests.unit.test_svg import NS, parse

KIB, MIB = 1024, 1024**2
NO_CEILINGS = Ceilings(None)


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def layout(catalogue, spec, **kwargs):
    return parse_layout(spec, catalogue, **kwargs)


def random_io(size, read_share, outstanding=1024):
    return Workload("test", ((size, 1.0),), read_share, outstanding)


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


# --- catalogue ---

def test_catalogue_ships_the_classes_the_issue_names_each_with_sources(catalogue):
    assert {"nl-sas-7.2k-12t", "sas-hdd-10k-2.4t", "sata-ssd-1.6t", "nvme-u3-3.84t"} <= set(catalogue)
    assert {d.kind for d in catalogue.values()} == {"hdd", "ssd"}
    for drive in catalogue.values():
        assert drive.sources and all(text for _, text in drive.sources), drive.name
        assert drive.price_eur is None or drive.price_eur > 0, drive.name  # None: unknown, never 0
        assert drive.power_active_w is None or drive.power_active_w > (drive.power_idle_w or 0) > 0, drive.name


def test_nvme_figures_are_the_shared_spec_sheet(catalogue):
    nvme = catalogue["nvme-u3-3.84t"]
    # spec-nvme-u3-example.csv, 3,84 TB row
    assert (nvme.seq_read_bytes_per_s, nvme.seq_write_bytes_per_s) == (6800e6, 5300e6)
    assert (nvme.rand_read_iops, nvme.rand_write_iops, nvme.endurance_tbw) == (1_000_000, 180_000, 7300)


def test_every_shipped_drive_survives_a_round_trip_through_its_file(tmp_path):
    for path in shipped_drive_files():
        drive = load_drive(path)
        copy = tmp_path / path.name
        copy.write_text(drive_to_toml(drive))
        assert load_drive(copy) == drive.__class__(**{**drive.__dict__, "origin": str(copy)})


def test_a_user_drive_file_joins_the_catalogue_and_may_replace_a_shipped_one(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "drives").mkdir(parents=True)
    (home / "drives" / "mine.toml").write_text(drive_to_toml(load_catalogue()["sata-ssd-1.6t"]).replace(
        'name = "sata-ssd-1.6t"', 'name = "my-ssd"'))
    monkeypatch.setenv("DISKLAB_HOME", str(home))
    assert load_catalogue()["my-ssd"].rand_read_iops == 84000


@pytest.mark.parametrize("change, message", [
    ({"kind": "tape"}, "kind must be one of"),
    ({"interface": "usb"}, "interface must be one of"),
    ({"seq_read_mbps": -1}, "seq_read_mbps must be a finite number"),
    ({"seq_read_mbps": 0}, "seq_read_mbps must be above 0"),
    ({"capacity": "0"}, "capacity must be above 0"),
    ({"interface": ["sata-6g"]}, "interface must be one of"),
    ({"capacity": "lots"}, "capacity"),
    ({"colour": "red"}, "unknown key colour"),
    ({"source": {}}, "needs a [source] table"),
])
def test_bad_drive_files_are_one_clear_line(change, message):
    data = {"name": "x", "description": "x", "kind": "ssd", "interface": "sata-6g", "capacity": "1TB",
            "seq_read_mbps": 500, "seq_write_mbps": 500, "rand_read_iops": 1, "rand_write_iops": 1,
            "power_idle_w": 1, "power_active_w": 2, "price_eur": 3, "source": {"all": "made up for a test"}}
    with pytest.raises(UserError, match=message.replace("[", r"\[")):
        drive_from_dict({**data, **change}, "x.toml")


def test_an_hdd_needs_its_mechanics():
    data = {"name": "x", "description": "x", "kind": "hdd", "interface": "sas-12g", "capacity": "1TB",
            "seq_read_mbps": 200, "seq_write_mbps": 200, "power_idle_w": 1, "power_active_w": 2, "price_eur": 3,
            "rpm": 7200, "source": {"all": "a test"}}
    with pytest.raises(UserError, match="needs rpm, seek_read_ms"):
        drive_from_dict(data, "x.toml")


# --- layouts ---

@pytest.mark.parametrize("spec, net_drives, any_fail, best_fail, penalty", [
    ("4 x sata-ssd-1.6t raid0", 4, 0, 0, 1),
    ("2 x sata-ssd-1.6t raid1", 1, 1, 1, 2),
    ("3 x sata-ssd-1.6t raid1", 1, 2, 2, 3),
    ("24 x sas-hdd-10k-2.4t raid10", 12, 1, 12, 2),
    ("6 x sata-ssd-1.6t mirror", 3, 1, 3, 2),
    ("4 x nvme-u3-3.84t stripe", 4, 0, 0, 1),
    ("5 x sata-ssd-1.6t raid5", 4, 1, 1, 4),
    ("8 x sata-ssd-1.6t raid6", 6, 2, 2, 6),
    ("12 x nl-sas-7.2k-12t raid50/3", 9, 1, 3, 4),
    ("12 x nl-sas-7.2k-12t raid60/2", 8, 2, 4, 6),
    ("12 x nl-sas-7.2k-12t raid60", 8, 2, 4, 6),  # RAID60 without /GROUPS: two groups
    ("6 x nvme-u3-3.84t raidz1", 5, 1, 1, 4),
    ("6 x nvme-u3-3.84t raidz2", 4, 2, 2, 6),
    ("12 x nvme-u3-3.84t raidz3/2", 6, 3, 6, 8),
])
def test_layouts_capacity_fault_tolerance_and_write_penalty(catalogue, spec, net_drives, any_fail, best_fail, penalty):
    array = layout(catalogue, spec)
    assert array.net_capacity_bytes == net_drives * array.drive.capacity_bytes
    assert (array.failures_tolerated, array.failures_tolerated_at_best, array.write_penalty) == (
        any_fail, best_fail, penalty)


def test_every_level_is_covered():
    assert set(LEVELS) == {"raid0", "raid1", "raid5", "raid6", "raid10", "raid50", "raid60", "mirror", "stripe",
                           "raidz1", "raidz2", "raidz3"}


@pytest.mark.parametrize("spec, message", [
    ("eight x ssd raid6", "is not a layout"),
    ("3 x sata-ssd-1.6t raid6", "raid6 needs at least 4 drives"),
    ("5 x sata-ssd-1.6t raid10", "needs an even count"),
    ("10 x sata-ssd-1.6t raid60/3", "do not split into 3 equal groups"),
    ("8 x sata-ssd-1.6t raid60/4", "needs at least 4 drives per group"),
    ("8 x sata-ssd-1.6t raid6/2", "raid6 takes no /GROUPS"),
    ("8 x sata-ssd-1.6t raid7", "unknown level 'raid7'"),
    ("8 x no-such-drive raid6", "unknown drive 'no-such-drive'"),
])
def test_bad_layouts_are_refused_with_the_rule(catalogue, spec, message):
    with pytest.raises(UserError, match=message):
        layout(catalogue, spec)


def test_small_parity_writes_read_modify_write_and_full_stripes_read_nothing(catalogue):
    raid6 = layout(catalogue, "8 x sata-ssd-1.6t raid6", strip_bytes=64 * KIB)
    small = raid6.write_ops(4 * KIB)
    assert (small.read_accesses, small.write_accesses, small.read_then_write) == (3, 3, True)
    full = raid6.write_ops(raid6.stripe_width_bytes)  # 6 data strips of 64 KiB
    assert raid6.stripe_width_bytes == 384 * KIB
    assert (full.read_accesses, full.read_bytes, full.write_bytes) == (0, 0, 512 * KIB)  # data + 2 parity strips


def test_a_reconstruct_write_reads_the_rows_it_covers_not_whole_strips(catalogue):
    """A 4-drive RAID6 writes 4 KiB by reading the one other data strip's row (md reads its stripe cache's 4 KiB
    pages, drivers/md/raid5.c): 4 KiB, not the whole 64 KiB strip the model used to read."""
    raid6 = layout(catalogue, "4 x sata-ssd-1.6t raid6", strip_bytes=64 * KIB)
    small = raid6.write_ops(4 * KIB)
    assert (small.read_accesses, small.read_bytes, small.write_accesses) == (1, 4 * KIB, 3)
    raid5 = layout(catalogue, "3 x sata-ssd-1.6t raid5", strip_bytes=64 * KIB)
    assert raid5.write_ops(16 * KIB).read_bytes == 16 * KIB


# --- the model, against figures the catalogue does not hold ---

def test_one_ssd_reproduces_its_spec_sheets_8k_figures(catalogue):
    # The DC S3610 1.6 TB sheet also rates 8 KiB at QD32: 52,000 reads, 14,000 writes. The catalogue holds only
    # the 4 KiB figures; the model's access + transfer split must give the 8 KiB ones.
    one = layout(catalogue, "1 x sata-ssd-1.6t raid0")
    assert predict(one, random_io(4 * KIB, 1.0), NO_CEILINGS).iops == pytest.approx(84000)
    assert predict(one, random_io(8 * KIB, 1.0), NO_CEILINGS).iops == pytest.approx(52000, rel=0.02)
    assert predict(one, random_io(8 * KIB, 0.0), NO_CEILINGS).iops == pytest.approx(14000, rel=0.02)


def test_mirrors_halve_write_iops_and_double_read_spindles(catalogue):
    stripe = layout(catalogue, "4 x sata-ssd-1.6t raid0")
    mirror = layout(catalogue, "4 x sata-ssd-1.6t raid10")
    writes = [predict(a, random_io(4 * KIB, 0.0), NO_CEILINGS).iops for a in (stripe, mirror)]
    reads = [predict(a, random_io(4 * KIB, 1.0), NO_CEILINGS).iops for a in (stripe, mirror)]
    assert writes[1] == pytest.approx(writes[0] / 2) and reads[1] == pytest.approx(reads[0])


def test_limits_name_what_decides(catalogue):
    nvme = layout(catalogue, "8 x nvme-u3-3.84t raid10")
    assert predict(nvme, random_io(4 * KIB, 1.0, outstanding=1), NO_CEILINGS).limit == LIMIT_CONCURRENCY
    one_io = predict(nvme, random_io(4 * KIB, 1.0, outstanding=1), NO_CEILINGS)
    assert one_io.iops == pytest.approx(1 / 80e-6)  # the sheet's typical read latency at queue depth 1
    assert predict(nvme, random_io(4 * KIB, 1.0), NO_CEILINGS).limit == LIMIT_DRIVES
    big = predict(nvme, random_io(16 * MIB, 1.0), Ceilings(None, host_bytes_per_s=3125e6))
    assert big.limit == LIMIT_HOST and big.bw_bytes_per_s == pytest.approx(3125e6)
    mirrored = predict(nvme, random_io(64 * MIB, 0.0), Ceilings(4.4e9))
    # every byte written goes twice over the controller's link
    assert mirrored.limit == LIMIT_CONTROLLER and mirrored.bw_bytes_per_s == pytest.approx(2.2e9)


# --- money ---

def test_costs_per_tb_per_1000_iops_and_over_the_years(catalogue):
    array = layout(catalogue, "8 x sata-ssd-1.6t raid6")
    result = costs(array, Money(price_per_kwh=0.10, pue=1.5, years=3), iops=50_000)
    assert result.power_w == pytest.approx(8 * 6.7) and result.power_source == "catalogue"
    assert result.purchase == 8000 and result.per_tb == pytest.approx(8000 / 9.6)
    assert result.per_1000_iops == pytest.approx(160)
    assert result.total == pytest.approx(8000 + 3 * 8 * 6.7 * 8.76 * 0.10 * 1.5)


# --- CLI ---

M2 = ("24 x sas-hdd-10k-2.4t raid10", "8 x sata-ssd-1.6t raid6")


def test_compare_json_has_both_arrays_crossover_and_the_model_note():
    result = invoke("capacity", "compare", *M2, "--workload", "blocksize", "--workload", "mixed",
                    "--watts", "230", "--watts", "90", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["format"] == "disklab-capacity" and document["note"] == MODEL_NOTE
    hdd, ssd = document["arrays"]
    assert (round(hdd["costs"]["operating_per_year"]), round(ssd["costs"]["operating_per_year"])) == (183, 72)
    assert (hdd["net_capacity_bytes"], ssd["net_capacity_bytes"]) == (28.8e12, 9.6e12)
    assert len(hdd["predictions"]) == 16 and hdd["predictions"][-1]["workload"].startswith("bssplit")
    assert document["crossovers"][0]["parameter"] == "bs"


def test_compare_table_markdown_and_csv_say_it_is_a_model():
    table = invoke("capacity", "compare", *M2)
    assert table.exit_code == 0 and MODEL_NOTE in table.output and "crossover:" in table.output
    markdown = invoke("capacity", "compare", *M2, "-f", "markdown")
    assert markdown.output.startswith(f"**{M2[0]} vs {M2[1]} · {MODEL_NOTE}**")
    csv_text = invoke("capacity", "compare", *M2, "-f", "csv", "--workload", "mixed").output
    first, facts = csv_text.split("\n\n")
    assert first.splitlines()[0].startswith("workload,array,iops") and len(first.splitlines()) == 3
    assert len(facts.strip().splitlines()) == 3 and MODEL_NOTE in first


def test_show_one_layout_with_a_host_link():
    result = invoke("capacity", "show", "6 x nvme-u3-3.84t raidz2", "--host-mbps", "3125", "-f", "json",
                    "--workload", "mixed")
    assert result.exit_code == 0, result.output
    (array,) = json.loads(result.output)["arrays"]
    assert array["ceilings"] == {"controller_bytes_per_s": None, "host_bytes_per_s": 3125e6}  # NVMe: no controller
    sas = json.loads(invoke("capacity", "show", M2[0], "--host-mbps", "1250", "-f", "json", "-w", "mixed").output)
    assert sas["arrays"][0]["ceilings"] == {"controller_bytes_per_s": 4.4e9, "host_bytes_per_s": 1250e6}


def test_drives_lists_the_catalogue_and_names_sources():
    listing = invoke("capacity", "drives")
    assert listing.exit_code == 0 and "sata-ssd-1.6t" in listing.output
    one = invoke("capacity", "drives", "sata-ssd-1.6t")
    assert "Source of performance: spec sheet of the Intel SSD DC S3610" in one.output


@pytest.mark.parametrize("args, message", [
    (("capacity", "show", "3 x sata-ssd-1.6t raid6"), "raid6 needs at least 4 drives"),
    (("capacity", "compare", M2[0]), "compare needs at least two layouts"),
    (("capacity", "compare", *M2, "--watts", "1", "--watts", "2", "--watts", "3"), "--watts given 3 times"),
    (("capacity", "show", M2[0], "--workload", "no-such-suite"), "unknown suite"),
    (("capacity", "drives", "nope"), "unknown drive 'nope'"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("disklab: error: ") and message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_html_plan_has_both_arrays_as_lines_over_block_size(tmp_path):
    page = tmp_path / "plan.html"
    result = invoke("capacity", "compare", *M2, "--html", str(page), "-f", "json", "-o", str(tmp_path / "p.json"))
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert f"disklab capacity · {M2[0]} vs {M2[1]} · {MODEL_NOTE}" in html
    for chart in ("capacity-iops-1", "capacity-mb-per-s-1"):
        assert f'id="{chart}"' in html and f'id="{chart}-series-0"' in html and f'id="{chart}-series-1"' in html
    assert html.count("<svg") == 2  # the mixed workload is one point, not a curve
    # IOPS from 4 KiB to 32 MiB span decades: on a linear axis the large blocks of 24 HDDs would sit on the floor
    assert html.count("IOPS (log scale)") >= 1


def test_html_plan_shades_each_line_with_the_error_band_its_table_prints_and_none_where_not_validated(catalogue):
    layouts = [parse_layout(spec, catalogue) for spec in ("8 x sata-ssd-consumer-1t raid10", "6 x nl-sas-7.2k-12t raid5")]
    plan = plan_arrays(layouts, workload_tests(["blocksize"]), Money())
    iops = next(c for c in blocksize_charts(plan) if c.id.startswith("capacity-iops"))
    for array, line in zip(plan.arrays, iops.series):
        index = {float(test.bs): i for i, test in enumerate(plan.tests) if not test.bssplit}
        assert list(line.ranges) == [band_for(array, plan.tests[index[x]]).range(y) for x, y in line.points]
    assert not any(iops.series[0].ranges) and all(iops.series[1].ranges)  # the SSD array's band: not validated
    svg = parse(iops)
    assert [p.get("data-series") for p in svg.iter(f"{{{NS['svg']}}}path") if p.get("class") == "range-band"] == ["1"]
    assert band_for(plan.arrays[1], plan.tests[0]).text() in iops.note and "(not validated)" in iops.note
