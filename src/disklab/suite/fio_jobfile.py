"""A plain fio job file run as a suite: each job section one test, [global] applied, options read as fio reads them.

The job file is translated into a suite's TOML (kept with the run, so that show, compare and resume read it as any
suite) with fio's own defaults where the file is silent (buffered I/O, psync, no runtime cap), not disklab's. An
option that is a suite parameter becomes it; the rest go to fio as written (suite/fio_options.py), so that a test runs
as the file says. Options that say where the I/O goes or where results are written are disklab's to set and are named
in one note; one that would make disklab's figures wrong is refused with why.
"""

import configparser
import json
from pathlib import Path

from disklab.errors import UserError
from disklab.fio.sizes import is_percent, one_bssplit, option_bases, parse_bssplit, parse_fio_size, per_direction
from disklab.suite.fio_options import SET_BY_DISKLAB, SYNC_PARAMETER, fio_lines_text, refusal_of
from disklab.suite.model import FIO_RW_MODES, IO_DIRECTIONS
from disklab.system.textfile import toml_string
from disklab.units import brief, parse_duration, parse_size

_RW = {rw: (pattern, direction) for (direction, pattern), rw in FIO_RW_MODES.items()} | {
    "readwrite": ("sequential", "mixed")}
_SYNONYMS = {"readwrite": "rw", "blocksize": "bs"}
SECTOR_BYTES = 512  # the smallest logical block a device has: a command-line block size is a whole number of them


def _flag(value: str | None, _base: int) -> bool:
    """fio's bool options: present without a value, or 1/0."""
    if value is None or value.strip() in ("1", "true"):
        return True
    if value.strip() in ("0", "false"):
        return False
    raise ValueError(f"{brief(value)} is not 0 or 1")


def _count(value: str | None, base: int) -> int:
    return parse_fio_size(_given(value), base)


def _size(value: str | None, base: int) -> int:
    if is_percent(_given(value)):
        raise ValueError(f"{value} is a share of the target; give a size (disklab sizes the test file itself)")
    return parse_fio_size(value, base)


def _one_value(value: str | None, base: int, directions: tuple[str, ...]) -> int:
    """bs or a rate that the test's directions share ('4k,64k' for reads alone is 4k); where they differ, or one is
    left at fio's default (',64k'), fio is handed the option as written."""
    sizes = {per_direction(_given(value), base)[direction] for direction in directions}
    if len(sizes) != 1 or None in sizes:
        raise _PerDirection
    return sizes.pop()


class _PerDirection(ValueError):
    """A value per direction, which no suite parameter holds: fio is handed it as written."""


def _seconds(value: str | None, _base: int) -> float:
    return parse_duration(_given(value).strip())


def _given(value: str | None) -> str:
    if value is None or not value.strip():
        raise ValueError("needs a value")
    return value


def _engine(value: str | None, _base: int) -> str:
    return _given(value).strip()


# fio option -> (suite parameter, reader of fio's value with the kb_base in force).
_TRANSLATED = {
    "iodepth": ("iodepth", _count), "numjobs": ("jobs", _count),
    "rwmixread": ("rwmixread", _count), "size": ("size", _size), "runtime": ("runtime", _seconds),
    "time_based": ("time_based", _flag), "ramp_time": ("ramp", _seconds), "startdelay": ("pause", _seconds),
    "direct": ("direct", _flag), "ioengine": ("engine", _engine),
    "nrfiles": ("nrfiles", _count), "filesize": ("filesize", _size),
}
# fio's defaults where a job file is silent (fio's HOWTO), so that a test runs as fio alone would run it.
_FIO_DEFAULTS = {"pattern": "sequential", "direction": "read", "bs": 4096, "iodepth": 1, "jobs": 1, "size": "all",
                 "runtime": 0, "time_based": False, "ramp": 0, "direct": False, "engine": "psync"}


