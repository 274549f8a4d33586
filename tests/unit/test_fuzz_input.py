"""Fuzzing every input a user can give: suite files, `run` options, hosts files and fio JSON to import.

For everything generated the promise holds: success, or exactly one `disklab: error:` line with an exit code of the
table in docs/exit-codes.md (never 70, never a traceback), and the results store left as it was.
"""

import json
import math
import random
import re

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from disklab.cli.main import cli
from disklab.store.repository import Store
from disklab.suite.pgbench import KEYS as PGBENCH_KEYS
from disklab.suite.loader import _STEADY_KEYS
from disklab.suite.params import PARAMS
from tests.conftest import FIO_FIXTURES, fixture_json

DOCUMENTED_ERRORS = {1, 2, 3, 4, 5, 6}  # docs/exit-codes.md (0 is success, 130 an interrupt)
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
IMPORT_FIXTURE = FIO_FIXTURES / "import-two-jobs.jsonplus.json"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store holding one imported run: fuzzed commands must not change it."""
    path = tmp_path_factory.mktemp("fuzz") / "results.db"
    result = CliRunner().invoke(cli, ["--db", str(path), "import", str(IMPORT_FIXTURE)])
    assert result.exit_code == 0, result.output
    return path


def snapshot(store) -> tuple[bytes, ...]:
    """The store's bytes, its write-ahead log's included (a write may sit there until a checkpoint)."""
    files = (store, store.with_name(store.name + "-wal"))
    return tuple(path.read_bytes() if path.exists() else b"" for path in files)


def invoke(store, *args):
    before = snapshot(store)
    result = CliRunner().invoke(cli, ["--db", str(store), *args])
    assert_clean(result)
    if result.exit_code != 0 or args[0] != "import":  # a refused import, and everything else, leaves it as it was
        assert snapshot(store) == before, f"{args}: the store changed"
    return result


def assert_clean(result):
    """Success, or one error line with a documented exit code."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 0:
        return
    lines = result.stderr.splitlines()
    assert result.exit_code in DOCUMENTED_ERRORS, (result.exit_code, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("disklab: error: "), result.stderr


# Values of every type TOML has, with the ones that broke disklab before: non-finite and absurd numbers, format
# strings, long strings, lists of lists, tables.
_SCALARS = st.one_of(
    st.integers(), st.integers(min_value=10**17, max_value=10**400), st.integers(min_value=-5, max_value=70000),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.sampled_from(["", "all", "none", "0", "4k", "1e9", "9" * 400 + "k", "nan", "inf", "-1", "1_000", "5s",
                     "10%", "first:10%", "last:999999999999T", "4k/50:8k/50", "4k/" + "9" * 5000, "5120x2700",
                     "{direction:x}", "{pattern:>999999999999}", "{pass!r}", "{0}", "{", "}", "{nope}", "\x00",
                     "random", "write", "mixed", "iops", "group", "bs", "x" * 10000]),
    st.text(max_size=30),
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                       max_leaves=8)


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON's escapes are TOML's basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def suite_text(tables: dict) -> str:
    """Top-level keys, then [table]s, then [[group]]s."""
    lines = [f"{k} = {toml_value(v)}" for k, v in tables.items() if not isinstance(v, (dict, list))]
    for name, table in tables.items():
        if isinstance(table, dict):
            lines += [f"[{name}]", *(f"{json.dumps(k)} = {toml_value(v)}" for k, v in table.items())]
    for group in tables.get("group", []):
        lines += ["[[group]]", *(f"{json.dumps(k)} = {toml_value(v)}" for k, v in group.items())]
    return "\n".join(lines) + "\n"


_MODE_TABLES = {"steady": ("steady", _STEADY_KEYS), "write-saturation": ("steady", _STEADY_KEYS),
                "saturate": ("saturate", ("gain_percent", "max_iodepth", "max_jobs", "p99")),
                "pgbench": ("pgbench", tuple(PGBENCH_KEYS))}
_FIELDS = (
    [("top", k) for k in ("name", "description", "mode")]
    + [("defaults", k) for k in PARAMS] + [("group", k) for k in (*PARAMS, "name", "label", "metric", "repeat")]
    + [("view", k) for k in ("rows", "columns", "values")] + [(mode, None) for mode in _MODE_TABLES]
)


@st.composite
def suites(draw):
    """A valid suite with one field (or a few) replaced by something drawn from every type."""
    tables = {"name": "fuzz", "defaults": {"runtime": "1s"}, "group": [{"name": "g", "bs": ["4k", "8k"]}]}
    for _ in range(draw(st.integers(1, 3))):
        where, key = draw(st.sampled_from(_FIELDS))
        value = draw(_VALUES)
        if where == "top":
            tables[key] = value
        elif where == "defaults":
            tables.setdefault("defaults", {})[key] = value
        elif where == "group":
            tables.setdefault("group", [{"name": "g"}])[0][key] = value
        elif where == "view":
            tables.setdefault("view", {"rows": "group"})[key] = value
        else:
            table, keys = _MODE_TABLES[where]
            tables["mode"] = where
            if where == "pgbench":  # a pgbench suite has only its [pgbench] table
                tables.pop("defaults", None)
                tables.pop("group", None)
            tables[table] = {draw(st.sampled_from(keys)): value}
    return suite_text(tables)


@FUZZ
@given(suites())
def test_suite_fields(store, tmp_path, text):
    path = tmp_path / "fuzz.toml"
    path.write_text(text)
    invoke(store, "run", str(path), "--dry-run")


@FUZZ
@given(st.one_of(
    st.binary(max_size=200),
    st.builds(lambda depth, open_, close: 'name = "x"\n[[group]]\nname = "g"\nbs = ' + open_ * depth + close * depth,
              st.integers(1, 3000), st.sampled_from(["[", "{a = "]), st.sampled_from(["]", "}"])),
    st.builds(lambda lists, repeat: "name = \"x\"\n[[group]]\nname = \"g\"\n" + f"repeat = {repeat}\n"
              + "".join(f"{k} = [{', '.join(str(i + 1) for i in range(n))}]\n" for k, n in lists),
              st.lists(st.tuples(st.sampled_from(["iodepth", "jobs", "rwmixread", "fps"]), st.integers(1, 60)),
                       max_size=4, unique_by=lambda kv: kv[0]), st.integers(1, 1000)),
))
def test_suite_bytes_nesting_and_size(store, tmp_path, content):
    path = tmp_path / "fuzz.toml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    invoke(store, "run", str(path), "--dry-run", "--max-tests", "200")  # a low limit: plans print quickly


_OPTION_VALUES = st.one_of(
    st.sampled_from(["", "0", "-1", "1_000", "1e3", "nan", "inf", "-inf", "9" * 400, "1" * 20, "٣", "4k", "5s",
                     "2%", "100%", "0%", "1ms", "10", "1,10", "0,1", "a=b", "=", "x" * 5000, "{bs:x}", "\n",
                     "h1:0", "[::1]:99999", "@/dev/zero", "@/nonexistent", "/dev/zero", "/nonexistent/x", "-"]),
    st.text(max_size=20).filter(lambda s: "\x00" not in s),
)
_RUN_OPTIONS = ("--size", "--runtime", "--ramp", "--pause", "--scale", "--engine", "--max-tests", "--repeat",
                "--precision", "--max-time", "--p99", "--hosts", "--clients", "--transactions", "--time", "--pg-set",
                "--target")


@FUZZ
@given(st.one_of(st.sampled_from(["quick", "steady", "saturate", "pgbench"]), _OPTION_VALUES),
       st.lists(st.tuples(st.sampled_from(_RUN_OPTIONS), _OPTION_VALUES), min_size=1, max_size=3))
def test_run_options(store, suite, options):
    args = [arg for option, value in options for arg in (option, value)]
    invoke(store, "run", suite, "--dry-run", *args)


@FUZZ
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300),
                 st.lists(st.sampled_from(["h1", "h2:8766", "[::1]:8766", "fd00::1", "# c", "", "h1", "a b", "x:y",
                                           "h:" + "9" * 5000, "[::1", "10.0.0.1:0"]), max_size=6).map("\n".join)))
