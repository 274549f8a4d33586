"""The device features of `disklab run` on real drivers, each with the read-back of what it set: the write cache of
an NVMe controller, a SATA SSD and a SCSI disk switched for two runs of a series and restored (after a SIGKILL by
doctor); `--condition fresh` and `fresh:secure-erase` on NVMe, the data read back as zeros; SMART before and after,
the NVMe data-units-written delta against fio's bytes; and the device record of each kind, with the machine's serials
kept as the project's policy says (docs/environment.md).

The runs are made once (module fixtures) and read by several checks: a Python start costs seconds under emulation.
The tools' states are read here with the tools' own words (nvme -H, hdparm, sdparm), not with disklab's parsers.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import signal
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Disklab, wait_for
from tests.kernel.checks.conftest import disk, private_disklab
from tests.kernel.guest import DMI_SERIALS, DMI_UUID, NVME, SATA_HDD, SATA_SSD, SCSI

TWO_WRITES = """
name = "two writes"
description = "sequential 1 MiB and random 4 KiB writes, 1 s each"

[defaults]
runtime = "1s"
ramp = "0s"
pause = "0s"
size = "16M"

[[group]]
name = "SEQ1M"
label = "SEQ1M Q4 write"
pattern = "sequential"
bs = "1M"
iodepth = 4
direction = "write"

[[group]]
name = "RND4K"
label = "RND4K Q4 write"
pattern = "random"
bs = "4k"
iodepth = 4
direction = "write"
"""
ONE_READ = """
name = "one read"
description = "random 4 KiB reads for 1 s: the conditioned device left as the condition made it"

[[group]]
name = "RND4K"
label = "RND4K Q4 read"
pattern = "random"
bs = "4k"
iodepth = 4
direction = "read"
runtime = "1s"
ramp = "0s"
size = "16M"
"""
# What the kernel's queue/write_cache says of a SCSI or ATA disk whose cache is on or off.
KERNEL_VIEW = {"on": "write back", "off": "write through"}
# NVMe's SMART / Health log counts data units of 1,000 512-byte blocks, rounded up.
NVME_DATA_UNIT_BYTES = 512_000
COMMAND_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Disklab]:
    """One store for the module's runs, so that the serial policy is checked over all of them."""
    yield from private_disklab(tmp_path_factory.mktemp("device-features"))


