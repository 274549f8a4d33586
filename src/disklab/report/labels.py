"""Parameter values written as the published tables write them, and the names runs go by, shared by views,
comparisons and charts."""

from collections.abc import Sequence

from disklab.store.records import RunInfo
from disklab.units import format_size

_SIZE_FIELDS = ("bs", "size", "filesize", "rate")
_DURATION_FIELDS = ("runtime", "ramp", "pause", "log_interval")


def axis_label(field: str, value) -> str:
    """A parameter value as the published tables write it: 4KiB, 4 jobs, 70 % read, QD16."""
    if value is None:
        return "all" if field == "size" else "-"
    if field in _SIZE_FIELDS:
        return format_size(value)
    if field in _DURATION_FIELDS:
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


def run_labels(infos: Sequence[RunInfo]) -> list[str]:
    """The names runs go by in one table, chart or legend: the given name (or 'run N') with the run's number, and
    what differs between these runs, so that a legend cannot hide it: 'run 3 (libaio)', 'old array (run 2, psync)'."""
    differing = [(field, form) for field, form in _RUN_DIFFERENCES if len({getattr(i, field) for i in infos}) > 1]
    labels = []
    for info in infos:
        # An imported run may list several engines ('libaio, psync'): one part of the label, not two.
        parts = [form.format(str(getattr(info, field)).replace(", ", "+")) for field, form in differing]
        if info.name:
            labels.append(f"{info.name} ({', '.join([f'run {info.id}', *parts])})")
        else:
            labels.append(f"run {info.id}" + (f" ({', '.join(parts)})" if parts else ""))
    return labels
