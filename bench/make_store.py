"""A generated store that looks like a lab's: devices, firmware and kernels that change over time, several suites.

    .venv/bin/python bench/make_store.py --runs 1000 -o lab.db

The web pages' browser test (tests/integration/test_web_browser.py) browses 1,000 such runs, bench/web.py times
the pages at 10,000. Every run is written through the Store API, as `disklab run` stores it: real fio json+ output
(tests/fixtures/fio/: the fixture of the test's direction and pattern, or of its kind of sync), job files rendered
by disklab for the run's target, the environment under the registry's keys (model, serial and firmware as
`device.<disk>.*`, which device history identifies a device by) and SMART before and after in smartctl's JSON
(tests/fixtures/smart/) with the drive's model_name, serial_number and firmware_version.

A device's figures are the fixture's times a speed: its kind's (NVMe, SATA SSD, disk) times what its firmware and
its host's kernel did, times a little noise (2 %, fixed by the seed). The output is scaled as if fio had run the
same time at that speed: I/O counts, bytes, IOPS and bandwidth up, latencies and their bins down (Little's law), so
what is stored matches the raw output it keeps. Some firmware and kernel updates move the figures (change points in
a device's history), some do not; one disk has neither model nor serial (a virtual disk), as on a cloud machine.
Runs are a few hours apart, most complete, some interrupted or failed, many named, one with markup in its name.
"""

import argparse
import json
import math
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import disklab
from disklab.analysis.traps import cache_traps
from disklab.env.registry import DEVICE_KEYS, device_key
from disklab.fio.parse import JobResult, parse_fio_output
from disklab.plan.build import expand_suite
from disklab.plan.jobfile import render_jobfile
from disklab.store.migrations import LATEST_VERSION
from disklab.store.repository import NewRun, Store
from disklab.suite.loader import load_suite, parse_suite
from disklab.suite.model import Suite, TestSpec

REPO = Path(__file__).resolve().parents[1]
FIO = REPO / "tests" / "fixtures" / "fio"
SMART = REPO / "tests" / "fixtures" / "smart"
FIRST_RUN = datetime(2025, 3, 1, 8, 0, tzinfo=timezone.utc)
LAST_RUN = datetime(2026, 11, 1, 8, 0, tzinfo=timezone.utc)
GENERATOR_VERSION = 2  # part of the cache key: bump when what is generated changes (2: every test in passes)
# Each test in this many interleaved passes, as `--repeat 3` runs it: a run's figures have a spread to be judged by.
PASSES = 3
OLTP = """name = "oltp"
description = "the lab's database pattern: 8 KiB random, 70 % reads, at two queue depths"

[defaults]
size = "8GiB"
runtime = "30s"

[[group]]
name = "oltp"
label = "8K 70/30 Q{iodepth}"
pattern = "random"
bs = "8k"
rwmixread = 70
iodepth = [4, 32]
"""
# Speed of each kind of device against the fixture a test gets (_fixture), by kind of test: a 990 PRO reads 4 KiB
# at queue depth 32 some 4 times faster than this machine's virtual disk did for the fixture, a disk 200 times slower.
KINDS = {
    "nvme": {("read", "random"): 4.2, ("read", "sequential"): 4.0, ("write", "random"): 3.9,
             ("write", "sequential"): 2.2, ("mixed", "random"): 3.0, ("sync", "sequential"): 0.3},
    "sata": {("read", "random"): 1.4, ("read", "sequential"): 0.37, ("write", "random"): 1.3,
             ("write", "sequential"): 0.21, ("mixed", "random"): 1.2, ("sync", "sequential"): 0.1},
    "hdd": {("read", "random"): 0.0046, ("read", "sequential"): 0.17, ("write", "random"): 0.009,
            ("write", "sequential"): 0.1, ("mixed", "random"): 0.006, ("sync", "sequential"): 0.01},
    "virtio": {("read", "random"): 0.6, ("read", "sequential"): 0.3, ("write", "random"): 0.6,
               ("write", "sequential"): 0.15, ("mixed", "random"): 0.5, ("sync", "sequential"): 0.05},
}
# The fixtures ran at queue depth 8 or 32; at depth 1 a device is slower, random I/O most.
DEPTH_1 = {"random": 0.15, "sequential": 0.5}
NOISE = 0.02  # the spread of a figure from run to run (standard deviation, relative)


