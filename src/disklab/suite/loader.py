"""Find a suite by name or path, read its TOML and validate every field before anything runs."""

import difflib
import os
import string
from collections.abc import Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path

from disklab.errors import UserError
from disklab.fio.options import fio_refusal
from disklab.suite.fio_names import read_fio_names
from disklab.suite.model import METRICS, MODES, Group, Rounds, Suite, View
from disklab.suite.params import PARAMS
from disklab.suite.pgbench import KEYS as PGBENCH_KEYS, PgbenchSettings, pgbench_settings
from disklab.suite.settings import Configurations, SaturationSettings, SteadyCriteria, parse_latency_ns
from disklab.system.textfile import parse_toml, read_text_file
from disklab.units import brief, parse_duration

_TOP_LEVEL = ("name", "description", "mode", "passes", "defaults", "group", "view", "steady", "saturate",
              "configurations", "pgbench")
_GROUP_KEYS = ("name", "label", "metric", "repeat")
_VIEW_KEYS = ("rows", "columns", "values", "published_by", "published_best_of")
_STEADY_KEYS = (
    "window", "max_rounds", "excursion_percent", "slope_percent", "precondition", "purge", "written_multiple", "time_limit",
)
_CONFIGURATION_EXAMPLES = {"condition": '["fresh", "full"]', "fs": '["ext4", "xfs:-d su=64k,sw=4@noatime"]',
                           "write_cache": '["off", "on"]',
                           "overprovision": "[0, 20, 40, 60]"}
MAX_REPEAT = 1000
# Labels name job files and table rows; a label longer than this is a mistake, not a name.
MAX_LABEL_CHARS = 200


def builtin_names() -> list[str]:
    folder = resources.files("disklab.suite") / "builtin"
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a user's TOML file by path."""
    if name_or_path in builtin_names():
        text = (resources.files("disklab.suite") / "builtin" / f"{name_or_path}.toml").read_text()
        return parse_suite(text, source="built-in", where=f"built-in suite {brief(name_or_path)}")
    path = Path(name_or_path)
    if path.suffix == ".fio":
        from disklab.suite.fio_jobfile import jobfile_suite_text  # configparser: only for a job file

        text, notes = jobfile_suite_text(path, read_text_file(path, "fio job file"))
        return _known_to_fio(replace(parse_suite(text, source=str(path), where=str(path)), notes=tuple(notes)))
    if path.suffix == ".toml" or os.path.exists(path):  # os.path's: False, not an error, for a name too long
        return _known_to_fio(parse_suite(read_text_file(path, "suite file"), source=str(path), where=str(path)))
    raise UserError(f"unknown suite {brief(name_or_path)}{did_you_mean(name_or_path, builtin_names())} (built-in "
                    f"suites: {', '.join(builtin_names())}; or give a .toml suite or a .fio job file)")


def _known_to_fio(suite: Suite) -> Suite:
    """A user's suite whose tests hand fio options as written, each set checked by fio itself before anything runs
    (a stored suite is not: its run has shown fio took them)."""
    def each(value) -> tuple:
        """A parameter's values: a grid axis' every value, or the one."""
        return value if isinstance(value, tuple) else (value,)

    defaults = dict(suite.defaults)
    asked = set()  # a job file's sections share their [global] options: fio is asked once per set and engine
    for group in suite.groups:
        values = defaults | dict(group.values)
        for text in each(values.get("fio")):
            for engine in each(values.get("engine", "auto")):
                engine = "io_uring" if engine == "auto" else engine
                if text is None or (text, engine) in asked:
                    continue
                asked.add((text, engine))
                refusal = fio_refusal(text, engine)
                if refusal:
                    named = f"[{group.name}]" if suite.source.endswith(".fio") else f"group {brief(group.name)}: fio"
                    raise UserError(f"{suite.where}: {named}: {refusal}")
    return suite


