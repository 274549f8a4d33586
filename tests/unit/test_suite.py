
import pytest
from hypothesis import given, settings, strategies as st

from disklab.errors import UserError
from disklab.plan.build import Overrides, build_plan, count_tests, expand_suite, fit_to_target, resolve_engines
from disklab.suite.loader import builtin_names, load_suite, parse_suite

GRID = """
name = "grid"
[defaults]
runtime = "2s"
[[group]]
name = "g"
bs = ["4k", "64k"]
iodepth = [1, 32]
direction = ["read", "write"]
"""


def test_quick_is_the_desktop_profile():
    tests = expand_suite(load_suite("quick"))
    assert [t.label for t in tests] == [
        "SEQ1M Q8T1 read", "SEQ1M Q8T1 write", "SEQ1M Q1T1 read", "SEQ1M Q1T1 write",
        "RND4K Q32T1 read", "RND4K Q32T1 write", "RND4K Q1T1 read", "RND4K Q1T1 write",
    ]
    assert {(t.fio_rw, t.bs, t.iodepth, t.jobs) for t in tests} == {
        ("read", 2**20, 8, 1), ("write", 2**20, 8, 1), ("read", 2**20, 1, 1), ("write", 2**20, 1, 1),
        ("randread", 4096, 32, 1), ("randwrite", 4096, 32, 1), ("randread", 4096, 1, 1), ("randwrite", 4096, 1, 1),
    }
    assert all(t.direct and t.runtime == 5 and t.ramp == 1 and t.size == 2**30 for t in tests)


def test_every_builtin_suite_loads():
    for name in builtin_names():
        suite = load_suite(name)
        assert expand_suite(suite) or suite.pgbench is not None


def test_lists_expand_as_a_grid_in_file_order():
    tests = expand_suite(parse_suite(GRID, "x", "grid.toml"))
    assert [(t.bs, t.iodepth, t.direction) for t in tests] == [
        (4096, 1, "read"), (4096, 1, "write"), (4096, 32, "read"), (4096, 32, "write"),
        (65536, 1, "read"), (65536, 1, "write"), (65536, 32, "read"), (65536, 32, "write"),
    ]
    assert tests[0].label == "g bs=4KiB iodepth=1 read"
    assert all(t.runtime == 2 for t in tests)


def test_rwmixread_makes_a_mixed_test_that_counts_as_writing():
    suite = parse_suite('name="m"\n[[group]]\nname="m"\nrwmixread=[0, 70, 100]\n', "x", "m.toml")
    tests = expand_suite(suite)
    assert [t.fio_rw for t in tests] == ["randrw"] * 3
    assert all(t.writes for t in tests)  # even 100 % reads: only plain reads are on the allow-list


def test_overrides_win_and_read_only_drops_writers():
    plan = build_plan(load_suite("quick"), Overrides(runtime=1.0, size=256 * 2**20), read_only=True)
    assert len(plan.tests) == 4 and plan.left_out_writes == 4 and not plan.writes
    assert all(t.runtime == 1 and t.size == 256 * 2**20 for t in plan.tests)
    assert all(t.size == 2**20 for t in fit_to_target(plan, 2**20, 512, is_directory=False).tests)