@dataclass(frozen=True)
class Host:
    name: str
    distribution: str
    cpu_model: str
    cpu_count: int
    ram_bytes: int
    fio_version: str
    kernels: tuple[tuple[float, str, float], ...]  # (from this fraction of the store's time span, kernel, speed)


@dataclass(frozen=True)
class Device:
    host: str
    disk: str  # its name in /sys/block
    target: str
    target_kind: str  # "device" or "directory"
    fs: str | None  # the file system of a directory target
    model: str | None
    serial: str | None
    kind: str  # a key of KINDS
    size_bytes: int
    firmwares: tuple[tuple[float, str, float], ...]  # (from this fraction of the time span, firmware, speed)
    suites: tuple[tuple[str, int], ...]  # (suite, weight)
    weight: int  # how often the lab tests it


HOSTS = {host.name: host for host in (
    Host("lab-a", "Debian GNU/Linux 12 (bookworm)", "AMD EPYC 7313P 16-Core Processor", 32, 128 * 1024**3,
         "fio-3.33", ((0.0, "6.1.0-18-amd64", 1.0), (0.35, "6.1.0-25-amd64", 1.0), (0.7, "6.12.9-amd64", 1.14))),
    Host("lab-b", "Ubuntu 24.04.1 LTS", "Intel(R) Xeon(R) Silver 4314 CPU @ 2.40GHz", 64, 256 * 1024**3,
         "fio-3.36", ((0.0, "6.8.0-31-generic", 1.0), (0.55, "6.8.0-45-generic", 1.0))),
    Host("ci-7", "Debian GNU/Linux 12 (bookworm)", "AMD EPYC", 4, 16 * 1024**3,
         "fio-3.33", ((0.0, "6.1.0-25-cloud-amd64", 1.0),)),
)}
DEVICES = (
    Device("lab-a", "nvme0n1", "/dev/nvme0n1", "device", None, "Samsung SSD 990 PRO 2TB", "S7HENJ0X401234A",
           "nvme", 2_000_398_934_016, ((0.0, "4B2QJXD7", 1.0), (0.45, "0B2QJXD7", 1.15)),
           (("quick", 6), ("profile", 2), ("sync", 1), ("oltp", 2)), 5),
    Device("lab-a", "nvme1n1", "/mnt/scratch", "directory", "ext4", "Samsung SSD 990 PRO 2TB", "S7HENJ0X405678B",
           "nvme", 2_000_398_934_016, ((0.0, "4B2QJXD7", 1.0), (0.6, "0B2QJXD7", 1.15)),
           (("quick", 4), ("sync", 1)), 3),
    Device("lab-a", "sda", "/mnt/archive", "directory", "xfs", "ST8000NM000A-2KE101", "WSD0ABCD",
           "hdd", 8_001_563_222_016, ((0.0, "SN02", 1.0), (0.5, "SN04", 1.0)), (("quick", 3), ("sync", 1)), 2),
    Device("lab-b", "nvme0n1", "/dev/nvme0n1", "device", None, "WD_BLACK SN850X 1000GB", "23284F800123",
           "nvme", 1_000_204_886_016, ((0.0, "620311WD", 1.0), (0.3, "620331WD", 0.85), (0.7, "620361WD", 1.02)),
           (("quick", 5), ("profile", 1), ("mixed", 1), ("oltp", 2)), 4),
    Device("lab-b", "sdb", "/mnt/sata", "directory", "ext4", "Micron_5400_MTFDDAK960TGA", "2233E6A1B2C3",
           "sata", 960_197_124_096, ((0.0, "D4MU001", 1.0),), (("quick", 3), ("profile", 1)), 2),
    Device("ci-7", "vdb", "/var/tmp/ci", "directory", "ext4", None, None,
           "virtio", 107_374_182_400, ((0.0, None, 1.0),), (("quick", 1),), 3),
)


