"""Issue 29, item 1, fio's words: `disklab run JOB.fio` runs a plain fio job file, each job section a test, [global]
applied, options read as fio reads them; what disklab sets is said in one note, what it cannot honour refused by name.
`disklab run --rw randread --bs 4k ...` runs one test of fio's options.

The fixture tests/fixtures/jobfiles/ssd-test.fio is fio's own examples/ssd-test.fio (its first lines say which
commit), adapted only in size and runtime; it runs here with the real fio on a small test file."""

import json

import pytest
from hypothesis import given, strategies as st

from disklab.cli.adhoc import suite_or_test
from disklab.plan.build import build_plan
from disklab.store.db import default_store_path
from disklab.store.repository import Store
from disklab.suite.loader import load_suite
from disklab.system.textfile import parse_toml, toml_string
from tests.conftest import FIO_FIXTURES
from tests.unit.test_bad_input import invoke, refused, suite_file
from tests.unit.test_fuzz_input import FUZZ, assert_clean, snapshot

SSD_TEST = FIO_FIXTURES.parent / "jobfiles" / "ssd-test.fio"


def jobfile(tmp_path, text: str):
    return suite_file(tmp_path, text, "job.fio")


def clean_dry_run(tmp_path_factory, make_args) -> None:
    """A dry run of fuzzed input plans or refuses in one line, and leaves the store as it was."""
    folder = tmp_path_factory.mktemp("fuzz")
    store = folder / "results.db"
    assert invoke("--db", store, "runs").exit_code == 0
    before = snapshot(store)
    assert_clean(invoke("--db", store, "run", *make_args(folder), "--dry-run"))
    assert snapshot(store) == before


def test_fios_ssd_test_is_a_suite_of_its_four_jobs_with_its_global_options():
    suite = load_suite(str(SSD_TEST))
    tests = build_plan(suite).tests
    assert [(t.label, t.fio_rw) for t in tests] == [
        ("seq-read", "read"), ("rand-read", "randread"), ("seq-write", "write"), ("rand-write", "randwrite")]
    for test in tests:
        assert (test.bs, test.iodepth, test.size, test.runtime, test.time_based, test.direct, test.engine) == (
            4096, 4, 16 * 1024**2, 1.0, False, True, "libaio")
    assert suite.name == "ssd-test" and suite.source == str(SSD_TEST)
    assert suite.notes == (f"{SSD_TEST}: directory, filename set by disklab (the target and its test file, fio's "
                           "output and logs)",)
    assert "#   [seq-read]" in suite.text  # the job file is kept, as comments, in the suite the run stores


def test_fios_defaults_where_the_file_is_silent_and_sizes_as_fio_reads_them(tmp_path):
    path = jobfile(tmp_path, "[a]\nrw=randrw\nrwmixwrite=30\nsize=1MiB ; fio's default kb_base: 1,000,000 bytes\n"
                             "[b]\nkb_base=1000\nsize=1MiB\nbs=512\nnumjobs=2\ntime_based\nruntime=2s\n")
    a, b = build_plan(load_suite(str(path))).tests
    assert (a.fio_rw, a.rwmixread, a.size, a.bs, a.direct, a.engine, a.runtime, a.time_based) == (
        "randrw", 70, 1_000_000, 4096, False, "psync", 0.0, False)
    assert (b.fio_rw, b.size, b.bs, b.jobs, b.time_based, b.runtime) == ("read", 1024**2, 512, 2, True, 2.0)
    assert load_suite(str(path)).notes == (  # b's 1MiB is read alike at kb_base=1000: no note of it
        f"{path}: fio would run b at the same time as the job before; disklab runs each job section as a test of its "
        "own, one after another",
        f"{path}: [a] size=1MiB is 1,000,000 bytes as fio reads it (kb_base=1024), not 1,048,576: the test runs as "
        "fio would run it")


# A suite of one group named 'a', to which each case adds fio's names.
GROUP = "name = 'mine'\n[[group]]\nname = 'a'\n"


