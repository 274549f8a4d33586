"""Shell completion as a shell asks for it: the installed `disklab` run with Click's completion variables.

Suite names (built-in and *.toml files) and run ids (from the store, read-only) are offered; a store that is
missing or damaged gives no candidates and no error, and is left as it was.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from tests.conftest import FIO_FIXTURES

DISKLAB = Path(sys.executable).parent / "disklab"  # the console script the README's set-up installs


def complete(words: str, shell: str = "bash", cwd: Path | None = None, env: dict | None = None) -> list[str]:
    """What the shell would offer after `words` (a trailing space: a new word), as Click's bash_complete prints it."""
    parts = words.split(" ")
    environ = {**os.environ, "_DISKLAB_COMPLETE": f"{shell}_complete", "COMP_WORDS": words,
               "COMP_CWORD": str(len(parts) - 1), **(env or {})}
    result = subprocess.run([str(DISKLAB)], env=environ, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return [line for line in result.stdout.splitlines() if line]  # no candidates: Click prints an empty line


def values(lines: list[str]) -> list[str]:
    """bash_complete prints 'type,value' per candidate."""
    return [line.split(",", 1)[1] for line in lines]


@pytest.fixture
def named_runs():
    for name, fixture in (("old array", "randread-4k-q32.json.json"), ("new array", "randread-4k-q32.jsonplus.json")):
        result = CliRunner().invoke(cli, ["import", "--name", name, str(FIO_FIXTURES / fixture)])
        assert result.exit_code == 0, result.output


def test_entry_point_is_the_one_the_readme_names():
    assert DISKLAB.is_file()
    script = subprocess.run([str(DISKLAB)], env={**os.environ, "_DISKLAB_COMPLETE": "bash_source"},
                            capture_output=True, text=True, timeout=60).stdout
    assert "_disklab_completion()" in script and "_DISKLAB_COMPLETE=bash_complete" in script


def test_builtin_suite_names(tmp_path):
    assert complete("disklab run qu", cwd=tmp_path) == ["plain,quick"]
    assert "matrix" in values(complete("disklab export ", cwd=tmp_path))
    assert values(complete("disklab run data", cwd=tmp_path)) == ["database", "database-quick"]


def test_suite_files_in_the_current_directory_and_a_typed_folder(tmp_path):
    (tmp_path / "my-suite.toml").write_text("")
    (tmp_path / "my-notes.txt").write_text("")
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "nightly.toml").write_text("")
    (tmp_path / "my-job.fio").write_text("")
    assert values(complete("disklab run my", cwd=tmp_path)) == ["my-suite.toml", "my-job.fio"]
    assert values(complete("disklab run suites/", cwd=tmp_path)) == ["suites/nightly.toml"]
    assert "my-suite.toml" in values(complete("disklab run ", cwd=tmp_path))


def test_run_ids_newest_first_with_last(named_runs):
    assert values(complete("disklab show ")) == ["last", "2", "1"]
    assert values(complete("disklab compare 1 ")) == ["last", "2", "1"]
    assert values(complete("disklab report 2")) == ["2"]
    assert values(complete("disklab resume la")) == ["last"]


def test_zsh_shows_each_runs_name_and_suite(named_runs):
    lines = complete("disklab show 1", shell="zsh")
    # zsh_complete prints type, value and help on lines of their own
    assert lines[:2] == ["plain", "1"] and lines[2].startswith("old array: import on ")


def test_db_option_is_honoured(named_runs, tmp_path):
    assert complete(f"disklab --db {tmp_path / 'other.db'} show ") == []
    store = Path(os.environ["DISKLAB_HOME"]) / "results.db"
    assert values(complete("disklab show ", env={"DISKLAB_HOME": str(tmp_path), "DISKLAB_DB": str(store)})) == [
        "last", "2", "1"]


def test_no_store_offers_nothing_and_makes_none(tmp_path):
    assert complete("disklab show ", env={"DISKLAB_HOME": str(tmp_path / "home")}) == []
    assert not (tmp_path / "home").exists()


def test_damaged_store_offers_nothing_quietly_and_stays_as_it_was(tmp_path):
    store = tmp_path / "results.db"
    store.write_bytes(b"not a database" * 100)
    assert complete("disklab show ", env={"DISKLAB_HOME": str(tmp_path)}) == []
    assert store.read_bytes() == b"not a database" * 100


def test_completion_leaves_the_store_unchanged(named_runs):
    store = Path(os.environ["DISKLAB_HOME"]) / "results.db"
    before = store.read_bytes(), store.stat().st_mtime_ns
    complete("disklab compare ")
    assert (store.read_bytes(), store.stat().st_mtime_ns) == before


@pytest.mark.parametrize("command", ["disklab run quick --target ", "disklab run quick -t /tm",
                                     "disklab doctor --target "])
def test_target_completes_paths_through_the_shell(command, tmp_path):
    """--target did not tab-complete paths: Click now asks the shell for its own file completion ('file')."""
    (tmp_path / "disk").mkdir()
    lines = complete(command, cwd=tmp_path)
    assert lines == [f"file,{command.rpartition(' ')[2]}"]
    shell = complete(command + "di" if command.endswith(" ") else command, shell="zsh", cwd=tmp_path)
    assert shell[0] == "file"
