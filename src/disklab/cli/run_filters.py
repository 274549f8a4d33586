"""Which stored runs a command takes, as `disklab runs` filters them: --suite, --target, --host, --user, --since,
--name and --status, given to the command as one RunFilter."""

import functools
import re
from datetime import datetime, timedelta, timezone

import click

from disklab.cli.common import converter
from disklab.store.filters import RUN_STATUSES, RunFilter

_AGO = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str) -> str:
    """'2026-11-01', an ISO time (UTC unless it says otherwise) or '7d' / '12h' / '30m' / '2w' ago, as stored."""
    ago = re.fullmatch(r"(\d{1,6})([mhdw])", text.strip())
    try:
        if ago:
            moment = datetime.now(timezone.utc) - timedelta(**{_AGO[ago[2]]: int(ago[1])})
        else:
            moment = datetime.fromisoformat(text.strip())
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=timezone.utc)
        return moment.astimezone(timezone.utc).isoformat(timespec="seconds")
    except (ValueError, OverflowError):
        raise ValueError(f"{text!r} is not a time: use a date (2026-11-01), an ISO time (2026-11-01T08:00, UTC "
                         "unless it has an offset) or an age such as 7d, 12h, 30m, 2w") from None


def _utf8(text: str) -> str:
    """Stored names are UTF-8: bytes that are not (a mistyped argument) would match nothing, so say so."""
    try:
        text.encode()
    except UnicodeEncodeError:
        raise ValueError(f"{text!r} is not UTF-8 text") from None
    return text


def run_filter_options(command):
    """Adds the filters of `disklab runs`; the command receives them as one RunFilter, `where`."""

    @functools.wraps(command)
    def wrapper(*args, suite, target, host, user, since, name, status, **kwargs):
        targets = _as_given_and_absolute(target) if target else ()
        where = RunFilter(suite=suite, targets=targets, host=host, user=user, since=since, name=name, status=status)
        return command(*args, where=where, **kwargs)

    options = (
        click.option("--suite", callback=converter(_utf8), help="Only runs of this suite (its name)."),
        click.option("--target", callback=converter(_utf8),
                     help="Only runs on this target (as given to run, or as listed)."),
        click.option("--host", callback=converter(_utf8),
                     help="Only runs made on this machine (its name as listed), or with a test on this fio server."),
        click.option("--user", callback=converter(_utf8),
                     help="Only runs this user made (the login name; sudo's user)."),
        click.option("--since", callback=converter(parse_since), metavar="WHEN",
                     help="Only runs started then or later: a date, an ISO time (UTC unless it has an offset), or "
                          "7d, 12h ..."),
        click.option("--name", callback=converter(_utf8), help="Only runs whose name contains this text (any case)."),
        click.option("--status", type=click.Choice(RUN_STATUSES), help="Only runs in this state."),
    )
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _as_given_and_absolute(target: str) -> tuple[str, ...]:
    """A target as typed and as run stored it; the targets package (sysfs, mounts) loads only for --target."""
    from disklab.targets.target import absolute_path

    return tuple(dict.fromkeys((target, str(absolute_path(target)))))