@pytest.mark.parametrize("name, text, fragments", [
    ("job.fio", "[a]\nrw=write\nverify=md5\n",
     ("[a]: fio option 'verify': fio counts the verifying reads among the test's reads", "verify data with fio alone")),
    ("job.fio", "[a]\nrw=read\nstats=0\n", ("[a]: fio option 'stats': stats=0 leaves the job out of fio's results",)),
    ("job.fio", "[a]\nrw=read\nioscheduler=none\n", ("'ioscheduler': switches the device's I/O scheduler",)),
    ("job.fio", "[a]\nrw=read\nlat_percentiles=1\n", ("'lat_percentiles': makes fio report total latency's",)),
    ("job.fio", "[a]\nrw=read\nnorandomap\n",
     ("[a]", "norandomap: not an option fio knows (a typo?); did you mean 'norandommap'?")),
    ("job.fio", "[a]\nrw=randread\nrandom_distribution=bogus\n",
     ("fio refuses the options handed to it as written: failed parsing random_distribution=bogus",
      "fio takes random, zipf, pareto")),
    ("job.fio", "[a]\ninclude other.fio\n", ("line 2: include: disklab reads one job file",)),
    ("job.fio", "[a]\nsize=${SIZE}\n", ("line 2", "$VARIABLES are not expanded")),
    ("job.fio", "[a]\nrw=read\n[b\0]\n", ("line 3: holds a NUL character (U+0000)",)),
    ("job.fio", "rw=read\n[a]\n", ("line 1: an option outside a [section]",)),
    ("job.fio", "[global]\nbs=4k\n", ("no job section",)),
    ("job.fio", "[a]\nrw=read\n[a]\nrw=write\n", ("line 3: a second [a] section",)),
    ("job.fio", "[a]\nrw=randtrim:8\n", ("trim is for imported fio results only",)),
    ("job.fio", "[a]\nrw=randtrims:8\n", ("[a]: rw: 'randtrims:8' is not one of read",)),
    ("job.fio", "[a]\nrw=trim\n", ("trim is for imported fio results only",)),
    ("job.fio", "[a]\nsize=50%\n", ("[a]: size: 50% is a share of the target",)),
    ("mine.toml", GROUP + "fio = 'filename=/dev/sda'\n", ("fio: filename: set by disklab for every test",)),
    ("mine.toml", GROUP + "fio = 'iodepth=4'\n", ("fio: iodepth: is the suite parameter iodepth; set it there",)),
    ("mine.toml", GROUP + "fio = 'bs=4k'\n", ("fio: bs: is the suite parameter bs", "per direction goes here")),
    ("mine.toml", GROUP + "fio = 'fsync=1'\n", ("fio: fsync: is the suite parameter sync = 'fsync'",)),
    ("mine.toml", GROUP + 'fio = "norandommap\\nnorandommap"\n', ("fio: an option is given twice",)),
    ("mine.toml", GROUP + "direction = 'write'\nfio = 'rw=randread:8'\n",
     ("fio's rw=randread:8 is not the test's randwrite",)),
    ("mine.toml", GROUP + "region = 'first:10%'\nfio = 'offset=1m'\n", ("its region sets fio's offset",)),
    ("job.fio", "[a]\ntime_based\n", ("time_based without a runtime",)),
    ("job.fio", "[a]\ndirect=yes\n", ("[a]: direct: 'yes' is not 0 or 1",)),
    ("job.fio", "[a]\nkb_base=10\n", ("[a]: kb_base=10",)),
    ("mine.toml", GROUP + "rw = 'randread'\npattern = 'random'\n",
     ("group 1 (a): rw: sets pattern, which the table sets too",)),
    ("mine.toml", GROUP + "numjobs = 2\njobs = 4\n", ("numjobs: sets jobs, which the table sets too",)),
    ("mine.toml", GROUP + "rw = ['read', 'randwrite']\n", ("varies both the pattern and the direction",)),
    ("mine.toml", GROUP + "rw = 'sideways'\n", ("rw: 'sideways' is not one of fio's modes",)),
    ("mine.toml", GROUP + "rw = []\n", ("rw: [] is not one of fio's modes",)),
    ("mine.toml", GROUP + "rwmixwrite = 130\n", ("rwmixwrite: 130 is not a whole number from 0 to 100",)),
    ("mine.toml", GROUP + "numjobs = 0\n", ("jobs: 0 is outside 1..4096",)),
])
def test_what_disklab_cannot_honour_is_refused_by_name_in_one_line(tmp_path, name, text, fragments):
    refused(invoke("run", suite_file(tmp_path, text, name), "--target", tmp_path, "--dry-run"), 2, *fragments)


AS_WRITTEN = """[global]
size=8m
runtime=0.5
time_based
ioengine=psync
[mixed]
rw=randrw:4
bs=4k,64k
norandommap
offset=1m
[split]
rw=randwrite
bssplit=4k/50:64k/50
fsync=1
[per-direction]
rw=randrw
bssplit=4k/50:8k/50,64k
fsync=4
buffered=0
loops=2
"""


