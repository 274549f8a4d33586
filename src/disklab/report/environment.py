"""Tables of a run's environment, its drives' SMART changes, and the flags on its tests."""

from rich.table import Table

from disklab.env.registry import format_value, label_of, ordered
from disklab.env.smart import format_amount, smart_changes


def env_table(run_id: int, env: dict) -> Table:
    table = Table(title=f"run {run_id} · environment", title_justify="left")
    table.add_column("Key", no_wrap=True)
    table.add_column("Value")
    for name, value in ordered(env):
        table.add_row(label_of(name), format_value(name, value))
    table.caption = "unknown: not found on this machine (no such sysfs file, tool or permission)"
    return table


def smart_tables(run_id: int, smart: dict[str, dict[str, dict]]) -> list[Table]:
    """One table per drive with both a 'before' and an 'after' report."""
    tables = []
    for device in sorted(smart):
        phases = smart[device]
        if "before" not in phases or "after" not in phases:
            continue
        table = Table(title=f"run {run_id} · SMART of {device}, before and after", title_justify="left")
        for heading, justify in (("Counter", "left"), ("Before", "right"), ("After", "right"), ("Change", "right")):
            table.add_column(heading, justify=justify)
        for change in smart_changes(phases["before"], phases["after"]):
            table.add_row(change.label, format_amount(change.before, change.unit),
                          format_amount(change.after, change.unit), format_amount(change.delta, change.unit, signed=True))
        table.caption = "GB = 10^9 bytes"
        tables.append(table)
    return tables