@pytest.fixture(scope="module")
def suites(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("suites")
    (folder / "two-writes.toml").write_text(TWO_WRITES)
    (folder / "one-read.toml").write_text(ONE_READ)
    return {"two writes": str(folder / "two-writes.toml"), "one read": str(folder / "one-read.toml")}


@pytest.fixture(scope="module")
def cache_series(lab: Disklab, suites: dict[str, str]) -> Callable[[str], dict]:
    """`run TWO_WRITES --write-cache on,off` on the disk of a serial, once: its result, its runs' records and the
    drive's cache as its tool said before and after."""
    made: dict[str, dict] = {}

    def series(serial: str) -> dict:
        if serial not in made:
            device = disk(serial)
            before = cache_state(serial)
            result = lab("run", suites["two writes"], "--target", device, "--destroy-data", "--write-cache", "on,off")
            runs = [run for run in stored_runs(lab) if run["test_path"] == device]
            made[serial] = {"result": result, "runs": runs, "before": before, "after": cache_state(serial),
                            "kernel_after": kernel_view(device)}
        return made[serial]

    return series


@pytest.fixture(scope="module")
def killed_hdd_run(lab: Disklab, suites: dict[str, str]) -> dict:
    """A run with the SATA HDD's cache off, SIGKILLed once its environment is stored: the cache as it left it, then
    `disklab doctor` and the cache after."""
    device = disk(SATA_HDD)
    before = cache_state(SATA_HDD)
    run = lab.start("run", suites["two writes"], "--target", device, "--destroy-data", "--write-cache", "off",
                    "--runtime", "60s")
    note = Path(tempfile.gettempdir(), f"disklab-cache-{run.pid}-{Path(device).name}.json")  # write_cache.py's
    stored = wait_for(lambda: note.exists() and any(r["test_path"] == device and r["env"].get("target_on")
                                                    for r in stored_runs(lab)), seconds=COMMAND_TIMEOUT_S)
    os.killpg(run.pid, signal.SIGKILL)  # disklab and its fio, as a kill -9 of the session does
    run.communicate(timeout=COMMAND_TIMEOUT_S)
    left = {"cache": cache_state(SATA_HDD), "kernel": kernel_view(device), "note": note.exists()}
    doctor = lab("doctor")
    return {"stored": stored, "before": before, "left": left, "doctor": doctor, "note_after": note.exists(),
            "after": cache_state(SATA_HDD), "kernel_after": kernel_view(device),
            "run": next(r for r in stored_runs(lab) if r["test_path"] == device)}


@pytest.mark.parametrize("serial", [NVME[0], SATA_SSD, SCSI])
def check_write_cache_on_and_off_are_two_runs_each_recording_the_state_read_back_and_the_drive_is_restored(
        cache_series, serial):
    series = cache_series(serial)
    assert series["result"].returncode == 0, series["result"].stderr
    on, off = series["runs"]
    assert [on["name"], off["name"]] == ["write cache on", "write cache off"] and off["series"] == on["id"]
    assert series["before"] == series["after"] == "on", "the drive's cache is not as it was before the series"
    for run, state in ((on, "on"), (off, "off")):
        recorded = run["options"]["configuration"]["write_cache"]
        assert (recorded["write_cache"], recorded["read_back"], recorded["before"]) == (state, state, "on"), recorded
        if serial in NVME:  # the cache is the controller's; the kernel's flag says only that there is one
            assert recorded["device"] == f"/dev/{Path(disk(serial)).name[:-2]}" and recorded["interface"] == "NVMe"
            assert recorded["kernel_view"] == "write back"
        else:  # a SCSI or ATA disk's kernel view follows the drive's caching mode page
            assert recorded["kernel_view"] == KERNEL_VIEW[state], recorded
    assert f"write cache of {recorded['device']} restored to on" in series["result"].stderr
    assert series["kernel_after"] == "write back"


def check_a_run_killed_with_the_cache_off_leaves_it_off_and_doctor_restores_it(killed_hdd_run):
    killed = killed_hdd_run
    assert killed["stored"], "the run did not store its environment with the cache off"
    assert killed["before"] == "on"
    assert killed["left"] == {"cache": "off", "kernel": "write through", "note": True}
    assert killed["doctor"].returncode in (0, 1), killed["doctor"].stderr
    assert "removed a killed run's write-cache setting, to restore" in killed["doctor"].stdout
    assert (killed["after"], killed["kernel_after"], killed["note_after"]) == ("on", "write back", False)


@pytest.mark.parametrize("condition, serial", [("fresh", NVME[1]), ("fresh:secure-erase", NVME[2])])
def check_a_fresh_nvme_namespace_reads_as_zeros_and_its_record_says_what_was_verified(
        lab: Disklab, suites: dict[str, str], condition, serial):
    device = disk(serial)
    offsets = [n * 32 * 1024**2 + 12288 for n in range(16)]  # blocks of our own, not disklab's sample
    write_blocks(device, offsets, os.urandom(4096))
    result = lab("run", suites["one read"], "--target", device, "--destroy-data", "--condition", condition)
    assert result.returncode == 0, result.stderr
    assert read_blocks(device, offsets) == [bytes(4096)] * len(offsets)
    (run,) = [run for run in stored_runs(lab) if run["test_path"] == device]
    recorded = run["options"]["configuration"]["condition"]
    assert recorded["read_back"] == {"blocks": 16, "block_bytes": 4096, "zeros": 16, "marker": 0, "other": 0}
    assert recorded["verified"].endswith("read back after it (O_DIRECT): all read as zeros"), recorded
    if condition == "fresh":
        assert recorded["command"] == f"blkdiscard --force {device}"
        assert recorded["not_verified"].startswith("when the drive frees the flash")
    else:  # QEMU's format ignores the secure-erase setting; nothing the drive says shows how it erased
        assert recorded["command"] == f"nvme format {device} --ses=1 --force"
        assert "cryptographic" in recorded["not_verified"]


def check_the_nvme_data_units_written_agree_with_fios_bytes_and_show_env_shows_them(lab: Disklab, cache_series):
    """Each run's change of the SMART log's data units written against the bytes fio's stored output says its tests
    wrote. Bound: one unit (512,000 bytes). The counter is cumulative and rounded up, so the change between two
    readings is within one unit of the bytes written between them; fio counts every write that completed, those in
    flight when its time ran out too (the suite has no ramp, whose writes fio leaves out); nothing else writes the
    namespace during the run (no file system, no layout)."""
    series = cache_series(NVME[0])
    name = Path(disk(NVME[0])).name
    for run in series["runs"]:
        smart = run["smart"][name]
        units = [smart[phase]["nvme_smart_health_information_log"]["data_units_written"] for phase in ("before", "after")]
        written = fio_written(lab, run["id"])
        delta = (units[1] - units[0]) * NVME_DATA_UNIT_BYTES
        print(f"run {run['id']}: data units written {units[0]} -> {units[1]}, {delta:,} bytes; fio wrote {written:,}")
        assert abs(delta - written) < NVME_DATA_UNIT_BYTES, (run["id"], units, written)
    shown = lab("show", str(series["runs"][0]["id"]), "--env", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    changes = {change["counter"]: change for change in json.loads(shown.stdout)["smart_changes"][name]}
    units = [series["runs"][0]["smart"][name][phase]["nvme_smart_health_information_log"]["data_units_written"]
             for phase in ("before", "after")]
    assert changes["data written"]["change"] == (units[1] - units[0]) * NVME_DATA_UNIT_BYTES > 0
    assert changes["data written"]["unit"] == "bytes"


def check_sata_smart_is_read_before_and_after_each_run(cache_series):
    """QEMU's ATA disk has no attribute counting what was written (no Total_LBAs_Written): its reallocated sectors
    and temperature are what a run's SMART changes can show."""
    series = cache_series(SATA_SSD)
    name = Path(disk(SATA_SSD)).name
    for run in series["runs"]:
        smart = run["smart"][name]
        assert set(smart) == {"before", "after"}
        names = {attribute["name"] for attribute in smart["after"]["ata_smart_attributes"]["table"]}
        assert "Reallocated_Sector_Ct" in names and smart["after"]["temperature"]["current"] > 0
        assert run["env"]["smart"] == f"read from {name}"


@pytest.mark.parametrize("serial, rotational, driver", [
    (NVME[0], False, "nvme"), (SATA_HDD, True, "ahci"), (SATA_SSD, False, "ahci"), (SCSI, True, "virtio-pci"),
])
def check_the_device_record_of_each_kind(cache_series, killed_hdd_run, serial, rotational, driver):
    run = killed_hdd_run["run"] if serial == SATA_HDD else cache_series(serial)["runs"][0]
    name = Path(disk(serial)).name
    env = {key.removeprefix(f"device.{name}."): value for key, value in run["env"].items()
           if key.startswith(f"device.{name}.")}
    sysfs = Path("/sys/block", name)
    controller = sysfs.resolve()
    while not re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", controller.name):
        controller = controller.parent
    assert env["model"] == (sysfs / "device" / "model").read_text().strip() and env["model"].startswith("QEMU")
    assert env["firmware"] == ((sysfs / "device" / ("firmware_rev" if serial in NVME else "rev")).read_text().strip())
    assert (env["controller_driver"], env["controller_pci_slot"]) == (driver, controller.name)
    assert env["controller_pci_id"] == ":".join((controller / f).read_text().strip()[2:] for f in ("vendor", "device"))
    assert env["controller_name"], "lspci named no controller"
    assert env["rotational"] is rotational
    if serial in NVME:  # blk-mq's queues are the controller's; there is no SCSI queue depth
        assert env["hw_queues"] == len(list((sysfs / "mq").iterdir())) and env["hw_queue_depth"] > 0
        assert "device_queue_depth" not in env
    else:
        assert env["device_queue_depth"] == int((sysfs / "device" / "queue_depth").read_text())
    assert env["serial"] == serial  # recorded: a device's history is the runs of its model and serial


def check_the_store_keeps_a_disks_serial_only_where_the_policy_says_and_the_machines_never(
        lab: Disklab, cache_series, killed_hdd_run):
    """docs/environment.md: each disk's serial is recorded (device.NAME.serial, copied onto the run's row and the
    store's list of groups of runs with the keys naming its disks, for the devices pages, and in smartctl's reports),
    so that a device's history tells two drives of one model apart; DMI's serial numbers and UUIDs never are."""
    for serial in (NVME[0], SATA_SSD, SCSI):
        cache_series(serial)
    disk_serials = {NVME[0], SATA_SSD, SCSI, SATA_HDD}
    found = texts_holding(lab.store_path, [*disk_serials, *DMI_SERIALS.values(), DMI_UUID])
    assert not [where for where in found if where[0] in (*DMI_SERIALS.values(), DMI_UUID)], found
    allowed = re.compile(r"run_env\.value_json \(key device\.\w+\.serial\)|(runs|run_groups)\.device_env"
                         r"|run_smart\.data_json")
    assert {what for what, _ in found} == disk_serials
    assert [where for where in found if not allowed.fullmatch(where[1])] == []


def cache_state(serial: str) -> str:
    """'on' or 'off', as the interface's tool says it in its own words."""
    device = disk(serial)
    if serial in NVME:
        controller = f"/dev/{Path(device).name[:-2]}"  # nvme0n1 -> nvme0
        said = tool("nvme", "get-feature", controller, "--feature-id=6", "-H")
        return {"Enabled": "on", "Disabled": "off"}[re.search(r"Volatile Write Cache Enable \(WCE\): (\w+)", said)[1]]
    if serial == SCSI:
        return {"1": "on", "0": "off"}[re.search(r"^WCE\s+([01])$", tool("sdparm", "--get=WCE=1", device), re.M)[1]]
    return re.search(r"write-caching =\s+[01] \((on|off)\)", tool("hdparm", "-W", device))[1]


def kernel_view(device: str) -> str:
    return Path(f"/sys/block/{Path(device).name}/queue/write_cache").read_text().strip()


def tool(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=COMMAND_TIMEOUT_S).stdout


def stored_runs(lab: Disklab) -> list[dict]:
    """Every run of the store with its options, series, environment and SMART reports, in order."""
    try:
        runs = lab.query("SELECT id, name, test_path, options_json FROM runs ORDER BY id")
        env = lab.query("SELECT run_id, key, value_json FROM run_env")
        smart = lab.query("SELECT run_id, device, phase, data_json FROM run_smart")
    except sqlite3.Error:  # no store yet, or its schema still being made
        return []
    found = []
    for run in runs:
        options = json.loads(run["options_json"])
        found.append({"id": run["id"], "name": run["name"], "test_path": run["test_path"], "options": options,
                      "series": options.get("series"),
                      "env": {row["key"]: json.loads(row["value_json"]) for row in env if row["run_id"] == run["id"]},
                      "smart": {}})
        for row in smart:
            if row["run_id"] == run["id"]:
                found[-1]["smart"].setdefault(row["device"], {})[row["phase"]] = json.loads(row["data_json"])
    return found


def fio_written(lab: Disklab, run_id: int) -> int:
    """The bytes fio's stored output says the run's tests wrote."""
    return sum(job["write"]["io_bytes"] for row in lab.query("SELECT fio_output FROM tests WHERE run_id = ?", (run_id,))
               for job in json.loads(row["fio_output"])["jobs"])


def write_blocks(device: str, offsets: list[int], data: bytes) -> None:
    buffer = mmap.mmap(-1, len(data))
    buffer.write(data)
    fd = os.open(device, os.O_WRONLY | os.O_DIRECT)
    try:
        for offset in offsets:
            os.pwritev(fd, [buffer], offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_blocks(device: str, offsets: list[int]) -> list[bytes]:
    buffer = mmap.mmap(-1, 4096)
    fd = os.open(device, os.O_RDONLY | os.O_DIRECT)
    try:
        return [(os.preadv(fd, [buffer], offset), buffer[:])[1] for offset in offsets]
    finally:
        os.close(fd)


def texts_holding(store: Path, needles: list[str]) -> list[tuple[str, str]]:
    """(needle, 'table.column' or 'run_env.value_json (key K)') for every text in the store that holds a needle."""
    found = set()
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            cursor = conn.execute(f'SELECT * FROM "{table}"')
            columns = [description[0] for description in cursor.description]
            for row in cursor:
                for column, value in zip(columns, row):
                    text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
                    for needle in needles:
                        if needle.lower() in text.lower():
                            key = f" (key {row[columns.index('key')]})" if table == "run_env" else ""
                            found.add((needle, f"{table}.{column}{key}"))
    return sorted(found)
