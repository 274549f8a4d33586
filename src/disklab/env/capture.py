"""Record a run's environment and its drives' SMART before and after it, into the store."""

from __future__ import annotations

from disklab.env.collect import collect_environment
from disklab.env.smart import read_smart, unavailable_reason
from disklab.store.repository import Store


def record_environment(store: Store, run_id: int, target_path: str, target_is_device: bool, fio_version: str | None,
                       engines: list[str], declared: dict | None = None) -> list[str]:
    """Store the environment once per run and return the disks under the target.

    `declared` holds what no interface reports and the user told (the drive's cache size). A resumed run keeps what
    was recorded when it started; what changed since is kept as `resumed_with`.
    """
    env = {**collect_environment(target_path, target_is_device, fio_version, engines), **(declared or {})}
    stored = store.run_values("run_env", run_id)
    if not stored:
        store.set_run_values("run_env", run_id, env)
    else:
        changed = {k: v for k, v in env.items() if k in stored and stored[k] != v and k != "smart"}
        if changed:
            store.set_run_values("run_env", run_id, {"resumed_with": changed})
    return [d for d in (env.get("devices") or "").split(", ") if d]


def record_smart(store: Store, run_id: int, disks: list[str], phase: str) -> None:
    """SMART of every disk; a 'before' already stored (a resumed run) is kept. Never raises for missing SMART."""
    existing = store.smart(run_id)
    notes = []
    for disk in disks:
        if phase == "before" and "before" in existing.get(disk, {}):
            continue
        data = read_smart(f"/dev/{disk}")
        reason = unavailable_reason(data)
        if reason is None:
            store.add_smart(run_id, disk, phase, data)
        else:
            notes.append(f"{disk}: not available: {reason}")
    if phase == "before":
        if not disks:
            notes.append("not available: no block device found under the target")
        store.set_run_values("run_env", run_id, {"smart": "; ".join(notes) if notes else f"read from {', '.join(disks)}"})