def lab_store(path: Path | str, runs: int, seed: int = 18) -> Path | str:
    """Write RUNS runs into a new store at PATH (which must not exist; or an empty PostgreSQL database's URL), oldest
    first."""
    if isinstance(path, Path) and path.exists():
        raise SystemExit(f"{path} exists: the generator writes new stores only")
    rng = random.Random(seed)
    suites = {name: load_suite(name) for name in ("quick", "profile", "sync", "mixed")}
    suites["oltp"] = parse_suite(OLTP, "/srv/lab/suites/oltp.toml", "/srv/lab/suites/oltp.toml")
    # A test's parameters are worked out once (asdict is slow), not once per run.
    tests = {name: [(test, test.params()) for test in expand_suite(suite)] for name, suite in suites.items()}
    smart = {kind: (SMART / f"{kind}-before.real.json").read_text() for kind in ("nvme", "ata")}
    outputs = _Outputs()
    span = (LAST_RUN - FIRST_RUN) / max(runs, 1)
    tests_finished, runs_finished = [], []
    with Store(path) as store:
        if store.path is not None:
            store.conn.execute("PRAGMA synchronous = OFF")  # a generated store: a crash loses it whole, which is fine
        for number in range(1, runs + 1):
            device = rng.choices(DEVICES, [d.weight for d in DEVICES])[0]
            host = HOSTS[device.host]
            suite = suites[rng.choices(*zip(*device.suites))[0]]
            started = FIRST_RUN + span * (number - 1) + timedelta(seconds=rng.randrange(int(span.total_seconds() / 2)))
            fraction = (started - FIRST_RUN) / (LAST_RUN - FIRST_RUN)
            _, kernel, kernel_speed = _at(host.kernels, fraction)
            _, firmware, firmware_speed = _at(device.firmwares, fraction)
            planned = [(plan_index, attempt, test, params) for attempt in range(1, PASSES + 1)
                       for plan_index, (test, params) in enumerate(tests[suite.name])]
            status, kept, error = _outcome(rng, len(planned))
            test_path = device.target if device.target_kind == "device" else f"{device.target}/disklab-{suite.name}.dat"
            run_id = store.create_run(NewRun(
                suite_name=suite.name, suite_source=suite.source, suite_text=suite.text, target=device.target,
                target_kind=device.target_kind, test_path=test_path, options={"repeat": PASSES},
                disklab_version=disklab.version(), fio_version=host.fio_version, fio_engine="io_uring", hostname=host.name,
                kernel=kernel, planned_tests=len(planned), name=_name(rng, number, host, suite, firmware),
                started_at=_iso(started),
            ))
            env = _environment(host, device, kernel, firmware)
            store.set_run_values("run_env", run_id, env)
            _smart(store, run_id, device, firmware, fraction, smart["nvme" if device.kind == "nvme" else "ata"])
            at = started + timedelta(seconds=2)
            done: list[tuple[TestSpec, JobResult]] = []
            for seq, (plan_index, attempt, test, params) in enumerate(planned[:kept]):
                kind = ("sync" if test.sync != "none" else test.direction, test.pattern)
                depth = DEPTH_1[test.pattern] if test.iodepth == 1 and test.sync == "none" else 1.0
                speed = KINDS[device.kind][kind] * depth * kernel_speed * firmware_speed
                text, job = outputs.get(_fixture(test), speed * math.exp(rng.gauss(0, NOISE)))
                jobfile = render_jobfile(test, test_path, f"{device.target}/disklab-files", suite.name)
                test_id = store.add_test(run_id, seq, test.label, params, jobfile, text, "", _iso(at), job,
                                         plan_index=plan_index, attempt=attempt)
                for flag, message in cache_traps(test, job, env, done):
                    store.add_flag(test_id, flag, message)
                done.append((test, job))
                at += timedelta(seconds=test.ramp + test.runtime + 1)
                tests_finished.append((_iso(at), test_id))
            store.finish_run(run_id, status, error)
            runs_finished.append((_iso(at), run_id))
        # Store stamps the time it writes; a lab's runs and tests finished when they ran.
        store.conn.execute("BEGIN")
        store.conn.executemany("UPDATE tests SET finished_at = ? WHERE id = ?", tests_finished)
        store.conn.executemany("UPDATE runs SET finished_at = ? WHERE id = ?", runs_finished)
        store.conn.execute("COMMIT")
    return path


