"""Every crash the bad-input sweep found (issue 13) is now one `disklab: error:` line with a documented exit code."""

import os
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.env.doctor import _direct_io_check, _store_check
from disklab.errors import StoreError
from disklab.fio.features import FioInfo
from disklab.store.db import connect, translate_errors
from disklab.system.textfile import MAX_TEXT_FILE_BYTES
from tests.conftest import FIO_FIXTURES

SUITE = 'name = "x"\n[[group]]\nname = "g"\n'


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="disklab")


def refused(result, exit_code: int, *fragments: str) -> str:
    assert result.exit_code == exit_code, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("disklab: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def suite_file(tmp_path, text: str, name: str = "suite.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_nrfiles_without_filesize_splits_the_data_set_as_fio_does(tmp_path):
    result = invoke("run", suite_file(tmp_path, SUITE + "nrfiles = 17\nsize = \"17M\"\n"), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "17 x 1MiB" in result.stdout


def test_nrfiles_of_the_whole_device_needs_a_size(tmp_path):
    refused(invoke("run", suite_file(tmp_path, SUITE + "nrfiles = 17\nsize = \"all\"\n"), "--dry-run"), 2,
            "nrfiles = 17 splits the data set", "give a size")


@pytest.mark.parametrize("field, fragment", [
    ("runtime = nan", "nan is not a duration"),
    ("runtime = inf", "inf is not a duration"),
    (f"runtime = {'9' * 400}", "is not a duration from 0 to 30 days"),
    (f"runtime = \"{'9' * 400}s\"", "is not a duration"),
    (f"size = {'9' * 400}", "is not a size from 0 to 1 EiB"),
    (f"size = \"{'9' * 400}M\"", "is not a size"),
    ("log_interval = nan", "log_interval: nan is not a duration"),
    ("log_interval = inf", "log_interval: inf is not a duration"),
    ('label = "{direction:x}"', "write fields plainly"),
    ('label = "{pattern:>999999999999}"', "write fields plainly"),
    ('label = "{bs!r}"', "write fields plainly"),
    ("bs = [[4096]]", "single values, not lists"),
    ('frame_size = "99999999x99999999"', "is not a frame size"),
    ('bssplit = "4k/' + "9" * 5000 + '"', "is not SIZE/PERCENT"),
])
def test_bad_values_of_a_group_are_one_line(tmp_path, field, fragment):
    refused(invoke("run", suite_file(tmp_path, SUITE + field + "\n"), "--dry-run"), 2, "group 1 (g)", fragment)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", f"\"{'9' * 400}h\""])
def test_time_limit_must_be_a_finite_duration(tmp_path, value):
    text = f'name = "x"\nmode = "write-saturation"\n[steady]\ntime_limit = {value}\n[[group]]\nname = "g"\n'
    refused(invoke("run", suite_file(tmp_path, text), "--dry-run"), 2, "steady: time_limit")


def test_view_columns_of_lists(tmp_path):
    text = 'name = "x"\n[view]\nrows = "group"\ncolumns = [[1]]\n[[group]]\nname = "g"\n'
    refused(invoke("run", suite_file(tmp_path, text), "--dry-run"), 2, "view: columns: must be a list of parameters")


def test_suite_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    refused(invoke("run", path, "--dry-run"), 2, "is not UTF-8 text")


@pytest.mark.parametrize("open_, close", [("[", "]"), ("{a = ", "}")])
def test_a_thousand_levels_of_nesting(tmp_path, open_, close):
    text = SUITE + "bs = " + open_ * 1000 + close * 1000 + "\n"
    refused(invoke("run", suite_file(tmp_path, text), "--dry-run"), 2, "nested too deeply")


@pytest.mark.parametrize("line, key", [('description = "a\\u0000b"', "description"),
                                       ('"key\\u0000" = 1', "key?")])
def test_a_nul_that_no_store_keeps(tmp_path, line, key):
    """TOML writes a NUL as \\u0000; PostgreSQL keeps none in text, so a suite holding one is refused on every store."""
    refused(invoke("run", suite_file(tmp_path, line + "\n" + SUITE), "--dry-run"), 2,
            f"{key}: holds a NUL character (U+0000)")


def test_a_number_thousands_of_digits_long(tmp_path):
    text = SUITE + "runtime = " + "9" * 5000 + "\n"  # tomllib's own int() refuses it with a plain ValueError
    refused(invoke("run", suite_file(tmp_path, text), "--dry-run"), 2, "a number thousands of digits long")


def test_a_short_suite_of_ten_million_tests_is_refused_before_it_is_expanded(tmp_path):
    text = SUITE + "repeat = 100\n" + "".join(f"{k} = {list(values)}\n" for k, values in (
        ("bs", range(512, 5632, 512)), ("iodepth", range(1, 11)), ("jobs", range(1, 11)), ("rwmixread", range(101))))
    path = suite_file(tmp_path, text)
    refused(invoke("run", path, "--dry-run", "--repeat", "1"), 2, "expands to 10,100,000 tests",
            "limit of 10,000 per run", "--max-tests 10100000 (run, export)")
    refused(invoke("run", path, "--dry-run"), 2,
            "run 5 times (the default passes; --repeat 1 runs one) expands to 50,500,000 tests")
    refused(invoke("export", path, "--fio", tmp_path / "out"), 2, "expands to 10,100,000 tests")


