"""SMART: which counters matter and what a run changed.

virtio-vda.real.json is real smartctl output; the NVMe and ATA reports are hand-written after smartctl's
documented JSON schema (no such drive was at hand to capture), see tests/fixtures/smart/README.md.
"""

import json
from pathlib import Path


from disklab.env.capture import record_smart
from disklab.env.smart import format_amount, health_values, smart_changes, unavailable_reason
from disklab.report.environment import smart_tables
from disklab.store.repository import Store
from tests.unit.test_store import new_run

SMART = Path(__file__).parent.parent / "fixtures" / "smart"


def report(name: str) -> dict:
    return json.loads((SMART / name).read_text())


def test_a_virtual_disk_without_smart_gives_smartctls_reason():
    data = report("virtio-vda.real.json")
    assert unavailable_reason(data) == "/dev/vda: Unable to detect device type"
    assert health_values(data) == {}


def test_missing_smartctl_is_a_reason_too():
    assert unavailable_reason({"disklab_error": "smartctl not installed"}) == "smartctl not installed"
    assert unavailable_reason({"smartctl": {"messages": []}}) == "the device reports no SMART health data"


def test_nvme_changes_count_data_units_of_512000_bytes():
    changes = {c.label: c for c in smart_changes(report("nvme-before.handwritten.json"), report("nvme-after.handwritten.json"))}
    assert unavailable_reason(report("nvme-before.handwritten.json")) is None
    assert changes["data written"].delta == 2000 * 512000
    assert changes["data read"].delta == 500 * 512000
    assert (changes["media errors"].before, changes["media errors"].delta) == (0, 1)
    assert changes["percentage used (wear)"].delta == 1 and changes["percentage used (wear)"].unit == "%"
    assert (changes["temperature"].before, changes["temperature"].after, changes["temperature"].unit) == (41, 47, "°C")
    assert format_amount(changes["data written"].delta, "bytes", signed=True) == "+1.024 GB"


def test_ata_changes_scale_lbas_by_the_logical_block_size():
    changes = {c.label: c for c in smart_changes(report("ata-before.handwritten.json"), report("ata-after.handwritten.json"))}
    assert changes["data written"].delta == 4_000_000 * 512
    assert changes["reallocated sectors"].delta == 2
    assert (changes["wear levelling (normalised, 100 = new)"].before, changes["wear levelling (normalised, 100 = new)"].after) == (99, 98)
    assert changes["interface CRC errors"].delta == 0
    assert changes["temperature"].delta == 3
    assert "data read" not in changes  # not in the report: not invented


def test_smart_tables_need_both_phases(tmp_path):
    smart = {"nvme0n1": {"before": report("nvme-before.handwritten.json"), "after": report("nvme-after.handwritten.json")},
             "sdb": {"before": report("ata-before.handwritten.json")}}
    (table,) = smart_tables(1, smart)
    assert "nvme0n1" in table.title and table.row_count == len(smart_changes(smart["nvme0n1"]["before"], smart["nvme0n1"]["after"]))


def test_record_smart_stores_reports_and_notes_what_is_not_available(tmp_path, monkeypatch):
    reports = {"/dev/nvme0n1": report("nvme-before.handwritten.json"), "/dev/vda": report("virtio-vda.real.json")}
    monkeypatch.setattr("disklab.env.capture.read_smart", lambda path: reports[path])
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run())
        record_smart(store, run_id, ["nvme0n1", "vda"], "before")
        reports["/dev/nvme0n1"] = report("nvme-after.handwritten.json")
        record_smart(store, run_id, ["nvme0n1", "vda"], "after")
        record_smart(store, run_id, ["nvme0n1", "vda"], "before")  # a resumed run keeps its first 'before'
        stored = store.smart(run_id)
        assert set(stored) == {"nvme0n1"}
        assert stored["nvme0n1"]["before"]["nvme_smart_health_information_log"]["data_units_written"] == 12000000
        assert stored["nvme0n1"]["after"]["nvme_smart_health_information_log"]["data_units_written"] == 12002000
        assert store.run_values("run_env", run_id)["smart"] == "vda: not available: /dev/vda: Unable to detect device type"
        record_smart(store, run_id, [], "before")
        assert store.run_values("run_env", run_id)["smart"] == "not available: no block device found under the target"