def test_hosts_files(store, tmp_path, content):
    path = tmp_path / "hosts.txt"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    invoke(store, "run", "quick", "--dry-run", "--target", str(tmp_path), "--hosts", f"@{path}")


def _mutated(document, rng: random.Random, replacement):
    """fio's JSON with one value somewhere replaced."""
    node, path = document, []
    while isinstance(node, (dict, list)) and node and rng.random() < 0.85:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(key)
        node = node[key]
    if not path:
        return replacement
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = replacement
    return document


_FIXTURE_TEXT = IMPORT_FIXTURE.read_text()
_FIXTURE_JSON = json.dumps(fixture_json(IMPORT_FIXTURE.name))


_JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70), st.text(max_size=10),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=5)


def import_content(case) -> bytes:
    """Examples are drawn as short recipes, so that a failure prints the recipe rather than 28 kB of JSON."""
    kind, *args = case
    if kind == "truncated":
        return _FIXTURE_TEXT[:args[0]].encode()
    if kind == "mutated":
        seed, replacement = args
        return json.dumps(_mutated(json.loads(_FIXTURE_JSON), random.Random(seed), replacement)).encode()
    if kind == "nested":
        return b"[" * args[0] + b"]" * args[0]
    return args[0]


@FUZZ
@given(st.one_of(
    st.tuples(st.just("truncated"), st.integers(0, len(_FIXTURE_TEXT))),
    st.tuples(st.just("mutated"), st.integers(0, 2**32), _JSON_VALUES),
    st.tuples(st.just("nested"), st.integers(1, 200_000)),
    st.tuples(st.just("bytes"), st.binary(max_size=300)),
))
def test_import_path(store, tmp_path, case):
    path = tmp_path / "fio.json"
    path.write_bytes(import_content(case))
    invoke(store, "import", str(path))


