"""docs/conformance.md sets each built-in suite against its study: every row's disklab value is checked against the
suite itself, every quotation against docs/methods.md, and every suite has a table or is named as having no study."""

import re
from pathlib import Path

import pytest

from disklab.plan.build import build_plan, expand_suite
from disklab.plan.passes import default_passes
from disklab.suite.loader import builtin_names, load_suite
from disklab.suite.params import PARAMS

DOCS = Path(__file__).parents[2] / "docs"
NO_STUDY = "Suites without a study"
_SPEC = re.compile(r"^(?P<field>[\w.]+)(?P<filters>(\[[^\]]+\])*)\s*=\s*(?P<values>.+)$")
_FILTER = re.compile(r"\[(\w+)(!?=)([^\]]+)\]")
_VERDICTS = ("equal", "differs:", "not stated:")


def sections() -> dict[str, str]:
    """The page's text under each `## ` heading, by the heading's first code span (a suite) or its words."""
    parts = re.split(r"^## (.+)$", (DOCS / "conformance.md").read_text(), flags=re.M)
    named = {}
    for heading, body in zip(parts[1::2], parts[2::2]):
        code = re.match(r"`([^`]+)`", heading)
        named[code.group(1) if code else heading.strip()] = body
    return named


def rows(body: str) -> list[dict[str, str]]:
    table = [line for line in body.splitlines() if line.startswith("| ")]
    if not table:
        return []
    headings = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert headings == ["parameter", "the study's words", "study", "disklab", "verdict"]
    return [dict(zip(headings, (cell.strip() for cell in line.strip("|").split("|")))) for line in table[2:]]


TABLES = {name: rows(body) for name, body in sections().items() if name != NO_STUDY}
ROWS = [(name, row) for name, table in TABLES.items() for row in table]


def convert(field: str, text: str):
    """A value in the suite's own syntax, as the suite's parameter registry reads it."""
    text = text.strip()
    if text == "none":
        return None
    if field == "files":
        count, _, size = text.partition(" x ")
        return int(count), PARAMS["filesize"].convert(size)
    field = "size" if field == "data" else field
    value = {"true": True, "false": False}.get(text, int(text) if text.isdigit() else text)
    return PARAMS[field].convert(value) if field in PARAMS else value


def parse_values(field: str, text: str) -> set:
    values = set()
    for item in text.split(", "):
        low, dots, high = item.partition("..")
        if not dots:
            values.add(convert(field, item))
            continue
        value, last = convert(field, low), convert(field, high)
        while value <= last:
            values.add(value)
            value *= 2
    return values


def resolve(suite_name: str, spec: str) -> tuple[str, set]:
    """(field, the set of values it takes) for a disklab cell such as `bs[metric=iops] = 4KiB`."""
    match = _SPEC.match(spec)
    assert match, f"{spec!r} is not FIELD[FILTER] = VALUES"
    field = match["field"]
    suite = load_suite(suite_name)
    if field.startswith("suite."):
        value = suite
        for attribute in field.split(".")[1:]:
            value = getattr(value, attribute)
        values = set(value) if isinstance(value, tuple) else {value}
        return field, values or {None}
    if field == "count":
        return field, {len(build_plan(suite).tests)}
    if field == "default_passes":
        return field, {default_passes(suite, precision=None)}
    tests = [t.params() for t in expand_suite(suite)]
    for key, operator, wanted in _FILTER.findall(match["filters"]):
        wanted = convert(key, wanted)
        tests = [t for t in tests if (t[key] == wanted) == (operator == "=")]
    assert tests, f"{spec!r}: no test of {suite_name} matches"
    if field == "passes":
        runs = [tuple(sorted(t.items(), key=lambda kv: kv[0])) for t in tests]
        return field, {runs.count(run) for run in runs}
    if field == "files":
        return field, {(t["nrfiles"], t["filesize"]) for t in tests}
    if field == "data":
        return field, {t["nrfiles"] * t["filesize"] if t["filesize"] else t["size"] for t in tests}
    return field, {t[field] for t in tests}


def code(cell: str) -> str | None:
    match = re.fullmatch(r"`([^`]+)`", cell)
    return match.group(1) if match else None


@pytest.mark.parametrize("suite_name, row", ROWS, ids=[f"{n}: {r['parameter']}" for n, r in ROWS])
def test_each_row_is_the_suite_as_it_is_and_its_verdict_holds(suite_name, row):
    spec = code(row["disklab"])
    assert spec, f"the disklab cell {row['disklab']!r} is one code span"
    field, actual = resolve(suite_name, spec)
    assert actual == parse_values(field, _SPEC.match(spec)["values"]), f"{suite_name}: {spec} is {actual}"
    verdict = row["verdict"]
    assert verdict.startswith(_VERDICTS), verdict
    study = code(row["study"])
    if verdict == "equal":
        assert study is not None and parse_values(field, study) == actual
    elif verdict.startswith("not stated:"):
        assert row["study"] == "—"
    else:
        assert study is None or parse_values(field, study) != actual, "a difference whose values are equal"


@pytest.mark.parametrize("suite_name, row", ROWS, ids=[f"{n}: {r['parameter']}" for n, r in ROWS])
def test_the_study_is_quoted_word_for_word(suite_name, row):
    methods = " ".join((DOCS / "methods.md").read_text().split())
    quotes = re.findall(r"“([^”]+)”", row["the study's words"])
    assert quotes
    for quote in quotes:
        assert " ".join(quote.split()) in methods, quote


def test_every_builtin_suite_has_a_table_or_is_named_as_having_no_study():
    without = set(re.findall(r"^- `([^`]+)`", sections()[NO_STUDY], flags=re.M))
    with_rows = {name for name, table in TABLES.items() if table}
    assert set(TABLES) == with_rows, "a suite's section without rows"
    assert with_rows.isdisjoint(without)
    assert with_rows | without == set(builtin_names())