@pytest.mark.parametrize(
    "text, field",
    [
        ('name="x"\n', "group"),
        ('[[group]]\nname="g"\n', "name"),
        ('name="x"\n[[group]]\nname="g"\nbs="4x"\n', "bs"),
        ('name="x"\n[[group]]\nname="g"\niodepth=0\n', "iodepth"),
        ('name="x"\n[[group]]\nname="g"\nblock_size="4k"\n', "block_size"),
        ('name="x"\n[[group]]\nname="g"\ndirection="sideways"\n', "direction"),
        ('name="x"\n[defaults]\nbs=["4k"]\n[[group]]\nname="g"\n', "bs"),
        ('name="x"\n[[group]]\nname="g"\nbs=[]\n', "bs"),
        ('name="x"\n[[group]]\nname="g"\ndirect="yes"\n', "direct"),
        ("name = \n", "TOML"),
        ('name="x"\n[[group]]\nname="g"\nlabel="Q{depth}"\n', "label"),
        ('name="x"\n[[group]]\nname="g"\nlog_interval="0.5ms"\n', "log_interval"),
        ('name="x"\n[[group]]\nname="g"\nlabel="{direction:x}"\n', "label"),
        ('name="x"\n[[group]]\nname="g"\nlabel="{pattern:>999999999999}"\n', "label"),
        ('name="x"\n[[group]]\nname="g"\nlabel="' + "x" * 201 + '"\n', "label"),
        ('name="x"\n[[group]]\nname="g"\niodepth=[[1]]\n', "iodepth"),
        ('name="x"\n[[group]]\nname="g"\nruntime=nan\n', "runtime"),
        ('name="x"\n[[group]]\nname="g"\nregion=["first:10%", 5]\n', "region"),
        ('name="x"\n[view]\nrows="group"\ncolumns=[[1]]\n[[group]]\nname="g"\n', "columns"),
        ('name="x"\n[view]\nrows=["group"]\n[[group]]\nname="g"\n', "rows"),
        ('name="x"\n[[group]]\nname="g"\nbs=' + "[" * 1000 + "]" * 1000 + "\n", "nested"),
        ('name="x"\n[configurations]\n[[group]]\nname="g"\n', "configurations"),
        ('name="x"\n[configurations]\noverprovision=[0, 95]\n[[group]]\nname="g"\n', "overprovision"),
        ('name="x"\n[configurations]\noverprovision=[20, 20]\n[[group]]\nname="g"\n', "overprovision"),
        ('name="x"\n[configurations]\nwrite_cache=["maybe"]\n[[group]]\nname="g"\n', "write_cache"),
        ('name="x"\n[configurations]\nwrite_cache=[true]\n[[group]]\nname="g"\n', "write_cache"),
        ('name="x"\n[configurations]\nfs="ext4"\n[[group]]\nname="g"\n', "fs"),
        ('name="x"\n[configurations]\nfs=["zfs"]\n[[group]]\nname="g"\n', "fs"),
        ('name="x"\n[configurations]\nfs=["ext4", "ext4"]\n[[group]]\nname="g"\n', "fs"),
        ('name="x"\n[configurations]\nfs=["ext4"]\noverprovision=[0]\n[[group]]\nname="g"\n', "overprovision"),
        ('name="x"\n[configurations]\nfilesystems=["ext4"]\n[[group]]\nname="g"\n', "filesystems"),
    ],
)
def test_errors_name_the_file_and_the_field(text, field):
    with pytest.raises(UserError) as err:
        parse_suite(text, "x", "my-suite.toml")
    assert "my-suite.toml" in str(err.value) and field in str(err.value)
    assert "\n" not in str(err.value).strip()


def test_a_suites_configurations_are_the_run_options_they_stand_for():
    suite = parse_suite('name="x"\n[configurations]\nfs=["ext4", "xfs:-d su=64k,sw=4@noatime"]\n'
                        'write_cache=["off", "on"]\n[[group]]\nname="g"\n', "x", "x.toml")
    assert suite.configurations.count == 4
    assert suite.configurations.as_options() == {"condition": None, "fs": ("ext4", "xfs:-d su=64k,sw=4@noatime"),
                                                 "write_cache": "off,on", "overprovision": None}
    overprovision = load_suite("overprovision")
    assert overprovision.configurations.as_options()["overprovision"] == "0,20,40,60"
    assert overprovision.mode == "steady" and overprovision.rounds.precondition and not overprovision.rounds.purge
    assert parse_suite(GRID, "x", "grid.toml").configurations is None


def test_unknown_suite_names_the_builtin_ones():
    with pytest.raises(UserError, match="quick"):
        load_suite("no-such-suite")


_fields = st.sampled_from(["name", "description", "label", "metric", "repeat", "bs", "bssplit", "iodepth", "jobs",
                           "pattern", "direction", "rwmixread", "region", "runtime", "time_based", "size", "nrfiles",
                           "filesize", "pause", "rate", "rate_iops", "sync", "log_interval", "frame_size", "bit_depth",
                           "fps", "direct", "engine", "rows", "columns", "values", "fs", "write_cache", "condition",
                           "overprovision", "bogus"])