_SIZES = st.sampled_from(["4k", "256KiB", "0", "1", "511", "2GiB", "none", "off", "-1", "1e9", "9" * 30, "x", ""])
_LAYOUT_OPTIONS = st.tuples(st.sampled_from(["strip", "cache", "readahead", "record", "arc", "via", "colour", ""]),
                            st.one_of(_SIZES, st.sampled_from(["on", "off", "iscsi:25GbE", "nfs:10gbe:jumbo",
                                                               "local", "fc:32GFC", "smb", "nvme-tcp:1GbE:x"]),
                                      st.text(max_size=8).filter(lambda s: not any(c.isspace() for c in s))))


@FUZZ
@given(st.one_of(
    st.builds(lambda count, drive, level, groups, options: f"{count} x {drive} {level}{groups} "
              + " ".join(f"{key}={value}" for key, value in options),
              st.sampled_from(["0", "1", "2", "3", "4", "7", "24", "10000000", "-4", "x"]),
              st.sampled_from(["sata-ssd-1.6t", "sas-hdd-10k-2.4t", "nvme-u3-960g", "nl-sas-7.2k-12t", "nope"]),
              st.sampled_from(["raid0", "raid1", "raid10", "raid5", "raid6", "raid60", "mirror", "raidz2", "raid7"]),
              st.sampled_from(["", "/2", "/3", "/0", "/1000"]),
              st.lists(_LAYOUT_OPTIONS, max_size=3)),
    st.text(max_size=60).filter(lambda s: "\x00" not in s),
), st.sampled_from(["local", "iscsi:25GbE", "nvme-rdma:100GbE:jumbo", "bogus:1GbE", "nfs"]))
def test_capacity_layouts_and_paths(store, spec, via):
    result = invoke(store, "capacity", "show", spec, "--via", via, "-w", "quick", "-f", "csv")
    assert result.exit_code or not re.search(r"\b(nan|inf)\b", result.output, re.IGNORECASE), result.output


_DRIVE_KEYS = ("kind", "interface", "capacity", "seq_read_mbps", "seq_write_mbps", "seq_inner_mbps", "rand_read_iops",
               "rand_write_iops", "rand_read_mbps", "rand_write_mbps", "rpm", "seek_read_ms", "seek_write_ms",
               "seek_track_ms", "latency_read_us", "latency_write_us", "power_idle_w", "power_active_w", "price_eur")
_DRIVE_VALUES = st.one_of(st.integers(-10, 10**7), st.floats(allow_nan=True, allow_infinity=True),
                          st.sampled_from(['"hdd"', '"ssd"', '"measured"', '"sata-6g"', '"nvme-pcie4-x4"', '"1TB"',
                                           '"0"', "true", "[]", "{}"]))


@FUZZ
@given(st.dictionaries(st.sampled_from(_DRIVE_KEYS), _DRIVE_VALUES, max_size=len(_DRIVE_KEYS)),
       st.sampled_from(["raid0", "raid5", "raidz1", "raid10"]))
