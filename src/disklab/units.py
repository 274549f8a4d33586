"""Sizes and durations as users write them, and as tables show them.

Sizes as the SI and IEC mean them: K/M/G/T and KiB/MiB/... are powers of 1024, KB/MB/GB/TB (and kB) powers of
1000. (fio's own default, kb_base=1024, reads KB as 1024 and KiB as 1000: fio/sizes.py follows fio where fio's
output is read.) Output says MB/s for 10^6 bytes/s.
"""

import re
import reprlib

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tib": 1024**4,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
}
_DURATION_UNITS = {"": 1.0, "s": 1.0, "ms": 0.001, "m": 60.0, "min": 60.0, "h": 3600.0}
_NUMBER_UNIT = re.compile(r"^\s*(\d+)(?:\.(\d+))?\s*([a-zA-Z]*)\s*$", re.ASCII)
_MAX_TEXT = 100  # longer than any size or duration a person writes; bounds the work of reading one
# Far beyond any device or run, yet small enough for every sum, product and SQLite integer made of them.
MAX_SIZE_BYTES = 2**60
MAX_DURATION_S = 30 * 24 * 3600.0


def parse_size(text: str | int) -> int:
    """Bytes from '256M', '1GiB', '5GB' or a plain number, at most 1 EiB; ValueError names what is allowed."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = _number_unit(text)
        unit = match.group(3).lower() if match else None
        if unit is None or unit not in _SIZE_UNITS:
            raise ValueError(f"{brief(text)} is not a size (examples: 4096, 4k, 256M, 1GiB, 5GB)")
        whole, fraction = match.group(1), match.group(2) or ""
        # Exact integer arithmetic: 1.5G is 3 * 2**29 and a 30-digit number stays a number, never a float's guess.
        scaled = int(whole + fraction) * _SIZE_UNITS[unit]
        value, remainder = divmod(scaled, 10 ** len(fraction))
        if remainder:
            raise ValueError(f"{brief(text)} is not a whole number of bytes")
    if not 0 <= value <= MAX_SIZE_BYTES:
        raise ValueError(f"{brief(text)} is not a size from 0 to 1 EiB ({MAX_SIZE_BYTES} bytes)")
    return value


def parse_duration(text: str | int | float) -> float:
    """Seconds from '5s', '500ms', '2m', '1h' or a plain number of seconds, at most 30 days."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = text  # compared as given: nan fails both bounds, a huge integer never becomes a float
    else:
        match = _number_unit(text)
        unit = match.group(3).lower() if match else None
        if unit is None or unit not in _DURATION_UNITS:
            raise ValueError(f"{brief(text)} is not a duration (examples: 5, 5s, 500ms, 2m)")
        seconds = float(f"{match.group(1)}.{match.group(2) or 0}") * _DURATION_UNITS[unit]
    if not 0 <= seconds <= MAX_DURATION_S:
        raise ValueError(f"{brief(text)} is not a duration from 0 to 30 days")
    return float(seconds)


def _number_unit(text: object) -> re.Match | None:
    """Only strings (and the floats TOML gives, as text) can match; lists and tables never do."""
    if isinstance(text, float):
        text = str(text)
    return _NUMBER_UNIT.match(text) if isinstance(text, str) and len(text) <= _MAX_TEXT else None


_BRIEF = reprlib.Repr()
_BRIEF.maxstring = _BRIEF.maxlong = _BRIEF.maxother = 40


def brief(value: object) -> str:
    """A value as messages quote it: its repr, cut short, so a 400-digit number or a deep list stays one short line."""
    return _BRIEF.repr(value)


def format_size(n_bytes: float) -> str:
    """The largest unit that holds the size exactly, binary (fio's 4KiB, 1MiB) or decimal (5GB); else 1.5GiB."""
    for unit, factor in _EXACT_UNITS:
        if n_bytes >= factor and n_bytes % factor == 0:
            return f"{n_bytes // factor:.0f}{unit}"
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(n_bytes) >= factor:
            return f"{n_bytes / factor:.1f}{unit}"
    return f"{n_bytes:.0f}B"


def human_size(n_bytes: float) -> str:
    """A size as messages say it: exact when that is short (64KiB, 5GB), else rounded to the unit that keeps it
    short (77.6GiB, not 81371508KiB); tables and labels keep format_size's exact figure."""
    exact = format_size(n_bytes)
    if len(exact.rstrip("BKMGTi")) <= 4:
        return exact
    for unit, power in (("EiB", 6), ("PiB", 5), ("TiB", 4), ("GiB", 3), ("MiB", 2), ("KiB", 1)):
        factor = 1024**power
        if abs(n_bytes) >= factor:
            return f"{n_bytes / factor:.1f}{unit}"
    return exact


_EXACT_UNITS = (
    ("TiB", 1024**4), ("TB", 1000**4), ("GiB", 1024**3), ("GB", 1000**3), ("MiB", 1024**2), ("MB", 1000**2),
    ("KiB", 1024),
)


def format_capacity(n_bytes: int) -> str:
    """A disk's or memory's capacity, said the same in every table, label and chart footer: binary, to a tenth of a
    GiB (a hundredth of a TiB from 1 TiB: 256.0 GiB, 1.82 TiB); below 1 GiB, format_size's exact figure."""
    if n_bytes >= 1024**4:
        return f"{n_bytes / 1024**4:,.2f} TiB"
    if n_bytes >= 1024**3:
        return f"{n_bytes / 1024**3:,.1f} GiB"
    return format_size(n_bytes)


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def fio_size(n_bytes: int) -> str:
    """A size as fio reads it back exactly (fio's K/M/G are binary)."""
    for suffix, factor in (("g", 1024**3), ("m", 1024**2), ("k", 1024)):
        if n_bytes % factor == 0 and n_bytes >= factor:
            return f"{n_bytes // factor}{suffix}"
    return str(n_bytes)


_PERCENT = re.compile(r"^\s*(\d{1,6}(?:\.\d{1,6})?)\s*(%?)\s*$", re.ASCII)


def parse_percent(text: str) -> float:
    """'2%' or '2 %': a percentage above 0 and below 100. A bare '2' is refused: 2 % and a fraction 2 (200 %) are
    both plausible readings, and a precision read the wrong way runs for hours."""
    match = _PERCENT.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{brief(text)} is not a percentage (examples: 2%, 0.5%)")
    if not match.group(2):
        raise ValueError(f"{brief(text)} needs its unit: write {match.group(1)}% for {match.group(1)} percent")
    value = float(match.group(1))
    if not 0 < value < 100:
        raise ValueError(f"{brief(text)}: a percentage here is above 0 % and below 100 %")
    return value
