"""The environment registry and its collectors, over fake sysfs / proc trees and the real machine."""

import json
import os
import shutil
from pathlib import Path

import pytest

from disklab.env.collect import (
    collect_device, collect_environment, compression_of, ram_backing, md_array_model, underlying_disks,
)
from disklab.env.registry import DEVICE_KEYS, KEYS, env_differences, format_value, label_of, lookup, ordered
from disklab.system.mounts import Mount, mount_of

# Unit Serial Number pages as sysfs keeps them, copied from the kernel tier's guest (tests/fixtures/env/README.md).
VPD = Path(__file__).parent.parent / "fixtures" / "env" / "vpd"


def test_every_key_has_a_label_type_and_formatter():
    for key in [*KEYS.values(), *DEVICE_KEYS.values()]:
        assert key.label and key.kind in (str, int, float, bool, dict) and callable(key.formatter)


def test_values_are_shown_with_their_unit_and_missing_ones_as_unknown():
    assert format_value("cpu_count", 8) == "8 logical CPUs"
    assert format_value("ram_bytes", 16 * 1024**3) == "16.0 GiB (17,179,869,184 bytes)"
    assert format_value("device.sda.logical_block_size", 512) == "512 bytes"
    assert format_value("device.sda.rotational", False) == "no"
    assert format_value("device.nvme0n1.interface_ceiling_bytes_per_s", 3.9e9) == "3,900 MB/s"
    assert format_value("device.sda.serial", None) == "unknown"
    assert format_value("some_future_key", 3) == "3"
    assert label_of("device.sda.model") == "sda: model" and lookup("device.dm-0.scheduler").label == "I/O scheduler"


def test_ordered_puts_host_keys_first_then_each_device():
    env = {"device.sdb.model": "B", "kernel": "6.1", "device.sda.model": "A", "hostname": "h", "zzz": 1}
    assert [name for name, _ in ordered(env)] == ["hostname", "kernel", "device.sda.model", "device.sdb.model", "zzz"]


def test_env_differences_names_the_keys_that_can_explain_a_difference():
    a = {"hostname": "a", "kernel": "6.1", "fio_version": "fio-3.33", "fs_type": "ext4", "device.sda.model": "X",
         "device.sda.firmware": "1", "device.sda.scheduler": "none", "device.sda.write_cache": "write back",
         "device.sda.serial": "S1", "ram_bytes": 1}
    b = {**a, "hostname": "b", "kernel": "6.8", "fio_version": "fio-3.36", "device.sda.firmware": "2",
         "device.sda.scheduler": "mq-deadline", "device.sda.write_cache": "write through", "device.sda.serial": "S2",
         "ram_bytes": 2}
    assert env_differences(a, b) == [
        "kernel: 6.1 -> 6.8",
        "fio version: fio-3.33 -> fio-3.36",
        "sda: firmware: 1 -> 2",
        "sda: I/O scheduler: none -> mq-deadline",
        "sda: write cache: write back -> write through",
    ]
    assert env_differences(a, a) == []
    assert env_differences({"fs_type": "ext4"}, {}) == ["file system: ext4 -> unknown"]


def test_the_three_queues_are_named_apart_and_new_keys_explain_differences():
    labels = [lookup(f"device.sda.{field}").label for field in ("nr_requests", "device_queue_depth", "hw_queue_depth")]
    assert labels == ["block layer request limit (nr_requests)", "device queue depth (SCSI / SATA NCQ)",
                      "tags per hardware queue (blk-mq nr_tags)"]
    assert format_value("net_link_speed_mbit_per_s", 25000) == "25000 Mb/s"
    assert format_value("device.sda.hw_queues", 8) == "8"
    a = {"bios_version": "3.4", "device.sda.device_queue_depth": 32, "device.sda.controller_driver": "ahci",
         "net_interface": "eth0", "net_link_speed_mbit_per_s": 25000}
    b = {"bios_version": "3.5", "device.sda.device_queue_depth": 1, "device.sda.controller_driver": "ahci"}
    assert env_differences(a, b) == [
        "BIOS version: 3.4 -> 3.5",
        "local interface to the server: eth0 -> unknown",
        "link speed of that interface: 25000 Mb/s -> unknown",
        "sda: device queue depth (SCSI / SATA NCQ): 32 commands -> 1 commands",
    ]


def _disk(sysfs: Path, name: str, number: str, **files) -> Path:
    node = sysfs / "devices" / "virtual" / "block" / name
    (node / "queue").mkdir(parents=True)
    (node / "device").mkdir()
    (node / "dev").write_text(number + "\n")
    for path, text in files.items():
        target = node / path.replace("__", "/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n")
    _link(sysfs / "block" / name, node)
    _link(sysfs / "dev" / "block" / number, node)
    return node