def test_a_job_files_options_no_parameter_holds_go_to_fio_as_written(tmp_path):
    tests = build_plan(load_suite(str(jobfile(tmp_path, AS_WRITTEN)))).tests
    mixed, split, per_direction = tests
    assert (mixed.fio_rw, mixed.rwmixread, mixed.fio) == ("randrw", 50, "rw=randrw:4\nbs=4k,64k\nnorandommap\noffset=1m")
    assert (split.bssplit, split.sync, split.fio) == ("4k/50:64k/50", "fsync", None)
    assert (per_direction.bssplit, per_direction.sync, per_direction.direct, per_direction.fio) == (
        None, "none", True, "bssplit=4k/50:8k/50,64k\nfsync=4\nloops=2")


def test_the_real_fio_runs_the_options_as_written_and_show_export_and_report_hold_them(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    result = invoke("run", jobfile(tmp_path, AS_WRITTEN), "--target", target, "--repeat", "1", "-f", "json")
    assert result.exit_code == 0, result.output
    stored = json.loads(result.stdout)
    mixed, split, per_direction = sorted(stored["tests"], key=lambda t: t["plan_index"])
    # fio ran the split block sizes as written: 4 KiB reads and 64 KiB writes
    reads, writes = (mixed["metrics"][d] for d in ("read", "write"))
    assert reads["io_bytes"] == 4096 * reads["total_ios"] and writes["io_bytes"] == 65536 * writes["total_ios"]
    assert {"read", "write"} <= set(per_direction["metrics"]) and split["metrics"]["sync"]["total_ios"] > 0
    jobfiles = invoke("show", stored["run"]["id"], "--jobfile").stdout
    for line in ("rw=randrw:4", "bs=4k,64k", "norandommap", "offset=1m", "bssplit=4k/50:64k/50", "fsync=1",
                 "bssplit=4k/50:8k/50,64k", "fsync=4", "loops=2"):
        assert f"\n{line}\n" in jobfiles, line
    report = tmp_path / "report.html"
    assert invoke("report", stored["run"]["id"], "-o", report).exit_code == 0
    html = report.read_text()
    assert 'id="tests-iops"' in html and 'id="tests-mb-per-s"' in html
    exported = tmp_path / "exported"
    assert invoke("export", jobfile(tmp_path, AS_WRITTEN), "--fio", exported).exit_code == 0
    assert "\nrw=randrw:4\nbs=4k,64k\nnorandommap\noffset=1m\n" in (exported / "001-mixed.fio").read_text()


def test_the_real_fio_runs_the_job_file_and_the_runs_store_show_and_compare(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    for _ in range(2):
        result = invoke("run", SSD_TEST, "--target", target, "--repeat", "2", "--runtime", "0.5s")
        assert result.exit_code == 0, result.output
        assert "directory, filename set by disklab" in result.stderr
    with Store(default_store_path()) as store:
        first, second = sorted(r.id for r in store.list_runs())
        record = store.get_run(second)
    assert record.info.suite_name == "ssd-test" and record.info.status == "complete"
    assert sorted({t.label for t in record.tests}) == ["rand-read", "rand-write", "seq-read", "seq-write"]
    assert all("ioengine=libaio" in t.jobfile and "direct=1" in t.jobfile for t in record.tests)
    shown = invoke("show", second, "-f", "json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)
    compared = invoke("compare", first, second)
    assert compared.exit_code == 0, compared.output
    assert "rand-write" in compared.stdout
    assert list(target.iterdir()) == []  # the test file is gone with the run


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("[]=;#$ \nabrwsizegloblt0123456789kKiB%,:")), max_size=120))
def test_any_job_file_runs_as_a_plan_or_is_one_line(tmp_path_factory, text):
    clean_dry_run(tmp_path_factory, lambda folder: [jobfile(folder, text), "--target", folder])


def test_a_job_file_and_its_jobs_named_in_any_characters_run_under_their_names(tmp_path):
    """Beyond the BMP (JSON's surrogate pairs are no TOML) and with control characters (the file's name in the
    suite's header comment was written raw): the suite made of the job file was refused as not valid TOML."""
    path = jobfile(tmp_path, "[job 💽\x7f]\nrw=randread\nsize=1m\n")
    path = path.rename(tmp_path / "💽 disk\x18.fio")
    suite = load_suite(str(path))
    assert suite.name == "💽 disk\x18" and [t.label for t in build_plan(suite).tests] == ["job 💽\x7f"]