def cached_lab_store(runs: int) -> Path:
    """The generated store under /var/tmp, made once per schema, generator and size (10,000 runs take a minute)."""
    path = Path("/var/tmp") / f"disklab-lab-store-schema{LATEST_VERSION}-v{GENERATOR_VERSION}-{runs}runs.db"
    if not path.exists():
        started = time.monotonic()
        with tempfile.TemporaryDirectory(dir="/var/tmp") as scratch:
            staged = lab_store(Path(scratch) / "store.db", runs)
            staged.replace(path)
        print(f"generated {path} ({path.stat().st_size / 1e6:,.0f} MB) in {time.monotonic() - started:,.0f} s",
              file=sys.stderr)
    return path


def _at(timeline: tuple, fraction: float) -> tuple:
    return [step for step in timeline if step[0] <= fraction][-1]


def _outcome(rng: random.Random, planned: int) -> tuple[str, int, str | None]:
    """(status, tests stored, error): most runs complete; an interrupted or failed one stops part-way."""
    roll = rng.random()
    if roll < 0.03 and planned > 1:
        return "interrupted", rng.randrange(1, planned), "interrupted by the user or a signal"
    if roll < 0.05 and planned > 1:
        return ("failed", rng.randrange(1, planned),
                "fio failed (exit status 1): fio: io_u error on file: No space left on device: write offset=8589930496")
    return "complete", planned, None


def _name(rng: random.Random, number: int, host: Host, suite: Suite, firmware: str | None) -> str | None:
    if number == 7:
        return '<b>bold</b> & "quoted" <script>alert(1)</script>'  # markup a page must show as text
    if host.name == "ci-7":
        return f"nightly {number}"
    roll = rng.random()
    if roll < 0.1:
        return f"baseline {suite.name}"
    if roll < 0.2 and firmware:
        return f"fw {firmware}"
    if roll < 0.25:
        return "after reboot"
    return None