def parse_suite(text: str, source: str, where: str) -> Suite:
    data, notes = read_fio_names(parse_toml(text, where), where)
    _reject_unknown(data, _TOP_LEVEL, where, "top level")
    name = _required_text(data, "name", where, "top level")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise UserError(f"{where}: description: must be a string")
    mode = data.get("mode", "fixed")
    if mode not in MODES:
        raise UserError(f"{where}: mode: {brief(mode)} is not one of {', '.join(MODES)}")
    if "pgbench" in data and mode != "pgbench":
        raise UserError(f"{where}: pgbench: a [pgbench] table needs mode = \"pgbench\"")
    if mode == "pgbench":
        return _pgbench_suite(data, name, description, source, where, text)
    defaults_table = data.get("defaults", {})
    if not isinstance(defaults_table, dict):
        raise UserError(f"{where}: defaults: must be a table of parameters")
    defaults = _params(defaults_table, where, "defaults", allow_lists=False)
    groups_data = data.get("group")
    if not isinstance(groups_data, list) or not groups_data or not all(isinstance(g, dict) for g in groups_data):
        raise UserError(f"{where}: needs at least one [[group]] of tests")
    groups = tuple(_group(g, i, where) for i, g in enumerate(groups_data, start=1))
    view = _view(data["view"], where) if "view" in data else None
    if "steady" in data and mode == "fixed":
        raise UserError(f"{where}: steady: a [steady] table needs mode = \"steady\" or \"write-saturation\"")
    if "saturate" in data and mode != "saturate":
        raise UserError(f"{where}: saturate: a [saturate] table needs mode = \"saturate\"")
    rounds = _rounds(data.get("steady", {}), mode, where) if mode in ("steady", "write-saturation") else None
    saturation = _saturation(data.get("saturate", {}), where) if mode == "saturate" else None
    configurations = _configurations(data["configurations"], where) if "configurations" in data else None
    passes = _number(data, "passes", None, 1, MAX_REPEAT, where, "top level", whole=True)
    if passes is not None and mode != "fixed":
        raise UserError(f"{where}: passes: mode {brief(mode)} decides its own steps; leave passes out")
    return Suite(
        name=name, description=description, source=source, where=where, text=text, defaults=defaults, groups=groups,
        view=view, mode=mode, rounds=rounds, saturation=saturation, passes=passes, configurations=configurations,
        notes=() if source == "built-in" else notes,  # built-in suites' SI sizes are their methods' own
    )


def _pgbench_suite(data: dict, name: str, description: str, source: str, where: str, text: str) -> Suite:
    """A database suite runs pgbench, not fio: its whole plan is the [pgbench] table."""
    for key in ("defaults", "group", "view", "steady", "saturate", "configurations", "passes"):
        if key in data:
            raise UserError(f"{where}: {key}: a pgbench suite has only a [pgbench] table (fio tests go in a suite "
                            "of their own)")
    return Suite(
        name=name, description=description, source=source, where=where, text=text, defaults=(), groups=(), view=None,
        mode="pgbench", pgbench=_pgbench(data.get("pgbench", {}), where),
    )


