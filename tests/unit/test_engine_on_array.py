"""The engine tried on an md array itself (io_uring has failed on md RAID5 with EAGAIN where the probe on a file
worked: fio issues 1374 and 1401): kept where it works, libaio where it fails and libaio works, said and kept with
the run, and one error where both fail. The kernel tier runs the probe on real md arrays (check_arrays.py), where
this kernel's io_uring works; the failing answers below are fio's words for it, as the issues quote them."""

import pytest

from disklab.errors import FioError
from disklab.fio.features import detect_fio, device_engine_error
from disklab.plan.build import build_plan, resolve_engines
from disklab.run.prepare import engine_on_array
from disklab.suite.loader import load_suite, parse_suite

EAGAIN = "fio: io_u error on file /dev/md127: Resource temporarily unavailable: write offset=0, buflen=4096"


def plans(suite):
    asked = build_plan(suite)
    return asked, resolve_engines(asked, lambda wanted: "io_uring" if wanted == "auto" else wanted)


def test_io_uring_that_works_on_the_array_is_kept():
    asked, resolved = plans(load_suite("quick"))
    said = []
    assert engine_on_array(asked, resolved, "/dev/md127", lambda engine: None, said.append) == resolved
    assert said == []


def test_io_uring_that_fails_on_the_array_gives_way_to_libaio_said_and_kept():
    asked, resolved = plans(load_suite("quick"))
    said = []
    errors = {"io_uring": EAGAIN, "libaio": None}
    changed = engine_on_array(asked, resolved, "/dev/md127", errors.get, said.append)
    assert {test.engine for test in changed.tests} == {"libaio"}
    assert changed.engine_change.startswith(f"io_uring failed on /dev/md127 ({EAGAIN}); its tests ran with libaio")
    assert said == [f"note: {changed.engine_change}"]


def test_an_engine_asked_for_by_name_is_not_switched_and_both_failing_is_one_error():
    suite = parse_suite('name = "x"\n[[group]]\nname = "g"\nengine = "io_uring"\n', "x.toml", "x.toml")
    asked, resolved = plans(suite)
    assert engine_on_array(asked, resolved, "/dev/md127", lambda engine: EAGAIN, print) == resolved
    asked, resolved = plans(load_suite("quick"))
    with pytest.raises(FioError, match="fio's engines fail on /dev/md127: io_uring: .*; libaio: "):
        engine_on_array(asked, resolved, "/dev/md127", lambda engine: EAGAIN, print)


def test_the_probe_runs_fio_on_the_path_and_says_what_fio_said(tmp_path):
    fio = detect_fio()
    target = tmp_path / "device"
    target.write_bytes(bytes(16 * 1024**2))
    assert device_engine_error(fio, "psync", str(target), writes=True) is None
    said = device_engine_error(fio, "psync", str(target / "under-a-file"), writes=False)  # ENOTDIR
    assert said and "Not a directory" in said and "\n" not in said, said
