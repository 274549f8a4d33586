"""quick's CrystalDiskMark grid and `run --best-of`: runs replayed from real captured fio output into a store.

Each pass of a test replays a different real capture of its direction, so the passes differ as real passes do.
"""

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from disklab.cli.main import cli
from disklab.errors import UserError
from disklab.fio.parse import parse_fio_output
from disklab.plan.build import build_plan, resolve_engines
from disklab.report.export import to_json, to_markdown
from disklab.report.html.model import build_report
from disklab.report.rows import summary_rows
from disklab.report.views import build_view, cell_text, view_table
from disklab.run.execute import single_job
from disklab.run.schedule import FixedSchedule
from disklab.store.repository import Store
from disklab.suite.loader import load_suite, parse_suite
from tests.conftest import fixture_json, fixture_text
from tests.unit.test_store import new_run

# Two real captures per direction (tests/fixtures/fio/README.md): pass 1 replays the first, pass 2 the second, ...
CAPTURES = {
    "read": ("randread-4k-q32.jsonplus.json", "randread-4k-q32.json.json"),
    "write": ("seqwrite-1m-q8.json.json", "seqwrite-1m-q8.jsonplus.json"),
}
STARTED = "2026-11-23T15:00:00+00:00"
CDM_ROWS = ("SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1")


def quick_run(tmp_path, passes: int, best_of: int | None, stop_after: int | None = None):
    """The built-in quick suite run `passes` times over, in the order --repeat and --best-of schedule it, stored as
    the run layer stores each test; `stop_after` steps, the run stops as an interrupted one does."""
    suite = load_suite("quick")
    plan = resolve_engines(build_plan(suite), lambda wanted: "io_uring")
    steps = FixedSchedule(plan, passes).steps[:stop_after]
    options = {"repeat": passes, "best_of": best_of}
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(suite_text=suite.text, options=options, planned_tests=len(plan.tests)))
        for seq, step in enumerate(steps):
            output = fixture_text(CAPTURES[step.test.direction][(step.attempt - 1) % 2])
            job = single_job(parse_fio_output(output), step.test.label)
            store.add_test(run_id, seq, step.test.label, step.test.params(), "", output, "", STARTED,
                           job, plan_index=step.plan_index, attempt=step.attempt)
        store.finish_run(run_id, "complete" if stop_after is None else "interrupted")
        return store.get_run(run_id)


def captured_mb_per_s(name: str, direction: str) -> float:
    return fixture_json(name)["jobs"][0][direction]["bw_bytes"] / 1e6


def test_quicks_tests_are_crystaldiskmarks_default_profile():
    """CrystalDiskMark 8's default: SEQ 1MiB Q8T1 and Q1T1, RND 4KiB Q32T1 and Q1T1, 1 GiB, 5 s measured each."""
    suite = load_suite("quick")
    tests = build_plan(suite).tests
    assert [(t.group, t.direction, t.pattern, t.bs, t.iodepth, t.jobs) for t in tests] == [
        (row, direction, pattern, bs, depth, 1)
        for row, pattern, bs, depth in (("SEQ1M Q8T1", "sequential", 2**20, 8), ("SEQ1M Q1T1", "sequential", 2**20, 1),
                                        ("RND4K Q32T1", "random", 4096, 32), ("RND4K Q1T1", "random", 4096, 1))
        for direction in ("read", "write")
    ]
    assert {(t.size, t.runtime, t.direct) for t in tests} == {(2**30, 5.0, True)}
    view = suite.view
    assert (view.rows, view.columns, view.values) == ("group", ("direction",), ("mb_per_s",))
    assert (view.published_by, view.published_best_of) == ("CrystalDiskMark", 5)


def test_one_pass_is_a_grid_of_each_tests_mb_per_s_that_says_crystaldiskmark_takes_the_best_of_5(tmp_path):
    record = quick_run(tmp_path, passes=1, best_of=None)
    view = build_view(record)
    assert view.rows == CDM_ROWS
    assert [c.heading for c in view.columns] == ["read MB/s", "write MB/s"]
    assert view.best_of is None and "best of" not in view.title
    for row in view.cells:
        read, write = row
        assert read.value == captured_mb_per_s(CAPTURES["read"][0], "read")
        assert write.value == captured_mb_per_s(CAPTURES["write"][0], "write")
    assert "MB/s = 10^6 bytes/s" in view.notes
    assert ("one pass per test; CrystalDiskMark reports the best of 5 passes: run with --best-of 5 to compare"
            in view.notes)


