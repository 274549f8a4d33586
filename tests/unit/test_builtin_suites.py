"""The built-in suites carry the published methods' parameters, and fit small targets with notes."""

import shutil
import subprocess
from dataclasses import replace

import pytest

from disklab.errors import UserError
from disklab.plan.jobfile import render_jobfile
from disklab.plan.build import Overrides, build_plan, file_set_name, fit_to_target
from disklab.suite.loader import builtin_names, load_suite

MiB, GiB = 1024**2, 1024**3
# Suites of fio tests; the pgbench suite runs no fio (tests/unit/test_pgbench.py).
FIO_SUITES = [name for name in builtin_names() if load_suite(name).pgbench is None]


def plan_of(name, **overrides):
    return build_plan(load_suite(name), Overrides(**overrides))


def options(jobfile: str) -> dict[str, str]:
    pairs = [line.split("=", 1) for line in jobfile.splitlines() if "=" in line and not line.startswith(";")]
    return dict(pairs)


@pytest.mark.parametrize(
    "name, count",
    [("quick", 8), ("matrix", 60), ("blocksize", 15), ("mixed", 1), ("transfer-sweep", 36), ("database", 55),
     ("database-quick", 33), ("profile", 12), ("fill", 11), ("smallfiles", 14), ("video", 12), ("sync", 6),
     ("desktop-mix", 32), ("iozone", 78)],
)
def test_every_method_expands_to_its_published_number_of_tests(name, count):
    assert len(plan_of(name).tests) == count
    assert name in builtin_names()


def test_matrix_is_ten_cases_by_read_write_by_1_4_64_jobs():
    tests = plan_of("matrix").tests
    groups = list(dict.fromkeys(t.group for t in tests))
    assert len(groups) == 10 and groups[0].startswith("1. ") and groups[9].startswith("10. ")
    for group in groups:
        cells = {(t.direction, t.jobs) for t in tests if t.group == group}
        assert cells == {(d, j) for d in ("read", "write") for j in (1, 4, 64)}
    by_case = {t.group.split(".")[0]: t for t in tests}
    assert [by_case[str(n)].region for n in range(1, 11)] == [
        "whole", "first:10%", "whole", "first:10%", "first:5GB", "last:5GB", "whole", "first:5GB", "last:5GB", "whole"]
    assert all(by_case[str(n)].bs == 4096 and by_case[str(n)].metric == "iops" for n in range(1, 5))
    assert all(by_case[str(n)].bs == MiB and by_case[str(n)].metric == "mb_per_s" for n in range(5, 11))
    assert all(t.runtime == 60 and not t.time_based and t.pause == 30 and t.size is None for t in tests)


def test_blocksize_sweeps_4k_to_64m_doubling_with_16_mixed_jobs():
    tests = plan_of("blocksize").tests
    assert [t.bs for t in tests] == [4096 * 2**i for i in range(15)]
    assert tests[-1].bs == 64 * MiB
    assert all(t.jobs == 16 and t.fio_rw == "randrw" for t in tests)


def test_mixed_uses_the_published_split():
    (test,) = plan_of("mixed").tests
    assert test.bssplit == "4k/20:64k/50:256k/20:2m/10" and test.jobs == 16
    assert test.block_sizes == (4096, 64 * 1024, 256 * 1024, 2 * MiB)


def test_database_is_a_grid_of_read_share_by_queue_depth():
    tests = plan_of("database").tests
    assert {(t.rwmixread, t.iodepth) for t in tests} == {(r, q) for r in range(0, 101, 10) for q in (1, 4, 16, 64, 256)}
    assert all(t.bs == 8192 and t.pattern == "random" for t in tests)
    assert {t.iodepth for t in plan_of("database-quick").tests} == {1, 16, 256}


def test_fill_writes_ten_passes_then_reads_the_same_file():
    tests = plan_of("fill").tests
    assert [t.label for t in tests] == [f"write pass {n}" for n in range(1, 11)] + ["read"]
    assert len({t.size for t in tests}) == 1 and tests[0].size == GiB  # the study's 1024 MB file


