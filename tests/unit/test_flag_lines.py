"""Flags that inform without drowning the figures (issue 42): one line per planned test and flag, however many of
its passes carry it, with how many did and the range of what they saw."""

from disklab.analysis.contention import busy_machine
from disklab.report.table import flag_lines, merged_message
from disklab.store.repository import Store
from disklab.system.contention import Contention
from tests.unit.test_compare import job, stored_run


def test_a_test_busy_in_every_pass_is_one_line_with_the_range_of_what_was_seen(tmp_path):
    with Store(tmp_path / "r.db") as store:
        record = stored_run(store, [("RND4K Q1T1 write", {}, [job(1000)] * 5), ("quiet", {"bs": 8192}, [job(900)] * 5)])
        tests = [t for t in record.tests if t.label == "RND4K Q1T1 write"]
        for test, cpus in zip(tests, (0.81, 1.2, 0.95, 1.05, 0.9)):
            ((flag, message),) = busy_machine(Contention(1.0, cpus, 2e6), test.as_job(), ("vda",))
            store.add_flag(test.id, flag, message)
        store.add_flag(record.tests[-1].id, "device-cache", "the device's cache answered")  # one pass of another
        lines = flag_lines(store.get_run(record.info.id))
    assert len(lines) == 2, lines
    busy, cache = lines
    assert busy.startswith("⚑ RND4K Q1T1 write: busy-machine in 5 of 5 passes: other work ran beside this test: "
                           "0.81-1.20 CPUs of other processes' time and 2.0 MB/s of other I/O on vda over its 1.0 s")
    assert cache == "⚑ quiet: device-cache in 1 of 5 passes: the device's cache answered"


def test_messages_that_differ_in_more_than_numbers_are_each_kept_once():
    assert merged_message(["stopped by signal 2", "stopped by signal 15"]) == "stopped by signal 2-15"
    assert merged_message(["a cache", "a cache", "no cache at 1,024 bytes"]) == "a cache | no cache at 1,024 bytes"
    assert merged_message(["1,536 of 2,048 written", "512 of 2,048 written"]) == "512-1,536 of 2,048 written"
