"""Cache traps: which finished tests are flagged, and that execute_schedule stores the flags."""

from dataclasses import replace

from disklab.analysis.traps import cache_traps
from disklab.run.execute import Execution, execute_schedule
from disklab.fio.parse import DirectionMetrics, JobResult
from disklab.plan.build import build_plan, expand_suite, resolve_engines
from disklab.run.schedule import FixedSchedule
from disklab.store.repository import Store
from disklab.suite.loader import load_suite
from tests.conftest import fixture_text
from tests.unit.test_execute import Recorder, ReplayExecutor
from tests.unit.test_store import new_run

RND4K_READ = next(t for t in expand_suite(load_suite("quick")) if t.label == "RND4K Q1T1 read")
SEQ_WRITE = next(t for t in expand_suite(load_suite("quick")) if t.label == "SEQ1M Q1T1 write")
GIB = 1024**3
ENV = {"ram_bytes": 8 * GIB, "fs_compression": "none"}


def job(bw: float, direction: str = "read") -> JobResult:
    metrics = DirectionMetrics(direction, int(bw), 1000, bw / 4096, bw, 1000, 1000.0, 900.0, 5000.0, {})
    return JobResult("t", 0, 1.0, 2.0, (metrics,))


def flags(test, result, env=ENV, earlier=()):
    return [flag for flag, _ in cache_traps(test, result, env, list(earlier))]


def test_a_buffered_test_on_less_than_twice_the_ram_is_a_page_cache_trap():
    buffered = replace(RND4K_READ, direct=False, size=64 * 2**20)
    ((flag, message),) = cache_traps(buffered, job(50e6), ENV, [])
    assert flag == "page-cache"
    assert "page cache can serve this; M3 asks for at least 2x RAM" in message and "8.0 GiB of RAM" in message
    assert flags(replace(buffered, size=16 * GIB), job(50e6)) == []
    assert flags(replace(buffered, direct=True), job(50e6)) == []
    assert flags(buffered, job(50e6), env={}) == []  # RAM unknown: nothing claimed


def test_a_buffered_test_far_faster_than_its_direct_twin_is_flagged():
    direct = replace(RND4K_READ, label="direct", size=32 * GIB)
    buffered = replace(RND4K_READ, direct=False, size=32 * GIB)
    assert flags(buffered, job(400e6), earlier=[(direct, job(50e6))]) == ["faster-than-direct"]
    assert flags(buffered, job(100e6), earlier=[(direct, job(50e6))]) == []
    other_pattern = replace(direct, iodepth=32)
    assert flags(buffered, job(400e6), earlier=[(other_pattern, job(50e6))]) == []


def test_more_than_the_interface_can_carry_is_flagged():
    env = {**ENV, "device.nvme0n1.interface_ceiling_bytes_per_s": 3.9e9}
    big = replace(RND4K_READ, size=32 * GIB)
    assert flags(big, job(6e9), env) == ["beyond-interface"]
    assert flags(big, job(3.5e9), env) == []
    assert flags(big, job(6e9), {**env, "device.nvme1n1.interface_ceiling_bytes_per_s": 3.9e9}) == []


def test_a_compressing_file_system_flags_every_test_and_says_writes_are_incompressible():
    env = {**ENV, "fs_compression": "btrfs compress=zstd:3"}
    ((flag, message),) = cache_traps(replace(SEQ_WRITE, size=32 * GIB), job(1e9, "write"), env, [])
    assert flag == "compressing-fs" and "btrfs compress=zstd:3" in message and "refill_buffers=1" in message


def test_a_target_in_ram_flags_every_test_with_what_holds_it():
    big = replace(RND4K_READ, size=32 * GIB)  # direct and far beyond the RAM: no other trap applies
    ((flag, message),) = cache_traps(big, job(1.9e9), {**ENV, "fs_type": "tmpfs"}, [])
    assert flag == "memory-target"
    assert message == ("the file system is tmpfs, which keeps its files in RAM: these figures are memory's, not a "
                       "disk's (direct I/O does not change that)")
    for fs_type in ("ramfs", "devtmpfs", "hugetlbfs"):
        assert flags(big, job(1e9), {**ENV, "fs_type": fs_type}) == ["memory-target"]
    env = {**ENV, "fs_type": "ext4", "device.zram1.ram_backing": "zram (compressed RAM)",
           "device.vda.ram_backing": "none"}
    ((_, message),) = cache_traps(big, job(1e9), env, [])
    assert message.startswith("zram1 is zram (compressed RAM): these figures are memory's")
    buffered = cache_traps(replace(big, direct=False, size=64 * 2**20), job(1e9), {**ENV, "fs_type": "tmpfs"}, [])
    assert [flag for flag, _ in buffered] == ["memory-target", "page-cache"]
    assert buffered[0][1].endswith("these figures are memory's, not a disk's")


def test_a_real_disk_or_an_unknown_backing_is_not_flagged_as_memory():
    big = replace(RND4K_READ, size=32 * GIB)
    assert flags(big, job(1e9), {**ENV, "fs_type": "ext4", "device.vda.ram_backing": "none"}) == []
    assert flags(big, job(1e9), {**ENV, "fs_type": "ext4", "device.loop3.ram_backing": None}) == []
    assert flags(big, job(1e9), {**ENV, "fs_type": None}) == []


def test_execute_schedule_stores_the_flags_with_the_test(tmp_path):
    plan = resolve_engines(build_plan(load_suite("quick")), lambda wanted: "io_uring")
    plan = replace(plan, tests=(replace(plan.tests[4], direct=False, size=64 * 2**20),))
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(planned_tests=1))
        store.set_run_values("run_env", run_id, {"ram_bytes": 8 * GIB})
        executor = ReplayExecutor([fixture_text("randread-4k-q32.json.json")])
        execute_schedule(Execution(plan, "/f", "/files", run_id), FixedSchedule(plan), executor, store, Recorder())
        (test,) = store.get_run(run_id).tests
    assert [flag for flag, _ in test.flags] == ["page-cache"]


def test_a_data_set_that_fits_the_declared_drive_cache_is_flagged_direct_or_not():
    small = replace(RND4K_READ, size=256 * 2**20)
    env = {**ENV, "declared_cache_bytes": GIB}
    (message,) = [m for f, m in cache_traps(small, job(50e6), env, []) if f == "device-cache"]
    assert message == ("the data set (256MiB) fits in the 1GiB drive or controller cache declared with --cache: "
                       "the cache, not the media, can serve this")
    assert "device-cache" in flags(replace(small, size=GIB), job(50e6), env=env)  # exactly the cache's size fits
    assert "device-cache" not in flags(replace(small, size=GIB + 4096), job(50e6), env=env)
    assert "device-cache" not in flags(small, job(50e6))  # no cache declared: nothing claimed
