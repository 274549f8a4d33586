"""`disklab capacity validate` as a user runs it, and the error band beside every prediction of `capacity show`
and `capacity compare` in each format."""

import csv
import io
import json
import re

from click.testing import CliRunner

from disklab.capacity.validation import shipped_band
from disklab.cli.main import cli

M2 = ("8 x sata-ssd-1.6t raid6", "24 x sas-hdd-10k-2.4t raid10")
SATA_SSD = """name = "sata-ssd-1.6t"
description = "the study's SSD with a higher random read rating than the catalogue's"
kind = "ssd"
interface = "sata-6g"
capacity = "1.6TB"
seq_read_mbps = 550
seq_write_mbps = 520
rand_read_iops = 100000
rand_write_iops = 28000
power_idle_w = 1.0
power_active_w = 6.7
price_eur = 1000

[source]
performance = "a test's own figures"
"""


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def band_text(kind: str) -> str:
    return shipped_band(kind).text()


# --- capacity validate ---

def test_validate_prints_every_point_each_cases_errors_the_crossover_and_the_bands():
    result = invoke("capacity", "validate")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for title in ("M2 block-size sweep (suite blocksize) · blocksize-arrays.csv",
                  "M2 mixed block sizes (suite mixed) · mixed-arrays.csv",
                  "M2 arithmetic (power -> energy -> operating cost, net capacity) · arrays-setup.csv",
                  "M4 spec sheet, 70/30 IOPS of one drive · spec-nvme-u3-example.csv"):
        assert title in lines
    first = next(line for line in lines if "8 x sata-ssd-1.6t raid6" in line and " 4KiB " in line)
    assert "80,000 IOPS" in first and " %" in first
    assert any("24 x sas-hdd-10k-2.4t raid10" in line and "64MiB" in line and "46 IOPS" in line for line in lines)
    assert any("opex per year" in line and "72 EUR" in line and "+0.0 %" in line for line in lines)
    assert sum(line.startswith("median absolute error ") for line in lines) == 4
    assert ("crossover in MB/s over block size, published: the HDD array leads from 64KiB, the curves cross 1 time"
            in lines)
    assert any(line.startswith("crossover in MB/s over block size, predicted: ") for line in lines)
    assert f"error band of ssd drives: {band_text('ssd')}, " in " ".join(result.output.split())
    assert "each study left out · the band built with it and without it" in lines
    assert any(line.startswith("cross-validated: ") for line in lines)


def test_validate_exports_json_csv_and_markdown(tmp_path):
    document = json.loads(invoke("capacity", "validate", "-f", "json").output)
    assert document["format"] == "disklab-capacity-validation" and document["format_version"] == 3
    sweep = document["cases"][0]
    assert sweep["source"] == "blocksize-arrays.csv" and len(sweep["points"]) == 30
    assert sweep["points"][0] | {"predicted": None, "error_percent": None} == {
        "array": "8 x sata-ssd-1.6t raid6", "point": "4KiB", "unit": "IOPS", "published": 80000.0,
        "predicted": None, "error_percent": None, "kind": "ssd"}
    assert document["crossover"]["published_bytes"] == 65536
    assert {b["kind"]: (b["low"], b["high"]) for b in document["bands"]} == {
        kind: (shipped_band(kind).low, shipped_band(kind).high) for kind in ("hdd", "ssd")}
    assert {(s["study"], s["kind"]) for s in document["studies"]} >= {("M2", "hdd"), ("M2", "ssd"), ("M4", "ssd")}

    out = tmp_path / "validation.csv"
    result = invoke("capacity", "validate", "-f", "csv", "-o", str(out))
    assert result.exit_code == 0 and f"written to {out}" in result.output
    rows = list(csv.reader(io.StringIO(out.read_text().split("\n\n")[0])))
    assert rows[0] == ["case", "source", "array", "point", "unit", "published", "predicted", "error_percent", "kind"]
    assert len(rows) - 1 == sum(len(c["points"]) for c in document["cases"])

    markdown = invoke("capacity", "validate", "-f", "markdown").output
    assert "| 8 x sata-ssd-1.6t raid6 | 4KiB | 80,000 IOPS |" in markdown


def test_validate_table_goes_to_the_terminal_only(tmp_path):
    result = invoke("capacity", "validate", "-o", str(tmp_path / "x.txt"))
    assert result.exit_code == 2 and "use --format json, csv or markdown with --output" in result.output


