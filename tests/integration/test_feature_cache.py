"""`disklab run` keeps fio's answers in $DISKLAB_HOME and the next run acts on them instead of asking fio again."""

import json
import os
import subprocess
import sys

import pytest

from tests.integration.conftest import NEEDS_FIO

pytestmark = [pytest.mark.integration, NEEDS_FIO]

SUITE = """name = "one"
description = "one short read"

[defaults]
runtime = "1s"
ramp = "0s"
size = "16MiB"
direct = true

[[group]]
name = "RND4K"
label = "RND4K read"
pattern = "random"
bs = "4k"
iodepth = 4
direction = "read"
"""


def run_engine(tmp_path, home) -> str:
    """The engine the run stored, after a real run of one short test."""
    env = {**os.environ, "DISKLAB_HOME": str(home)}
    env.pop("DISKLAB_DB", None)
    (tmp_path / "target").mkdir(exist_ok=True)
    for args in (("run", str(tmp_path / "one.toml"), "--target", str(tmp_path / "target")),
                 ("show", "last", "--format", "json")):
        result = subprocess.run([sys.executable, "-m", "disklab", *args], capture_output=True, text=True, env=env,
                                stdin=subprocess.DEVNULL, timeout=300)
        assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["run"]["fio_engine"]


def test_the_next_run_takes_the_engine_verdicts_from_the_cache(tmp_path):
    (tmp_path / "one.toml").write_text(SUITE)
    home = tmp_path / "home"
    first = run_engine(tmp_path, home)
    cache = home / "fio-features.json"
    entries = json.loads(cache.read_text())
    (fio_path,) = entries
    assert entries[fio_path]["works"][first] is True
    if first != "io_uring":
        pytest.skip(f"io_uring does not work here ({first} was chosen): nothing to take away")
    # What only the cache says: io_uring does not work. A run that asked fio again would pick io_uring.
    entries[fio_path]["works"] = {"io_uring": False, "libaio": True}
    cache.write_text(json.dumps(entries))
    assert run_engine(tmp_path, home) == "libaio"
