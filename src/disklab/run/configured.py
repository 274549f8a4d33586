"""A suite run once per configuration of the device under test (`run --condition`, `--fs`, `--write-cache`,
`--overprovision`, and `--members ... --array ... --array-state`): each configuration set up, recorded, run on and
undone in turn, one stored run each, linked as one series (the first run's number) so that `compare series:RUN` sets
them side by side. An array is built afresh for each configuration it is part of: its state (a finished resync, a
failed member, a rebuild under way) is then the one asked for, not what an earlier configuration left.

This is the layer under the CLI: it takes what the options were parsed into and a function that runs the suite on
a target, so that any caller (the CLI, a script) starts a configured run the same way, and every configuration is
a context that sets up, records and undoes.
"""

import shlex
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from disklab.errors import SafetyError, UserError
from disklab.run.condition import condition_device
from disklab.system.leftovers import remove_leftovers
from disklab.targets.array import ArraySpec
from disklab.targets.array_kinds import built, check_array_tools, dry_run_steps as array_steps, leftover_arrays, \
    undo_step
from disklab.targets.blockdev import check_device_writable
from disklab.targets.condition import Condition, check_condition, erase_command
from disklab.targets.filesystem import FsSpec, check_tools, made_and_mounted, mount_leftovers, mount_point
from disklab.targets.overprovision import usable
from disklab.targets.purge import check_discard, discard_whole
from disklab.targets.readback import SAMPLE_BLOCKS
from disklab.targets.target import Target, resolve_target
from disklab.targets.write_cache import CacheControl, cache_control, cache_leftovers, cache_set

# The suite run on a target, kept with what the run records; the third argument, where not None, reads the device's
# state before and after each test (an array's rebuild progress).
RunOn = Callable[[Target, dict, "Callable[[], dict] | None"], "int | None"]


@dataclass(frozen=True)
class Configuration:
    """One state of the device the suite runs in; None where that variable is not varied."""

    array: ArraySpec | None = None
    array_state: str | None = None
    condition: Condition | None = None
    spec: FsSpec | None = None
    cache_state: str | None = None  # 'on' or 'off'
    level: int | None = None  # the share of the device left unused, in percent

    @property
    def label(self) -> str:
        """What was varied, as runs are named: 'full (written 2x) · xfs -d su=64k,sw=4 noatime · write cache off'."""
        return " · ".join(part for part in (self.array and self.array.label, self.array_state,
                                            self.condition and self.condition.label, self.spec and self.spec.label,
                                            self.cache_state and f"write cache {self.cache_state}",
                                            self.level is not None and f"OP {self.level} %") if part)


@dataclass(frozen=True)
class Variations:
    """What a run varies, as parsed from its options (or a suite's [configurations])."""

    arrays: tuple[ArraySpec, ...] = ()
    array_states: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    specs: tuple[FsSpec, ...] = ()
    cache_states: tuple[str, ...] = ()
    levels: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.array_states and not self.arrays:
            raise UserError("--array-state is the state of an array disklab builds: give --members and --array")
        for spec in self.arrays:
            for state in self.array_states:
                if refused := spec.refused_state(state):
                    raise UserError(f"--array-state {state}: {refused}")
            if not spec.on_a_device and (self.specs or self.conditions or self.levels):
                raise UserError(f"{spec.label} is a file system over its members, with no device for --fs, "
                                "--condition or --overprovision; give those with md or lvm arrays")
        if self.specs and self.levels:
            raise UserError("--overprovision leaves a share of the raw device unused; a file system (--fs) spans "
                            "the whole device: give one of them")
        if self.conditions and self.levels:
            raise UserError("--overprovision sets the device's state itself (a full discard, then only its share "
                            "written): not with --condition")

    def __bool__(self) -> bool:
        return bool(self.arrays or self.conditions or self.specs or self.cache_states or self.levels)

    def configurations(self) -> list[Configuration]:
        """Every combination, in the order the runs are made."""
        states = self.array_states or (("clean",) if self.arrays else ())
        return [Configuration(*values) for values in product(self.arrays or [None], states or [None],
                                                             self.conditions or [None], self.specs or [None],
                                                             self.cache_states or [None], self.levels or [None])]

    def summary(self) -> str:
        """A dry run's account of the runs, before a device is named."""
        found = self.configurations()
        return (f"run once per configuration, {len(found)} runs of one series (a device --target and --destroy-data): "
                + "; ".join(configuration.label for configuration in found))


@dataclass(frozen=True)
class Consent:
    """What the user allowed, and how messages name the options that asked for the configurations."""

    destroy_data: bool
    force: bool
    options: str  # '--fs', or 'the file systems of suite.toml ([configurations])'


