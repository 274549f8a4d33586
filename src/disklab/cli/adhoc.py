"""`disklab run --rw randread --bs 4k --iodepth 32 --numjobs 4 --target T`: one test from fio's own option names,
run as an ad-hoc suite of one test.

fio's options make a test of their own; they do not change a suite's tests (a suite varies iodepth or bs on purpose,
and a run must store what its suite says), so given with a SUITE they are refused.
"""

import functools
from dataclasses import replace

import click

from disklab.errors import UserError
from disklab.suite.loader import load_suite, parse_suite
from disklab.suite.model import Suite

# fio's option -> its help; the values are read in disklab's units (suite/fio_jobfile.adhoc_suite_text).
FIO_TEST_OPTIONS = {
    "rw": "Without SUITE, fio's options make a run of one test (disklab's defaults for the rest); fio's rw of it: "
          "read, write, randread, randwrite, rw, randrw",
    "bs": "fio's bs of that test, in disklab's units as every size on the command line (4k and 4KiB are 4,096 bytes, "
          "4KB 4,000; a job file's sizes are read as fio reads them)",
    "iodepth": "fio's iodepth of that test",
    "numjobs": "fio's numjobs of that test",
    "rwmixread": "fio's rwmixread (read share in percent) of a mixed test",
}


def fio_test_options(command):
    """Adds --rw, --bs, --iodepth, --numjobs and --rwmixread; the command receives them as one `fio_test` dict of the
    options given."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        given = {name: kwargs.pop(name) for name in FIO_TEST_OPTIONS}
        return command(*args, fio_test={k: v for k, v in given.items() if v is not None}, **kwargs)

    for name, help_text in reversed(FIO_TEST_OPTIONS.items()):
        wrapper = click.option(f"--{name}", metavar="FIO-VALUE", help=help_text + ".")(wrapper)
    return wrapper


def suite_or_test(suite: str | None, fio_test: dict[str, str]) -> Suite:
    """The named suite or job file, or the one test fio's options describe."""
    if suite is not None:
        if fio_test:
            given = ", ".join(f"--{name}" for name in fio_test)
            raise UserError(f"{given}: fio's options make a one-test run without SUITE (e.g. 'disklab run --rw "
                            f"randread --bs 4k --iodepth 32 --target T'); they do not change the tests of {suite!r} "
                            "(set them in a copy of the suite or job file)")
        return load_suite(suite)
    if not fio_test:
        raise click.UsageError("name a SUITE (a built-in suite, a .toml suite or a .fio job file), or describe one test "
                               "with fio's options, e.g. 'disklab run --rw randread --bs 4k --iodepth 32 --target T'")
    from disklab.suite.fio_jobfile import adhoc_suite_text  # configparser: only for a test given by fio's options

    text, notes = adhoc_suite_text(fio_test)
    return replace(parse_suite(text, source="command line", where="the command line"), notes=tuple(notes))