def _environment(host: Host, device: Device, kernel: str, firmware: str | None) -> dict:
    """The run's environment under the registry's keys, as env/collect.py records it."""
    disk = {
        "model": device.model, "serial": device.serial, "firmware": firmware, "size_bytes": device.size_bytes,
        "rotational": device.kind == "hdd", "logical_block_size": 512,
        "physical_block_size": 4096 if device.kind == "hdd" else 512,
        "scheduler": "mq-deadline" if device.kind in ("hdd", "virtio") else "none",
        "nr_requests": 256 if device.kind == "hdd" else 1023, "write_cache": "write back",
        # SATA drives have an NCQ depth; NVMe and virtio disks have blk-mq hardware queues, and a PCI controller
        "device_queue_depth": 32 if device.kind in ("sata", "hdd") else None,
        "hw_queues": {"nvme": 8, "sata": 1, "hdd": 1, "virtio": 1}[device.kind],
        "hw_queue_depth": {"nvme": 1023, "sata": 32, "hdd": 32, "virtio": 256}[device.kind],
        "controller_name": {"nvme": "Samsung Electronics Co Ltd NVMe SSD Controller (Non-Volatile memory controller)",
                            "sata": "Intel Corporation SATA AHCI Controller (SATA controller)",
                            "hdd": "Intel Corporation SATA AHCI Controller (SATA controller)",
                            "virtio": "Red Hat, Inc. Virtio 1.0 block device (Mass storage controller)"}[device.kind],
        "controller_pci_id": {"nvme": "144d:a80a", "sata": "8086:a352", "hdd": "8086:a352",
                              "virtio": "1af4:1042"}[device.kind],
        "controller_pci_slot": {"nvme": "0000:01:00.0", "sata": "0000:00:17.0", "hdd": "0000:00:17.0",
                                "virtio": "0000:00:02.0"}[device.kind],
        "controller_driver": {"nvme": "nvme", "sata": "ahci", "hdd": "ahci", "virtio": "virtio-pci"}[device.kind],
        "controller_firmware": firmware if device.kind == "nvme" else None,
        "interface": {"nvme": "NVMe PCIe 4.0 x4", "sata": "SATA 6.0 Gb/s", "hdd": "SATA 6.0 Gb/s",
                      "virtio": "virtio"}[device.kind],
        "interface_ceiling_bytes_per_s": {"nvme": 7.88e9, "sata": 6e8, "hdd": 6e8, "virtio": None}[device.kind],
        "ram_backing": "none",
    }
    assert disk.keys() == DEVICE_KEYS.keys(), "the registry gained a device key: fill it here"
    mount = {"fs_type": None, "fs_mount_point": None, "fs_source": None, "fs_mount_options": None,
             "fs_compression": None} if device.fs is None else {
        "fs_type": device.fs, "fs_mount_point": device.target, "fs_source": f"/dev/{device.disk}",
        "fs_mount_options": "rw,relatime", "fs_compression": "none"}
    return {
        "hostname": host.name, "kernel": kernel, "distribution": host.distribution, "cpu_model": host.cpu_model,
        "cpu_count": host.cpu_count, "ram_bytes": host.ram_bytes, "fio_version": host.fio_version,
        "fio_engines": "io_uring", **mount, "devices": device.disk, "layout": "none",
        "smart": f"read from {device.disk}" if device.model else f"{device.disk}: not available: "
                                                                  f"/dev/{device.disk}: Unable to detect device type",
        **{device_key(device.disk, field): value for field, value in disk.items()},
    }


def _smart(store: Store, run_id: int, device: Device, firmware: str | None, fraction: float, template: str) -> None:
    """smartctl's JSON before and after, from the fixture of the drive's protocol; the drive wears as time passes."""
    if device.model is None:
        return
    for phase, written in (("before", 0), ("after", 40_000)):
        data = json.loads(template)
        data["device"]["name"] = data["device"]["info_name"] = f"/dev/{device.disk}"
        data["smartctl"]["argv"][-1] = f"/dev/{device.disk}"
        data.update(model_name=device.model, serial_number=device.serial, firmware_version=firmware)
        hours = 500 + int(fraction * 14_000)
        if "nvme_smart_health_information_log" in data:
            log = data["nvme_smart_health_information_log"]
            log["data_units_written"] += int(fraction * 90_000_000) + written
            log["percentage_used"] = 1 + int(fraction * 9)
            log["power_on_hours"] = data["power_on_time"]["hours"] = hours
        else:
            data["power_on_time"] = {"hours": hours}
        store.add_smart(run_id, device.disk, phase, data)


def _fixture(test: TestSpec) -> str:
    """The real fio output of the fixture nearest the test: its direction and pattern, or its kind of sync."""
    if test.sync != "none":
        return f"write-4k-{'fsync' if test.sync == 'fsync' else 'fdatasync'}.jsonplus.json"
    return {
        ("read", "random"): "randread-4k-q32.jsonplus.json", ("read", "sequential"): "seqread-1m-q8.jsonplus.json",
        ("write", "random"): "randwrite-4k-q32.jsonplus.json", ("write", "sequential"): "seqwrite-1m-q8.jsonplus.json",
        ("mixed", "random"): "randrw-70-4k-4jobs.jsonplus.json",
    }[test.direction, test.pattern]


