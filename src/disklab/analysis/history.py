"""A device's history: the stored runs that measured one device, each test's figures run after run, and the steps
that moved a figure beyond its noise (change points), with what changed in the environment at that step.

A device is the model and serial of each disk under the run's target, as the run recorded them (env/registry.py's
device keys), whatever name the disk had that day; runs that recorded no serial are grouped by host and target
instead, and say so. Tests are matched, sampled and judged as `disklab compare` matches, samples and judges
two runs (analysis/compare.py): a change point is a step that `disklab compare PREVIOUS RUN` calls better or worse,
never one within noise or inconclusive. Pure: runs in, a history out.
"""

import hashlib
import json
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from disklab.analysis.compare import (
    CONDITION_PARAMS, METRIC_BY_NAME, Cell, TestKey, env_changes, judged, planned_units, unit_sample, with_best,
)
from disklab.analysis.stats import Summary
from disklab.analysis.verdict import BETTER, DEFAULT_TOLERANCE_PERCENT, WORSE
from disklab.env.registry import ARRAY, DEVICE_PREFIX, device_key
from disklab.store.groups import RunGroup
from disklab.store.records import RunInfo, RunRecord

# The figures a history follows (compare's metrics): throughput and the tail; TPS for pgbench steps.
HISTORY_METRICS = ("iops", "tps", "mb_per_s", "clat_p99_us")
_SLUG_LENGTH = 48
UNKNOWN_MODEL = "model unknown"


@dataclass(frozen=True)
class Device:
    key: str  # URL-safe and stable: a slug of what identifies the device, and a hash of it (slugs may collide)
    label: str
    disks: tuple[tuple[str, str], ...]  # (model, serial) of each disk under the target; () when not recorded
    host: str | None  # for a device not recorded: the host and target its runs are grouped by
    target: str | None
    runs: int
    first: str  # when its first and last runs started
    last: str
    run_ids: tuple[int, ...] = ()  # oldest first; () when its groups were counted, not listed (store/groups.py)

    @property
    def known(self) -> bool:
        return bool(self.disks)


def disks_of(env: dict) -> dict[str, tuple[str, str]] | None:
    """{disk name: (model, serial)} of the disks under the run's target; None when any of them has no serial.

    `env` needs only store/groups.py's IDENTITY_KEYS. The serial tells a disk; a model the disk does not report
    (virtio disks have none) is UNKNOWN_MODEL."""
    names = [name for name in (env.get("devices") or "").split(", ") if name]
    disks = {}
    for name in names:
        model, serial = (env.get(device_key(name, f)) for f in ("model", "serial"))
        if not isinstance(serial, str) or not serial.strip():
            return None
        disks[name] = (model.strip() if isinstance(model, str) and model.strip() else UNKNOWN_MODEL, serial.strip())
    return disks or None


def group_devices(groups: Iterable[RunGroup]) -> tuple[Device, ...]:
    """Runs (in the store's groups, store/groups.py) by device: known devices by model, then those grouped by host
    and target. A device may gather several groups: its disks under other names, hosts or targets."""
    devices: dict[tuple, list[RunGroup]] = {}
    for group in groups:
        devices.setdefault(_identity(group.hostname, group.target, group.env), []).append(group)
    made = [_device(identity, gathered) for identity, gathered in devices.items()]
    return tuple(sorted(made, key=lambda d: (not d.known, d.label.casefold(), d.key)))


def of_device(key: str) -> Callable[[str, str, dict], bool]:
    """Whether a group of runs (its host, target and the keys naming its disks) holds the device's of this key."""
    return lambda hostname, target, env: _key(_identity(hostname, target, env)) == key


def run_group(info: RunInfo, env: dict) -> RunGroup:
    """One run as a group of its own."""
    return RunGroup(info.hostname, info.target, json.dumps(env, sort_keys=True), 1, info.started_at, info.started_at,
                    ((info.started_at, info.id),))


def device_key_of(info: RunInfo, env: dict) -> str:
    """The key of the device a run measured: its history's address (a run's page links it)."""
    return _key(_identity(info.hostname, info.target, env))


