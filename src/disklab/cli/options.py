"""Options shared by the commands that build a plan (run, export), derived from the parameter registry."""

import functools
import math

import click

from disklab.cli.common import converter
from disklab.plan.build import DEFAULT_MAX_TESTS, Overrides
from disklab.suite.params import PARAMS
from disklab.units import parse_duration, parse_size


class WholeNumber(click.ParamType):
    """A whole number in plain digits within low..high: '1_000', ' 7', '1e3' and '٣' are typing slips, not numbers."""

    name = "integer"

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        if isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
        else:
            text = value
        if not (isinstance(text, str) and text.isascii() and text.isdigit() and len(text) <= 18
                and self.low <= int(text) <= self.high):
            self.fail(f"{text[:40]!r} is not a whole number from {self.low:,} to {self.high:,}", param, ctx)
        return int(text)


# Enough for a million-test grid on purpose; beyond it the plan alone would not fit in memory.
MAX_TESTS_LIMIT = 1_000_000


def _scale(value: str) -> float:
    """Checked per suite kind once the suite is known: a shrink factor (fio) or pgbench's scale factor."""
    try:
        scale = float(value)
    except ValueError:
        raise ValueError(f"{value[:40]!r} is not a number") from None
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"{value[:40]} is not a number above 0")
    return scale


_OVERRIDES = (
    click.option("--size", callback=converter(parse_size), help=f"Override the {PARAMS['size'].help}."),
    click.option("--runtime", callback=converter(parse_duration), help=f"Override the {PARAMS['runtime'].help}."),
    click.option("--ramp", callback=converter(parse_duration), help=f"Override the {PARAMS['ramp'].help}."),
    click.option("--pause", callback=converter(parse_duration), help=f"Override the {PARAMS['pause'].help}."),
    click.option("--scale", callback=converter(_scale),
                 help="fio suites: shrink file sets and data sets by this factor (above 0, at most 1), e.g. 0.01; "
                      "pgbench suites: pgbench's scale factor (a whole number, 100,000 accounts each), e.g. 10."),
    click.option("--engine", callback=converter(PARAMS["engine"].convert),
                 help="fio ioengine for every test (default: io_uring where it works, else libaio)."),
    click.option("--read-only", is_flag=True, help="Only the tests that do not write."),
    click.option("--max-tests", type=WholeNumber(1, MAX_TESTS_LIMIT),
                 help=f"Allow a run of up to N tests (default {DEFAULT_MAX_TESTS:,}, at most {MAX_TESTS_LIMIT:,}); "
                      "a larger plan is refused before it is expanded."),
)


def overrides_from(options: dict) -> Overrides:
    """The overrides among a command's options (as given, or as a run stored them)."""
    return Overrides(**{name: options.get(name) for name in ("runtime", "ramp", "pause", "size", "engine", "scale",
                                                            "max_tests")})


def plan_options(command):
    """Adds the override options; the command receives them as one `overrides` argument and `read_only`."""

    @functools.wraps(command)
    def wrapper(*args, size, runtime, ramp, pause, scale, engine, max_tests, **kwargs):
        options = {"size": size, "runtime": runtime, "ramp": ramp, "pause": pause, "scale": scale, "engine": engine,
                   "max_tests": max_tests}
        return command(*args, overrides=overrides_from(options), **kwargs)

    for option in reversed(_OVERRIDES):
        wrapper = option(wrapper)
    return wrapper