@given(text=st.text(st.characters(exclude_characters="\0")))
def test_any_text_is_a_toml_string_read_back_as_it_was(text):
    """Suites made of job files, fio's options and traces, and drive files, write their text with toml_string (a NUL,
    which no path or job file line holds, is refused when read: no store keeps one)."""
    assert parse_toml(f"x = {toml_string(text)}\n", "test")["x"] == text


# --- one test of fio's options on the command line ---

def test_fios_options_make_one_test_in_disklabs_units_with_disklabs_defaults_for_the_rest():
    suite = suite_or_test(None, {"rw": "randrw", "bs": "4KiB", "iodepth": "32", "numjobs": "4", "rwmixread": "70"})
    (test,) = build_plan(suite).tests
    assert (test.fio_rw, test.bs, test.iodepth, test.jobs, test.rwmixread) == ("randrw", 4096, 32, 4, 70)
    assert (test.direct, test.engine, test.time_based, test.runtime) == (True, "auto", True, 5.0)
    assert test.label == "rw=randrw bs=4KiB iodepth=32 numjobs=4 rwmixread=70" and suite.notes == ()
    # --bs as --size reads it: 4KiB (which fio reads as 4,000 bytes) and 4k are 4,096, 64KB 64,000 (whole sectors)
    for given, size in (("4k", 4096), ("4K", 4096), ("1MiB", 1024**2), ("1m", 1024**2), ("64000", 64000),
                        ("64KB", 64000)):
        assert build_plan(suite_or_test(None, {"bs": given})).tests[0].bs == size, given
    assert suite_or_test(None, {"iodepth": "8"}).notes == (
        "no --rw given: random reads (disklab's default; fio's is sequential reads)",
        "no --bs given: 4 KiB blocks (fio's default too)")


def test_a_one_test_run_with_the_real_fio_is_stored_and_shown(tmp_path):
    result = invoke("run", "--rw", "randwrite", "--bs", "64k", "--iodepth", "4", "--runtime", "0.5s", "--size",
                    "8MiB", "--target", tmp_path, "--repeat", "1", "-f", "json")
    assert result.exit_code == 0, result.output
    stored = json.loads(result.stdout)
    assert stored["run"]["suite_name"] == "adhoc"
    (test,) = stored["tests"]
    assert test["label"] == "rw=randwrite bs=64k iodepth=4" and test["params"]["bs"] == 65536


def test_bs_4kib_on_the_command_line_runs_4096_byte_ios_with_the_real_fio(tmp_path):
    """fio itself would read --bs=4KiB as 4,000 bytes (its default kb_base); the command line's sizes are disklab's."""
    result = invoke("run", "--rw", "randread", "--bs", "4KiB", "--runtime", "0.5s", "--size", "8MiB",
                    "--target", tmp_path, "--repeat", "1", "-f", "json")
    assert result.exit_code == 0, result.output
    (test,) = json.loads(result.stdout)["tests"]
    read = test["metrics"]["read"]
    assert read["total_ios"] > 0 and read["io_bytes"] == 4096 * read["total_ios"]


@pytest.mark.parametrize("args, fragments", [
    (("quick", "--iodepth", "32"), ("--iodepth: fio's options make a one-test run without SUITE",
                                    "they do not change the tests of 'quick'")),
    (("--dry-run",), ("name a SUITE", "--rw randread --bs 4k")),
    (("--bs", "lots"), ("the command line: --bs: 'lots' is not a size (examples: 4096, 4k",)),
    (("--bs", "4x"), ("the command line: --bs: '4x' is not a size",)),
    (("--bs", "4KB"), ("--bs: '4KB' is 4,000 bytes, not a whole number of 512-byte sectors", "4k and 4KiB are 4,096")),
    (("--bs", "4k,64k"), ("the command line: --bs: '4k,64k' is not a size",)),
    (("--iodepth", "4x"), ("the command line: --iodepth: '4x' is not a whole number",)),
    (("--numjobs", "2k"), ("the command line: --numjobs: '2k' is not a whole number",)),
    (("--rw", "trim"), ("trim is for imported fio results only",)),
    (("--rw", "randomread"), ("--rw: 'randomread' is not one of read",)),
    (("--iodepth", "0"), ("iodepth: 0 is outside 1..65536",)),
])
def test_bad_fio_options_are_one_line(tmp_path, args, fragments):
    refused(invoke("run", *args, "--target", tmp_path, "--dry-run"), 2, *fragments)


