"""LVM and btrfs arrays as a test variable, for real: `run --members ... --array lvm:striped ... --array btrfs:raid10`
builds each over the guest's four NVMe namespaces (LVM's physical volumes, group and striped or raid volume; one
btrfs file system with its data and metadata profiles, the suite's test file in it), records what LVM and btrfs
report, and takes each apart (no group, no PV label, no mount, no btrfs signature left); a run SIGKILLed on an LVM
array, and one SIGKILLed on a btrfs array, each taken apart by `disklab doctor`. (The next configured run
removes them too, but only once the members it names pass the device rules, which a member still in a killed run's
group or file system does not: doctor is the way back for the same members.)

The states are read here with LVM's, blkid's and the kernel's own words, not with disklab's parsers. The suite is
two 1 s tests: under emulation the figures mean nothing.
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

SUITE = """
name = "two short tests"
description = "sequential 128 KiB writes, then random 4 KiB reads, 1 s each"

[defaults]
runtime = "1s"
ramp = "0s"
pause = "0s"
size = "32M"
iodepth = 4

[[group]]
name = "SEQ128K write"
label = "SEQ128K Q4 write"
pattern = "sequential"
bs = "128k"
direction = "write"

[[group]]
name = "RND4K read"
label = "RND4K Q4 read"
pattern = "random"
bs = "4k"
direction = "read"
"""
TIMEOUT_S = 600


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Disklab]:
    subprocess.run(["modprobe", "dm_mod"], check=True)  # as a Debian system with lvm2 has it from boot
    yield from private_disklab(tmp_path_factory.mktemp("lvm-btrfs"))


@pytest.fixture(scope="module")
def members() -> list[str]:
    return [disk(serial) for serial in NVME]


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("suite") / "two-tests.toml"
    path.write_text(SUITE)
    return str(path)


@pytest.fixture(scope="module")
def three_arrays(lab: Disklab, members: list[str], suite: str) -> dict:
    result = lab("run", suite, "--destroy-data", "--repeat", "1", "--members", ",".join(members), "--measure-member",
                 "--array", "lvm:striped:stripesize=64K", "--array", "lvm:raid10", "--array", "btrfs:raid10")
    member, *runs = stored_runs(lab)
    compared = lab("compare", f"series:{member['id']}", "--format", "json")
    return {"result": result, "member": member, "runs": runs, "compared": compared, "left": left_behind(members)}


def check_an_lvm_striped_an_lvm_raid10_and_a_btrfs_raid10_are_three_runs_of_one_series(three_arrays, members):
    assert three_arrays["result"].returncode == 0, three_arrays["result"].stderr
    member, runs = three_arrays["member"], three_arrays["runs"]
    assert (member["name"], member["target"], member["series"]) == ("member alone", members[0], None), member
    assert [run["name"] for run in runs] == ["lvm striped stripesize 64KiB · clean", "lvm raid10 · clean",
                                             "btrfs raid10 · clean"]
    assert [run["series"] for run in runs] == [member["id"]] * 3
    for run in (member, *runs):
        assert run["status"] == "complete" and run["tests"] == 2, run


def check_the_planner_predicts_the_lvm_volumes_from_the_member_and_says_why_not_btrfs(three_arrays):
    """The shapes LVM reported, as the planner's layouts (its striped volume is RAID0, its raid10 md's); figures
    under emulation mean nothing, so only what is predicted from what is checked here (check_array_planner.py holds
    md's figures to the model over delayed members)."""
    assert three_arrays["compared"].returncode == 0, three_arrays["compared"].stderr
    arrays = json.loads(three_arrays["compared"].stdout)["planner"]["arrays"]
    member = three_arrays["member"]["id"]
    assert [(a["name"], a["member_run"], a["layout"], a["reason"]) for a in arrays] == [
        ("lvm striped stripesize 64KiB · clean", member, "4 x member raid0 strip=64KiB", None),
        ("lvm raid10 · clean", member, "4 x member raid10 strip=64KiB", None),
        ("btrfs raid10 · clean", member, None, "the planner has no btrfs raid10 layout")], arrays
    assert all([f["test"] for f in a["figures"]] == ["RND4K Q4 read"] for a in arrays[:2]), arrays


def check_the_lvm_runs_record_what_lvm_reports(three_arrays, members):
    striped, raid10 = (run["options"]["configuration"]["array"] for run in three_arrays["runs"][:2])
    for array, run in zip((striped, raid10), three_arrays["runs"]):
        assert array["kind"] == "lvm" and array["members"] == members and array["state"] == "clean", array
        assert [command.split()[0] for command in array["commands"]] == ["pvcreate", "vgcreate", "lvcreate"], array
        assert array["volume"].startswith("disklab-array-") and array["volume"].endswith("/volume"), array
        lvm = array["lvm"]
        assert sorted(pv["pv_name"] for pv in lvm["pvs"]) == sorted(members), lvm["pvs"]
        assert [vg["pv_count"] for vg in lvm["vgs"]] == ["4"], lvm["vgs"]
        assert run["target_kind"] == "device" and run["target"].startswith("/dev/dm-"), run
    top = [lv for lv in striped["lvm"]["lvs"] if lv["lv_name"] == "volume"][0]
    assert (top["segtype"], top["stripes"], top["stripe_size"]) == ("striped", "4", "65536"), top
    assert (striped["stripes"], striped["stripe_size_bytes"]) == (4, 65536) and "resync" not in striped
    top = [lv for lv in raid10["lvm"]["lvs"] if lv["lv_name"] == "volume"][0]
    assert top["segtype"] == "raid10" and top["sync_percent"] == "100.00", top
    assert raid10["resync"]["seconds"] > 0 and "--stripes 2" in raid10["commands"][2], raid10
    assert sum(lv["lv_name"].startswith("[volume_rimage_") for lv in raid10["lvm"]["lvs"]) == 4, raid10["lvm"]


def check_the_btrfs_run_records_its_profiles_and_runs_on_a_file_in_it(three_arrays, members):
    run = three_arrays["runs"][2]
    array = run["options"]["configuration"]["array"]
    assert (array["kind"], array["data_profile"], array["metadata_profile"]) == ("btrfs", "raid10", "raid10"), array
    assert array["commands"][0].startswith("mkfs.btrfs -f -L disklab-array-") and "-d raid10 -m raid10" in \
        array["commands"][0], array
    profiles = array["btrfs"]["profiles"]
    assert (profiles["Data"]["profile"], profiles["Metadata"]["profile"]) == ("RAID10", "RAID10"), profiles
    assert sorted(device["path"] for device in array["btrfs"]["devices"]) == sorted(members), array["btrfs"]
    assert array["btrfs"]["usage"]["Data ratio"] == 2.0, array["btrfs"]
    assert run["target_kind"] == "directory" and run["target"] == array["mount_point"], run


def check_nothing_is_left_of_the_three_arrays(three_arrays):
    assert three_arrays["left"] == {}, three_arrays["left"]


def check_killed_runs_are_taken_apart_by_doctor(lab: Disklab, members: list[str], suite: str):
    """An LVM raid1 built with --nosync, killed, then doctor; a btrfs array, killed, then doctor."""
    lvm_run = killed_on_its_array(lab, members, suite, "lvm:raid1", "lvm raid1 · assume-clean", "assume-clean")
    assert [group for group in groups() if f"-{lvm_run.pid}-" in group], groups()
    assert len(left_behind(members)["pv_labels"]) == 4, left_behind(members)
    assert "--nosync" in [r for r in stored_runs(lab) if r["name"] == "lvm raid1 · assume-clean"][-1][
        "options"]["configuration"]["array"]["commands"][2]
    doctor = lab("doctor")
    assert doctor.returncode in (0, 1), doctor.stderr
    assert "removed a killed run's LVM volume group" in doctor.stdout, doctor.stdout
    assert left_behind(members) == {}, left_behind(members)
    btrfs_run = killed_on_its_array(lab, members, suite, "btrfs:data=raid0:metadata=raid1",
                                    "btrfs data raid0 metadata raid1 · clean", "clean")
    assert btrfs_mounts() and set(left_behind(members)) == {"mounts", "signatures"}, left_behind(members)
    doctor = lab("doctor")
    assert doctor.returncode in (0, 1), doctor.stderr
    assert "removed a killed run's file system, still mounted" in doctor.stdout, doctor.stdout
    assert "removed a killed run's btrfs array" in doctor.stdout, doctor.stdout
    assert left_behind(members) == {}, left_behind(members)
    assert not [path for path in Path(tempfile.gettempdir()).iterdir()
                if f"-{btrfs_run.pid}-" in path.name or f"-{lvm_run.pid}-" in path.name]


def killed_on_its_array(lab: Disklab, members: list[str], suite: str, array: str, name: str, state: str):
    run = lab.start("run", suite, "--destroy-data", "--repeat", "1", "--runtime", "60s", "--members",
                    ",".join(members), "--array", array, "--array-state", state)
    if not wait_for(lambda: any(r["status"] == "running" for r in stored_runs(lab) if r["name"] == name) or
                    run.poll() is not None, seconds=TIMEOUT_S, interval=1) or run.poll() is not None:
        pytest.fail(f"{array} did not run: {''.join(run.communicate(timeout=TIMEOUT_S))}")
    os.killpg(run.pid, signal.SIGKILL)
    run.wait(timeout=TIMEOUT_S)
    return run


def left_behind(members: list[str]) -> dict:
    """What an array could leave: LVM groups, PV labels, btrfs mounts, any signature on a member."""
    found = {"groups": groups(), "pv_labels": [m for m in members if subprocess.run(
                 ["pvs", m], capture_output=True).returncode == 0],
             "mounts": btrfs_mounts(),
             "signatures": {m: out for m in members
                            if (out := subprocess.run(["blkid", "-p", "-o", "export", m], capture_output=True,
                                                      text=True).stdout.strip())}}
    return {key: value for key, value in found.items() if value}


def groups() -> list[str]:
    done = subprocess.run(["vgs", "--noheadings", "-o", "vg_name"], capture_output=True, text=True)
    return sorted(done.stdout.split())


def btrfs_mounts() -> list[str]:
    return [line for line in Path("/proc/self/mounts").read_text().splitlines() if " btrfs " in line]


def stored_runs(lab: Disklab) -> list[dict]:
    runs = lab.query("SELECT id, name, target, target_kind, status, options_json FROM runs ORDER BY id")
    tests = {row["run_id"]: row["n"] for row in lab.query("SELECT run_id, COUNT(*) AS n FROM tests GROUP BY run_id")}
    return [{**dict(run), "options": (options := json.loads(run["options_json"])), "series": options.get("series"),
             "tests": tests.get(run["id"], 0)} for run in runs]
