"""The one line that names the disk under test (env/where.py), from environments as env/collect.py records them."""

import pytest

from disklab.env.collect import collect_target
from disklab.env.where import where_on
from disklab.system.mounts import mount_of

ROOT_ON_A_PARTITION = {
    "fs_type": "ext4", "fs_mount_point": "/", "fs_source": "/dev/sda2", "devices": "sda", "layout": "none",
    "device.sda.model": "Samsung SSD 870 EVO 1TB", "device.sda.interface": None, "device.sda.ram_backing": "none",
}


def test_a_file_system_on_a_partition_names_the_partition_its_disk_and_model_and_the_mount():
    assert where_on(ROOT_ON_A_PARTITION) == "/dev/sda2 (on sda: model Samsung SSD 870 EVO 1TB), ext4 mounted at /"


def test_a_whole_disk_without_a_model_says_so_and_gives_its_interface():
    env = {"fs_type": "ext4", "fs_mount_point": "/", "fs_source": "/dev/vda", "devices": "vda", "layout": "none",
           "device.vda.model": None, "device.vda.interface": "virtio", "device.vda.ram_backing": "none"}
    assert where_on(env) == "/dev/vda (model unknown, virtio), ext4 mounted at /"


def test_layers_and_every_disk_under_them_are_named():
    env = {"fs_type": "xfs", "fs_mount_point": "/data", "fs_source": "/dev/md0", "devices": "sdb, sdc",
           "layout": "md md0 raid1 over sdb1, sdc1", "device.sdb.model": "B", "device.sdc.model": "C"}
    assert where_on(env) == "/dev/md0 (md md0 raid1 over sdb1, sdc1; over sdb: model B; sdc: model C), xfs mounted at /data"


def test_what_keeps_a_disk_in_ram_is_said():
    env = {"fs_type": "ext4", "fs_mount_point": "/mnt/z", "fs_source": "/dev/zram1", "devices": "zram1",
           "layout": "none", "device.zram1.model": None, "device.zram1.interface": "zram",
           "device.zram1.ram_backing": "zram (compressed RAM)"}
    assert where_on(env) == "/dev/zram1 (model unknown, zram, zram (compressed RAM)), ext4 mounted at /mnt/z"


@pytest.mark.parametrize("fs_type, source, said", [
    ("tmpfs", "tmpfs", "tmpfs mounted at /m: memory, no block device"),
    ("nfs4", "nas:/export", "nfs4 mounted at /m from nas:/export: a network file system, no block device here"),
    ("overlay", "overlay", "overlay, overlay mounted at /m (no block device found under it)"),
])
def test_file_systems_without_a_block_device_say_what_they_are(fs_type, source, said):
    assert where_on({"fs_type": fs_type, "fs_mount_point": "/m", "fs_source": source, "devices": None}) == said


def test_no_mount_found_is_said_not_guessed():
    assert where_on({"fs_type": None, "devices": None}) == "an unknown file system (no mount found for it)"


def test_a_device_target_is_the_device_itself_with_what_it_holds():
    env = {**ROOT_ON_A_PARTITION, "fs_type": None}
    assert where_on(env, "/dev/sda", "carrying a gpt partition table") == (
        "the device itself (model Samsung SSD 870 EVO 1TB), carrying a gpt partition table")
    assert where_on(env, "/dev/sda1", "carrying an ext4 file system").startswith("the device itself (on sda: model")


def test_this_machines_directory_is_named_by_its_mount(tmp_path):
    """The real machine: the line names the mount that holds the folder, as mountinfo lists it."""
    mount = mount_of(str(tmp_path))
    said = collect_target(str(tmp_path / "disklab.testfile"), False)["target_on"]
    assert f"{mount.fs_type} mounted at {mount.mount_point}" in said
