"""Parameter values written as the published tables write them, and the names runs go by, shared by views,
comparisons and charts."""

from collections.abc import Sequence

from disklab.env.registry import ARRAY, device_key
from disklab.store.records import RunInfo, RunRecord
from disklab.units import format_capacity, format_size

_SIZE_FIELDS = ("bs", "size", "filesize", "rate")
_DURATION_FIELDS = ("runtime", "ramp", "pause", "log_interval")


def axis_label(field: str, value) -> str:
    """A parameter value as the published tables write it: 4KiB, 4 jobs, 70 % read, QD16. A value as the user gave
    it to fio (an ad-hoc run's options keep `--bs 8k` as "8k") is shown as given."""
    if value is None:
        return "all" if field == "size" else "-"
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if field in _SIZE_FIELDS and number:
        return format_size(value)
    if field in _DURATION_FIELDS and number:
        return f"{value:g}s"
    if field == "jobs":
        return f"{value} job" if value == 1 else f"{value} jobs"
    if field == "rwmixread":
        return f"{value} % read"
    if field == "iodepth":
        return f"QD{value}"
    if field == "configuration" and isinstance(value, dict):  # its details: `show RUN -f json`
        return str(value.get("label", "-"))
    if field == "clients":
        return f"{value} client" if value == 1 else f"{value} clients"
    if field == "nrfiles":
        return f"{value:,} files" if value != 1 else "1 file"
    return str(value)


# What may set compared runs apart besides their tests, in the order a label lists it, and how it is written.
_RUN_DIFFERENCES = (
    ("fio_engine", "{}"), ("hostname", "on {}"), ("target", "{}"), ("disklab_version", "disklab {}"),
    ("fio_version", "{}"),
)


def run_labels(infos: Sequence[RunInfo], devices: Sequence[str | None] = ()) -> list[str]:
    """The names runs go by in one table, chart or legend: the given name (or 'run N') with the run's number, and
    what differs between these runs, so that a legend cannot hide it: 'run 3 (libaio)', 'old array (run 2, psync)'.

    `devices`, per run, its disk by model and capacity (device_name): an unnamed run goes by its disk, and runs
    whose disks tell them apart are not told apart by their paths too: 'Samsung SSD 990 PRO 2 TB (run 4)'."""
    devices = list(devices) or [None] * len(infos)
    told_apart = None not in devices and len(set(devices)) == len(devices)
    differing = [(field, form) for field, form in _RUN_DIFFERENCES if len({getattr(i, field) for i in infos}) > 1
                 and not (field == "target" and told_apart)]
    labels = []
    for info, device in zip(infos, devices):
        # An imported run may list several engines ('libaio, psync'): one part of the label, not two.
        parts = [form.format(str(getattr(info, field)).replace(", ", "+")) for field, form in differing]
        name = info.name or device
        if name:
            labels.append(f"{name} ({', '.join([f'run {info.id}', *parts])})")
        else:
            labels.append(f"run {info.id}" + (f" ({', '.join(parts)})" if parts else ""))
    return labels


def record_labels(records: Sequence[RunRecord]) -> list[str]:
    """run_labels with each run's disk, as the report names runs in its tables, headings and legends."""
    return run_labels([r.info for r in records], [device_name(r.env) for r in records])


def device_name(env: dict, unnamed: bool = False) -> str | None:
    """The disks under the target by model and capacity, in the unit the environment's table gives it ('2 x WDC
    WD20EFRX 1.82 TiB'); None when the run recorded no model. `unnamed`: a disk without a model goes by its kernel
    name ('vda 256.0 GiB')."""
    names = []
    for device in (env.get("devices") or "").split(", "):
        model = env.get(device_key(device, "model")) if device else None
        if model or (device and unnamed):
            size = env.get(device_key(device, "size_bytes"))
            name = str(model or device)
            names.append(f"{name} {format_capacity(size)}" if isinstance(size, int) and size > 0 else name)
    counted = {name: names.count(name) for name in names}
    disks = " + ".join(f"{n} x {name}" if n > 1 else name for name, n in counted.items()) or None
    array = env.get(device_key(ARRAY, "model"))
    return f"{array} of {disks}" if isinstance(array, str) and disks else disks