def _partition(disk: Path, sysfs: Path, name: str, number: str) -> Path:
    node = disk / name
    node.mkdir()
    (node / "partition").write_text("1\n")
    (node / "dev").write_text(number + "\n")
    _link(sysfs / "dev" / "block" / number, node)
    return node


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def test_a_partition_resolves_to_its_disk(tmp_path):
    disk = _disk(tmp_path, "sda", "8:0")
    _partition(disk, tmp_path, "sda1", "8:1")
    assert underlying_disks((8, 1), None, str(tmp_path)) == (["sda"], [])


def test_lvm_over_md_over_partitions_is_followed_to_the_disks(tmp_path):
    sda, sdb = _disk(tmp_path, "sda", "8:0"), _disk(tmp_path, "sdb", "8:16")
    md = _disk(tmp_path, "md0", "9:0", md__level="raid1")
    dm = _disk(tmp_path, "dm-0", "253:0", dm__uuid="LVM-abc", dm__name="vg-data")
    for part in (_partition(sda, tmp_path, "sda1", "8:1"), _partition(sdb, tmp_path, "sdb1", "8:17")):
        (md / "slaves").mkdir(exist_ok=True)
        (md / "slaves" / part.name).symlink_to(part)
    (dm / "slaves").mkdir()
    (dm / "slaves" / "md0").symlink_to(md)
    disks, layout = underlying_disks((253, 0), None, str(tmp_path))
    assert disks == ["sda", "sdb"]
    assert layout == ["LVM vg-data over md0", "md md0 raid1 over sda1, sdb1"]


def test_device_facts_come_from_sysfs_and_missing_ones_are_unknown(tmp_path):
    _disk(tmp_path, "sda", "8:0", size="2000", queue__rotational="0", queue__logical_block_size="512",
          queue__physical_block_size="4096", queue__scheduler="none [mq-deadline] bfq", queue__nr_requests="64",
          queue__write_cache="write through", device__model="Samsung SSD 870", device__rev="SVT01B6Q")
    facts = collect_device("sda", str(tmp_path))
    assert facts == {
        "device.sda.model": "Samsung SSD 870", "device.sda.serial": None, "device.sda.firmware": "SVT01B6Q",
        "device.sda.size_bytes": 1024000, "device.sda.rotational": False, "device.sda.logical_block_size": 512,
        "device.sda.physical_block_size": 4096, "device.sda.scheduler": "mq-deadline", "device.sda.nr_requests": 64,
        "device.sda.write_cache": "write through", "device.sda.interface": None,
        "device.sda.interface_ceiling_bytes_per_s": None, "device.sda.ram_backing": "none",
    }
    assert set(collect_device("nosuch", str(tmp_path)).values()) == {None}


@pytest.mark.parametrize("page, serial", [("scsi-vpd_pg80.bin", "DLSCSI0"), ("ata-vpd_pg80.bin", "DLSATA1")])
def test_a_scsi_or_sata_disks_serial_is_read_from_its_unit_serial_number_page(tmp_path, page, serial):
    _disk(tmp_path, "sdc", "8:32", device__model="QEMU HARDDISK")
    (tmp_path / "block" / "sdc" / "device" / "vpd_pg80").write_bytes((VPD / page).read_bytes())
    assert collect_device("sdc", str(tmp_path))["device.sdc.serial"] == serial


def test_an_nvme_disk_gets_its_pcie_link_as_ceiling(tmp_path):
    _disk(tmp_path, "nvme0n1", "259:0", device__device__current_link_speed="8.0 GT/s PCIe",
          device__device__current_link_width="4")
    facts = collect_device("nvme0n1", str(tmp_path))
    assert facts["device.nvme0n1.interface"] == "PCIe 8.0 GT/s x4"
    assert round(facts["device.nvme0n1.interface_ceiling_bytes_per_s"] / 1e6) == 3938


def _mountinfo(tmp_path: Path, *lines: str) -> str:
    (tmp_path / "proc" / "self").mkdir(parents=True)
    (tmp_path / "proc" / "self" / "mountinfo").write_text("\n".join(lines) + "\n")
    return str(tmp_path / "proc")


def test_the_deepest_mount_above_the_path_holds_it_and_options_are_merged(tmp_path):
    here = os.stat(tmp_path).st_dev
    proc = _mountinfo(
        tmp_path,
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard",
        f"40 27 {os.major(here)}:{os.minor(here)} / {tmp_path} rw,noatime shared:5 - btrfs /dev/sdb1 rw,compress=zstd:3,space_cache=v2",
        "41 27 0:50 / /elsewhere rw - tmpfs tmpfs rw",
    )
    mount = mount_of(str(tmp_path), proc)
    assert (mount.fs_type, mount.source, mount.mount_point) == ("btrfs", "/dev/sdb1", str(tmp_path))
    assert mount.options == "rw,noatime,compress=zstd:3,space_cache=v2"
    assert compression_of(mount) == "btrfs compress=zstd:3"


