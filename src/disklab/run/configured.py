"""A suite run once per configuration of the device under test (`run --condition`, `--fs`, `--write-cache`,
`--overprovision`): each configuration set up, recorded, run on and undone in turn, one stored run each, linked as
one series (the first run's number) so that `compare series:RUN` sets them side by side.

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
from disklab.targets.blockdev import check_device_writable
from disklab.targets.condition import Condition, check_condition, erase_command
from disklab.targets.filesystem import FsSpec, check_tools, made_and_mounted, mount_point
from disklab.targets.overprovision import usable
from disklab.targets.purge import check_discard, discard_whole
from disklab.targets.readback import SAMPLE_BLOCKS
from disklab.targets.target import Target, resolve_target
from disklab.targets.write_cache import CacheControl, cache_control, cache_leftovers, cache_set

RunOn = Callable[[Target, dict], "int | None"]  # the suite run on a target, kept with what the run records


@dataclass(frozen=True)
class Configuration:
    """One state of the device the suite runs in; None where that variable is not varied."""

    condition: Condition | None = None
    spec: FsSpec | None = None
    cache_state: str | None = None  # 'on' or 'off'
    level: int | None = None  # the share of the device left unused, in percent

    @property
    def label(self) -> str:
        """What was varied, as runs are named: 'full (written 2x) · xfs -d su=64k,sw=4 noatime · write cache off'."""
        return " · ".join(part for part in (self.condition and self.condition.label, self.spec and self.spec.label,
                                            self.cache_state and f"write cache {self.cache_state}",
                                            self.level is not None and f"OP {self.level} %") if part)


@dataclass(frozen=True)
class Variations:
    """What a run varies, as parsed from its options (or a suite's [configurations])."""

    conditions: tuple[Condition, ...] = ()
    specs: tuple[FsSpec, ...] = ()
    cache_states: tuple[str, ...] = ()
    levels: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.specs and self.levels:
            raise UserError("--overprovision leaves a share of the raw device unused; a file system (--fs) spans "
                            "the whole device: give one of them")
        if self.conditions and self.levels:
            raise UserError("--overprovision sets the device's state itself (a full discard, then only its share "
                            "written): not with --condition")

    def __bool__(self) -> bool:
        return bool(self.conditions or self.specs or self.cache_states or self.levels)

    def configurations(self) -> list[Configuration]:
        """Every combination, in the order the runs are made."""
        return [Configuration(*values) for values in product(self.conditions or [None], self.specs or [None],
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


def check_configured_target(device: Target, variations: Variations, consent: Consent) -> CacheControl | None:
    """Every refusal before anything is set: the device, the tools, each configuration's own needs. The drive's
    cache control where its cache is varied."""
    if device.kind != "device":
        raise UserError(f"{consent.options} set up the device under test; {device.path} is a {device.kind} (give "
                        "the device as --target, e.g. /dev/sdb)")
    check_tools(list(variations.specs))
    control = cache_control(device.device) if variations.cache_states else None
    if variations.levels:
        check_discard(device, "--overprovision")
    for condition in variations.conditions:
        check_condition(condition, device)
    return control


def dry_run_steps(device: Target, variations: Variations, control: CacheControl | None) -> list[str]:
    """What each configuration would do, one line each, in the order a run does it."""
    found = variations.configurations()
    lines = []
    for index, configuration in enumerate(found, start=1):
        condition, spec, state, level = (configuration.condition, configuration.spec, configuration.cache_state,
                                         configuration.level)
        steps = ([shlex.join(control.set_command(state == "on"))] if state else []) + (
            [_condition_step(condition, device)] if condition else []) + (
            [shlex.join(spec.mkfs_command(device.path)),
             shlex.join(spec.mount_command(device.path, Path("<private mount point>")))] if spec else []) + (
            [f"blkdiscard --force {device.path}; the first {100 - level} % only"] if level is not None else [])
        lines.append(f"configuration {index} of {len(found)} ({configuration.label}): {'; '.join(steps)}; then the "
                     "suite" + ("; umount" if spec else "") + ("; the cache restored" if state else ""))
    return lines


def planned_target(device: Target, configuration: Configuration) -> Target | None:
    """The target a dry run can plan for: the device, or what a spare area leaves of it; None for a file system,
    which is not made yet."""
    if configuration.spec is not None:
        return None
    return device if configuration.level is None else usable(device, configuration.level)


def run_configured(device: Target, variations: Variations, consent: Consent, name: str | None,
                   say: Callable[[str], None], run_on: RunOn) -> list[int]:
    """Each configuration set up, run on and undone in turn; the stored runs' numbers."""
    control = check_configured_target(device, variations, consent)
    if variations.specs or variations.levels or variations.conditions:
        if not consent.destroy_data:
            doing = ("making a file system on" if variations.specs else "discarding" if variations.levels
                     else "conditioning")
            raise SafetyError(f"{consent.options}: {doing} {device.path} destroys its data; add --destroy-data to "
                              "allow it")
        # The user's consent, checked once against the device as it is now: what is made or discarded after the
        # first configuration is disklab's own, which --force need not allow again.
        check_device_writable(device.device, destroy_data=True, force=consent.force)
    for restored in remove_leftovers(cache_leftovers()):
        say(f"restored {restored.what}: {restored.path}")
    found = variations.configurations()
    runs: list[int] = []
    with ExitStack() as mounts:
        folder = mounts.enter_context(mount_point(say)) if variations.specs else None
        for index, configuration in enumerate(found, start=1):
            say(f"configuration {index} of {len(found)}: {configuration.label} on {device.path}")
            with configured(device, configuration, folder, control, say) as (target, recorded):
                label = configuration.label
                run_id = run_on(target, {"name": f"{name} · {label}" if name else label,
                                         "configuration": {"label": label, **recorded},
                                         "series": runs[0] if runs else None})
            if run_id is not None:
                runs.append(run_id)
    if len(runs) > 1:
        say(f"runs {', '.join(map(str, runs))} are one series, one configuration each: disklab compare "
            f"series:{runs[0]}")
    return runs


@contextmanager
def configured(device: Target, configuration: Configuration, folder: Path | None, control: CacheControl | None,
               say: Callable[[str], None]) -> Iterator[tuple[Target, dict]]:
    """The device in one configuration (the cache set, the device conditioned, a file system made and mounted, a
    spare area left), what the run records of it, and everything undone afterwards whatever happens."""
    with ExitStack() as undo:
        recorded: dict = {}
        if configuration.cache_state:
            recorded["write_cache"] = undo.enter_context(cache_set(control, configuration.cache_state, say))
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
        yield target, recorded


def _condition_step(condition: Condition, device: Target) -> str:
    if condition.state == "full":
        return f"fio: all of {device.path} written {condition.passes}x with 128 KiB sequential writes"
    return f"{shlex.join(erase_command(condition, device))} ({SAMPLE_BLOCKS} blocks marked before, read back after)"