@dataclass(frozen=True)
class UnderTest:
    """What the configurations are made on: one device, or the members each array is built from."""

    device: Target | None = None
    members: tuple[Target, ...] = ()

    @property
    def disks(self) -> tuple[Target, ...]:
        """The devices disklab writes, and whose caches it sets."""
        return self.members or (self.device,)

    @property
    def path(self) -> str:
        return ", ".join(disk.path for disk in self.disks)


def check_configured(under_test: UnderTest, variations: Variations, consent: Consent) -> list[CacheControl]:
    """Every refusal before anything is set: the devices, the tools, each configuration's own needs. The drives'
    cache controls where their cache is varied."""
    for disk in under_test.disks:
        if disk.kind != "device":
            give = "each member a device" if under_test.members else "the device as --target"
            raise UserError(f"{consent.options} set up the device under test; {disk.path} is a {disk.kind} (give "
                            f"{give}, e.g. /dev/sdb)")
    if under_test.members:
        _check_members(under_test.members, variations)
        check_array_tools(variations.arrays)
    elif variations.arrays:
        raise UserError("--array builds an array over the devices --members names (--members /dev/sdb,/dev/sdc)")
    check_tools(list(variations.specs))
    controls = [cache_control(disk.device) for disk in under_test.disks] if variations.cache_states else []
    if not under_test.members:  # an array's own checks run once it is built
        if variations.levels:
            check_discard(under_test.device, "--overprovision")
        for condition in variations.conditions:
            check_condition(condition, under_test.device)
    return controls


def dry_run_steps(under_test: UnderTest, variations: Variations, controls: list[CacheControl]) -> list[str]:
    """What each configuration would do, one line each, in the order a run does it."""
    found = variations.configurations()
    lines = []
    members = tuple(member.path for member in under_test.members)
    for index, configuration in enumerate(found, start=1):
        array, condition, spec, state, level = (configuration.array, configuration.condition, configuration.spec,
                                                configuration.cache_state, configuration.level)
        device = "<the array>" if array else under_test.device.path
        steps = (array_steps(array, members, configuration.array_state) if array else []) + (
            [shlex.join(control.set_command(state == "on")) for control in controls] if state else []) + (
            [_condition_step(condition, None if array else under_test.device)] if condition else []) + (
            [shlex.join(spec.mkfs_command(device)),
             shlex.join(spec.mount_command(device, Path("<private mount point>")))] if spec else []) + (
            [f"blkdiscard --force {device}; the first {100 - level} % only"] if level is not None else [])
        lines.append(f"configuration {index} of {len(found)} ({configuration.label}): {'; '.join(steps)}; then the "
                     "suite" + ("; umount" if spec else "") + ("; the cache restored" if state else "")
                     + (f"; {undo_step(array)}" if array else ""))
    return lines


def planned_target(under_test: UnderTest, configuration: Configuration) -> Target | None:
    """The target a dry run can plan for: the device, or what a spare area leaves of it; None for a file system or
    an array, which are not made yet."""
    if configuration.spec is not None or configuration.array is not None:
        return None
    device = under_test.device
    return device if configuration.level is None else usable(device, configuration.level)


def run_configured(under_test: UnderTest, variations: Variations, consent: Consent, name: str | None,
                   say: Callable[[str], None], run_on: RunOn, measure_member: bool = False) -> list[int]:
    """Each configuration set up, run on and undone in turn; the stored runs' numbers. `measure_member`: the first
    of the members measured alone first, the series' first run (member_alone)."""
    if measure_member:
        check_member_alone(under_test)
    # What killed configured runs left comes first, before the devices are checked: their arrays hold the members.
    # Of those, a file system first: the array under it stops only once it is unmounted.
    for restored in remove_leftovers(mount_leftovers() + leftover_arrays() + cache_leftovers()):
        say(f"restored {restored.what}: {restored.path}")
    controls = check_configured(under_test, variations, consent)
    if variations.arrays or variations.specs or variations.levels or variations.conditions:
        if not consent.destroy_data:
            doing = ("building an array on" if variations.arrays else "making a file system on" if variations.specs
                     else "discarding" if variations.levels else "conditioning")
            raise SafetyError(f"{consent.options}: {doing} {under_test.path} destroys its data; add --destroy-data "
                              "to allow it")
        # The user's consent, checked once against the devices as they are now: what is made or discarded after
        # the first configuration is disklab's own, which --force need not allow again.
        _check_writable(under_test.disks, consent.force)
    found = variations.configurations()
    runs: list[int] = []
    if measure_member:
        run_id = member_alone(under_test.members[0], found[0], controls[:1], name, say, run_on)
        runs += [run_id] if run_id is not None else []
    with ExitStack() as mounts:
        folder = mounts.enter_context(mount_point(say)) if variations.specs else None
        for index, configuration in enumerate(found, start=1):
            say(f"configuration {index} of {len(found)}: {configuration.label} on {under_test.path}")
            with configured(under_test, configuration, index, folder, controls, say) as (target, recorded, observe):
                label = configuration.label
                run_id = run_on(target, {"name": f"{name} · {label}" if name else label,
                                         "configuration": {"label": label, **recorded},
                                         "series": runs[0] if runs else None}, observe)
            if run_id is not None:
                runs.append(run_id)
    if len(runs) > 1:
        say(f"runs {', '.join(map(str, runs))} are one series, one configuration each: disklab compare "
            f"series:{runs[0]}")
    return runs