def test_file_systems_without_compression_say_none():
    assert compression_of(Mount("/", "ext4", "/dev/sda1", "rw,relatime", (8, 1))) == "none"
    assert compression_of(Mount("/b", "btrfs", "/dev/sdb", "rw,ssd", (0, 40))) == "none"


def test_the_real_machine_gives_every_key_and_never_raises(tmp_path):
    env = collect_environment(str(tmp_path / "disklab.testfile"), False, "fio-3.33", ["psync"])
    for key in KEYS:
        if key not in ("smart", "resumed_with", "declared_cache_bytes") and not KEYS[key].optional:  # by run
            assert key in env, key
    assert env["cpu_count"] >= 1 and env["ram_bytes"] > 0
    assert not [key for key in env if key.startswith("net_")]  # tmp_path is local
    for disk in (env["devices"] or "").split(", "):
        if disk:
            assert all(f"device.{disk}.{field}" in env for field, key in DEVICE_KEYS.items() if not key.optional)


def test_a_run_without_fio_has_no_fio_keys_and_a_missing_directory_is_unknown(tmp_path):
    env = collect_environment("/nonexistent/dir/f", False, None, [])
    assert "fio_version" not in env and "fio_engines" not in env  # pgbench's: not 'unknown', fio was not used
    assert collect_environment("/nonexistent/dir/f", False, "fio-3.33", [])["fio_engines"] is None
    assert env["fs_type"] is None and env["devices"] is None and env["layout"] == "none"


def test_a_resumed_run_keeps_its_first_environment_and_notes_what_changed(tmp_path, monkeypatch):
    from disklab.env import capture
    from disklab.store.repository import Store
    from tests.unit.test_store import new_run

    envs = iter([{"kernel": "6.1", "devices": "sda, sdb"}, {"kernel": "6.8", "devices": "sda, sdb"}])
    monkeypatch.setattr(capture, "collect_environment", lambda *args: next(envs))
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run())
        assert capture.record_environment(store, run_id, "/x/f", False, "fio-3.33", ["psync"]) == ["sda", "sdb"]
        capture.record_environment(store, run_id, "/x/f", False, "fio-3.33", ["psync"])
        assert store.run_values("run_env", run_id) == {
            "kernel": "6.1", "devices": "sda, sdb", "resumed_with": {"kernel": "6.8"},
        }
        assert format_value("resumed_with", {"kernel": "6.8"}) == "kernel = 6.8"


# Captured on this project's test machine by tests/fixtures/env/capture_ram_targets.py (see the README there).
RAM_TARGETS = Path(__file__).parents[1] / "fixtures" / "env" / "ram-targets"
CAPTURED = json.loads((RAM_TARGETS / "targets.json").read_text())


def _captured(tmp_path: Path | None = None) -> tuple[str, str]:
    """sysfs and proc of the capture; a private copy when a test alters it."""
    root = RAM_TARGETS
    if tmp_path is not None:
        root = tmp_path / "ram-targets"
        shutil.copytree(RAM_TARGETS, root, symlinks=True)
    return str(root / "sys"), str(root / "proc")


def test_zram_and_a_loop_device_over_a_file_on_tmpfs_are_held_in_ram():
    sysfs, proc = _captured()
    assert ram_backing(CAPTURED["zram"], sysfs, proc) == "zram (compressed RAM)"
    tmpfs = CAPTURED["tmpfs"]
    assert ram_backing(CAPTURED["loop_on_tmpfs"], sysfs, proc) == (
        f"a loop device over {tmpfs}/disk.img, a file on tmpfs ({tmpfs})")
    facts = collect_device(CAPTURED["zram"], sysfs, proc)
    assert facts[f"device.{CAPTURED['zram']}.ram_backing"] == "zram (compressed RAM)"


def test_the_real_disk_and_a_loop_device_over_a_file_on_it_are_not():
    sysfs, proc = _captured()
    assert ram_backing(CAPTURED["disk"], sysfs, proc) == "none"
    assert ram_backing(CAPTURED["loop_on_disk"], sysfs, proc) == "none"


