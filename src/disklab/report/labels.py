"""Parameter values written as the published tables write them, shared by views, comparisons and charts."""

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
    if field == "clients":
        return f"{value} client" if value == 1 else f"{value} clients"
    if field == "nrfiles":
        return f"{value:,} files" if value != 1 else "1 file"
    return str(value)
