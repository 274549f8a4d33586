"""An md array (mdadm) built over the members for one configuration of a run, brought to the state asked for, recorded
as the kernel reports it, and torn down afterwards whatever happens: stopped, and every member's superblock cleared,
so that nothing is assembled from it later (at boot, by udev's incremental assembly).

The array is named disklab-array-PID-N (/dev/md/NAME, its name in the superblock too), and a note of it and its
members is kept in the temporary folder while it exists: a SIGKILL cannot be caught, so the next configured run or
`disklab doctor` finds the note of a dead PID, stops the array and clears the superblocks that carry its UUID.
"""

import json
import os
import re
import shlex
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from disklab.errors import UserError
from disklab.system.commands import run_checked
from disklab.system.host import process_alive
from disklab.system.leftovers import Leftover
from disklab.targets.array import ArraySpec
from disklab.targets.array_notes import note_path, noted_leftovers, write_note

NOTE_PREFIX = "disklab-array-"
COMMAND_TIMEOUT_S = 120
POLL_S = 1.0
REPORT_EVERY_S = 30.0
ZERO_ATTEMPTS = 3  # udev may hold a member a moment after the array stops (see _release)  # a long resync says how far it is, not only that it runs


def is_md_array(path: str, sysfs_root: str = "/sys") -> bool:
    """Whether `path` is an md array's device (/dev/md127, /dev/md/NAME)."""
    return (Path(sysfs_root) / "class" / "block" / Path(os.path.realpath(path)).name / "md").is_dir()


def check_mdadm() -> None:
    """Before anything is touched: mdadm is there to build the array and to take it apart."""
    if shutil.which("mdadm") is None:
        raise UserError("--array: mdadm is not installed; install it (Debian: apt install mdadm)")


def create_command(spec: ArraySpec, path: str, members: tuple[str, ...], assume_clean: bool) -> list[str]:
    """mdadm's create, with --run: members that held a file system or partition table were consented to already
    (--destroy-data), and mdadm would otherwise ask on a terminal."""
    return ["mdadm", "--create", path, "--run", f"--level={spec.level}", f"--raid-devices={len(members)}",
            *([f"--chunk={spec.chunk_bytes // 1024}K"] if spec.chunk_bytes else []),
            *([f"--layout={spec.layout}"] if spec.layout else []),
            *([f"--bitmap={spec.bitmap}"] if spec.bitmap else []),
            *([f"--metadata={spec.metadata}"] if spec.metadata else []),
            *([f"--size={spec.size_bytes // 1024}K"] if spec.size_bytes else []),
            *(["--assume-clean"] if assume_clean else []), *members]


@contextmanager
def built_array(spec: ArraySpec, members: tuple[str, ...], state: str, number: int,
                say: Callable[[str], None]) -> Iterator[tuple[str, dict, Callable[[], dict]]]:
    """The array's device (/dev/md127) in `state`, what the run records of it, and a reading of its sync progress
    (taken before and after each test); stopped and its members cleared afterwards."""
    note = note_path(NOTE_PREFIX, number)
    path = f"/dev/md/{note.stem}"
    write_note(note, {"path": path, "members": list(members)})
    commands: list[str] = []
    device = None
    try:
        command = create_command(spec, path, members, state == "assume-clean")
        commands.append(shlex.join(command))
        run_checked(command, f"creating {spec.label}", COMMAND_TIMEOUT_S)
        _settle()  # udev makes /dev/md/NAME: over device-mapper members, often after mdadm has returned
        device = os.path.realpath(path)
        details = _details(device)
        write_note(note, {"path": path, "device": device, "uuid": details.get("MD_UUID"), "members": list(members)})
        recorded: dict = {"kind": spec.kind, "level": spec.level, "label": spec.label, "state": state,
                          "members": list(members), "device": device, "commands": commands}
        if state != "assume-clean":
            recorded["resync"] = _wait_for_sync(device, say)
        if state in ("degraded", "rebuilding"):
            failed = members[-1]
            for command in (["mdadm", device, "--fail", failed], ["mdadm", device, "--remove", failed],
                            ["mdadm", "--zero-superblock", failed]):
                commands.append(shlex.join(command))
                run_checked(command, f"failing {failed} in {device}", COMMAND_TIMEOUT_S)
            recorded["failed_member"] = failed
            if state == "rebuilding":
                command = ["mdadm", device, "--add", failed]
                commands.append(shlex.join(command))
                run_checked(command, f"adding {failed} back to {device} as a spare", COMMAND_TIMEOUT_S)
                _wait_for_recovery_start(device)
        recorded["md"] = md_record(device)
        say(f"{spec.label} built on {', '.join(members)}: {device}, {state}")
        yield device, recorded, lambda: sync_progress(device)
    finally:
        tear_down(path, device, members, say)
        note.unlink(missing_ok=True)


