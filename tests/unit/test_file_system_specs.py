"""`run --fs TYPE[:MKFS-OPTIONS][@MOUNT-OPTIONS]` read as the user means it, and every other text one clear line."""

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from disklab.cli.main import cli
from disklab.targets.filesystem import FsSpec, parse_fs_spec


@pytest.mark.parametrize("text, spec", [
    ("ext4", FsSpec("ext4")),
    ("xfs:-d su=64k,sw=4@noatime", FsSpec("xfs", ("-d", "su=64k,sw=4"), "noatime")),
    ("btrfs@noatime,compress=zstd", FsSpec("btrfs", (), "noatime,compress=zstd")),
    ("ext4:-E 'stride=16,stripe-width=64' -b 4096", FsSpec("ext4", ("-E", "stride=16,stripe-width=64", "-b", "4096"))),
])
def test_specs(text, spec):
    assert parse_fs_spec(text) == spec


def test_the_commands_and_the_label():
    spec = parse_fs_spec("xfs:-d su=64k,sw=4@noatime")
    assert spec.label == "xfs -d su=64k,sw=4 noatime"
    assert spec.mkfs_command("/dev/sdb") == ["mkfs.xfs", "-f", "-d", "su=64k,sw=4", "/dev/sdb"]
    assert spec.mount_command("/dev/sdb", "/mnt/x") == ["mount", "-t", "xfs", "-o", "noatime", "/dev/sdb", "/mnt/x"]


@pytest.mark.parametrize("text, says", [
    ("zfs", "not a file system disklab makes"), ("", "not a file system disklab makes"),
    ("xfs:-L 'unclosed", "do not split into words"), ("ext4:/dev/sda", "name no device"),
    ("ext4@noatime, discard", "one comma-separated list"), ("ext4@noatime\x00", "control character"),
])
def test_bad_specs(text, says):
    with pytest.raises(ValueError, match=says):
        parse_fs_spec(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(min_size=0, max_size=40))
def test_any_fs_text_is_read_or_refused_in_one_line(tmp_path, text):
    """A directory target is refused after the --fs texts are read: any text gets there or stops at its own line."""
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "results.db"), "run", "quick", "--target", str(tmp_path),
                                      "--destroy-data", "--fs", text])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("disklab: error:"), result.output
    assert not (tmp_path / "results.db").exists()