def test_capacity_drive_files(store, tmp_path, figures, level):
    """A drive file of the user's with any figures: planned, or refused in one line."""
    base = {"kind": '"ssd"', "interface": '"sata-6g"', "capacity": '"1TB"', "seq_read_mbps": 500,
            "seq_write_mbps": 400, "rand_read_iops": 90000, "rand_write_iops": 30000}
    lines = ['name = "fuzzed"', 'description = "fuzzed"']
    lines += [f"{key} = {str(value).lower() if isinstance(value, float) else value}"
              for key, value in {**base, **figures}.items()]
    path = tmp_path / "fuzzed.toml"
    path.write_text("\n".join(lines + ["", "[source]", 'all = "fuzzed"']) + "\n")
    result = invoke(store, "capacity", "show", f"4 x fuzzed {level}", "--drives", str(path), "-w", "quick", "-f", "csv")
    assert result.exit_code or not re.search(r"\b(nan|inf)\b", result.output, re.IGNORECASE), result.output
    shipped = tmp_path / "sata-ssd-1.6t.toml"  # in place of a drive the validation uses
    shipped.write_text(path.read_text().replace('name = "fuzzed"', 'name = "sata-ssd-1.6t"'))
    result = invoke(store, "capacity", "validate", "--drives", str(shipped), "-f", "csv")
    assert result.exit_code or not re.search(r"\b(nan|inf)\b", result.output, re.IGNORECASE), result.output


_REPORT_OPTIONS = ("--title", "--notes", "--label", "--tests", "--metrics")
_REPORT_VALUES = st.one_of(_OPTION_VALUES, st.sampled_from([
    "1=990 PRO", "last=x", "1=", "=x", "9=x", "1=a\nb", "1=" + "x" * 101, "1=\u202ex", "iops", "iops,mb_per_s",
    "iops,,", "IOPS", " iops", "*", "[", "[!a-", "**", "*[*", "@", "@/proc/self/mem", "@/dev/null",
    "<script>alert(1)</script>", "# h\n\n" + "> " * 300 + "deep", "[x](javascript:alert(1))", "![i](http://x/p.png)",
    "*" * 2000 + "a", "[" * 3000, "`" * 1000, "- " * 500 + "x", "\x1b[31mred", "a\u202eb", "\ud800",
]))


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(_REPORT_OPTIONS), _REPORT_VALUES), min_size=1, max_size=4))
def test_report_options(store, options):
    """report's choices: a page whose notes run nothing, or one line refusing them; the store only read."""
    args = [arg for option, value in options for arg in (option, value)]
    result = invoke(store, "report", "last", "-o", "-", *args)
    if result.exit_code == 0:
        # our one script, for the chart downloads, where there are charts; none from the notes
        assert result.stdout.count("<script") == ("<figure" in result.stdout) and "javascript:" not in result.stdout.replace(
            "[x](javascript:alert(1))", "")


@FUZZ
@given(st.one_of(_OPTION_VALUES, st.text(max_size=300)), st.sampled_from(["1", "last", "2", "x", "last~9"]),
       st.booleans())
def test_note_text(store, text, run, clear):
    """A note kept whole and read back as given (white space around it dropped), or refused in one line with the
    store unchanged."""
    before = snapshot(store)
    # After "--", as a user writes a note that starts with a dash ("-h" is otherwise the help)
    result = CliRunner().invoke(cli, ["--db", str(store), "note", *(["--clear"] if clear else []), run, "--", text])
    assert_clean(result)
    if result.exit_code:
        assert snapshot(store) == before, "a refused note changed the store"
        return
    with Store(store, read_only=True) as stored:
        assert stored.get_run(stored.resolve_run_id(run)).notes[-1].text == text.strip()
    assert CliRunner().invoke(cli, ["--db", str(store), "note", run]).exit_code == 0
    assert CliRunner().invoke(cli, ["--db", str(store), "note", run, "--clear"]).exit_code == 0


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A store of two imports of one run: something for compare to set side by side."""
    path = tmp_path_factory.mktemp("fuzz-compare") / "results.db"
    for _ in range(2):
        assert CliRunner().invoke(cli, ["--db", str(path), "import", str(IMPORT_FIXTURE)]).exit_code == 0
    return path


@FUZZ
@given(st.one_of(_REPORT_VALUES, st.text(max_size=40)))
def test_compare_metrics(two_runs, value):
    """compare --metrics: the chosen rows, or one line refusing the list; the store only read."""
    result = invoke(two_runs, "compare", "1", "2", "--metrics", value, "-f", "json")
    if result.exit_code == 0:
        assert {row["metric"] for row in json.loads(result.stdout)["rows"]} <= set(value.replace(" ", "").split(","))