def md_record(device: str, sysfs_root: str = "/sys") -> dict:
    """The array as md reports it: level, chunk, layout, members, metadata, bitmap, consistency policy, state,
    sync action and progress, stripe cache, safe-mode delay (how long after its last write md marks the array clean,
    a superblock write each way); and mdadm's words for the layout and state."""
    md = Path(sysfs_root) / "block" / Path(device).name / "md"
    keys = ("level", "raid_disks", "chunk_size", "layout", "metadata_version", "consistency_policy", "array_state",
            "sync_action", "degraded", "stripe_cache_size", "safe_mode_delay", "component_size")
    record = {key: _read(md / key) for key in keys}
    record["bitmap"] = _read(md / "bitmap" / "location")
    record["member_states"] = {_read(slot / "block" / "uevent", "DEVNAME") or slot.name[4:]: _read(slot / "state")
                               for slot in sorted(md.glob("dev-*"))}
    record.update(sync_progress(device, sysfs_root))
    detail = _detail_lines(device)
    record["mdadm"] = {key: detail[key] for key in ("Raid Level", "Layout", "Chunk Size", "State", "Array Size",
                                                    "Consistency Policy", "Intent Bitmap", "Version", "UUID")
                       if key in detail}
    return {key: value for key, value in record.items() if value not in (None, "")}


def sync_progress(device: str, sysfs_root: str = "/sys") -> dict:
    """Where a resync or rebuild stands: its action, sectors done of all, percent and rate (md's sysfs)."""
    md = Path(sysfs_root) / "block" / Path(device).name / "md"
    progress: dict = {"sync_action": _read(md / "sync_action"), "at": time.time()}
    completed = _read(md / "sync_completed") or "none"
    found = re.fullmatch(r"([0-9]+)\s*/\s*([0-9]+)", completed)
    if found and int(found[2]):
        done, total = int(found[1]), int(found[2])
        progress.update(sync_sectors_done=done, sync_sectors=total, sync_percent=round(100 * done / total, 2))
    speed = _read(md / "sync_speed")
    if speed and speed.isdigit():
        progress["sync_speed_kib_s"] = int(speed)
    return progress


def tear_down(path: str, device: str | None, members: tuple[str, ...], say: Callable[[str], None],
              uuid: str | None = None) -> None:
    """The array stopped and every member's md superblock cleared; one UserError naming what is left and how to
    remove it by hand, when a step fails. `uuid`: clear only superblocks of that array (a leftover's)."""
    left = []
    if device and Path(f"/sys/block/{Path(device).name}/md").exists() and (
            uuid is None or _details_or_none(device).get("MD_UUID") == uuid):
        try:
            run_checked(["mdadm", "--stop", device], f"stopping {device}", COMMAND_TIMEOUT_S)
        except UserError as exc:
            left.append(f"{exc} (mdadm --stop {device})")
    for member in members:
        examined = _examine(member)
        if "MD_UUID" not in examined or (uuid and examined["MD_UUID"] != uuid):
            continue  # none written yet, or already cleared (a failed member), or another array's
        for attempt in range(1, ZERO_ATTEMPTS + 1):
            try:
                _release(member)
                run_checked(["mdadm", "--zero-superblock", member], f"clearing {member}", COMMAND_TIMEOUT_S)
                break
            except UserError as exc:  # udev may still hold it: settled and tried again
                if attempt == ZERO_ATTEMPTS:
                    left.append(f"{exc} (mdadm --zero-superblock {member})")
                time.sleep(POLL_S)
    if left:
        raise UserError(f"the array {path} was not torn down: {'; '.join(left)}")
    say(f"array {path} stopped, its members' superblocks cleared")


def _settle() -> None:
    if shutil.which("udevadm"):
        run_checked(["udevadm", "settle"], "waiting for udev", COMMAND_TIMEOUT_S)