def read_jobfile(text: str, where: str) -> tuple[list[tuple[str, dict]], list[str]]:
    """(job name, fio options with [global]'s applied) of each job section, in order, and the notes to print."""
    parser = configparser.ConfigParser(
        allow_no_value=True, delimiters=("=",), comment_prefixes=(), interpolation=None, strict=True,
        default_section="\0",  # no section is special to fio but [global]
    )
    parser.optionxform = str  # fio's option names are case-sensitive
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        for mark in ";#":  # fio ends a line at its first ';' or '#'
            line = line.partition(mark)[0].rstrip()
        if line.startswith("include"):
            raise UserError(f"{where}: line {number}: include: disklab reads one job file; put the included options "
                            "into it")
        if "\0" in line:  # no job file fio reads holds one; no store keeps one in a test's name
            raise UserError(f"{where}: line {number}: holds a NUL character (U+0000)")
        if "$" in line:
            raise UserError(f"{where}: line {number}: {brief(line)}: fio's $VARIABLES are not expanded here; write "
                            "the value")
        lines.append(line)
    try:
        parser.read_string("\n".join(lines))
    except configparser.MissingSectionHeaderError as exc:
        raise UserError(f"{where}: line {exc.lineno}: an option outside a [section]") from None
    except configparser.DuplicateSectionError as exc:
        raise UserError(f"{where}: line {exc.lineno}: a second [{brief(exc.section)[1:-1]}] section; disklab reads "
                        "each section name once (fio applies a later [global] to the jobs after it)") from None
    except configparser.Error as exc:
        raise UserError(f"{where}: {str(exc).splitlines()[0]}") from None
    sections = parser.sections()
    global_options = dict(parser["global"]) if "global" in sections else {}
    jobs = [(name, {**global_options, **parser[name]}) for name in sections if name != "global"]
    if not jobs:
        raise UserError(f"{where}: no job section (fio runs each [section] but [global] as a job)")
    return jobs, _notes(jobs, parser, where)


def _notes(jobs: list[tuple[str, dict]], parser: configparser.ConfigParser, where: str) -> list[str]:
    notes = []
    set_here = sorted({key for _, options in jobs for key in options if key in SET_BY_DISKLAB}
                      - {"stonewall", "new_group", "wait_for"})
    if set_here:
        notes.append(f"{where}: {', '.join(set_here)} set by disklab (the target and its test file, fio's output and "
                     "logs)")
    together = [name for name, _ in jobs[1:] if not {"stonewall", "new_group", "wait_for"} & set(parser[name])]
    if together:
        notes.append(f"{where}: fio would run {', '.join(together)} at the same time as the job before; disklab runs "
                     "each job section as a test of its own, one after another")
    return notes


def test_values(options: dict, context: str, fio_defaults: bool = True, spell=str) -> dict:
    """The suite parameters of one job, fio's defaults where it is silent (else the suite's). The options no
    parameter holds go to fio as written (the parameter `fio`); one that would make disklab's figures wrong is
    refused with why. `spell` names an option in messages as the user wrote it (--bs on the command line)."""
    try:
        bases = option_bases(options)
    except ValueError as exc:
        raise UserError(f"{context}: {exc}") from None
    values = dict(_FIO_DEFAULTS) if fio_defaults else {}
    as_written: list[tuple[str, str | None]] = []
    rw_first = sorted(options.items(), key=lambda option: _SYNONYMS.get(option[0], option[0]) != "rw")
    for given, raw in rw_first:  # a bssplit is read for the directions rw gives
        key = _SYNONYMS.get(given, given)
        if key in SET_BY_DISKLAB or key == "kb_base":
            continue
        try:
            if not _translated(key, raw, bases[given], values):
                refusal = refusal_of(key, raw)
                if refusal:
                    raise UserError(f"{context}: fio option {brief(given)}: {refusal}")
                as_written.append((given, raw))
        except _PerDirection:
            as_written.append((given, raw))
        except ValueError as exc:
            raise UserError(f"{context}: {spell(given)}: {exc}") from None
    if values.get("time_based") and not values.get("runtime"):
        raise UserError(f"{context}: time_based without a runtime would run until stopped; give a runtime")
    if as_written:
        if options.get("kb_base", "1024").strip() != "1024":  # fio reads the sizes handed on as the file says
            as_written.insert(0, ("kb_base", options["kb_base"].strip()))
        values["fio"] = fio_lines_text(as_written)
    return values


def _translated(key: str, raw: str | None, base: int, values: dict) -> bool:
    """Sets the parameter an option is, when one is; False when fio is to be handed it as written."""
    if key == "rw":
        mode, _, every = _given(raw).strip().partition(":")
        if mode not in _RW:
            raise ValueError(f"{brief(raw)} is not one of {', '.join(_RW)}")
        values["pattern"], values["direction"] = _RW[mode]
        return not every  # rw=randread:8 (a new random offset every 8 I/Os) goes to fio as written
    if key == "rwmixwrite":
        values["rwmixread"] = 100 - _count(raw, base)
    elif key == "buffered":
        values["direct"] = not _flag(raw, base)
    elif key in ("fsync", "fdatasync", "sync"):
        sync = SYNC_PARAMETER.get((key, (raw or "").strip()))
        if sync is None:
            return (raw or "").strip() in ("0", "none")  # off, fio's default; fsync=4 and sync=1 go as written
        values["sync"] = sync
    elif key in ("bs", "rate", "rate_iops"):
        values[key] = _one_value(raw, base, IO_DIRECTIONS[values.get("direction", "read")])
    elif key == "bssplit":
        parse_bssplit(_given(raw), base)  # ValueError where fio would not read it
        try:
            values["bssplit"] = one_bssplit(raw, base, IO_DIRECTIONS[values.get("direction", "read")])
        except ValueError:  # per direction, or a share left for fio to fill in
            raise _PerDirection from None
    elif key in _TRANSLATED:
        param, read = _TRANSLATED[key]
        values[param] = read(raw, base)
    else:
        return False
    return True