_literals = st.sampled_from(['0', '-1', '1', '65537', '"4x"', '"4k"', '""', '[]', '[1, "a"]', '["read", "write"]',
                             'true', '1.5', '"sequential"', '{a = 1}', '"{nope}"', '"{bs} {iodepth}"', '"1s"', '"-5s"',
                             '"all"', '"first:10%"', '"last:5GB"', '"first:0%"', '"middle:1G"', '"4k/50:8k/50"',
                             '"4k/50:8k/40"', '"fsync"', '"5120x2700"', '"0x10"', '10', '"iops"', '"mb_per_s"',
                             '["iops"]', '["bs"]', '"group"', '"none"', '"0s"', '"0.5ms"', '[0, 20]', '[95]',
                             '["ext4"]', '["xfs:-b size=4096@noatime"]', '["on", "off"]', '["ext4", "ext4"]',
                             '["fresh", "full:3"]'])


@settings(max_examples=400, deadline=None)
@given(
    line=st.integers(0, GRID.count("\n")),
    field=_fields,
    literal=_literals,
    section=st.sampled_from(["", "[defaults]\n", "[[group]]\n", "[view]\n", "[configurations]\n"]),
)
def test_any_mutated_suite_gives_a_user_error_or_a_valid_plan(line, field, literal, section):
    lines = GRID.splitlines()
    lines.insert(line, f"{section}{field} = {literal}")
    try:
        plan = build_plan(parse_suite("\n".join(lines), "x", "fuzz.toml"))
    except UserError as err:
        assert str(err).startswith("fuzz.toml: ")
        return
    assert plan.tests and all(t.bs > 0 and t.iodepth >= 1 for t in plan.tests)
    try:  # fitting to a target may refuse (as a UserError), never crash
        fitted = fit_to_target(plan, 2**30, 512, is_directory=True)
    except UserError as err:
        assert "\n" not in str(err)
    else:
        assert all(t.offset + (t.size or 0) <= 2**30 for t in fitted.tests if not t.file_set)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes_the_loader(text):
    try:
        parse_suite(text, "x", "fuzz.toml")
    except UserError as err:
        assert str(err).startswith("fuzz.toml: ")


def test_engines_are_resolved_once_each_and_explicit_ones_kept():
    suite = parse_suite('name="e"\n[[group]]\nname="g"\nengine=["auto", "psync", "auto"]\n', "x", "e.toml")
    asked = []

    def choose(wanted):
        asked.append(wanted)
        return "io_uring" if wanted == "auto" else wanted

    plan = resolve_engines(build_plan(suite), choose)
    assert [t.engine for t in plan.tests] == ["io_uring", "psync", "io_uring"]
    assert sorted(asked) == ["auto", "psync"]


def test_a_block_larger_than_the_data_set_is_refused_at_plan_time():
    suite = parse_suite('name="b"\n[[group]]\nname="g"\nbs="2M"\nsize="1M"\n', "x", "b.toml")
    with pytest.raises(UserError, match="larger than its data set"):
        build_plan(suite)


def test_tests_are_counted_without_expanding():
    suite = parse_suite(GRID + 'repeat = 3\n[[group]]\nname = "h"\njobs = [1, 2, 4]\n', "x", "count.toml")
    assert count_tests(suite) == len(expand_suite(suite)) == 8 * 3 + 3
    with pytest.raises(UserError, match="count.toml expands to 27 tests, more than the limit of 26 per run"):
        build_plan(suite, Overrides(max_tests=26))
    assert len(build_plan(suite, Overrides(max_tests=27)).tests) == 27


def test_nrfiles_alone_splits_the_size_among_the_files():
    suite = parse_suite('name = "x"\n[[group]]\nname = "g"\nnrfiles = 17\nsize = "170M"\nbs = "64k"\n', "x", "s.toml")
    (test,) = build_plan(suite).tests
    assert test.file_set and test.nrfiles == 17 and test.filesize == 10 * 2**20 and test.size == 170 * 2**20
    (scaled,) = build_plan(suite, Overrides(size=17 * 2**20)).tests
    assert scaled.nrfiles == 17 and scaled.filesize == 2**20
