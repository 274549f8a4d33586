"""The runs the planner is held to: each array run of those named, with a run of one of its members alone, found in
the store (the same suite on a member's device, the latest made before the array's, else the latest) or named."""

from collections.abc import Sequence

from disklab.capacity.measured import HeldSeries, array_shape, hold_series, is_member_run
from disklab.errors import UserError
from disklab.store.filters import RunFilter
from disklab.store.records import RunRecord
from disklab.store.repository import Store


def held_to_members(store: Store, records: Sequence[RunRecord], member_ref: str | None = None) -> HeldSeries | None:
    """None when no run named is a run on an array."""
    arrays = [r for r in records if array_shape(r.info) is not None]
    if not arrays:
        if member_ref is not None:
            raise UserError("--member: none of these runs was made on an array (run --members ... --array ...)")
        return None
    named = store.get_run(store.resolve_run_id(member_ref)) if member_ref is not None else None
    if named is not None and array_shape(named.info) is not None:
        raise UserError(f"--member {member_ref}: run {named.info.id} was made on an array, not on one member alone")
    return hold_series([(array, named or find_member_run(store, array)) for array in arrays])


def find_member_run(store: Store, array: RunRecord) -> RunRecord | None:
    shape = array_shape(array.info)
    found = [info for info in store.list_runs(where=RunFilter(suite=array.info.suite_name, targets=shape.members))
             if is_member_run(info, shape, array.info.suite_name)]
    before = [info for info in found if info.id < array.info.id]
    chosen = max(before or found, key=lambda info: info.id, default=None)
    return store.get_run(chosen.id) if chosen else None