def test_max_tests_raises_the_limit_and_repeat_counts(tmp_path):
    path = suite_file(tmp_path, SUITE + "iodepth = [1, 2, 3, 4]\n")
    refused(invoke("run", path, "--dry-run", "--max-tests", "3", "--repeat", "1"), 2, "expands to 4 tests",
            "limit of 3")
    assert invoke("run", path, "--dry-run", "--max-tests", "4", "--repeat", "1").exit_code == 0
    refused(invoke("run", path, "--dry-run", "--max-tests", "4"), 2,
            "run 5 times (the default passes; --repeat 1 runs one) expands to 20 tests")
    refused(invoke("run", path, "--dry-run", "--repeat", "3000"), 2, "'3000' is not a whole number from 1 to 1,000")
    refused(invoke("run", path, "--dry-run", "--repeat", "3", "--max-tests", "10"), 2,
            "run 3 times (--repeat) expands to 12 tests")


@pytest.mark.parametrize("option, value", [
    ("--repeat", "1_000"), ("--repeat", " 7"), ("--repeat", "1e3"), ("--max-tests", "0"), ("--max-tests", "1_0"),
    ("--scale", "inf"), ("--scale", "nan"), ("--scale", "-1"), ("--runtime", "nan"), ("--runtime", "9" * 400),
    ("--size", "9" * 400), ("--engine", "libaio\n[evil]"),
])
def test_garbage_option_values(option, value):
    line = refused(invoke("run", "quick", "--dry-run", option, value), 2, option)
    assert "see 'disklab run --help'" in line


def test_scale_inf_of_a_pgbench_suite():
    refused(invoke("run", "pgbench", "--dry-run", "--scale", "inf"), 2, "--scale")


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom", "fifo", "folder"])
def test_special_files_are_refused_before_reading(tmp_path, special):
    path = tmp_path / special
    if special == "fifo":
        os.mkfifo(path)  # opening it must not wait for a writer
    elif special == "folder":
        path.mkdir()
        path = tmp_path / "folder.toml"
        path.mkdir()
    refused(invoke("run", path, "--dry-run"), 2, "is not a regular file")
    refused(invoke("run", "quick", "--dry-run", "--target", tmp_path, "--hosts", f"@{path}"), 2,
            "hosts file", "is not a regular file")
    refused(invoke("import", path), 2, "is not a regular file")