def _release(member: str) -> None:
    """What holds a member whose superblock is this array's is this array again: one whose device was created before
    its /dev/md/NAME link (so not stopped by that name), or one udev's rules assembled anew from the superblock once
    the member was closed (mdadm --incremental). It is stopped, so that the superblock can be cleared."""
    _settle()
    for holder in sorted(Path(f"/sys/class/block/{Path(os.path.realpath(member)).name}/holders").glob("md*")):
        run_checked(["mdadm", "--stop", f"/dev/{holder.name}"], f"stopping /dev/{holder.name}", COMMAND_TIMEOUT_S)


def array_leftovers() -> list[Leftover]:
    """Arrays a killed run left assembled, or members it left with their superblocks: by their notes, and by their
    names (disklab-array-PID-N in the superblock) for an array whose note is gone, as after a reboot, where udev
    assembles it again from the superblocks."""
    noted = noted_leftovers(NOTE_PREFIX, "a killed run's md array", _remove_array)
    devices = {_note_field(leftover.path, "device") for leftover in noted}
    return noted + [Leftover(device, "a killed run's md array, found by its name", _remove_named)
                    for device in _named_arrays() if str(device) not in devices]


def _remove_array(saved: dict) -> None:
    device = saved.get("device") or os.path.realpath(saved["path"])
    tear_down(saved["path"], device if device.startswith("/dev/md") else None, tuple(saved["members"]),
              lambda line: None, saved.get("uuid"))


def _named_arrays(sysfs_root: str = "/sys") -> list[Path]:
    """Assembled arrays named by a disklab whose process is gone (MD_NAME is HOST:NAME)."""
    found = []
    for md in sorted(Path(sysfs_root).glob("block/md*/md")):
        device = Path("/dev") / md.parent.name
        name = _details_or_none(str(device)).get("MD_NAME", "").rpartition(":")[2]
        owner = re.fullmatch(re.escape(NOTE_PREFIX) + r"([0-9]+)-[0-9]+", name)
        if owner and not process_alive(int(owner[1])):
            found.append(device)
    return found


def _remove_named(device: Path) -> bool:
    try:
        details = _details(str(device))
        members = tuple(f"/dev/{_read(slot / 'block' / 'uevent', 'DEVNAME')}"
                        for slot in sorted((Path("/sys/block") / device.name / "md").glob("dev-*")))
        tear_down(str(device), str(device), members, lambda line: None, details.get("MD_UUID"))
    except (OSError, UserError):
        return False
    return True


def _note_field(note: Path, key: str) -> str | None:
    try:
        return json.loads(note.read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None


def _wait_for_sync(device: str, say: Callable[[str], None]) -> dict:
    """The initial resync (or recovery) run to its end; how long it took and at what rate."""
    started = time.monotonic()
    reported = started
    first = sync_progress(device)
    while (progress := sync_progress(device))["sync_action"] not in ("idle", "frozen", None):
        if time.monotonic() - reported >= REPORT_EVERY_S:
            reported = time.monotonic()
            say(f"{device}: {progress['sync_action']} {progress.get('sync_percent', 0):.1f} % at "
                f"{progress.get('sync_speed_kib_s', 0) / 1024:.0f} MiB/s")
        time.sleep(POLL_S)
    seconds = round(time.monotonic() - started, 1)
    return {"action": first["sync_action"], "seconds": seconds}


def _wait_for_recovery_start(device: str) -> None:
    """md starts a rebuild shortly after a spare is added; the suite starts once it runs."""
    for _ in range(int(30 / POLL_S)):
        if sync_progress(device)["sync_action"] == "recover":
            return
        time.sleep(POLL_S / 4)
    raise UserError(f"{device}: md did not start rebuilding onto the added spare within 30 s")


def _details(device: str) -> dict:
    output = run_checked(["mdadm", "--detail", "--export", device], f"reading {device}", COMMAND_TIMEOUT_S)
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def _details_or_none(device: str) -> dict:
    try:
        return _details(device)
    except UserError:
        return {}


def _detail_lines(device: str) -> dict:
    try:
        output = run_checked(["mdadm", "--detail", device], f"reading {device}", COMMAND_TIMEOUT_S)
    except UserError:
        return {}
    return {key.strip(): value.strip() for key, sep, value in (line.partition(" : ") for line in output.splitlines())
            if sep}


def _examine(member: str) -> dict:
    try:
        output = run_checked(["mdadm", "--examine", "--export", member], f"examining {member}", COMMAND_TIMEOUT_S)
    except UserError:
        return {}  # no superblock: mdadm exits 1
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def _read(path: Path, key: str | None = None) -> str | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if key is None:
        return text
    found = re.search(rf"^{key}=(.*)$", text, re.MULTILINE)
    return found[1] if found else None