def _pgbench(data, where: str) -> PgbenchSettings:
    """The [pgbench] table; M3's values are the defaults."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: pgbench: must be a table ({', '.join(PGBENCH_KEYS)})")
    _reject_unknown(data, tuple(PGBENCH_KEYS), where, "pgbench")
    if "time" in data and "transactions" in data:
        raise UserError(f"{where}: pgbench: give transactions (per client) or time (per step), not both")
    values = {}
    for key, raw in data.items():
        try:
            values[key] = PGBENCH_KEYS[key].convert(raw)
        except (ValueError, TypeError) as exc:
            raise UserError(f"{where}: pgbench: {key}: {exc}; {PGBENCH_KEYS[key].help}") from exc
    return pgbench_settings(values)


def _saturation(data, where: str) -> SaturationSettings:
    """The [saturate] table: when the search stops, and the p99 bound (--p99 overrides it)."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: saturate: must be a table (gain_percent, max_iodepth, max_jobs, p99)")
    _reject_unknown(data, ("gain_percent", "max_iodepth", "max_jobs", "p99"), where, "saturate")
    default = SaturationSettings()
    gain = data.get("gain_percent", default.gain_percent)
    if isinstance(gain, bool) or not isinstance(gain, (int, float)) or not 0 < gain <= 100:
        raise UserError(f"{where}: saturate: gain_percent: {brief(gain)} is not a number above 0 and at most 100")
    limits = {
        key: _number(data, key, getattr(default, key), 1, high, where, "saturate", whole=True)
        for key, high in (("max_iodepth", 65536), ("max_jobs", 4096))
    }
    p99 = data.get("p99")
    if p99 is not None:
        try:
            p99 = parse_latency_ns(p99)
        except (ValueError, TypeError) as exc:
            raise UserError(f"{where}: saturate: p99: {exc}") from exc
    return SaturationSettings(gain_percent=gain, p99_bound_ns=p99, **limits)


def _number(data: dict, key: str, default, low, high, where: str, table: str, whole: bool = False):
    """A number of a mode's table within low..high (the default when absent; None stays None)."""
    value = data.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or not low <= value <= high:
        kind = "a whole number" if whole else "a number"
        raise UserError(f"{where}: {table}: {key}: {brief(value)} is not {kind} from {low} to {high}")
    return value


def _configurations(data, where: str) -> Configurations:
    """The [configurations] table: lists of the values `run --condition`, `--fs`, `--write-cache` and
    `--overprovision` take, read by the same rules."""
    if not isinstance(data, dict) or not data:
        raise UserError(f"{where}: configurations: must be a table of condition, fs, write_cache or overprovision "
                        "lists, e.g. "
                        "overprovision = [0, 20, 40, 60]")
    _reject_unknown(data, tuple(_CONFIGURATION_EXAMPLES), where, "configurations")
    # The targets package (sysfs, mounts, device tools): loaded only for a suite that has configurations, not by every
    # command that reads a suite (show, report and run of the others).
    from disklab.targets.condition import parse_conditions
    from disklab.targets.filesystem import parse_fs_specs
    from disklab.targets.overprovision import parse_levels
    from disklab.targets.write_cache import parse_states

    values = {}
    for key, given in data.items():
        kinds = (str, int) if key == "overprovision" else str
        if not isinstance(given, list) or not given or not all(
                isinstance(v, kinds) and not isinstance(v, bool) for v in given):
            raise UserError(f"{where}: configurations: {key}: {brief(given)} is not a list of values, e.g. "
                            f"{key} = {_CONFIGURATION_EXAMPLES[key]}")
        try:
            if key == "fs":
                parse_fs_specs(given)
                values[key] = tuple(given)
            elif key == "condition":
                parse_conditions(",".join(map(str, given)))
                values[key] = tuple(map(str, given))
            else:
                parse = parse_states if key == "write_cache" else parse_levels
                values[key] = parse(",".join(str(v) for v in given))
        except ValueError as exc:
            raise UserError(f"{where}: configurations: {key}: {exc}") from None
    if "overprovision" in values and ("fs" in values or "condition" in values):
        raise UserError(f"{where}: configurations: overprovision leaves part of the device unused after a full "
                        "discard, which neither a file system (fs) nor a device condition can go with; give one")
    return Configurations(**values)


