"""Which module builds each kind of `--array` (md: targets/md.py, lvm: targets/lvm.py, btrfs:
targets/btrfs_array.py), so that a configured run and `disklab doctor` name one function for each step whatever the
kind: the tools checked, the steps a dry run prints, the array built and taken apart, what killed runs left.

Every builder is a context taking (spec, members, state, number, say) and yielding the array's path (a device, or
a btrfs file system's folder), what the run records of it and a reading of its state for each test."""

import shlex
from collections.abc import Callable

from disklab.system.leftovers import Leftover
from disklab.targets.array import ArraySpec
from disklab.targets.btrfs_array import built_filesystem, check_btrfs, filesystem_leftovers, mkfs_command, \
    mount_command
from disklab.targets.lvm import SYNCED, built_volume, check_lvm, create_commands as lvm_commands, volume_leftovers
from disklab.targets.md import array_leftovers as md_leftovers, built_array as built_md, check_mdadm, \
    create_command as md_command

BUILDERS = {"md": built_md, "lvm": built_volume, "btrfs": built_filesystem}
_CHECKS: dict[str, Callable[[], None]] = {"md": check_mdadm, "lvm": check_lvm, "btrfs": check_btrfs}
_UNDONE = {"md": "the array stopped, its members' superblocks cleared",
           "lvm": "the volume and its group removed (lvremove, vgremove), the members' PV labels cleared (pvremove)",
           "btrfs": "unmounted, the members' btrfs signatures wiped (wipefs --all)"}
_MD_STATES = {"clean": "the resync waited for", "assume-clean": "no resync",
              "degraded": "the resync waited for; the last member failed and removed",
              "rebuilding": "the resync waited for; the last member failed, removed, cleared and added back: the "
                            "suite runs while md rebuilds onto it"}


def check_array_tools(specs) -> None:
    """Each kind's tools, once, before anything is touched."""
    for kind in dict.fromkeys(spec.kind for spec in specs):
        _CHECKS[kind]()


def built(spec: ArraySpec, members: tuple[str, ...], state: str, number: int, say: Callable[[str], None]):
    """The context that builds `spec` over the members, in `state`."""
    return BUILDERS[spec.kind](spec, members, state, number, say)


def dry_run_steps(spec: ArraySpec, members: tuple[str, ...], state: str) -> list[str]:
    """What building the array would run, one step each, before the suite."""
    if spec.kind == "lvm":
        return [shlex.join(command) for command in lvm_commands(spec, "<the group>", members, state == "assume-clean")
                ] + (["the raid's initial sync waited for"] if state == "clean" and spec.level in SYNCED else [])
    if spec.kind == "btrfs":
        return [shlex.join(mkfs_command(spec, "<the label>", members)),
                shlex.join(mount_command(members, "<private mount point>"))]
    return [shlex.join(md_command(spec, "<the array>", members, state == "assume-clean")), _MD_STATES[state]]


def undo_step(spec: ArraySpec) -> str:
    return _UNDONE[spec.kind]


def leftover_arrays() -> list[Leftover]:
    """What killed runs left of every kind: md arrays, LVM groups, btrfs members (their mounts are filesystem.py's,
    removed before these)."""
    return md_leftovers() + volume_leftovers() + filesystem_leftovers()