def test_a_loop_device_over_a_loop_device_in_ram_is_followed_to_it(tmp_path):
    sysfs, proc = _captured(tmp_path)
    inner = CAPTURED["loop_on_tmpfs"]
    # An ext4 on the tmpfs-backed loop device, and a second loop device over a file on that ext4.
    number = (Path(sysfs) / "block" / inner / "dev").read_text().strip()
    with open(Path(proc) / "self" / "mountinfo", "a") as mountinfo:
        mountinfo.write(f"50 27 {number} / /mnt/on-{inner} rw,relatime - ext4 /dev/{inner} rw\n")
    outer = Path(sysfs) / "block" / CAPTURED["loop_on_disk"] / "loop" / "backing_file"
    outer.write_text(f"/mnt/on-{inner}/inner.img\n")
    assert ram_backing(CAPTURED["loop_on_disk"], sysfs, proc) == (
        f"a loop device over /mnt/on-{inner}/inner.img, a file on {inner}, "
        f"a loop device over {CAPTURED['tmpfs']}/disk.img, a file on tmpfs ({CAPTURED['tmpfs']})")


def test_a_deleted_backing_file_still_lies_on_its_mount_and_an_unbound_loop_device_is_unknown(tmp_path):
    sysfs, proc = _captured(tmp_path)
    backing = Path(sysfs) / "block" / CAPTURED["loop_on_tmpfs"] / "loop" / "backing_file"
    backing.write_text(f"{CAPTURED['tmpfs']}/disk.img (deleted)\n")
    assert ram_backing(CAPTURED["loop_on_tmpfs"], sysfs, proc).endswith(f"a file on tmpfs ({CAPTURED['tmpfs']})")
    shutil.rmtree(backing.parent)  # what sysfs shows of a loop device with no file attached
    assert ram_backing(CAPTURED["loop_on_tmpfs"], sysfs, proc) is None


def test_without_the_kernels_list_of_block_drivers_nothing_is_claimed(tmp_path):
    sysfs, proc = _captured(tmp_path)
    (Path(proc) / "devices").unlink()
    assert ram_backing(CAPTURED["zram"], sysfs, proc) is None


def test_brd_and_pmem_carved_from_ram_are_held_in_ram(tmp_path):
    # Neither exists on the capture machine (its kernel lacks brd and legacy pmem); the shapes follow the kernel:
    # brd registers major 1 as "ramdisk" (drivers/block/brd.c), nd_e820 names its bus provider "e820"
    # (drivers/nvdimm/e820.c) and pmem disks sit under ndbusN/regionN/namespaceN.N/block/.
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "devices").write_text("Character devices:\n  1 mem\n\nBlock devices:\n  1 ramdisk\n259 blkext\n")
    _disk(tmp_path, "ram0", "1:0")
    bus = tmp_path / "devices" / "platform" / "e820_pmem" / "ndbus0"
    (bus / "region0" / "namespace0.0" / "block" / "pmem0" / "queue").mkdir(parents=True)
    (bus / "provider").write_text("e820\n")
    (bus / "region0" / "namespace0.0" / "block" / "pmem0" / "dev").write_text("259:0\n")
    _link(tmp_path / "block" / "pmem0", bus / "region0" / "namespace0.0" / "block" / "pmem0")
    assert ram_backing("ram0", str(tmp_path), str(proc)) == "a brd RAM disk"
    assert ram_backing("pmem0", str(tmp_path), str(proc)).startswith("pmem on an e820 range (memmap= takes it from RAM")
    (bus / "provider").write_text("ACPI.NFIT\n")  # a real NVDIMM described by the firmware
    assert ram_backing("pmem0", str(tmp_path), str(proc)) == "none"


@pytest.mark.parametrize("files, model", [
    # md's sysfs values as the kernel tier's guest showed them for its arrays (check_arrays.py reads the same)
    ({"md__level": "raid5", "md__raid_disks": "4", "md__chunk_size": "65536", "md__layout": "2"},
     "md raid5, 4 members, chunk 64KiB, left-symmetric"),
    ({"md__level": "raid10", "md__raid_disks": "4", "md__chunk_size": "524288", "md__layout": "258"},
     "md raid10, 4 members, chunk 512KiB, near=2"),
    ({"md__level": "raid10", "md__raid_disks": "4", "md__chunk_size": "524288", "md__layout": "513"},
     "md raid10, 4 members, chunk 512KiB, far=2"),
    ({"md__level": "raid6", "md__raid_disks": "4", "md__chunk_size": "524288", "md__layout": "18"},
     "md raid6, 4 members, chunk 512KiB, left-symmetric-6"),
    ({"md__level": "raid1", "md__raid_disks": "2", "md__chunk_size": "0", "md__layout": "0"}, "md raid1, 2 members"),
    ({}, None),
])
def test_an_md_array_is_named_without_the_kernels_names(tmp_path, files, model):
    _disk(tmp_path, "md127", "9:127", **files)
    assert md_array_model((9, 127), str(tmp_path)) == model
    assert md_array_model(None, str(tmp_path)) is None