@FUZZ
@given(options=st.dictionaries(st.sampled_from(["--rw", "--bs", "--iodepth", "--numjobs", "--rwmixread"]),
                               st.text(alphabet=st.sampled_from(list("0123456789kKmMiB%,:-x randwritebs")),
                                       max_size=12), min_size=1))
def test_any_fio_options_make_a_plan_or_one_line(tmp_path_factory, options):
    args = [part for option in options.items() for part in option]
    clean_dry_run(tmp_path_factory, lambda folder: [*args, "--target", folder])


# --- fio's names in a suite file ---

def mine(tmp_path, body: str):
    return suite_file(tmp_path, f"name = 'mine'\n{body}", "mine.toml")


def test_fios_names_are_the_suites_parameters(tmp_path):
    path = mine(tmp_path, "[defaults]\nnumjobs = 2\nioengine = 'psync'\nramp_time = '1s'\n"
                                "[[group]]\nname = 'a'\nrw = ['randread', 'randwrite']\nblocksize = '4k'\n"
                                "[[group]]\nname = 'b'\nrw = ['read', 'randread']\nbs = '64k'\n"
                                "[[group]]\nname = 'c'\nreadwrite = 'randrw'\nrwmixwrite = 30\nbs = '4k'\n")
    tests = build_plan(load_suite(str(path))).tests
    assert [t.fio_rw for t in tests] == ["randread", "randwrite", "read", "randread", "randrw"]
    assert {(t.jobs, t.engine, t.ramp) for t in tests} == {(2, "psync", 1.0)} and tests[-1].rwmixread == 70
    assert load_suite(str(path)).notes == ()


def test_si_sizes_and_groups_left_to_the_defaults_are_noted(tmp_path):
    path = mine(tmp_path, "[[group]]\nname = 'a'\nbs = ['64KB', '1MB', '4k']\n[[group]]\nname = 'b'\n"
                                "iodepth = 2\n")
    assert load_suite(str(path)).notes == (
        f"{path}: group 1 (a): bs: 64KB is 64,000 bytes here (SI, as every size disklab reads); fio reads 64KB as "
        "65,536: write 64KiB for that (likewise 1MB)",
        f"{path}: group 2 (b): names neither a direction nor a block size: random reads of 4 KiB blocks, the "
        "defaults, were taken")
    result = invoke("run", path, "--dry-run", "--repeat", "1")
    assert result.exit_code == 0 and "note: " + load_suite(str(path)).notes[1] in result.stdout


def test_built_in_suites_read_without_notes():
    from disklab.suite.loader import builtin_names

    assert all(load_suite(name).notes == () for name in builtin_names())




_FIO_VALUES = st.one_of(st.integers(-5, 200), st.sampled_from(["randread", "rw", "trim", "64KB", "4k", "1s", ""]),
                        st.lists(st.sampled_from(["read", "randwrite", "randrw", "4KB", 7]), max_size=3))


@FUZZ
@given(table=st.dictionaries(st.sampled_from(["rw", "readwrite", "numjobs", "jobs", "rwmixwrite", "rwmixread", "bs",
                                              "blocksize", "ioengine", "ramp_time", "startdelay", "pattern"]),
                             _FIO_VALUES, max_size=4))
def test_any_fio_names_in_a_suite_make_a_plan_or_one_line(tmp_path_factory, table):
    lines = "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items())
    clean_dry_run(tmp_path_factory, lambda folder: [mine(folder, f"[[group]]\nname = 'a'\n{lines}"), "--repeat", "1"])


def test_a_suites_fio_options_may_be_a_grid_axis_each_test_labelled_on_one_line(tmp_path):
    path = mine(tmp_path, "[[group]]\nname = 'dist'\ndirection = 'read'\n"
                          'fio = ["random_distribution=zipf:1.2\\nnorandommap", "random_distribution=pareto:0.9"]\n')
    zipf, pareto = build_plan(load_suite(str(path))).tests
    assert zipf.label == "dist fio=random_distribution=zipf:1.2 norandommap"
    assert zipf.fio_options == {"random_distribution": "zipf:1.2", "norandommap": None}
    assert pareto.fio == "random_distribution=pareto:0.9"
