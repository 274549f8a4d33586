"""Stored text in the terminal: control and bidi characters escaped in every table and line, printable text as it is;
machine formats keep the text as stored."""

import json
import unicodedata

import pytest
from click.testing import CliRunner
from hypothesis import given, strategies as st
from rich.table import Table
from rich.text import Text

from disklab.cli.common import stdout_console
from disklab.cli.main import cli
from disklab.fio.parse import parse_fio_output
from disklab.report.terminal import terminal_rich_text, terminal_text
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from disklab.suite.params import PARAMS
from tests.conftest import fixture_text
from tests.unit.test_store import new_run

BIDI_CONTROLS = {"\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}
HOSTILE = ["\u202e", "\x1b", "\r", "\b", "\x00", "\x07", "\x7f", "\x85", "\x9b", "\u2028", "\u2029", "\u2066",
           "\u200f", "\u061c", "\t", "\n", "\ud800"]
ORDINARY = "café Ünïcode 中文 한국어 עברית عربي µs ± 😀 👩‍👩‍👧 🏴󠁧󠁢󠁥󠁮󠁧󠁿 C:\\disk ~/a b [red] :fire:"


def unsafe(character: str) -> bool:
    return unicodedata.category(character) in ("Cc", "Cs", "Zl", "Zp") or character in BIDI_CONTROLS


any_text = st.text(st.one_of(st.characters(exclude_categories=()), st.sampled_from(HOSTILE)))


@given(any_text)
def test_no_control_or_bidi_character_survives(text):
    assert not any(unsafe(c) for c in terminal_text(text))


@given(any_text)
def test_kept_lines_are_the_lines_each_escaped(text):
    assert terminal_text(text, keep_lines=True).split("\n") == [terminal_text(line) for line in text.split("\n")]


@given(st.text(st.characters(exclude_categories=()).filter(lambda c: not unsafe(c))))
def test_printable_text_is_left_as_it_is(text):
    assert terminal_text(text) == text


@pytest.mark.parametrize("raw, shown", [
    ("\u202e", "\\u202e"), ("\x1b[31m", "\\x1b[31m"), ("\r", "\\r"), ("\n", "\\n"), ("\t", "\\t"), ("\x00", "\\x00"),
    ("\x9b", "\\x9b"), ("\u2028", "\\u2028"), ("\u2069", "\\u2069"), ("\ud800", "\\ud800"), (ORDINARY, ORDINARY),
])
def test_each_character_is_written_as_python_writes_it(raw, shown):
    assert terminal_text(raw) == shown


def test_a_rich_text_keeps_each_style_on_its_characters():
    styled = Text.assemble(("a", "red"), ("\x1b\u202e", "bold"), ("b\nc", "blue"))
    escaped = terminal_rich_text(styled)
    assert escaped.plain == "a\\x1b\\u202eb\nc"
    assert [(span.start, span.end, span.style) for span in escaped.spans] == [(0, 1, "red"), (1, 11, "bold"),
                                                                             (11, 14, "blue")]
    assert terminal_rich_text(Text(ORDINARY)).plain == ORDINARY


def test_the_console_escapes_strings_and_texts_wherever_they_sit(capsys):
    table = Table(title="title \u202egnp.exe")
    table.add_column("cell")
    table.add_row("in a cell \x1b[2J")
    table.add_row(Text("a styled cell \r", style="red"))
    console = stdout_console()
    console.print(table)
    console.print(Text("a note \x1b]0;title\u202e"))
    console.print(f"a line {ORDINARY}")
    out = capsys.readouterr().out
    assert not any(unsafe(c) for c in out.replace("\n", ""))
    for shown in ("title \\u202egnp.exe", "in a cell \\x1b[2J", "a note \\x1b]0;title\\u202e", f"a line {ORDINARY}"):
        assert shown in out


# A name, a target, a host, a suite and a test label as an import, a user or a device could have left them.
NAME = "old\u202egnp.exe \x1b[31mred\r\x08"
TARGET = "/dev/sd\u202eb\x1b[2J\u2066x"
HOST = "host\x1b]0;owned\x07"
SUITE = "suite\u2028two"
LABEL = "read\x1b[1A\u200fQD32"
ERROR = "fio: \x1b[2Kpwned\r\nsecond line"
PARAMS_OF_FIXTURE = {**{name: param.default for name, param in PARAMS.items()}, "pattern": "random",
                     "direction": "read", "bs": 4096, "iodepth": 32}


@pytest.fixture
def hostile_runs():
    """Run 1 with hostile text everywhere; run 2 plain, its test the same; run 3 failed without figures."""
    output = fixture_text("randread-4k-q32.json.json")
    (job,) = parse_fio_output(output).jobs
    with Store(default_store_path()) as store:
        for changes, label in (({"name": NAME, "target": TARGET, "hostname": HOST, "suite_name": SUITE}, LABEL),
                               ({}, "read QD32")):
            run_id = store.create_run(new_run(planned_tests=1, **changes))
            store.add_test(run_id, 0, label, PARAMS_OF_FIXTURE, "", output, "", "2026-01-01T00:00:00+00:00", job)
            store.finish_run(run_id, "complete")
        store.finish_run(store.create_run(new_run(name=NAME)), "failed", ERROR)


def shown_safely(output: str, *escaped: str) -> None:
    assert not any(unsafe(c) for c in output.replace("\n", ""))
    for text in escaped:
        assert terminal_text(text) in output


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_runs_lists_hostile_text_escaped_and_exports_it_as_stored(hostile_runs):
    listing = invoke("runs")
    assert listing.exit_code == 0
    shown_safely(listing.stdout, NAME, TARGET, HOST, SUITE)
    markdown = invoke("runs", "--format", "markdown").stdout
    shown_safely(markdown, NAME, TARGET, HOST, SUITE)
    assert len(markdown.splitlines()) == 2 + 3  # a run per line
    stored = json.loads(invoke("runs", "--format", "json").stdout)["runs"][-1]
    assert (stored["name"], stored["target"], stored["hostname"], stored["suite_name"]) == (NAME, TARGET, HOST, SUITE)


def test_show_and_compare_print_hostile_text_escaped(hostile_runs):
    shown = invoke("show", "1")
    assert shown.exit_code == 0
    shown_safely(shown.stdout, NAME, TARGET, SUITE, LABEL)
    failed = invoke("show", "3")
    shown_safely(failed.stdout, *ERROR.split("\n"))  # a multi-line message keeps its lines
    compared = invoke("compare", "1", "2")
    assert compared.exit_code == 0
    shown_safely(compared.stdout, NAME, TARGET, LABEL)
    shown_safely(invoke("compare", "1", "2", "--format", "markdown").stdout, NAME, TARGET, LABEL)
    assert json.loads(invoke("compare", "1", "2", "--format", "json").stdout)["rows"][0]["test"] == LABEL


def test_an_error_quoting_stored_text_is_one_escaped_line(hostile_runs):
    refused = invoke("compare", "3", "2")
    assert refused.exit_code != 0 and refused.stderr.count("\n") == 1
    shown_safely(refused.stderr, *ERROR.split("\n"))


def test_doctor_quotes_a_hostile_target_escaped():
    checked = invoke("doctor", "--target", TARGET)
    shown_safely(checked.stdout, TARGET)