def test_validate_with_a_drive_file_that_replaces_a_catalogue_drive(tmp_path):
    mine = tmp_path / "ssd.toml"
    mine.write_text(SATA_SSD)
    shipped = json.loads(invoke("capacity", "validate", "-f", "json").output)
    replaced = json.loads(invoke("capacity", "validate", "-f", "json", "--drives", str(mine)).output)

    def ssd_4k(document):
        return document["cases"][0]["points"][0]["predicted"]

    assert ssd_4k(replaced) != ssd_4k(shipped)
    assert replaced["cases"][0]["points"][-1] == shipped["cases"][0]["points"][-1]  # the HDD array as shipped


def test_validate_refuses_a_drive_file_no_published_table_uses(tmp_path):
    other = tmp_path / "other.toml"
    other.write_text(SATA_SSD.replace('name = "sata-ssd-1.6t"', 'name = "my-ssd"'))
    result = invoke("capacity", "validate", "--drives", str(other))
    assert result.exit_code == 2
    assert f"--drives {other}: drive 'my-ssd' is in no published table" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


# --- the bands beside the predictions of show and compare ---

def test_compare_prints_each_arrays_band_beside_every_figure():
    result = invoke("capacity", "compare", *M2, "-w", "blocksize")
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "RND 4KiB mixed 16 jobs" in line)
    assert row.count(band_text("ssd")) == 2 and row.count(band_text("hdd")) == 2  # beside IOPS and MB/s
    text = " ".join(result.output.split())
    band = shipped_band("ssd")
    assert (f"8 x sata-ssd-1.6t raid6 {band.text()} under random I/O ({band.points} ssd points from {band.studies} "
            "studies)") in text
    assert "error band beside each figure: where the measured figure may lie" in text


def test_markdown_csv_json_and_html_carry_the_band_and_the_caveats(tmp_path):
    markdown = invoke("capacity", "show", M2[0], "-w", "mixed", "-f", "markdown").output
    row = next(line for line in markdown.splitlines() if line.startswith("| bssplit"))
    band = re.escape(band_text("ssd"))
    assert re.fullmatch(rf"\| bssplit \S+ \| [\d,]+ {band} \[1\] \| [\d,]+ {band} \[1\] \| [a-z ]+ \|", row), row
    assert "- [1] the controller's cache mode is not given: write-back with 2 GiB assumed" in markdown
    rows = list(csv.DictReader(io.StringIO(invoke("capacity", "compare", *M2, "-w", "mixed", "-f", "csv")
                                           .output.split("\n\n")[0])))
    for row, kind in zip(rows, ("ssd", "hdd")):
        assert (float(row["iops_low"]), float(row["iops_high"])) == shipped_band(kind).range(float(row["iops"]))
        assert "cache mode is not given" in row["caveats"]
    document = json.loads(invoke("capacity", "show", M2[1], "-w", "mixed", "-f", "json").output)
    assert document["format_version"] == 3
    (prediction,) = document["arrays"][0]["predictions"]
    band = shipped_band("hdd")
    assert prediction["error_band"] | {"iops_low": None} == {
        "kind": "hdd", "low": band.low, "high": band.high, "iops_low": None, "iops_high": prediction["iops"] * band.high,
        "bw_bytes_per_s_low": prediction["bw_bytes_per_s"] * band.low,
        "bw_bytes_per_s_high": prediction["bw_bytes_per_s"] * band.high, "target_coverage": 0.9,
        "cross_validated_coverage": band.coverage, "basis": band.why}
    assert any("typical for its class" in text for text in prediction["caveats"])
    page = tmp_path / "plan.html"
    assert invoke("capacity", "compare", *M2, "--html", str(page), "-f", "json").exit_code == 0
    html = page.read_text()
    assert band_text("ssd") in html and "shaded: error band" in html
    assert html.count('class="range-band" data-series="1"') == 2  # the SSD array's line shaded, on both charts


def test_a_network_path_or_a_host_link_says_not_validated_instead_of_a_band():
    for option in (("--via", "iscsi:25GbE"), ("--host-mbps", "3125")):
        result = invoke("capacity", "show", "4 x nvme-u3-3.84t raid0", "-w", "mixed", "-f", "markdown", *option)
        assert result.exit_code == 0, result.output
        row = next(line for line in result.output.splitlines() if line.startswith("| bssplit"))
        assert row.count("(not validated)") == 2 and " %" not in row
        assert re.search(r"\[\d\] no error band: the published tables have \d ssd figures? of an array", result.output)
        document = json.loads(invoke("capacity", "show", "4 x nvme-u3-3.84t raid0", "-w", "mixed", "-f", "json",
                                     *option).output)
        band = document["arrays"][0]["predictions"][0]["error_band"]
        assert band["low"] is None and band["iops_low"] is None and band["basis"].startswith("not validated: ")
