"""An LVM array built over the members for one configuration of a run (`--array lvm:striped:stripes=4`,
`lvm:raid5:stripesize=64K`): every member made a physical volume, one volume group of them, one logical volume of
the segment type asked for using all its space, brought to the state asked for (a raid's initial sync waited for,
or skipped with --nosync), recorded as LVM reports it, and taken apart afterwards whatever happens: the volume and
the group removed, every member's PV label cleared (pvremove), so that nothing is activated from it later.

The group is named disklab-array-PID-N, as md's arrays are, and a note of it and its members is kept in the
temporary folder while it exists (targets/array_notes.py): after a SIGKILL the next configured run or `disklab
doctor` removes it.
"""

import json
import os
import shlex
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from disklab.errors import UserError
from disklab.system.commands import run_checked
from disklab.system.leftovers import Leftover, owned_prefix
from disklab.targets.array import ArraySpec
from disklab.targets.array_notes import cleared, note_path, noted_leftovers, write_note

NOTE_PREFIX = "disklab-lvm-"
GROUP_PREFIX = "disklab-array-"
VOLUME = "volume"
TOOLS = ("pvcreate", "vgcreate", "lvcreate", "lvs", "vgs", "pvs", "lvremove", "vgremove", "pvremove")
SYNCED = ("raid1", "raid5", "raid6", "raid10")  # the segment types with an initial sync (raid0 and striped have none)
COMMAND_TIMEOUT_S = 120
POLL_S = 1.0
REPORT_EVERY_S = 30.0
# What is read back of each (lvs -a: the hidden raid images and metadata volumes too), in bytes.
LV_FIELDS = ("lv_name,lv_path,lv_attr,segtype,stripes,stripe_size,region_size,lv_size,seg_size,sync_percent,"
             "raid_sync_action,raid_mismatch_count,lv_health_status,devices")
VG_FIELDS = "vg_name,vg_uuid,vg_size,vg_free,vg_extent_size,vg_extent_count,pv_count,lv_count"
PV_FIELDS = "pv_name,pv_uuid,vg_name,pv_size,dev_size,pe_start,pv_pe_count,pv_pe_alloc_count"


def check_lvm() -> None:
    """Before anything is touched: LVM's tools are there to build the volume and to take it apart."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        raise UserError(f"--array lvm: LVM's tools are not installed ({', '.join(missing)}); install them (Debian: "
                        "apt install lvm2)")


def create_commands(spec: ArraySpec, group: str, members: tuple[str, ...], assume_clean: bool) -> list[list[str]]:
    """pvcreate, vgcreate and lvcreate over the members the array uses; --yes: the members' signatures were
    consented to already (--destroy-data), and LVM would otherwise ask on a terminal."""
    used = members[:spec.members_used(len(members))]
    shape = (["--mirrors", str(len(used) - 1)] if spec.level == "raid1"
             else ["--stripes", str(spec.lvm_stripes(len(members)))])
    return [["pvcreate", "--yes", *used], ["vgcreate", "--yes", group, *used],
            ["lvcreate", "--yes", "--type", spec.level, *shape,
             *(["--stripesize", f"{spec.chunk_bytes // 1024}k"] if spec.chunk_bytes else []),
             *(["--nosync"] if assume_clean and spec.level in SYNCED else []),
             "--extents", "100%FREE", "--name", VOLUME, group, *used]]


@contextmanager
def built_volume(spec: ArraySpec, members: tuple[str, ...], state: str, number: int,
                 say: Callable[[str], None]) -> Iterator[tuple[str, dict, Callable[[], dict]]]:
    """The logical volume's device (/dev/dm-3) in `state`, what the run records of it, and a reading of its sync;
    removed, with its group and its members' PV labels, afterwards."""
    group = f"{owned_prefix(GROUP_PREFIX)}{number}"
    used = members[:spec.members_used(len(members))]
    note = note_path(NOTE_PREFIX, number)
    write_note(note, {"group": group, "members": list(used)})
    commands: list[str] = []
    try:
        for command in create_commands(spec, group, members, state == "assume-clean"):
            commands.append(shlex.join(command))
            run_checked(command, f"{command[0]} for {spec.label}", COMMAND_TIMEOUT_S)
            if command[0] == "pvcreate":
                uuids = [pv["pv_uuid"] for pv in report("pvs", PV_FIELDS, *used)]
                write_note(note, {"group": group, "members": list(used), "pv_uuids": uuids})
        volume = f"{group}/{VOLUME}"
        device = os.path.realpath(f"/dev/{volume}")
        recorded: dict = {"kind": "lvm", "level": spec.level, "segment_type": spec.level, "label": spec.label,
                          "state": state, "members": list(used), "volume": volume, "device": device,
                          "commands": commands}
        if state == "clean" and spec.level in SYNCED:
            recorded["resync"] = _wait_for_sync(volume, say)
        recorded.update(lvm_record(group, used))
        say(f"{spec.label} built on {', '.join(used)}: {volume} ({device}), {state}")
        yield device, recorded, lambda: sync_progress(volume)
    finally:
        tear_down(group, used, say)
        note.unlink(missing_ok=True)


