"""`disklab run SUITE --target DEVICE --destroy-data --fs ...`: the suite run once per file system made on the device,
one stored run each, named by what was varied and linked as one series (the first run's number), so that `compare`
of the series sets the file systems side by side."""

import shlex
from collections.abc import Callable

import click

from disklab.errors import SafetyError, UserError
from disklab.targets.blockdev import check_device_writable
from disklab.targets.filesystem import FsSpec, check_tools, made_and_mounted, parse_fs_spec
from disklab.targets.target import Target, resolve_target


def run_per_file_system(ctx: click.Context, device: Target,
                        run_on: Callable[[Target, dict], int | None]) -> list[int]:
    """Each --fs made, mounted, run on and unmounted in turn; the runs' numbers."""
    params = ctx.params
    specs = _specs(params["fs"])
    if device.kind != "device":
        raise UserError(f"--fs makes a file system on a block device; {device.path} is a {device.kind} (give the "
                        "device as --target, e.g. /dev/sdb)")
    if params["hosts"] or params["new_file"]:
        raise UserError("--fs makes file systems on a device of this machine: not with --hosts or --new-file")
    if params["dry_run"]:
        for index, spec in enumerate(specs, start=1):
            click.echo(f"configuration {index} of {len(specs)}: {shlex.join(spec.mkfs_command(device.path))}; "
                       f"{shlex.join(spec.mount_command(device.path, '<private mount point>'))}; the suite on a "
                       "test file there; umount")
        return []
    if not params["destroy_data"]:
        raise SafetyError(f"--fs makes a file system on {device.path}, which destroys its data; add --destroy-data "
                          "to allow it")
    check_tools(specs)
    say = (lambda line: None) if params["quiet"] else (lambda line: click.echo(line, err=True))
    # The user's consent, checked once against the device as it is now: the file systems made after the first are
    # disklab's own, which --force need not allow again.
    check_device_writable(device.device, destroy_data=True, force=params["force"])
    runs: list[int] = []
    for index, spec in enumerate(specs, start=1):
        say(f"configuration {index} of {len(specs)}: {spec.label} on {device.path}")
        with made_and_mounted(device.path, spec, say) as made:
            mount_point = made.pop("mount_point")
            recorded = {"name": _name(params["name"], spec), "configuration": made,
                        "series": runs[0] if runs else None}
            run_id = run_on(resolve_target(mount_point), recorded)
        if run_id is not None:
            runs.append(run_id)
    if len(runs) > 1:
        say(f"runs {', '.join(map(str, runs))} are one series, one file system each: disklab compare "
            f"{' '.join(map(str, runs))}")
    return runs


def _specs(given: tuple[str, ...]) -> list[FsSpec]:
    specs = []
    for text in given:
        try:
            specs.append(parse_fs_spec(text))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="'--fs'") from None
    labels = [spec.label for spec in specs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise click.BadParameter(f"{twice[0]!r} is given twice; each --fs is one configuration", param_hint="'--fs'")
    return specs


def _name(given: str | None, spec: FsSpec) -> str:
    return f"{given} · {spec.label}" if given else spec.label
