"""SMART: which counters matter and what a run changed.

The *.real.json reports are real smartctl output (a virtio disk here; QEMU's NVMe and SATA disks in the kernel
tier's guest, around fio's 64 MiB write); the ata-*.handwritten.json pair is written after smartctl's documented
schema, for the attributes QEMU's disk has not (data written, wear), see tests/fixtures/smart/README.md.
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


def test_nvme_changes_count_data_units_of_512000_bytes_within_one_of_what_fio_wrote():
    changes = {c.label: c for c in smart_changes(report("nvme-before.real.json"), report("nvme-after.real.json"))}
    assert unavailable_reason(report("nvme-before.real.json")) is None
    written = sum(job["write"]["io_bytes"] for job in report("nvme-fio-write.real.json")["jobs"])
    assert written == 64 * 1024**2
    # 131,072 blocks of 512 bytes, counted in thousands and rounded up: 132 units
    assert (changes["data written"].before, changes["data written"].delta) == (0, 132 * 512000)
    assert 0 <= changes["data written"].delta - written < 512000
    assert (changes["media errors"].delta, changes["percentage used (wear)"].unit) == (0, "%")
    assert (changes["temperature"].before, changes["temperature"].after, changes["temperature"].unit) == (50, 50, "°C")
    assert format_amount(changes["data written"].delta, "bytes", signed=True) == "+0.068 GB"


def test_a_real_sata_disk_without_a_written_counter_shows_what_it_has():
    changes = {c.label: c for c in smart_changes(report("ata-before.real.json"), report("ata-after.real.json"))}
    assert set(changes) == {"reallocated sectors", "temperature"}
    assert changes["reallocated sectors"].delta == 0 and changes["temperature"].after == 31


def test_ata_changes_scale_lbas_by_the_logical_block_size():
    changes = {c.label: c for c in smart_changes(report("ata-before.handwritten.json"), report("ata-after.handwritten.json"))}
    assert changes["data written"].delta == 4_000_000 * 512
    assert changes["reallocated sectors"].delta == 2
    assert (changes["wear levelling (normalised, 100 = new)"].before, changes["wear levelling (normalised, 100 = new)"].after) == (99, 98)
    assert changes["interface CRC errors"].delta == 0
    assert changes["temperature"].delta == 3
    assert "data read" not in changes  # not in the report: not invented


def test_smart_tables_need_both_phases(tmp_path):
    smart = {"nvme0n1": {"before": report("nvme-before.real.json"), "after": report("nvme-after.real.json")},
             "sdb": {"before": report("ata-before.handwritten.json")}}
    (table,) = smart_tables(1, smart)
    assert "nvme0n1" in table.title and table.row_count == len(smart_changes(smart["nvme0n1"]["before"], smart["nvme0n1"]["after"]))


def test_record_smart_stores_reports_and_notes_what_is_not_available(tmp_path, monkeypatch):
    reports = {"/dev/nvme0n1": report("nvme-before.real.json"), "/dev/vda": report("virtio-vda.real.json")}
    monkeypatch.setattr("disklab.env.capture.read_smart", lambda path: reports[path])
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run())
        record_smart(store, run_id, ["nvme0n1", "vda"], "before")
        reports["/dev/nvme0n1"] = report("nvme-after.real.json")
        record_smart(store, run_id, ["nvme0n1", "vda"], "after")
        record_smart(store, run_id, ["nvme0n1", "vda"], "before")  # a resumed run keeps its first 'before'
        stored = store.smart(run_id)
        assert set(stored) == {"nvme0n1"}
        assert stored["nvme0n1"]["before"]["nvme_smart_health_information_log"]["data_units_written"] == 0
        assert stored["nvme0n1"]["after"]["nvme_smart_health_information_log"]["data_units_written"] == 132
        assert store.run_values("run_env", run_id)["smart"] == "vda: not available: /dev/vda: Unable to detect device type"
        record_smart(store, run_id, [], "before")
        assert store.run_values("run_env", run_id)["smart"] == "not available: no block device found under the target"