def lvm_record(group: str, members: tuple[str, ...]) -> dict:
    """The volume as LVM reports it: its segment type, stripes and stripe size (lvs of the volume itself), and lvs,
    vgs and pvs in full."""
    volumes = report("lvs", LV_FIELDS, "-a", group)
    top = next((lv for lv in volumes if lv["lv_name"] == VOLUME), {})
    return {"stripes": _number(top.get("stripes")), "stripe_size_bytes": _number(top.get("stripe_size")),
            "size_bytes": _number(top.get("lv_size")),
            "lvm": {"lvs": volumes, "vgs": report("vgs", VG_FIELDS, group), "pvs": report("pvs", PV_FIELDS, *members)}}


def sync_progress(volume: str) -> dict:
    """Where a raid volume's sync stands: LVM's percent and action (none for striped)."""
    found = (report("lvs", "sync_percent,raid_sync_action", volume) or [{}])[0]
    progress: dict = {"at": time.time(), "sync_action": found.get("raid_sync_action") or None}
    if found.get("sync_percent"):
        progress["sync_percent"] = float(found["sync_percent"])
    return progress


def report(tool: str, fields: str, *names: str) -> list[dict]:
    """lvs, vgs or pvs as JSON (--reportformat json), sizes in bytes; one dict a row."""
    output = run_checked([tool, "--reportformat", "json", "--units", "b", "--nosuffix", "-o", fields, *names],
                         f"{tool} {' '.join(names)}", COMMAND_TIMEOUT_S)
    key = {"lvs": "lv", "vgs": "vg", "pvs": "pv"}[tool]
    return [row for part in json.loads(output).get("report", []) for row in part.get(key, [])]


def tear_down(group: str, members: tuple[str, ...], say: Callable[[str], None],
              pv_uuids: tuple[str, ...] | None = None) -> None:
    """The volumes and the group removed, and every member's PV label of this group cleared; one UserError naming
    what is left and how to remove it by hand, when a step fails. `pv_uuids`: clear only those labels (a
    leftover's); without them, a member's label only where it belongs to no group or to this one."""
    left = []
    if _exists("vgs", group):
        for command in (["lvremove", "--yes", group], ["vgremove", "--yes", group]):
            try:
                run_checked(command, f"removing {group}", COMMAND_TIMEOUT_S)
            except UserError as exc:
                left.append(f"{exc} ({shlex.join(command)})")

    def ours(member: str) -> bool:
        label = next(iter(_quiet_report(member)), None)
        return label is not None and (label["pv_uuid"] in pv_uuids if pv_uuids is not None
                                      else label["vg_name"] in ("", group))

    left += cleared(members, ours, lambda member: ["pvremove", "--yes", member], COMMAND_TIMEOUT_S)
    if left:
        raise UserError(f"the LVM array {group} was not taken apart: {'; '.join(left)}")
    say(f"volume group {group} removed, its members' PV labels cleared")


def volume_leftovers() -> list[Leftover]:
    """Volume groups a killed run left, or members it left labelled, each with its note."""
    def undo(saved: dict) -> None:
        uuids = saved.get("pv_uuids")
        tear_down(saved["group"], tuple(saved["members"]), lambda line: None, None if uuids is None else tuple(uuids))
    return noted_leftovers(NOTE_PREFIX, "a killed run's LVM volume group", undo)


def _wait_for_sync(volume: str, say: Callable[[str], None]) -> dict:
    """The raid's initial sync run to its end; how long it took."""
    started = reported = time.monotonic()
    first = sync_progress(volume)
    while (progress := sync_progress(volume)).get("sync_percent", 100.0) < 100.0:
        if time.monotonic() - reported >= REPORT_EVERY_S:
            reported = time.monotonic()
            say(f"{volume}: {progress['sync_action'] or 'sync'} {progress['sync_percent']:.1f} %")
        time.sleep(POLL_S)
    return {"action": first["sync_action"], "seconds": round(time.monotonic() - started, 1)}


def _exists(tool: str, name: str) -> bool:
    try:
        return bool(report(tool, "vg_name", name))
    except UserError:
        return False  # vgs exits 5 for a group that is not there


def _quiet_report(member: str) -> list[dict]:
    try:
        return report("pvs", "pv_uuid,vg_name", member)
    except UserError:
        return []  # not a physical volume: pvs exits 5


def _number(text: str | None) -> int | None:
    try:
        return int(float(text)) if text not in (None, "") else None
    except ValueError:
        return None