class _Outputs:
    """Fixture outputs scaled to a speed, on a 1 % grid so that runs share them (and generation stays fast).

    Written compact (fio indents its JSON), which Python's C encoder does several times faster."""

    STEP = math.log(1.01)

    def __init__(self):
        self.documents: dict[str, str] = {}
        self.made: dict[tuple[str, int], tuple[str, JobResult]] = {}

    def get(self, fixture: str, speed: float) -> tuple[str, JobResult]:
        key = (fixture, round(math.log(speed) / self.STEP))
        if key not in self.made:
            if fixture not in self.documents:
                self.documents[fixture] = (FIO / fixture).read_text()
            text = json.dumps(_scaled(json.loads(self.documents[fixture]), math.exp(key[1] * self.STEP)))
            self.made[key] = (text, parse_fio_output(text).jobs[0])
        return self.made[key]


def _scaled(document: dict, speed: float) -> dict:
    """fio's document, changed in place as if the device were SPEED times as fast for the same runtime."""
    for job in document["jobs"]:
        for direction in ("read", "write", "trim", "sync"):
            section = job.get(direction)
            if not isinstance(section, dict):
                continue
            # fio 3.33 leaves a sync section's total_ios 0 for fdatasync; its latency's N counts the calls.
            count = section.get("total_ios") or section.get("lat_ns", {}).get("N")
            if not count:
                continue
            total = round(count * speed)
            if section.get("io_bytes"):
                block = section["io_bytes"] // section["total_ios"]
                section["io_bytes"] = total * block
                section["io_kbytes"] = section["io_bytes"] >> 10
            if section.get("total_ios"):
                section["total_ios"] = total
            for key in ("iops", "iops_min", "iops_max", "iops_mean", "iops_stddev", "bw_bytes", "bw", "bw_min",
                        "bw_max", "bw_mean", "bw_dev"):
                if key in section:
                    section[key] = type(section[key])(round(section[key] * speed, 6))
            for key in ("slat_ns", "clat_ns", "lat_ns"):
                if isinstance(section.get(key), dict):
                    _scale_latency(section[key], speed, total)
    return document


def _scale_latency(latency: dict, speed: float, total: int) -> None:
    for key in ("min", "max", "mean", "stddev"):
        if key in latency:
            latency[key] = type(latency[key])(round(latency[key] / speed, 6))
    if "N" in latency:
        latency["N"] = total
    if isinstance(latency.get("percentile"), dict):
        latency["percentile"] = {p: round(v / speed) for p, v in latency["percentile"].items()}
    if isinstance(latency.get("bins"), dict):
        # Counts scaled to the new total (largest remainders), values to the new speed; values that meet add up.
        old = sum(latency["bins"].values())
        shares = [(max(1, round(float(v) / speed)), c * total / old) for v, c in latency["bins"].items()]
        counts = [int(share) for _, share in shares]
        order = sorted(range(len(shares)), key=lambda i: shares[i][1] - counts[i], reverse=True)
        for i in order[:total - sum(counts)]:
            counts[i] += 1
        bins: dict[str, int] = {}
        for (value, _), count in zip(shares, counts):
            if count:
                bins[str(value)] = bins.get(str(value), 0) + count
        latency["bins"] = dict(sorted(bins.items(), key=lambda item: int(item[0])))


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs to generate (default 1,000)")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("-o", "--output", type=Path, required=True, help="the new store (must not exist)")
    args = parser.parse_args()
    started = time.monotonic()
    lab_store(args.output, args.runs, args.seed)
    print(f"{args.output}: {args.runs:,} runs, {args.output.stat().st_size / 1e6:,.0f} MB "
          f"in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
