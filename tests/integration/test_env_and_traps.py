"""A run records its environment and SMART status; a buffered test on a cached small file is flagged."""

import json

import pytest

from disklab.env.registry import DEVICE_KEYS, KEYS
from tests.integration.conftest import NEEDS_FIO

pytestmark = [pytest.mark.integration, NEEDS_FIO]

CACHED = """
name = "cached"
[defaults]
runtime = "1s"
ramp = "0s"
pause = "0s"
size = "64MiB"
direct = false
[[group]]
name = "RND4K buffered"
label = "RND4K buffered read"
pattern = "random"
bs = "4k"
"""


def test_a_buffered_test_on_a_cached_small_file_is_flagged_as_a_cache_artefact(tmp_path, disklab):
    suite, target = tmp_path / "cached.toml", tmp_path / "target"
    suite.write_text(CACHED)
    target.mkdir()
    result = disklab("run", str(suite), "--target", str(target))
    assert result.returncode == 0, result.stderr
    (run,) = disklab.runs()
    (test,) = disklab.tests(run["id"])
    flags = disklab.query("SELECT flag, message FROM test_flags WHERE test_id = ?", (test["id"],))
    assert [f["flag"] for f in flags] == ["page-cache"]
    assert "page cache can serve this; M3 asks for at least 2x RAM" in flags[0]["message"]
    shown = disklab("show", "last").stdout
    assert "RND4K buffered read: page-cache: buffered I/O on 64MiB" in shown.replace("\n", " ")
    assert "M3 asks for at least 2x RAM" in shown.replace("\n", "")


def test_a_runs_environment_shows_the_keys_for_a_file_on_the_root_disk(tmp_path, disklab):
    target = tmp_path / "target"
    target.mkdir()
    result = disklab("run", "quick", "--target", str(target), "--runtime", "1", "--ramp", "0", "--size", "16M",
                     "--read-only")
    assert result.returncode == 0, result.stderr
    (run,) = disklab.runs()
    env = {r["key"]: json.loads(r["value_json"]) for r in disklab.query("SELECT * FROM run_env WHERE run_id = ?", (run["id"],))}
    for key in set(KEYS) - {"resumed_with"}:
        assert key in env, key
    assert env["kernel"] and env["fio_version"].startswith("fio-3") and env["cpu_count"] >= 1 and env["ram_bytes"] > 0
    assert env["fs_type"] and env["fs_mount_point"] and env["fs_mount_options"]
    assert env["smart"]  # read, or "not available: <reason>" (this machine's virtio disk has no SMART)
    disks = env["devices"].split(", ") if env["devices"] else []
    for disk in disks:
        for field in DEVICE_KEYS:
            assert f"device.{disk}.{field}" in env
        assert env[f"device.{disk}.logical_block_size"] in (512, 4096)
    shown = disklab("show", "last", "--env").stdout
    for label in ("kernel", "distribution", "CPU model", "RAM", "fio version", "file system", "mount options", "SMART"):
        assert label in shown
    for disk in disks:
        assert f"{disk}: I/O scheduler" in shown and f"{disk}: write cache" in shown and "bytes" in shown


def test_json_export_carries_the_environment_and_each_tests_flags(disklab, tmp_path):
    suite = tmp_path / "buffered.toml"
    suite.write_text('name = "b"\n[defaults]\nruntime = "1s"\nsize = "64M"\ndirect = false\n'
                     '[[group]]\nname = "cached"\nbs = "4k"\n')
    assert disklab("run", str(suite), "--target", str(tmp_path)).returncode == 0
    document = json.loads(disklab("show", "last", "--format", "json").stdout)
    assert document["environment"]["kernel"] and "page-cache" in document["tests"][0]["flags"]
