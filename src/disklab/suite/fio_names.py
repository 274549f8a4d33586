"""fio's words in a suite file: its option names read as the suite's parameters, and notes where fio and disklab would
read a suite differently.

Sizes keep disklab's reading (units.py: KB is 1,000 bytes, KiB and k 1,024), which every command and every stored
suite shares; a suite's text is re-read whenever its runs are shown, so following fio here would silently change what
stored runs say they measured. Where fio would read a size otherwise (its default kb_base=1024 reads 64KB as 65,536),
a note says so and how to write it.
"""

import re

from disklab.errors import UserError
from disklab.fio.sizes import parse_fio_size
from disklab.suite.model import FIO_RW_MODES
from disklab.units import brief, parse_size

# fio's name -> the suite's; rw and rwmixwrite are read below (one fio option, two parameters; the other share).
SYNONYMS = {"numjobs": "jobs", "blocksize": "bs", "ioengine": "engine", "ramp_time": "ramp", "startdelay": "pause"}
_RW = {rw: (pattern, direction) for (direction, pattern), rw in FIO_RW_MODES.items()} | {
    "readwrite": ("sequential", "mixed")}
_SIZE_KEYS = ("bs", "size", "filesize", "rate", "bssplit", "region")
_SI_SIZE = re.compile(r"(\d+)\s*([kmgt]b)(?![a-z])", re.IGNORECASE)


def read_fio_names(data: dict, where: str) -> tuple[dict, tuple[str, ...]]:
    """The suite's TOML with fio's names as the suite's, and the notes to print with its plan."""
    notes: list[str] = []
    data = dict(data)
    defaults = data.get("defaults")
    if isinstance(defaults, dict):
        data["defaults"] = _table(defaults, where, "defaults", notes)
    groups = data.get("group")
    if isinstance(groups, list):
        data["group"] = [_group(g, i, where, data.get("defaults"), notes) if isinstance(g, dict) else g
                         for i, g in enumerate(groups, start=1)]
    return data, tuple(notes)


def _group(group: dict, index: int, where: str, defaults, notes: list[str]) -> dict:
    context = f"group {index}" + (f" ({group['name']})" if isinstance(group.get("name"), str) else "")
    group = _table(group, where, context, notes)
    given = {*group, *(defaults if isinstance(defaults, dict) else ())}
    if not given & {"direction", "rwmixread", "frame_size"} and not given & {"bs", "bssplit", "frame_size"}:
        notes.append(f"{where}: {context}: names neither a direction nor a block size: random reads of 4 KiB "
                     "blocks, the defaults, were taken")
    return group


def _table(table: dict, where: str, context: str, notes: list[str]) -> dict:
    """One table's keys in file order, fio's names replaced by the suite's."""
    out: dict = {}
    for key, value in table.items():
        if key in ("rw", "readwrite"):
            for name, part in _rw(value, where, context, key):
                _put(out, table, name, part, key, where, context)
        elif key == "rwmixwrite":
            _put(out, table, "rwmixread", _read_share(value, where, context), key, where, context)
        else:
            _put(out, table, SYNONYMS.get(key, key), value, key, where, context)
    for key in _SIZE_KEYS:
        values = out.get(key)
        sizes = [f"{n}{unit}" for v in (values if isinstance(values, list) else [values]) if isinstance(v, str)
                 for n, unit in _SI_SIZE.findall(v)]
        if sizes:
            first = sizes[0]
            notes.append(f"{where}: {context}: {key}: {first} is {parse_size(first):,} bytes here (SI, as every size "
                         f"disklab reads); fio reads {first} as {parse_fio_size(first):,}: write {first[:-2]}"
                         f"{first[-2].upper()}iB for that" + (f" (likewise {', '.join(sizes[1:])})" if sizes[1:] else ""))
    return out


def _put(out: dict, table: dict, name: str, value, given: str, where: str, context: str) -> None:
    if name in out or (name != given and name in table):
        raise UserError(f"{where}: {context}: {given}: sets {name}, which the table sets too; give one")
    out[name] = value


def _rw(value, where: str, context: str, key: str) -> list[tuple[str, object]]:
    """fio's rw as pattern and direction; a list may vary one of them (['randread', 'randwrite'])."""
    modes = value if isinstance(value, list) else [value]
    if not modes or any(not isinstance(m, str) or m not in _RW for m in modes):
        bad = next((m for m in modes if not isinstance(m, str) or m not in _RW), value)
        raise UserError(f"{where}: {context}: {key}: {brief(bad)} is not one of fio's modes "
                        f"({', '.join(_RW)})")
    patterns, directions = zip(*(_RW[m] for m in modes))
    if not isinstance(value, list):
        return [("pattern", patterns[0]), ("direction", directions[0])]
    if len(set(patterns)) == 1:
        return [("pattern", patterns[0]), ("direction", list(directions))]
    if len(set(directions)) == 1:
        return [("pattern", list(patterns)), ("direction", directions[0])]
    raise UserError(f"{where}: {context}: {key}: {brief(value)} varies both the pattern and the direction; a list of "
                    "rw modes may vary one of them (or give pattern = [...] and direction = [...], a grid of both)")


def _read_share(value, where: str, context: str):
    """fio's rwmixwrite is the write share; the suite keeps the read share."""
    values = value if isinstance(value, list) else [value]
    if any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 100 for v in values):
        raise UserError(f"{where}: {context}: rwmixwrite: {brief(value)} is not a whole number from 0 to 100 "
                        "(or a list of them)")
    return [100 - v for v in values] if isinstance(value, list) else 100 - value