def _identity(hostname: str, target: str, env: dict) -> tuple:
    """Disks by model and serial, and the array they made where the target was one: RAID 0 and RAID 5 of the same
    disks are two devices, each with its own history."""
    disks = disks_of(env)
    if not disks:
        return ("target", hostname, target)
    array = env.get(device_key(ARRAY, "model"))
    return ("disks", tuple(sorted(set(disks.values())))) + ((array,) if isinstance(array, str) else ())


def _key(identity: tuple) -> str:
    """A slug of the identity, for a reader, and a hash of it, since slugs of two identities may be the same."""
    digest = hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:10]
    if identity[0] == "disks":
        array = f"{identity[2]} " if len(identity) > 2 else ""
        return f"{_slug(array + ' '.join(f'{model} {serial}' for model, serial in identity[1]))}-{digest}"
    return f"target-{_slug(f'{identity[1]} {identity[2]}')}-{digest}"


def _device(identity: tuple, groups: list[RunGroup]) -> Device:
    run_ids = tuple(run_id for _, run_id in sorted(stamp for group in groups for stamp in group.runs))
    runs, first, last = sum(g.count for g in groups), min(g.first for g in groups), max(g.last for g in groups)
    if identity[0] == "disks":
        disks = identity[1]
        if len(disks) == 1:
            label = f"{disks[0][0]} · serial {disks[0][1]}"
        else:
            label = f"{len(disks)} disks: " + ", ".join(f"{model} · serial {serial}" for model, serial in disks)
        if len(identity) > 2:
            label = f"{identity[2]} of {label}"
        return Device(_key(identity), label, disks, None, None, runs, first, last, run_ids)
    _, host, target = identity
    return Device(_key(identity), f"{target} on {host} (runs that recorded no disk serial)", (), host, target,
                  runs, first, last, run_ids)


def _slug(text: str) -> str:
    """Lower-case ASCII letters and digits joined by '-': safe in a URL and as a file name."""
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")[:_SLUG_LENGTH].rstrip("-") or "device"


def _time_order(info: RunInfo) -> tuple[str, int]:
    return info.started_at, info.id


@dataclass(frozen=True)
class Column:
    direction: str
    metric: str  # a name of analysis/compare.py's METRICS


@dataclass(frozen=True)
class Entry:
    """One run's figures of one test; each cell's verdict is against `previous` (None for the test's first run)."""

    run: RunInfo
    cells: tuple[Cell, ...]  # one per column of the test
    previous: RunInfo | None  # the device's last earlier run that has this test
    environment: tuple[str, ...]  # what differs in the environment from `previous` (compare's lines)
    conditions: tuple[tuple[str, object, object], ...]  # (name, before, after): the test's conditions that differ

    @property
    def change_point(self) -> bool:
        """A figure moved beyond its noise: within noise and inconclusive are never a change."""
        return any(cell.verdict in (BETTER, WORSE) for cell in self.cells)


@dataclass(frozen=True)
class TestHistory:
    key: TestKey
    label: str  # the test's label in its latest run
    params: dict  # the test's parameters in its latest run
    columns: tuple[Column, ...]
    entries: tuple[Entry, ...]  # oldest first

    @property
    def change_points(self) -> int:
        return sum(entry.change_point for entry in self.entries)


@dataclass(frozen=True)
class History:
    device: Device
    tolerance_percent: float
    tests: tuple[TestHistory, ...]  # in the order the device's runs first ran them
    runs: tuple[RunInfo, ...]  # of the records it was made from, oldest first

    @property
    def change_points(self) -> int:
        return sum(test.change_points for test in self.tests)