def check_member_alone(under_test: UnderTest) -> None:
    if not under_test.members:
        raise UserError("--measure-member measures the first of --members alone before the arrays built of them: "
                        "give --members and --array")


def member_alone(member: Target, first: Configuration, controls: list[CacheControl], name: str | None,
                 say: Callable[[str], None], run_on: RunOn) -> int | None:
    """One member measured alone as the drive the arrays are made of (the planner predicts each array from it,
    capacity/measured.py): the raw device, at the write-cache state the first array runs with; a condition, file
    system or spare area is the array's, not the drive's."""
    with ExitStack() as undo:
        label, recorded = "member alone", {"member_alone": member.path}
        if first.cache_state:
            recorded["write_cache"] = undo.enter_context(cache_set(controls[0], first.cache_state, say))
            label += f" · write cache {first.cache_state}"
        say(f"{label}: {member.path}, measured first: the drive each array is predicted from (compare series:N)")
        return run_on(member, {"name": f"{name} · {label}" if name else label,
                               "configuration": {"label": label, **recorded}, "series": None}, None)


@contextmanager
def configured(under_test: UnderTest, configuration: Configuration, number: int, folder: Path | None,
               controls: list[CacheControl],
               say: Callable[[str], None]) -> Iterator[tuple[Target, dict, Callable[[], dict] | None]]:
    """The device in one configuration (an array built, the cache set, the device conditioned, a file system made
    and mounted, a spare area left), what the run records of it, a reading of its state for each test, and
    everything undone afterwards whatever happens."""
    with ExitStack() as undo:
        recorded: dict = {}
        observe = None
        device = under_test.device
        if configuration.array:
            members = tuple(member.path for member in under_test.members)
            array_device, recorded["array"], observe = undo.enter_context(
                built(configuration.array, members, configuration.array_state, number, say))
            device = resolve_target(array_device)
            if configuration.level is not None:
                check_discard(device, "--overprovision")
            if configuration.condition:
                check_condition(configuration.condition, device)
        if configuration.cache_state:
            states = [undo.enter_context(cache_set(control, configuration.cache_state, say)) for control in controls]
            recorded["write_cache"] = states if under_test.members else states[0]
        if configuration.condition:
            recorded["condition"] = condition_device(configuration.condition, device, say)
        target = device
        if configuration.spec:
            recorded["file_system"] = undo.enter_context(made_and_mounted(device.path, configuration.spec, folder))
            target = resolve_target(str(folder))
        if configuration.level is not None:
            target = usable(device, configuration.level)
            recorded["overprovision"] = {"percent": configuration.level, "discard": discard_whole(device),
                                         "used_bytes": target.capacity_bytes, "device_bytes": device.capacity_bytes}
        yield target, recorded, observe if configuration.array_state == "rebuilding" else None


def _check_members(members: tuple[Target, ...], variations: Variations) -> None:
    """Members distinct, and enough of them for every array asked for."""
    disks = [Path(member.path).resolve() for member in members]
    twice = sorted({str(disk) for disk in disks if disks.count(disk) > 1})
    if twice:
        raise UserError(f"--members names {twice[0]} twice; each member is a device of its own")
    if not variations.arrays:
        raise UserError("--members are what an array is built from: give the arrays too (--array md:raid5)")
    for spec in variations.arrays:
        try:
            spec.check_members(len(members))
        except ValueError as exc:
            raise UserError(str(exc)) from None


def _check_writable(disks: tuple[Target, ...], force: bool) -> None:
    """Every device checked; one refusal names each that may not be written, and why."""
    refused = []
    for disk in disks:
        try:
            check_device_writable(disk.device, destroy_data=True, force=force)
        except SafetyError as exc:
            refused.append(str(exc))
    if len(refused) == 1:
        raise SafetyError(refused[0])
    if refused:
        raise SafetyError(f"{len(refused)} of the members may not be written: " + " | ".join(refused))


def _condition_step(condition: Condition, device: Target | None) -> str:
    """`device`: None for an array, not built yet."""
    path = device.path if device else "<the array>"
    if condition.state == "full":
        return f"fio: all of {path} written {condition.passes}x with 128 KiB sequential writes"
    erase = shlex.join(erase_command(condition, device)) if device else f"{condition.label} of {path}"
    return f"{erase} ({SAMPLE_BLOCKS} blocks marked before, read back after)"