def test_small_files_are_written_then_read_after_five_minutes_from_the_same_files():
    write, read = plan_of("smallfiles").tests[:2]
    assert (write.nrfiles, write.filesize) == (read.nrfiles, read.filesize) == (4096, 256 * 1024)
    assert (write.direction, read.direction) == ("write", "read") and file_set_name(write) == file_set_name(read)
    assert read.pause == 300


def test_file_copies_are_decimal_sets_written_three_times_each():
    copies = plan_of("smallfiles").tests[2:]
    assert [(t.nrfiles, t.filesize) for t in copies[::3]] == [
        (100, 10**9), (10, 10 * 10**9), (1, 100 * 10**9), (102400, 10**6)]
    assert all(t.direction == "write" for t in copies)
    assert [t.label for t in copies[:3]] == [f"100 x 1GB write pass {n}" for n in (1, 2, 3)]
    assert all(t.bs <= t.filesize and t.bs % 4096 == 0 for t in copies)  # whole 4 KiB blocks for direct I/O


def test_scale_shrinks_file_sets_and_size_sets_their_total():
    scaled = plan_of("smallfiles", scale=0.001).tests
    assert [(t.nrfiles, t.filesize) for t in scaled[:2] + scaled[2::3]] == [
        (4, 256 * 1024), (4, 256 * 1024), (1, 95 * MiB), (1, 95 * MiB), (1, 95 * MiB), (102, 976 * 1024)]
    assert all(t.filesize % t.bs == 0 for t in scaled)
    sized = plan_of("smallfiles", size=64 * MiB).tests
    assert all(t.nrfiles * t.filesize <= 64 * MiB for t in sized)


