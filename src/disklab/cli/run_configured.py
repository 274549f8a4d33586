"""`disklab run SUITE --target DEVICE --destroy-data --fs ... --write-cache on,off --overprovision 0,50`: the options
that vary the device's configuration parsed, and the configured run (run/configured.py) started and printed."""

from collections.abc import Callable

import click

from disklab.errors import UserError
from disklab.run.configured import Consent, UnderTest, Variations, check_configured, check_member_alone, \
    dry_run_steps, planned_target, run_configured
from disklab.targets.array import parse_array_specs, parse_states as parse_array_states
from disklab.targets.condition import parse_conditions
from disklab.targets.filesystem import parse_fs_specs
from disklab.targets.overprovision import parse_levels
from disklab.targets.target import Target, resolve_target
from disklab.targets.write_cache import parse_states

CONFIGURATION_OPTIONS = ("array", "array_state", "condition", "fs", "write_cache", "overprovision")  # label order
SUITE_CONFIGURATIONS = "suite_configurations"  # ctx.meta: the options a suite's [configurations] stood for


def variations_from(params: dict) -> Variations:
    """What the options (or a suite's [configurations], in their shape) vary; a bad one is a usage error."""
    return Variations(tuple(_parsed(params.get("array"), parse_array_specs, "--array")),
                      tuple(_parsed(params.get("array_state"), parse_array_states, "--array-state")),
                      tuple(_parsed(params["condition"], parse_conditions, "--condition")),
                      tuple(_parsed(params["fs"], parse_fs_specs, "--fs")),
                      tuple(_parsed(params["write_cache"], parse_states, "--write-cache")),
                      tuple(_parsed(params["overprovision"], parse_levels, "--overprovision")))


def configuration_lines(params: dict) -> list[str]:
    """A dry run's account of the runs the configurations make, before a device is named."""
    return [variations_from(params).summary()]


def run_per_configuration(ctx: click.Context, device: Target | None,
                          run_on: Callable[[Target, dict, Callable[[], dict] | None], int | None]) -> list[int]:
    """The suite run once per configuration (printed only, with --dry-run) on `device`, or on arrays built of
    --members; the runs' numbers."""
    params = ctx.params
    variations = variations_from(params)
    consent = Consent(params["destroy_data"], params["force"], _options(ctx))
    if params["hosts"] or params["new_file"]:
        raise UserError(f"{consent.options} set up a device of this machine: not with --hosts or --new-file")
    under_test = UnderTest(device, tuple(resolve_target(member) for member in _members(params["members"])))
    if params["dry_run"]:
        controls = check_configured(under_test, variations, consent)
        if params["measure_member"]:
            check_member_alone(under_test)
            click.echo(f"first: the suite on {under_test.members[0].path} alone (the drive each array is predicted "
                       "from)")
            run_on(under_test.members[0], {}, None)
        for line, configuration in zip(dry_run_steps(under_test, variations, controls), variations.configurations()):
            click.echo(line)
            planned = planned_target(under_test, configuration)
            if planned is not None:
                run_on(planned, {}, None)
        return []
    say = (lambda line: None) if params["quiet"] else (lambda line: click.echo(line, err=True))
    return run_configured(under_test, variations, consent, params["name"], say, run_on, params["measure_member"])


def _members(given: str | None) -> list[str]:
    members = [part.strip() for part in (given or "").split(",") if part.strip()]
    if given is not None and not members:
        raise click.BadParameter("give the member devices, e.g. /dev/sdb,/dev/sdc", param_hint="'--members'")
    return members


def _parsed(given, parse: Callable, option: str) -> tuple:
    if not given:
        return ()
    try:
        return parse(given)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=f"'{option}'") from None


def _options(ctx: click.Context) -> str:
    """The options that vary the configuration, as messages name them: '--fs', or the suite's table that set them."""
    given = [name for name in CONFIGURATION_OPTIONS if ctx.params[name]]
    from_suite = ctx.meta.get(SUITE_CONFIGURATIONS, {})
    what = {"array": "arrays", "array_state": "array states", "condition": "device conditions", "fs": "file systems",
            "write_cache": "write-cache states", "overprovision": "over-provisioning levels"}
    return " and ".join(f"the {what[name]} of {from_suite[name]}" if name in from_suite
                        else f"--{name.replace('_', '-')}" for name in given)