def device_history(device: Device, records: Sequence[RunRecord],
                   tolerance_percent: float = DEFAULT_TOLERANCE_PERCENT,
                   shown: Collection[int] | None = None) -> History:
    """`records`: runs of the device (device.run_ids), in any order. `shown`: the runs of one page of a long history,
    the others only read for the step before: each test's history then starts at its run before its first shown one
    (tests of no shown run are left out), so a page samples its own runs, not all of its context's."""
    records = sorted(_aligned(device, records), key=lambda r: _time_order(r.info))
    units = [planned_units(record) for record in records]
    environment: dict[tuple[int, int], tuple[str, ...]] = {}  # per step between two runs: the tests share it
    tests = []
    for key in dict.fromkeys(key for run_units in units for key in run_units):
        held = [(record, run_units[key]) for record, run_units in zip(records, units) if key in run_units]
        if shown is not None:
            first = next((n for n, (record, _) in enumerate(held) if record.info.id in shown), None)
            if first is None:
                continue
            held = held[max(0, first - 1):]
        held = [(record, unit, _samples(unit)) for record, unit in held]
        columns = tuple(dict.fromkeys(column for _, _, samples in held for column in samples))
        entries = []
        for before, (record, unit, samples) in zip((None, *held), held):
            if before is None:
                entries.append(Entry(record.info, _best(tuple(Cell(samples.get(c)) for c in columns), unit, columns),
                                     None, (), ()))
                continue
            step = (before[0].info.id, record.info.id)
            if step not in environment:
                environment[step] = env_changes(before[0], record)
            cells = _best(tuple(_cell(before[2].get(c), samples.get(c), c, tolerance_percent) for c in columns),
                          unit, columns)
            entries.append(Entry(record.info, cells, before[0].info, environment[step],
                                 _conditions(before[1].params, unit.params)))
        latest = held[-1][1]
        tests.append(TestHistory(key, latest.label, latest.params, columns, tuple(entries)))
    return History(device, tolerance_percent, tuple(tests), tuple(record.info for record in records))


def _samples(unit) -> dict[Column, Summary]:
    """The unit's figure of each direction and metric it has, as compare samples them."""
    directions = dict.fromkeys(m.direction for t in unit.tests for m in t.metrics)
    samples = {}
    for direction in directions:
        for name in HISTORY_METRICS:
            sample = unit_sample(unit, direction, METRIC_BY_NAME[name])
            if sample is not None:
                samples[Column(direction, name)] = sample
    return samples


def _cell(base: Summary | None, sample: Summary | None, column: Column, tolerance_percent: float) -> Cell:
    if sample is None or base is None:
        return Cell(sample)
    return judged(base, sample, METRIC_BY_NAME[column.metric], tolerance_percent)


def _best(cells: tuple[Cell, ...], unit, columns: tuple[Column, ...]) -> tuple[Cell, ...]:
    """A --best-of run's figures are its best passes, as compare shows them."""
    return tuple(with_best(cell, unit, c.direction, METRIC_BY_NAME[c.metric]) for cell, c in zip(cells, columns))


def _conditions(before: dict, after: dict) -> tuple[tuple[str, object, object], ...]:
    """The test's conditions (not matched on: runtime, size ...) that differ from its previous run."""
    return tuple((name, before.get(name), after.get(name))
                 for name in CONDITION_PARAMS if before.get(name) != after.get(name))


def _aligned(device: Device, records: Sequence[RunRecord]) -> list[RunRecord]:
    """Each disk's environment keys under the name it had in the device's first run: the same disk as sda one day
    and sdb the next is one disk whose firmware may have changed, not two disks."""
    if not device.known:
        return list(records)
    first_name: dict[tuple[str, str], str] = {}
    for record in sorted(records, key=lambda r: _time_order(r.info)):
        for name, disk in (disks_of(record.env) or {}).items():
            first_name.setdefault(disk, name)
    aligned = []
    for record in records:
        renames = {name: first_name[disk] for name, disk in (disks_of(record.env) or {}).items()}
        if all(old == new for old, new in renames.items()):
            aligned.append(record)
            continue
        env = {_renamed(key, renames): value for key, value in record.env.items()}
        aligned.append(replace(record, env=env))
    return aligned


def _renamed(key: str, renames: dict[str, str]) -> str:
    if not key.startswith(DEVICE_PREFIX):
        return key
    name, _, field = key[len(DEVICE_PREFIX):].rpartition(".")
    return device_key(renames.get(name, name), field)