def test_oversized_suite_and_hosts_files(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text("#" * (MAX_TEXT_FILE_BYTES + 1))
    refused(invoke("run", path, "--dry-run"), 2, f"at most {MAX_TEXT_FILE_BYTES} are read")
    refused(invoke("run", "quick", "--dry-run", "--target", tmp_path, "--hosts", f"@{path}"), 2, "at most")


def test_deep_json_through_import(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    refused(invoke("import", path), 2, "deep.json")


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "results.db"
    for name in ("import-two-jobs.jsonplus.json", "import-two-jobs.jsonplus.json"):
        result = invoke("--db", path, "import", FIO_FIXTURES / name)
        assert result.exit_code == 0, result.output
    return path


@pytest.mark.parametrize("command", [
    ("show", "-f", "csv", "-o"), ("show", "--jobfile", "-o"), ("compare", "1", "2", "-f", "csv", "-o"),
    ("capacity", "show", "4 x sata-ssd-1.6t raid5", "-f", "json", "-o"), ("report", "-o"),
])
def test_unwritable_outputs(store, command):
    refused(invoke("--db", store, *command, "/nonexistent/x.out"), 2, "cannot write /nonexistent/x.out")


def test_export_to_unwritable_places(tmp_path):
    refused(invoke("export", "quick", "--fio", "/proc/nope"), 2, "cannot write job files to /proc/nope")
    refused(invoke("export", "quick", "--fio", "-"), 2, "job files go to a folder")
    assert not (tmp_path / "-").exists()


def test_export_replaces_its_own_job_files_and_refuses_others(tmp_path):
    folder = tmp_path / "jobs"
    assert invoke("export", "blocksize", "--fio", folder).exit_code == 0
    assert invoke("export", "quick", "--fio", folder).exit_code == 0
    jobs = sorted(p.name for p in folder.glob("*.fio"))
    assert len(jobs) == 8 and not any("mixed-16-jobs" in name for name in jobs)  # blocksize's 15 files are gone
    (folder / "mine.fio").write_text("[job]\nrw=read\n")
    refused(invoke("export", "quick", "--fio", folder), 2, "fio job files disklab did not write (mine.fio)")
    assert (folder / "mine.fio").exists() and len(list(folder.glob("*.fio"))) == 9


def test_doctor_on_a_target_it_cannot_write():
    """Root passes access(2) on /proc; making the probe folder fails, and that is a failing check, not a crash."""
    fio = FioInfo(path="/nonexistent/fio", version_text="fio-3.33", version=(3, 33), engines=frozenset())
    check = _direct_io_check(fio, "/proc")
    assert check.status == "fail" and "/proc" in check.detail
    assert _store_check(Path("/proc/results.db")).status == "fail"


def test_reading_commands_never_change_the_store(store):
    before = store.read_bytes()
    for command in (("runs",), ("show",), ("show", "-f", "json"), ("compare", "1", "2"), ("report", "-o", "-")):
        assert invoke("--db", store, *command).exit_code == 0, command
    assert store.read_bytes() == before


def test_a_read_only_connection_refuses_to_write_in_one_line(store):
    conn = connect(store, read_only=True)
    with pytest.raises(StoreError, match="is read-only; it can be listed and shown"):
        with translate_errors(store):
            conn.execute("DELETE FROM runs")


def test_a_full_store_says_so(store):
    conn = connect(store)
    conn.execute("PRAGMA max_page_count = 1")  # what a full file system looks like to SQLite: SQLITE_FULL
    with pytest.raises(StoreError, match=f"the store's file system is full: {store} cannot grow"):
        with translate_errors(store):
            conn.execute("CREATE TABLE filler (x BLOB)")
            conn.execute("INSERT INTO filler VALUES (zeroblob(1000000))")


def _corrupt_the_middle(path, table=None):
    """Two pages in the middle of the file, or of the pages that hold `table` (SQLite's dbstat names each page's
    owner: the middle of the file may hold an index no command reads)."""
    with closing(sqlite3.connect(path)) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = [row[0] for row in conn.execute("SELECT pageno FROM dbstat WHERE name = ? ORDER BY pageno", (table,))]
    offset = (pages[len(pages) // 2] - 1) * page_size if table else path.stat().st_size // 2 // page_size * page_size
    with path.open("r+b") as file:
        file.seek(offset)
        file.write(b"\xde\xad\xbe\xef" * (page_size // 2))


def test_a_damaged_store_is_not_written_to(store):
    _corrupt_the_middle(store)
    damaged = store.read_bytes()
    line = refused(invoke("--db", store, "import", FIO_FIXTURES / "randread-4k-q32.jsonplus.json"), 5,
                   f"the results store {store} is damaged", "nothing was written to it", ".recover")
    assert "mv " in line
    assert store.read_bytes() == damaged


def test_the_check_is_skipped_only_for_the_file_disklab_left(store):
    """The quick check is remembered after a clean writing session; damage, even with the old mtime put back, is
    still found (the inode's change time cannot be put back)."""
    assert store.with_name("results.db.checked").exists()
    stat = store.stat()
    _corrupt_the_middle(store)
    os.utime(store, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    refused(invoke("--db", store, "import", FIO_FIXTURES / "randread-4k-q32.jsonplus.json"), 5,
            f"the results store {store} is damaged")


def test_reading_a_damaged_store_is_one_line(store):
    _corrupt_the_middle(store, "tests")
    codes = set()
    for command in (("runs",), ("show", "1"), ("show", "1", "-f", "json"), ("show", "1", "--jobfile"),
                    ("compare", "1", "2"), ("report", "1", "-o", "-")):
        result = invoke("--db", store, *command)
        codes.add(result.exit_code)
        if result.exit_code:
            refused(result, 5, "is corrupt", "move it aside")
    assert 5 in codes  # the damaged pages hold the run's tests


def test_a_file_that_is_not_a_store(tmp_path):
    path = tmp_path / "fifo.db"
    os.mkfifo(path)
    refused(invoke("--db", path, "runs"), 5, "is not a regular file")


def test_sqlite_full_and_corrupt_codes_map_to_their_messages(tmp_path):
    for code, fragment in ((sqlite3.SQLITE_FULL, "file system is full"), (sqlite3.SQLITE_CORRUPT, "is corrupt")):
        error = sqlite3.DatabaseError("simulated")
        error.sqlite_errorcode = code
        with pytest.raises(StoreError, match=fragment):
            with translate_errors(tmp_path / "results.db"):
                raise error


@pytest.mark.parametrize("ref", ["last~99999999999999999999", "9" * 30, "9" * 5000, "\u0663", "1_0"])
def test_run_numbers_beyond_reason(store, ref):
    refused(invoke("--db", store, "show", ref), 2, "is not a run")
    refused(invoke("--db", store, "compare", "1", ref), 2, "is not a run")


@pytest.mark.parametrize("name", ["x" * 300, "y" * 300 + ".toml"])
def test_names_too_long_for_the_file_system(name):
    refused(invoke("run", name, "--dry-run"), 2)
    refused(invoke("import", name), 2, "no such file")
