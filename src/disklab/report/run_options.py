"""A run's options as its user wrote them, with units: 'clients 1, 2; scale 1; time 5 s', never the parsed values
the store keeps ('p99 1000000.0', 'time_s 5.0'). The report's 'What was tested' table, and serve's run and compare
pages through it, say a run's options with this one function."""

from disklab.units import format_size

# How the run was shown, not what it measured.
_NOT_SAID = ("output_format", "quiet")
# Stored under a name other than the option's: --time, --cache, --fio.
_OPTION_NAMES = {"time_s": "time", "cache_bytes": "cache", "fio_folder": "fio"}
_SIZES = ("size", "cache_bytes")  # bytes; an ad-hoc run's fio values (--bs 8k) are kept as given, as text
_DURATIONS = ("runtime", "ramp", "pause", "max_time", "time_s")  # seconds
_LATENCY_UNITS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1))


def options_text(options: dict) -> str:
    """'-' for a run made with none."""
    said = [_option_text(key, value) for key, value in sorted(options.items())
            if key not in _NOT_SAID and value not in (None, False, (), [], "")]
    return "; ".join(said) or "-"


def _option_text(key: str, value) -> str:
    name = _OPTION_NAMES.get(key, key.replace("_", "-"))
    if value is True:
        return name
    return f"{name} {_value_text(key, value)}"


def _value_text(key: str, value) -> str:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key in _SIZES and number:
        return format_size(value)
    if key in _DURATIONS and number:
        return duration_text(value)
    if key == "p99" and number:
        return latency_text(value)
    if key == "precision" and number:
        return f"{value:g} %"
    if key == "resumed" and isinstance(value, list):
        return f"{len(value)} time{'' if len(value) == 1 else 's'}"
    if key in ("configuration", "spec") and isinstance(value, dict):  # their details: `show RUN -f json`
        return str(value.get("label") or value.get("name") or "-")
    if key == "pg_set" and isinstance(value, list):
        return ", ".join("=".join(map(str, pair)) if isinstance(pair, list) else str(pair) for pair in value)
    if isinstance(value, list):
        return ", ".join(_value_text("", item) for item in value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def duration_text(seconds: float) -> str:
    """5 s, 90 s, 10 min, 2 h: the unit a person would write it in."""
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:g} h"
    if seconds >= 120 and seconds % 60 == 0:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"


def latency_text(ns: float) -> str:
    """1 ms, 500 µs, 200 ns: the largest unit the latency is at least one of."""
    for unit, factor in _LATENCY_UNITS:
        if ns >= factor:
            return f"{ns / factor:g} {unit}"
    return f"{ns:g} ns"