def _rounds(data, mode: str, where: str) -> Rounds:
    """The [steady] table; SNIA's values are the defaults."""
    if not isinstance(data, dict):
        raise UserError(f"{where}: steady: must be a table (window, max_rounds, excursion_percent, ...)")
    _reject_unknown(data, _STEADY_KEYS, where, "steady")
    default = SteadyCriteria()

    def number(key, low, high, whole=False, default_value=None):
        return _number(data, key, default_value, low, high, where, "steady", whole)

    def flag(key):
        value = data.get(key, True)
        if not isinstance(value, bool):
            raise UserError(f"{where}: steady: {key}: {brief(value)} is not true or false")
        return value

    window = number("window", 2, 1000, whole=True, default_value=default.window)
    max_rounds = number("max_rounds", 1, 100000, whole=True, default_value=default.max_rounds)
    if mode == "steady" and max_rounds < window:
        raise UserError(f"{where}: steady: max_rounds ({max_rounds}) is smaller than the window ({window}), "
                        "so steady state could never be judged")
    criteria = SteadyCriteria(
        window=window, max_rounds=max_rounds,
        excursion_percent=number("excursion_percent", 0, 1000, default_value=default.excursion_percent),
        slope_percent=number("slope_percent", 0, 1000, default_value=default.slope_percent),
    )
    if mode == "steady" and ("written_multiple" in data or "time_limit" in data):
        raise UserError(f"{where}: steady: written_multiple and time_limit belong to mode = \"write-saturation\"")
    time_limit = data.get("time_limit")
    if time_limit is not None:
        try:
            time_limit = parse_duration(time_limit)
        except (ValueError, TypeError) as exc:
            raise UserError(f"{where}: steady: time_limit: {exc}; a duration such as \"24h\"") from exc
        if time_limit <= 0:
            raise UserError(f"{where}: steady: time_limit: must be longer than zero")
    return Rounds(
        criteria=criteria, precondition=flag("precondition"), purge=flag("purge"),
        written_multiple=number("written_multiple", 0.01, 1000), time_limit=time_limit,
    )


def _group(data: dict, index: int, where: str) -> Group:
    context = f"group {index}"
    name = _required_text(data, "name", where, context)
    context = f"group {index} ({name})"
    label = data.get("label")
    if label is not None:
        _check_label(label, where, context)
    metric = data.get("metric", "iops")
    if metric not in METRICS:
        raise UserError(f"{where}: {context}: metric: {brief(metric)} is not one of {', '.join(METRICS)}")
    repeat = data.get("repeat", 1)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or not 1 <= repeat <= MAX_REPEAT:
        raise UserError(f"{where}: {context}: repeat: {brief(repeat)} is not a whole number from 1 to {MAX_REPEAT}")
    params = {k: v for k, v in data.items() if k not in _GROUP_KEYS}
    return Group(
        name=name, label=label, metric=metric, repeat=repeat,
        values=_params(params, where, context, allow_lists=True),
    )


def _view(data, where: str) -> View:
    context = "view"
    if not isinstance(data, dict):
        raise UserError(f"{where}: view: must be a table with rows, columns and values")
    _reject_unknown(data, _VIEW_KEYS, where, context)
    rows = data.get("rows")
    if not isinstance(rows, str) or rows not in ("group", *PARAMS):
        raise UserError(f"{where}: view: rows: {brief(rows)} is not 'group' or a parameter ({', '.join(PARAMS)})")
    columns = data.get("columns", [])
    if not isinstance(columns, list) or any(not isinstance(c, str) or c not in PARAMS for c in columns):
        raise UserError(f"{where}: view: columns: must be a list of parameters ({', '.join(PARAMS)})")
    values = data.get("values", ["metric"])
    allowed = (*METRICS, "metric")
    if not isinstance(values, list) or not values or any(not isinstance(v, str) or v not in allowed for v in values):
        raise UserError(f"{where}: view: values: must be a list of {', '.join(allowed)}")
    published_by = data.get("published_by")
    if published_by is not None and not (isinstance(published_by, str) and 0 < len(published_by.strip()) <= 60):
        raise UserError(f"{where}: view: published_by: {brief(published_by)} is not a tool's name (1 to 60 characters)")
    best_of = data.get("published_best_of")
    if best_of is not None:
        if published_by is None:
            raise UserError(f"{where}: view: published_best_of: needs published_by, the tool that reports it")
        if isinstance(best_of, bool) or not isinstance(best_of, int) or not 1 <= best_of <= MAX_REPEAT:
            raise UserError(f"{where}: view: published_best_of: {brief(best_of)} is not a whole number "
                            f"from 1 to {MAX_REPEAT}")
    return View(rows=rows, columns=tuple(columns), values=tuple(values), published_by=published_by,
                published_best_of=best_of)