def jobfile_suite_text(path: Path, text: str) -> tuple[str, list[str]]:
    """The suite TOML of a job file (the job file kept in it as comments) and the notes to print before the plan."""
    where = str(path)
    jobs, notes = read_jobfile(text, where)
    out = [f"# The fio job file {_printable(path.name)}, as disklab runs it (each job section a test; fio's defaults "
           "where it is silent):", *(f"#   {_printable(line)}" for line in text.splitlines()),
           *suite_toml(path.stem, f"fio job file {path.name}",
                       [(name, test_values(options, f"{where}: [{name}]")) for name, options in jobs])]
    return "\n".join(out) + "\n", notes + size_notes(jobs, where)  # after test_values has refused a bad kb_base


def adhoc_suite_text(options: dict[str, str]) -> tuple[str, list[str]]:
    """One test from fio's options on the command line (--rw, --bs, ...), disklab's defaults for the rest (a suite's:
    direct I/O, the best engine, 5 s time based), and a note of the defaults taken for what the options leave out.
    The values are disklab's, as on every other option of the command line: --bs 4KiB is 4,096 bytes (fio would
    read 4,000), 4KB 4,000; the counts are whole numbers (fio would read --iodepth 4x as 4)."""
    values = test_values(_in_bytes_and_counts(options), "the command line", fio_defaults=False,
                         spell=lambda key: f"--{key}")
    name = " ".join(f"{key}={value}" for key, value in options.items())
    notes = [] if "rw" in options else ["no --rw given: random reads (disklab's default; fio's is sequential reads)"]
    if "bs" not in options:
        notes.append("no --bs given: 4 KiB blocks (fio's default too)")
    return "\n".join(suite_toml("adhoc", f"fio options {name}", [(name, values)])) + "\n", notes


def _in_bytes_and_counts(options: dict[str, str]) -> dict[str, str]:
    """The command line's sizes in disklab's units and its counts as whole numbers, handed on as plain numbers, which
    fio's reading leaves as they are."""
    read = {}
    for key, value in options.items():
        if key == "bs":
            try:
                size = parse_size(value)
            except ValueError as exc:
                raise UserError(f"the command line: --bs: {exc}") from None
            if size % SECTOR_BYTES:
                raise UserError(f"the command line: --bs: {brief(value)} is {size:,} bytes, not a whole number of "
                                f"{SECTOR_BYTES}-byte sectors (KB and MB are powers of 1000; k, KiB, m and MiB of "
                                "1024: 4k and 4KiB are 4,096 bytes)")
            value = str(size)
        elif key != "rw" and not value.strip().isdigit():
            raise UserError(f"the command line: --{key}: {brief(value)} is not a whole number")
        read[key] = value
    return read


def size_notes(jobs: list[tuple[str, dict]], where: str) -> list[str]:
    """Where fio's reading of a size differs from what its unit says (kb_base=1024: 4KiB is 4,000 bytes to fio, 16MB
    16 MiB), one note each: the test runs as fio reads it."""
    notes = {}
    for name, options in jobs:
        bases = option_bases(options)
        for key in ("bs", "size", "filesize", "rate"):
            value = options.get(key)
            if value is None:
                continue
            try:
                as_written, as_fio = parse_size(value.strip()), parse_fio_size(value, bases[key])
            except ValueError:  # split per direction, or not a plain size: no unit to read
                continue
            if as_written != as_fio:
                notes[(key, value)] = (f"{where}: [{name}] {key}={value} is {as_fio:,} bytes as fio reads it "
                                       f"(kb_base={bases[key]}), not {as_written:,}: the test runs as fio would run it")
    return list(notes.values())


def suite_toml(name: str, description: str, groups: list[tuple[str, dict]]) -> list[str]:
    """A suite's TOML lines: one [[group]] of fixed values per (name, parameters)."""
    out = [f"name = {toml_string(name)}", f"description = {toml_string(description)}"]
    for group, values in groups:
        out += ["", "[[group]]", f"name = {toml_string(group)}", *(f"{k} = {_toml(v)}" for k, v in values.items())]
    return out


def _printable(line: str) -> str:
    """A TOML comment holds no control characters."""
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in line)


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    return json.dumps(value)  # a whole number or a float: TOML spells it alike
