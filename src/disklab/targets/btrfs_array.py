"""A btrfs array built over the members for one configuration of a run (`--array btrfs:raid10`,
`btrfs:data=raid0:metadata=raid1`): one file system with the data and metadata profiles asked for (mkfs.btrfs -d, -m
over every member), mounted on a private mount point for the suite's test file, recorded as btrfs reports it, and
taken apart afterwards whatever happens: unmounted, and every member's btrfs signature wiped (wipefs), so that
nothing is mounted or scanned from it later.

btrfs is the file system here, so the target is the folder, not a device. The mount point carries disklab's PID
(targets/filesystem.py's prefix: a killed run's is unmounted by the same code as --fs's), the file system's label
is disklab-array-PID-N, and a note of it and its members is kept in the temporary folder while it exists
(targets/array_notes.py): after a SIGKILL the next configured run or `disklab doctor` wipes the members.
"""

import re
import shlex
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from disklab.errors import UserError
from disklab.system.commands import run_checked
from disklab.system.leftovers import Leftover, owned_prefix
from disklab.system.mounts import mount_of
from disklab.targets.array import ArraySpec
from disklab.targets.array_notes import cleared, note_path, noted_leftovers, write_note
from disklab.targets.filesystem import MOUNT_PREFIX, unmount

NOTE_PREFIX = "disklab-btrfs-"
LABEL_PREFIX = "disklab-array-"
TOOLS = ("mkfs.btrfs", "btrfs", "wipefs", "blkid", "mount", "umount")
COMMAND_TIMEOUT_S = 600  # mkfs.btrfs discards every member first


def check_btrfs() -> None:
    """Before anything is touched: btrfs's tools are there to make the file system and to take it apart."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        raise UserError(f"--array btrfs: {', '.join(missing)} not installed; install them (Debian: apt install "
                        "btrfs-progs util-linux mount)")


def mkfs_command(spec: ArraySpec, label: str, members: tuple[str, ...]) -> list[str]:
    """-f: the members' signatures were consented to already (--destroy-data)."""
    return ["mkfs.btrfs", "-f", "-L", label, "-d", spec.level, "-m", spec.metadata, *members]


def mount_command(members: tuple[str, ...], folder: Path | str) -> list[str]:
    """Every member named (device=), so that the mount does not wait for udev to scan them."""
    return ["mount", "-t", "btrfs", "-o", ",".join(f"device={member}" for member in members), members[0],
            str(folder)]


@contextmanager
def built_filesystem(spec: ArraySpec, members: tuple[str, ...], state: str, number: int,
                     say: Callable[[str], None]) -> Iterator[tuple[str, dict, Callable[[], dict]]]:
    """The mounted file system's folder, what the run records of it, and a reading of its usage; unmounted and its
    members wiped afterwards."""
    label = f"{owned_prefix(LABEL_PREFIX)}{number}"
    # One folder for every btrfs array of the run, so that the runs of a series name one target.
    folder = Path(tempfile.gettempdir()) / f"{owned_prefix(MOUNT_PREFIX)}btrfs"
    note = note_path(NOTE_PREFIX, number)
    write_note(note, {"label": label, "members": list(members)})
    commands = [mkfs_command(spec, label, members), mount_command(members, folder)]
    uuid = None
    try:
        run_checked(commands[0], f"mkfs.btrfs for {spec.label}", COMMAND_TIMEOUT_S)
        uuid = _signature(members[0]).get("UUID")
        write_note(note, {"label": label, "uuid": uuid, "members": list(members)})
        folder.mkdir(mode=0o700, exist_ok=True)
        run_checked(commands[1], f"mounting {spec.label}", COMMAND_TIMEOUT_S)
        mounted = mount_of(str(folder))
        recorded = {"kind": "btrfs", "level": spec.level, "data_profile": spec.level,
                    "metadata_profile": spec.metadata, "label": spec.label, "state": state, "members": list(members),
                    "mount_point": str(folder), "uuid": uuid, "fs_label": label,
                    "commands": [shlex.join(command) for command in commands],
                    "kernel_mount_options": mounted.options if mounted else None, "btrfs": btrfs_record(folder)}
        say(f"{spec.label} made on {', '.join(members)}: mounted on {folder}")
        yield str(folder), recorded, lambda: btrfs_record(folder)
    finally:
        tear_down(folder, label, uuid, members, say)
        note.unlink(missing_ok=True)