def _params(table: dict, where: str, context: str, allow_lists: bool) -> tuple[tuple[str, object], ...]:
    _reject_unknown(table, (*_GROUP_KEYS, *PARAMS) if allow_lists else tuple(PARAMS), where, context)
    converted = []
    for key, raw in table.items():
        param = PARAMS[key]
        if isinstance(raw, list):
            if not allow_lists:
                raise UserError(f"{where}: {context}: {key}: a list is only allowed inside a [[group]]")
            if not raw:
                raise UserError(f"{where}: {context}: {key}: an empty list expands to no tests")
            if any(isinstance(item, (list, dict)) for item in raw):
                raise UserError(f"{where}: {context}: {key}: a list of values holds single values, not lists or tables")
            value = tuple(_convert(param.convert, item, where, context, key) for item in raw)
        else:
            value = _convert(param.convert, raw, where, context, key)
        converted.append((key, value))
    return tuple(converted)


def _convert(convert, raw, where: str, context: str, key: str):
    try:
        return convert(raw)
    except (ValueError, TypeError) as exc:
        raise UserError(f"{where}: {context}: {key}: {exc}; {PARAMS[key].help}") from exc


def _check_label(label, where: str, context: str) -> None:
    """A label is a template such as "RND4K Q{iodepth}T{jobs} {direction}" over the test's parameters and {pass}.

    Fields are named plainly: a format spec ({bs:x}, {pattern:>999999999}) could fail or exhaust memory later.
    """
    if not isinstance(label, str):
        raise UserError(f"{where}: {context}: label: must be a string")
    if len(label) > MAX_LABEL_CHARS:
        raise UserError(f"{where}: {context}: label: {len(label)} characters; at most {MAX_LABEL_CHARS}")
    try:
        parsed = list(string.Formatter().parse(label))
    except ValueError as exc:
        raise UserError(f"{where}: {context}: label: {exc}") from exc
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if spec or conversion:
            raise UserError(f"{where}: {context}: label: {brief(label)}: write fields plainly, e.g. {{{field}}}; "
                            "format specs and conversions (':', '!') are not supported")
        if field not in PARAMS and field != "pass":
            raise UserError(f"{where}: {context}: label: unknown field {{{brief(field)[1:-1]}}} "
                            f"(allowed: pass, {', '.join(PARAMS)})")


def _required_text(data: dict, key: str, where: str, context: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: {context}: {key}: required, a non-empty string")
    return value


def _reject_unknown(table: dict, allowed: tuple[str, ...], where: str, context: str) -> None:
    for key in table:
        if key not in allowed:
            raise UserError(f"{where}: {context}: unknown field {brief(key)}{did_you_mean(key, allowed)} "
                            f"(allowed: {', '.join(allowed)})")


# fio's own names (and their usual spellings) of the parameters a suite names otherwise.
_FIO_NAMES = {"blocksize": "bs", "block_size": "bs", "numjobs": "jobs", "ioengine": "engine", "ramp_time": "ramp",
              "rw": "pattern", "readwrite": "pattern"}


def did_you_mean(given: object, known: Sequence[str]) -> str:
    """'; did you mean 'quick'?' for a near miss (difflib's ratio of 0.6 or more) of a known name or of fio's name
    of a known parameter, else nothing."""
    if not isinstance(given, str):
        return ""
    aliases = {fio: ours for fio, ours in _FIO_NAMES.items() if ours in known}
    close = difflib.get_close_matches(given.lower(), [*known, *aliases], n=1)
    return f"; did you mean {aliases.get(close[0], close[0])!r}?" if close else ""