def test_best_of_shows_each_tests_best_pass_labelled_and_leaves_the_stored_passes_and_their_mean(tmp_path):
    record = quick_run(tmp_path, passes=2, best_of=2)
    view = build_view(record)
    assert "· best of 2 passes ·" in view.title
    assert [c.heading for c in view.columns] == ["read MB/s (best of 2)", "write MB/s (best of 2)"]
    for label, row in zip(view.rows, view.cells):
        for direction, cell in zip(("read", "write"), row):
            passes = [t for t in record.tests if t.params["group"] == label and t.params["direction"] == direction]
            stored = [m.bw_bytes_per_s / 1e6 for t in passes for m in t.metrics]
            assert sorted(stored) == sorted(captured_mb_per_s(name, direction) for name in CAPTURES[direction])
            assert cell.value == max(stored) != sum(stored) / 2
    assert any(note.startswith("best of 2: each cell is its test's best pass") and
               "CrystalDiskMark reports the best of 5" in note for note in view.notes)
    assert not any("combine several tests" in note for note in view.notes)  # passes of one test are picked, not pooled
    # the summary still gives the mean of the passes, from the same stored tests
    means = {(r.test, r.direction): r.mb_per_s.mean for r in summary_rows(record)}
    assert means["SEQ1M Q8T1 read", "read"] == pytest.approx(
        sum(captured_mb_per_s(name, "read") for name in CAPTURES["read"]) / 2)


def test_best_of_as_many_passes_as_crystaldiskmark_says_so(tmp_path):
    record = quick_run(tmp_path, passes=5, best_of=5)
    view = build_view(record)
    assert view.cells[0][0].value == max(captured_mb_per_s(name, "read") for name in CAPTURES["read"])
    (note,) = [n for n in view.notes if n.startswith("best of 5")]
    assert "as CrystalDiskMark reports it" in note and "mean and +/- of the passes" in note


def test_repeats_without_best_of_show_the_mean_and_point_to_best_of(tmp_path):
    record = quick_run(tmp_path, passes=2, best_of=None)
    view = build_view(record)
    assert view.cells[0][0].value == pytest.approx(sum(captured_mb_per_s(n, "read") for n in CAPTURES["read"]) / 2)
    assert ("CrystalDiskMark reports the best of 5 passes, not their mean: run with --best-of 5 to compare"
            in view.notes)


def test_a_run_stopped_before_its_last_pass_says_which_cells_have_fewer(tmp_path):
    record = quick_run(tmp_path, passes=2, best_of=2, stop_after=10)  # pass 2 stops after two tests
    view = build_view(record)
    assert "6 tests ran fewer than 2 passes (the run stopped early): their cells are the best of those that ran" \
        in view.notes
    assert view.cells[3][1].value == captured_mb_per_s(CAPTURES["write"][0], "write")  # RND4K Q1T1 write: 1 pass


def test_exports_and_the_report_carry_the_best_of_figure(tmp_path):
    record = quick_run(tmp_path, passes=2, best_of=2)
    best_read = max(captured_mb_per_s(name, "read") for name in CAPTURES["read"])
    document = json.loads(to_json(record))
    assert document["view"]["best_of"] == 2
    assert document["view"]["cells"][0][0] == {"value": best_read, "metric": "mb_per_s"}
    assert document["run"]["options"]["best_of"] == 2
    assert len(document["tests"]) == 16  # every pass as it ran
    markdown = to_markdown(record)
    assert "| Test | read MB/s (best of 2) | write MB/s (best of 2) |" in markdown
    assert f"| SEQ1M Q8T1 | {best_read:,.1f} |" in markdown
    assert "| Test | Dir | n | MB/s | +/- |" in markdown  # the mean and spread beside it
    (section,) = build_report([record], "2026-11-23T15:00:00+00:00").runs
    grid = section.tables[0]
    assert grid.headings == ("Test", "read MB/s (best of 2)", "write MB/s (best of 2)")
    assert grid.rows[0][:2] == ("SEQ1M Q8T1", f"{best_read:,.1f}")
    assert any("best of 2" in note for note in grid.notes)
    terminal = view_table(build_view(record))
    assert "best of 2" in terminal.title and "best of 2: each cell" in terminal.caption


