"""A figure read from fio's JSON, checked before anything stores it: a JSON number, finite, not negative, and a count
whole and small enough for SQLite's 64-bit integers. fio writes no other; output that holds one was cut, edited or
made by something else, and is refused with a FioError naming the field (a run fails cleanly, an import is refused)."""

import json
import math

from disklab.errors import FioError

MAX_COUNT = 2**63 - 1  # SQLite's largest integer: every count disklab stores must fit


def number_at(value, key: str, where: str) -> int | float:
    """The figure `key` of `where` ('jobs[0].read'): finite (Python reads 1e309 as infinity), never negative."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:  # value != value: NaN
        raise FioError(f"fio's JSON output: {where}: {key!r} is not a number: {shown(value)}")
    if value < 0 or value == math.inf:
        why = "negative" if value < 0 else "infinite (1e309 and beyond read as infinity)"
        raise FioError(f"fio's JSON output: {where}: {key!r} is {why}: {shown(value)}")
    return value


def count_at(value, key: str, where: str) -> int:
    number = number_at(value, key, where)
    if number != int(number):
        raise FioError(f"fio's JSON output: {where}: {key!r} is not a whole number: {shown(value)}")
    if number > MAX_COUNT:
        raise FioError(f"fio's JSON output: {where}: {key!r} is too large to store (over 2^63 - 1): {shown(value)}")
    return int(number)


def float_at(value, key: str, where: str) -> float:
    try:
        return float(number_at(value, key, where))
    except OverflowError:  # an integer of over 308 digits
        raise FioError(f"fio's JSON output: {where}: {key!r} is too large: {shown(value)}") from None


def shown(value) -> str:
    """The value in JSON's words (NaN, Infinity, null, "text", [...]), cut short to keep the error one line."""
    text = json.dumps(value)
    return (text if len(text) <= 40 else text[:36] + " ...") + (" (a string)" if isinstance(value, str) else "")