def test_video_frames_are_5k_10_bit_files_at_24_fps():
    tests = plan_of("video").tests
    frame = 5120 * 2700 * 4  # 10-bit RGB packed in 32 bits, already a multiple of 4096
    assert all(t.filesize == frame and t.bs == frame and t.rate_iops == 24 for t in tests)
    sizes = (256 * 10**6, 512 * 10**6, 10**9, 4 * 10**9, 16 * 10**9, 64 * 10**9)
    assert [t.nrfiles for t in tests[::2]] == [s // frame for s in sizes]
    assert all(t.pattern == "sequential" for t in tests)


def test_desktop_mix_is_crystaldiskmarks_peak_and_real_world_tests_as_read_write_and_both_mixes():
    tests = plan_of("desktop-mix").tests
    kinds = {(t.pattern, t.bs, t.iodepth, t.jobs) for t in tests}
    assert kinds == {("sequential", MiB, 8, 1), ("random", 4096, 32, 16), ("sequential", MiB, 1, 1),
                     ("random", 4096, 1, 1)}
    for kind in kinds:
        cells = {(t.size, t.direction, t.rwmixread) for t in tests if (t.pattern, t.bs, t.iodepth, t.jobs) == kind}
        assert cells == {(size, d, r) for size in (16 * MiB, 64 * GiB)
                         for d, r in (("read", 100), ("write", 0), ("mixed", 90), ("mixed", 10))}


def test_iozone_sweeps_record_sizes_per_pattern_and_direction_with_rewrite_and_reread():
    tests = plan_of("iozone").tests
    sizes = [4096 * 2**i for i in range(13)]
    assert sizes[-1] == 16 * MiB
    for pattern, direction, passes in (("sequential", "write", 2), ("sequential", "read", 2), ("random", "read", 1),
                                       ("random", "write", 1)):
        chosen = [t.bs for t in tests if (t.pattern, t.direction) == (pattern, direction)]
        assert chosen == [bs for bs in sizes for _ in range(passes)]
    assert all(not t.direct and t.engine == "psync" and t.iodepth == 1 for t in tests)


def test_sync_commits_through_fsync_fdatasync_and_dsync():
    tests = plan_of("sync").tests
    rendered = [options(render_jobfile(t, "/f", "/d", "sync")) for t in tests]
    assert [next(k for k in ("fsync", "fdatasync", "sync") if k in o) for o in rendered] == [
        "fsync", "fsync", "fdatasync", "fdatasync", "sync", "sync"]
    assert all(o["direct"] == "0" and o["iodepth"] == "1" for o in rendered)


def test_regions_are_fitted_to_a_small_target_with_notes():
    plan = fit_to_target(plan_of("matrix", size=256 * MiB), None, 512, is_directory=True)
    first10 = next(t for t in plan.tests if t.region == "first:10%" and t.jobs == 1)
    assert first10.offset == 0 and first10.size == 25 * MiB
    last5 = next(t for t in plan.tests if t.region == "last:5GB" and t.jobs == 1)
    assert last5.offset + last5.size == 256 * MiB and last5.size == 128 * MiB
    assert any("last:5GB scaled down" in note for note in plan.notes)


def test_whole_device_suites_need_a_size_for_a_test_file():
    with pytest.raises(UserError, match="--size"):
        fit_to_target(plan_of("matrix"), None, 512, is_directory=True)
    plan = fit_to_target(plan_of("matrix"), 8 * GiB, 512, is_directory=False)
    assert max(t.offset + t.size for t in plan.tests) == 8 * GiB


def test_parallel_sequential_jobs_stream_through_their_own_slices():
    plan = fit_to_target(plan_of("matrix", size=256 * MiB), None, 512, is_directory=True)
    test = next(t for t in plan.tests if t.region == "whole" and t.pattern == "sequential" and t.jobs == 64)
    opts = options(render_jobfile(test, "/f", "/d", "matrix"))
    assert opts["size"] == opts["offset_increment"] == "4m"  # 256 MiB / 64 jobs
    random = next(t for t in plan.tests if t.region == "whole" and t.pattern == "random" and t.jobs == 64)
    assert "offset_increment" not in options(render_jobfile(random, "/f", "/d", "matrix"))


def test_sizes_below_the_logical_block_size_are_skipped_with_the_reason():
    plan = fit_to_target(plan_of("transfer-sweep", size=256 * MiB), None, 4096, is_directory=True)
    assert sorted(label for label, _ in plan.skipped) == sorted(
        f"SEQ {size} {direction}" for size in ("512B", "1KiB", "2KiB") for direction in ("read", "write"))
    assert "4096-byte logical blocks" in plan.skipped[0][1]
    assert len(plan.tests) == 30


def test_deep_queues_of_huge_blocks_are_cut_to_fit_memory():
    plan = fit_to_target(plan_of("transfer-sweep", size=GiB), None, 512, is_directory=True)
    big = next(t for t in plan.tests if t.bs == 64 * MiB)
    assert big.iodepth * big.bs <= GiB and big.iodepth == 16
    assert any("queue depth 256 cut to 16" in note for note in plan.notes)


def test_file_set_tests_need_a_directory():
    with pytest.raises(UserError, match="directory"):
        fit_to_target(plan_of("smallfiles", scale=0.001), 8 * GiB, 512, is_directory=False)


def test_file_set_job_files_share_names_and_create_files_only_when_writing():
    plan = fit_to_target(plan_of("smallfiles", scale=0.001), None, 512, is_directory=True)
    write, read = (options(render_jobfile(t, "/f", "/d", "smallfiles")) for t in plan.tests[:2])
    assert write["directory"] == read["directory"] == "/d"
    assert write["filename_format"] == read["filename_format"]
    assert write["nrfiles"] == "4" and write["create_on_open"] == "1" and write["end_fsync"] == "1"
    assert "create_on_open" not in read


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.parametrize("name", FIO_SUITES)
def test_fio_accepts_every_job_file_of_every_builtin_suite(name, tmp_path):
    plan = fit_to_target(plan_of(name, scale=0.001), 4 * GiB, 512, is_directory=True)
    paths = []
    for n, test in enumerate(plan.tests):
        paths.append(tmp_path / f"{n}.fio")
        paths[-1].write_text(render_jobfile(replace(test, engine="psync"), str(tmp_path / "f"), str(tmp_path), name))
    result = subprocess.run(["fio", "--parse-only", *map(str, paths)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
