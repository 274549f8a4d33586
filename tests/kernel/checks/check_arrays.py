"""Arrays as a test variable on real md: `run --members ... --array ...` builds each array over the guest's four NVMe
namespaces, runs the suite on it, records what md reports of it, and tears it down (stopped, every member's
superblock cleared); degraded and rebuilding arrays; the refusal that names every member that may not be written; a
run SIGKILLed on its array, then `disklab doctor`.

The states are read here with mdadm's and sysfs's own words, not with disklab's parsers. The suites are short (1 s a
test): under emulation the figures mean nothing, and md's arithmetic is not what these checks are about.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import Disklab, wait_for
from tests.kernel.checks.conftest import disk, private_disklab
from tests.kernel.guest import NVME

TWO_TESTS = """
name = "two tests"
description = "random 4 KiB writes and reads, 1 s each"

[defaults]
runtime = "1s"
ramp = "0s"
pause = "0s"
size = "32M"
pattern = "random"
bs = "4k"
iodepth = 8

[[group]]
name = "RND4K write"
label = "RND4K Q8 write"
direction = "write"

[[group]]
name = "RND4K read"
label = "RND4K Q8 read"
direction = "read"
"""
SHORT = ("--repeat", "1", "--runtime", "1s", "--ramp", "0", "--size", "32M")
COMMAND_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Disklab]:
    yield from private_disklab(tmp_path_factory.mktemp("arrays"))


@pytest.fixture(scope="module")
def members() -> list[str]:
    return [disk(serial) for serial in NVME]


@pytest.fixture(scope="module")
def two_tests(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("suite") / "two-tests.toml"
    path.write_text(TWO_TESTS)
    return str(path)


@pytest.fixture(scope="module")
def three_arrays(lab: Disklab, members: list[str]) -> dict:
    result = lab("run", "quick", "--destroy-data", *SHORT, "--members", ",".join(members), "--array", "md:raid0",
                 "--array", "md:raid5:chunk=64K", "--array", "md:raid10")
    return {"result": result, "runs": stored_runs(lab), "left": md_devices(), "superblocks": superblocks(members)}


def check_three_arrays_are_three_runs_of_one_series_each_recording_what_md_reports(three_arrays, members):
    assert three_arrays["result"].returncode == 0, three_arrays["result"].stderr
    runs = three_arrays["runs"]
    assert [run["name"] for run in runs] == ["md raid0 · clean", "md raid5 chunk 64KiB · clean", "md raid10 · clean"]
    assert [run["series"] for run in runs] == [None, runs[0]["id"], runs[0]["id"]]
    for run, level, chunk, layout in ((runs[0], "raid0", "524288", None), (runs[1], "raid5", "65536", "2"),
                                      (runs[2], "raid10", "524288", "258")):
        array = run["options"]["configuration"]["array"]
        md = array["md"]
        assert (array["level"], array["members"], array["state"]) == (level, members, "clean"), array
        assert (md["level"], md["raid_disks"], md["chunk_size"]) == (level, "4", chunk), md
        if layout is not None:  # md's numbers: 2 left-symmetric, 258 (0x102) near=2
            assert md["layout"] == layout, md
        assert md["array_state"] in ("clean", "active"), md
        if level != "raid0":  # raid0 has nothing to resync, no sync_action and no dirty state
            assert md["sync_action"] == "idle" and array["resync"]["seconds"] > 0, array
            # md's default, 200 ms after the last write, in whole jiffies (0.204 s at this kernel's HZ of 250)
            assert float(md["safe_mode_delay"]) == pytest.approx(0.2, abs=0.005), md
        assert sorted(md["member_states"]) == sorted(Path(m).name for m in members), md
        assert array["commands"][0].startswith(f"mdadm --create /dev/md/disklab-array-")
        assert run["target_kind"] == "device" and run["target"].startswith("/dev/md"), run
        assert run["status"] == "complete" and run["tests"] == 8, run
        # io_uring tried on the array itself first (fio issues 1374, 1401); this kernel's md takes it
        assert run["engine"] == "io_uring" and "engine" not in run["outcomes"], run
    # the array named as a drive's model: each array of the same disks has a device history of its own
    assert [run["env"]["device.array.model"] for run in runs] == [
        "md raid0, 4 members, chunk 512KiB", "md raid5, 4 members, chunk 64KiB, left-symmetric",
        "md raid10, 4 members, chunk 512KiB, near=2"]
    assert runs[1]["options"]["configuration"]["array"]["md"]["mdadm"]["Layout"] == "left-symmetric"
    assert runs[2]["options"]["configuration"]["array"]["md"]["mdadm"]["Layout"] == "near=2"
    assert "resync" in runs[1]["options"]["configuration"]["array"]


def check_no_array_and_no_superblock_is_left(three_arrays):
    assert three_arrays["left"] == [], three_arrays["left"]
    assert three_arrays["superblocks"] == {}, three_arrays["superblocks"]


def check_compare_sets_the_arrays_side_by_side(lab: Disklab, three_arrays):
    first = three_arrays["runs"][0]["id"]
    compared = lab("compare", f"series:{first}")
    assert compared.returncode == 0, compared.stderr
    for name in ("md raid0", "md raid5 chunk 64KiB", "md raid10"):
        assert name in compared.stdout, compared.stdout


def check_degraded_and_rebuilding_raid5(lab: Disklab, members: list[str], two_tests: str):
    """64 MiB of each member, rebuilt at 4 MB/s at most so that the rebuild runs through both tests (md's own
    limit, restored after)."""
    limit = Path("/proc/sys/dev/raid/speed_limit_max")
    saved = limit.read_text()
    limit.write_text("4000\n")
    try:
        result = lab("run", two_tests, "--destroy-data", "--repeat", "1", "--members", ",".join(members),
                     "--array", "md:raid5:size=64M", "--array-state", "degraded,rebuilding")
    finally:
        limit.write_text(saved)
    assert result.returncode == 0, result.stderr
    degraded, rebuilding = [run for run in stored_runs(lab)
                            if run["name"] in ("md raid5 size 64MiB · degraded", "md raid5 size 64MiB · rebuilding")]
    assert rebuilding["series"] == degraded["id"]
    for run in (degraded, rebuilding):
        array = run["options"]["configuration"]["array"]
        assert array["failed_member"] == members[-1], array
    assert degraded["options"]["configuration"]["array"]["md"]["degraded"] == "1"
    assert degraded["options"]["configuration"]["array"]["md"]["component_size"] == str(64 * 1024)  # KiB
    states = rebuilding["outcomes"]["device_states"]
    assert [state["label"] for state in states] == ["RND4K Q8 write", "RND4K Q8 read"]
    first, last = states[0]["before"], states[-1]["after"]
    assert first["sync_action"] == "recover", states
    assert 0 <= first["sync_percent"] < last.get("sync_percent", 100), states
    assert "device_states" not in degraded["outcomes"]
    assert md_devices() == [] and superblocks(members) == {}


def check_one_refusal_names_every_member_that_may_not_be_written(lab: Disklab, members: list[str]):
    held = members[2:]
    for member in held:
        subprocess.run(["mkfs.ext4", "-q", "-F", member], check=True, capture_output=True)
    folders = [tempfile.mkdtemp() for _ in held]
    for member, folder in zip(held, folders):
        subprocess.run(["mount", member, folder], check=True)
    try:
        result = lab("run", "quick", "--destroy-data", *SHORT, "--members", ",".join(members), "--array", "md:raid5")
    finally:
        for member, folder in zip(held, folders):
            subprocess.run(["umount", folder], check=True)
            os.rmdir(folder)
            subprocess.run(["wipefs", "-a", "-q", member], check=True)
    assert result.returncode == 3, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "2 of the members may not be written" in lines[0], result.stderr
    for member in held:
        assert f"{member} is mounted" in lines[0], lines[0]  # blockdev.py's words
    assert md_devices() == [] and superblocks(members) == {}


@pytest.mark.parametrize("note_kept", [True, False], ids=["by its note", "by its name, its note gone"])
def check_a_run_killed_on_its_array_is_torn_down_by_doctor(lab: Disklab, members: list[str], two_tests: str,
                                                            note_kept: bool):
    """Without its note (a reboot empties the temporary folder, and udev assembles the array again from its
    superblocks) the array is found by the name in its superblock, disklab-array-PID-N."""
    before = {r["id"] for r in stored_runs(lab)}
    run = lab.start("run", two_tests, "--destroy-data", "--repeat", "1", "--runtime", "60s", "--members",
                    ",".join(members), "--array", "md:raid5:size=64M", "--array-state", "assume-clean")
    assert wait_for(lambda: any(r["status"] == "running" and r["env"] for r in stored_runs(lab)
                                if r["name"] == "md raid5 size 64MiB · assume-clean" and r["id"] not in before),
                    seconds=COMMAND_TIMEOUT_S, interval=1)
    os.killpg(run.pid, signal.SIGKILL)
    run.communicate(timeout=COMMAND_TIMEOUT_S)
    assert len(md_devices()) == 1 and len(superblocks(members)) == 4
    notes = list(Path(tempfile.gettempdir()).glob(f"disklab-array-{run.pid}-*.json"))
    assert len(notes) == 1
    if not note_kept:
        notes[0].unlink()
    doctor = lab("doctor")
    assert doctor.returncode in (0, 1), doctor.stderr
    found = "removed a killed run's md array" + ("" if note_kept else ", found by its name")
    assert found in doctor.stdout, doctor.stdout
    assert md_devices() == [] and superblocks(members) == {}
    assert not list(Path(tempfile.gettempdir()).glob(f"disklab-array-{run.pid}-*"))


def md_devices() -> list[str]:
    return sorted(path.name for path in Path("/sys/block").glob("md*"))


def superblocks(members: list[str]) -> dict[str, str]:
    """Each member that still carries an md superblock, with the array's UUID (mdadm --examine's own words)."""
    found = {}
    for member in members:
        done = subprocess.run(["mdadm", "--examine", "--export", member], capture_output=True, text=True)
        if done.returncode == 0 and "MD_UUID=" in done.stdout:
            found[member] = done.stdout.split("MD_UUID=")[1].split()[0]
    return found


def stored_runs(lab: Disklab) -> list[dict]:
    runs = lab.query("SELECT id, name, target, target_kind, status, fio_engine, options_json FROM runs ORDER BY id")
    env = lab.query("SELECT run_id, key, value_json FROM run_env")
    outcomes = lab.query("SELECT run_id, key, value_json FROM run_outcomes")
    tests = lab.query("SELECT run_id, COUNT(*) AS n FROM tests GROUP BY run_id")
    found = []
    for run in runs:
        options = json.loads(run["options_json"])
        found.append({"id": run["id"], "name": run["name"], "target": run["target"], "target_kind": run["target_kind"],
                      "status": run["status"], "engine": run["fio_engine"], "options": options,
                      "series": options.get("series"),
                      "env": {r["key"]: json.loads(r["value_json"]) for r in env if r["run_id"] == run["id"]},
                      "outcomes": {r["key"]: json.loads(r["value_json"]) for r in outcomes if r["run_id"] == run["id"]},
                      "tests": next((r["n"] for r in tests if r["run_id"] == run["id"]), 0)})
    return found
