"""Options shared by the commands that build a plan (run, export), derived from the parameter registry."""

import functools

import click

from disklab.plan import Overrides
from disklab.suite.params import PARAMS
from disklab.units import parse_duration, parse_size


def converter(parse):
    """A click callback: the option parsed by `parse`, its ValueError shown as a bad parameter."""
    def convert(ctx, param, value):
        if value is None:
            return None
        try:
            return parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from exc

    return convert


def _scale(value: str) -> float:
    """Checked per suite kind once the suite is known: a shrink factor (fio) or pgbench's scale factor."""
    scale = float(value)
    if not scale > 0:
        raise ValueError(f"{value} is not above 0")
    return scale


_OVERRIDES = (
    click.option("--size", callback=converter(parse_size), help=f"Override the {PARAMS['size'].help}."),
    click.option("--runtime", callback=converter(parse_duration), help=f"Override the {PARAMS['runtime'].help}."),
    click.option("--ramp", callback=converter(parse_duration), help=f"Override the {PARAMS['ramp'].help}."),
    click.option("--pause", callback=converter(parse_duration), help=f"Override the {PARAMS['pause'].help}."),
    click.option("--scale", callback=converter(_scale),
                 help="fio suites: shrink file sets and data sets by this factor (above 0, at most 1), e.g. 0.01; "
                      "pgbench suites: pgbench's scale factor (a whole number, 100,000 accounts each), e.g. 10."),
    click.option("--engine", help="fio ioengine for every test (default: io_uring where it works, else libaio)."),
    click.option("--read-only", is_flag=True, help="Only the tests that do not write."),
)


def overrides_from(options: dict) -> Overrides:
    """The overrides among a command's options (as given, or as a run stored them)."""
    return Overrides(**{name: options.get(name) for name in ("runtime", "ramp", "pause", "size", "engine", "scale")})


def plan_options(command):
    """Adds the override options; the command receives them as one `overrides` argument and `read_only`."""

    @functools.wraps(command)
    def wrapper(*args, size, runtime, ramp, pause, scale, engine, **kwargs):
        options = {"size": size, "runtime": runtime, "ramp": ramp, "pause": pause, "scale": scale, "engine": engine}
        return command(*args, overrides=overrides_from(options), **kwargs)

    for option in reversed(_OVERRIDES):
        wrapper = option(wrapper)
    return wrapper
