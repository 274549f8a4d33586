"""`disklab run SUITE --target DEVICE --destroy-data --fs ... --write-cache on,off --overprovision 0,50`: the suite
run once per configuration (each file system made on the device, each state of the drive's write cache, each share
of the device left unused after a full discard; every combination), one stored run each, named by what was varied
and linked as one series (the first run's number), so that `compare series:RUN` sets them side by side."""

import shlex
from collections.abc import Callable
from contextlib import ExitStack
from itertools import product
from pathlib import Path

import click

from disklab.errors import SafetyError, UserError
from disklab.run.condition import condition_device
from disklab.system.leftovers import remove_leftovers
from disklab.targets.blockdev import check_device_writable
from disklab.targets.condition import Condition, check_condition, erase_command, parse_conditions
from disklab.targets.filesystem import check_tools, made_and_mounted, mount_point, parse_fs_specs
from disklab.targets.overprovision import parse_levels, usable
from disklab.targets.purge import check_discard, discard_whole
from disklab.targets.readback import SAMPLE_BLOCKS
from disklab.targets.target import Target, resolve_target
from disklab.targets.write_cache import CacheControl, cache_control, cache_leftovers, cache_set, parse_states


def configurations(params: dict) -> list[tuple]:
    """Every (device condition, file system, cache state, OP level) the options ask for, None where one is not
    varied."""
    conditions = _parsed(params["condition"], parse_conditions, "--condition")
    specs = _parsed(params["fs"], parse_fs_specs, "--fs")
    states = _parsed(params["write_cache"], parse_states, "--write-cache")
    levels = _parsed(params["overprovision"], parse_levels, "--overprovision")
    if specs and levels:
        raise UserError("--overprovision leaves a share of the raw device unused; a file system (--fs) spans the "
                        "whole device: give one of them")
    if conditions and levels:
        raise UserError("--overprovision sets the device's state itself (a full discard, then only its share "
                        "written): not with --condition")
    return list(product(conditions or [None], specs or [None], states or [None], levels or [None]))


def configuration_lines(params: dict) -> list[str]:
    """A dry run's account of the runs the configurations make, before a device is named."""
    found = configurations(params)
    return [f"run once per configuration, {len(found)} runs of one series (a device --target and --destroy-data): "
            + "; ".join(_label(configuration) for configuration in found)]


def run_per_configuration(ctx: click.Context, device: Target,
                          run_on: Callable[[Target, dict], int | None]) -> list[int]:
    """Each configuration set up, run on and undone in turn; the runs' numbers."""
    params = ctx.params
    found = configurations(params)
    conditions, specs, states, levels = ([value for value in dict.fromkeys(c[i] for c in found) if value is not None]
                                         for i in range(4))
    if device.kind != "device":
        raise UserError(f"{_options(ctx)} set up the device under test; {device.path} is a {device.kind} (give the "
                        "device as --target, e.g. /dev/sdb)")
    if params["hosts"] or params["new_file"]:
        raise UserError(f"{_options(ctx)} set up a device of this machine: not with --hosts or --new-file")
    check_tools(specs)
    control = cache_control(device.device) if states else None
    if levels:
        check_discard(device, "--overprovision")
    for condition in conditions:
        check_condition(condition, device)
    if params["dry_run"]:
        for index, (condition, spec, state, level) in enumerate(found, start=1):
            steps = ([shlex.join(control.set_command(state == "on"))] if state else []) + (
                [_condition_step(condition, device)] if condition else []) + (
                [shlex.join(spec.mkfs_command(device.path)),
                 shlex.join(spec.mount_command(device.path, "<private mount point>"))] if spec else []) + (
                [f"blkdiscard --force {device.path}; the first {100 - level} % only"] if level is not None else [])
            click.echo(f"configuration {index} of {len(found)} ({_label((condition, spec, state, level))}): "
                       f"{'; '.join(steps)}; "
                       "then the suite" + ("; umount" if spec else "") + ("; the cache restored" if state else ""))
            if spec is None:  # its plan, fitted to what it leaves of the device (a file system's is not made yet)
                run_on(device if level is None else usable(device, level), {})
        return []
    if specs or levels or conditions:
        if not params["destroy_data"]:
            doing = "making a file system on" if specs else "discarding" if levels else "conditioning"
            raise SafetyError(f"{_options(ctx)}: {doing} {device.path} destroys its data; add --destroy-data to "
                              "allow it")
        # The user's consent, checked once against the device as it is now: what is made or discarded after the
        # first configuration is disklab's own, which --force need not allow again.
        check_device_writable(device.device, destroy_data=True, force=params["force"])
    say = (lambda line: None) if params["quiet"] else (lambda line: click.echo(line, err=True))
    for restored in remove_leftovers(cache_leftovers()):
        say(f"restored {restored.what}: {restored.path}")
    runs: list[int] = []
    with ExitStack() as mounts:
        folder = mounts.enter_context(mount_point(say)) if specs else None
        for index, configuration in enumerate(found, start=1):
            run_id = _run_configuration(device, configuration, f"{index} of {len(found)}", folder, control,
                                        params["name"], runs[0] if runs else None, say, run_on)
            if run_id is not None:
                runs.append(run_id)
    if len(runs) > 1:
        say(f"runs {', '.join(map(str, runs))} are one series, one configuration each: disklab compare "
            f"series:{runs[0]}")
    return runs