def btrfs_record(folder: Path) -> dict:
    """The file system as btrfs reports it: each block group type's profile and sizes (filesystem df), the overall
    usage (filesystem usage), and its devices (filesystem show), in bytes."""
    df = _btrfs(["filesystem", "df", "-b", str(folder)])
    return {"profiles": parse_df(df), "usage": parse_usage(_btrfs(["filesystem", "usage", "-b", str(folder)])),
            "devices": parse_show(_btrfs(["filesystem", "show", "--raw", str(folder)]))}


def parse_df(text: str) -> dict:
    """'Data, RAID10: total=268435456, used=0' -> {'Data': {'profile': 'RAID10', 'total': 268435456, 'used': 0}}."""
    return {found[1]: {"profile": found[2], "total": int(found[3]), "used": int(found[4])}
            for found in re.finditer(r"^(\w+), (\w+): total=([0-9]+), used=([0-9]+)$", text, re.MULTILINE)}


def parse_usage(text: str) -> dict:
    """The 'Overall:' section of `btrfs filesystem usage -b`: {'Device size': 2147483648, 'Data ratio': 2.0 ...}."""
    overall = {}
    for found in re.finditer(r"^ {4}([A-Z][^:]+):\s+([0-9.]+)", text.split("\n\n")[0], re.MULTILINE):
        overall[found[1].strip()] = float(found[2]) if "." in found[2] else int(found[2])
    return overall


def parse_show(text: str) -> list[dict]:
    """'devid    1 size 536870912 used 138412032 path /dev/nvme0n1' -> one dict a device."""
    return [{"devid": int(found[1]), "size": int(found[2]), "used": int(found[3]), "path": found[4]}
            for found in re.finditer(r"^\s*devid\s+([0-9]+) size ([0-9]+) used ([0-9]+) path (\S+)", text,
                                     re.MULTILINE)]


def tear_down(folder: Path | None, label: str, uuid: str | None, members: tuple[str, ...],
              say: Callable[[str], None]) -> None:
    """Unmounted from `folder` (None: not mounted by this process), and every member's btrfs signature of this file
    system wiped (by its UUID, or its label before the UUID was read); one UserError naming what is left and how to
    remove it by hand, when a step fails."""
    left = []
    if folder is not None and folder.exists():
        try:
            unmount(folder)
            folder.rmdir()
        except UserError as exc:
            raise UserError(f"the btrfs array {label} was not taken apart: {exc}") from None
        except OSError:
            pass  # gone already

    def ours(member: str) -> bool:
        found = _signature(member)
        return found.get("TYPE") == "btrfs" and (found.get("UUID") == uuid if uuid else found.get("LABEL") == label)

    left += cleared(members, ours, lambda member: ["wipefs", "--all", member], COMMAND_TIMEOUT_S)
    if Path("/dev/btrfs-control").exists():  # btrfs is loaded: its list of devices forgets the wiped members
        try:
            run_checked(["btrfs", "device", "scan", "--forget"], "btrfs device scan --forget", COMMAND_TIMEOUT_S)
        except UserError as exc:
            left.append(str(exc))
    if left:
        raise UserError(f"the btrfs array {label} was not taken apart: {'; '.join(left)}")
    say(f"btrfs {label} unmounted, its members' signatures wiped")


def filesystem_leftovers() -> list[Leftover]:
    """Members a killed run left with its btrfs signature (its mount is filesystem.py's leftover, removed first)."""
    def undo(saved: dict) -> None:
        tear_down(None, saved["label"], saved.get("uuid"), tuple(saved["members"]),
                  lambda line: None)
    return noted_leftovers(NOTE_PREFIX, "a killed run's btrfs array", undo)


def _btrfs(arguments: list[str]) -> str:
    return run_checked(["btrfs", *arguments], f"btrfs {arguments[0]} {arguments[1]}", 60)


def _signature(member: str) -> dict:
    """What blkid reads on the member itself (-p: not its cache): TYPE, UUID, LABEL; {} where there is none."""
    try:
        output = run_checked(["blkid", "-p", "-o", "export", member], f"probing {member}", 60)
    except UserError:
        return {}  # nothing found: blkid exits 2
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