def test_show_prints_the_grid_of_a_best_of_run(tmp_path):
    record = quick_run(tmp_path, passes=2, best_of=2)
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "show", "last"])
    assert result.exit_code == 0, result.output
    view = build_view(record)
    assert "read MB/s (best of 2)" in result.output
    assert cell_text(view.cells[0][0], view.columns[0]) in result.output
    assert result.output.index("best of 2") < result.output.index("Mean lat µs")


@pytest.mark.parametrize("args, message", [
    (["--repeat", "3"], "--best-of runs every test N times itself: give --best-of or --repeat, not both"),
    (["--repeat", "1"], "--best-of runs every test N times itself: give --best-of or --repeat, not both"),
    (["--precision", "5%"], "--best-of and --precision: give one"),
])
def test_best_of_with_repeat_or_precision_is_refused_in_one_line(args, message):
    result = CliRunner().invoke(cli, ["run", "quick", "--best-of", "5", "--dry-run", *args])
    assert result.exit_code == 2
    (line,) = result.output.splitlines()
    assert message in line


@pytest.mark.parametrize("suite, message", [
    ("steady", "--best-of does not apply to suite 'steady': it runs its tests in steady steps"),
    ("saturate", "--best-of does not apply to suite 'saturate'"),
    ("pgbench", "--best-of: not for suite 'pgbench', which runs pgbench"),
])
def test_best_of_is_refused_where_there_are_no_passes_to_pick(suite, message):
    result = CliRunner().invoke(cli, ["run", suite, "--best-of", "5", "--dry-run"])
    assert result.exit_code == 2 and len(result.output.splitlines()) == 1
    assert message in result.output


def test_best_of_is_refused_for_a_suite_without_a_view(tmp_path):
    path = tmp_path / "plain.toml"
    path.write_text('name = "plain"\n[[group]]\nname = "a"\nbs = "4k"\n')
    result = CliRunner().invoke(cli, ["run", str(path), "--best-of", "5", "--dry-run"])
    assert result.exit_code == 2 and len(result.output.splitlines()) == 1
    assert "suite 'plain' has none; use --repeat" in result.output


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.integers(-10, 1).map(str), st.integers(1001, 10**6).map(str),
                 st.text(min_size=1, max_size=8).filter(lambda t: not (t.isascii() and t.isdigit()))))
def test_a_best_of_that_is_not_a_whole_number_from_2_to_1000_is_one_line_and_exit_2(text):
    result = CliRunner().invoke(cli, ["run", "quick", "--dry-run", f"--best-of={text}"])
    assert result.exit_code == 2
    assert "--best-of" in result.output and "whole number from 2 to 1,000" in result.output


@pytest.mark.parametrize("view, message", [
    ('published_best_of = 5', "published_best_of: needs published_by"),
    ('published_by = "CrystalDiskMark"\npublished_best_of = 0', "published_best_of: 0 is not a whole number"),
    ('published_by = "CrystalDiskMark"\npublished_best_of = true', "published_best_of: True is not a whole number"),
    ('published_by = ""', "published_by: '' is not a tool's name"),
    ('published_by = 5', "published_by: 5 is not a tool's name"),
])
def test_a_views_published_keys_are_checked(view, message):
    text = f'name = "v"\n[view]\nrows = "group"\n{view}\n[[group]]\nname = "a"\nbs = "4k"\n'
    with pytest.raises(UserError, match=message.replace("(", r"\(")):
        parse_suite(text, source="test", where="test suite")


def test_a_run_stored_before_best_of_existed_shows_as_before(tmp_path):
    record = quick_run(tmp_path, passes=1, best_of=None)
    older = replace(record, info=replace(record.info, options={"runtime": 1.0}))
    assert build_view(older).title == build_view(record).title