def _run_configuration(device: Target, configuration: tuple, place: str, folder: Path | None,
                       control: CacheControl | None, name: str | None, series: int | None, say: Callable[[str], None],
                       run_on: Callable[[Target, dict], int | None]) -> int | None:
    """One configuration set up, the suite run in it, and undone (the cache restored, the file system unmounted)."""
    condition, spec, state, level = configuration
    label = _label(configuration)
    say(f"configuration {place}: {label} on {device.path}")
    with ExitStack() as undo:
        recorded: dict = {}
        if state:
            recorded["write_cache"] = undo.enter_context(cache_set(control, state, say))
        if condition:
            recorded["condition"] = condition_device(condition, device, say)
        target = device
        if spec:
            recorded["file_system"] = undo.enter_context(made_and_mounted(device.path, spec, folder))
            target = resolve_target(str(folder))
        if level is not None:
            target = usable(device, level)
            recorded["overprovision"] = {"percent": level, "discard": discard_whole(device),
                                         "used_bytes": target.capacity_bytes, "device_bytes": device.capacity_bytes}
        return run_on(target, {"name": f"{name} · {label}" if name else label,
                               "configuration": {"label": label, **recorded}, "series": series})


def _label(configuration: tuple) -> str:
    """What was varied, as runs are named: 'full (written 2x) · xfs -d su=64k,sw=4 noatime · write cache off'."""
    condition, spec, state, level = configuration
    return " · ".join(part for part in (condition and condition.label, spec and spec.label,
                                        state and f"write cache {state}", level is not None and f"OP {level} %")
                      if part)


def _condition_step(condition: Condition, device: Target) -> str:
    if condition.state == "full":
        return f"fio: all of {device.path} written {condition.passes}x with 128 KiB sequential writes"
    return f"{shlex.join(erase_command(condition, device))} ({SAMPLE_BLOCKS} blocks marked before, read back after)"


def _parsed(given, parse: Callable, option: str) -> tuple:
    if not given:
        return ()
    try:
        return parse(given)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=f"'{option}'") from None


CONFIGURATION_OPTIONS = ("condition", "fs", "write_cache", "overprovision")  # run's options, in label order
SUITE_CONFIGURATIONS = "suite_configurations"  # ctx.meta: the options a suite's [configurations] stood for


def _options(ctx: click.Context) -> str:
    """The options that vary the configuration, as messages name them: '--fs', or the suite's table that set them."""
    given = [name for name in CONFIGURATION_OPTIONS if ctx.params[name]]
    from_suite = ctx.meta.get(SUITE_CONFIGURATIONS, {})
    what = {"condition": "device conditions", "fs": "file systems", "write_cache": "write-cache states",
            "overprovision": "over-provisioning levels"}
    return " and ".join(f"the {what[name]} of {from_suite[name]}" if name in from_suite
                        else f"--{name.replace('_', '-')}" for name in given)
