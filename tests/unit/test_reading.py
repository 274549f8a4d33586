"""Runs read together (store/reading.py): each table asked once for all of them, every part of each run as it is
read alone, on both stores."""

from pathlib import Path

import pytest

from disklab.errors import UserError
from disklab.store.repository import Store
from tests.unit.test_curate import stored_run
from tests.unit.test_store import new_run


def parts(record) -> tuple:
    """Every part of a record, its tests' raw text included (read on first use)."""
    return (record.info, record.suite_text, record.env, record.outcomes, record.notes,
            tuple((t, t.jobfile, t.fio_output) for t in record.tests))


def test_runs_read_together_are_the_runs_read_one_by_one_in_the_order_asked(store_location):
    with Store(store_location) as store:
        ids = [stored_run(store, name=f"run {n}") for n in range(4)]
        bare = store.create_run(new_run())  # a run without a test, env or note
        alone = [store.get_run(run_id) for run_id in (ids[2], bare, ids[0], ids[3])]
        together = store.get_runs([ids[2], bare, ids[0], ids[3], ids[2]])  # asked twice: read once
        assert [parts(r) for r in together] == [parts(r) for r in alone]
        assert together[1].tests == () and together[1].env == {} and together[1].notes == ()
        assert [len(r.tests) for r in together] == [2, 0, 2, 2] and together[0].tests[0].flags
        assert store.get_runs([]) == []


def test_runs_read_together_ask_each_table_once_whatever_their_number(tmp_path: Path):
    with Store(tmp_path / "results.db") as store:
        ids = [stored_run(store) for _ in range(6)]
        asked: list[str] = []
        store.conn.set_trace_callback(asked.append)
        for number in (1, 6):
            asked.clear()
            records = store.get_runs(ids[:number])
            assert all(r.tests[0].fio_output for r in records)  # the raw text of all of them: one more query
            assert len(asked) == 9, asked  # runs, tests, metrics, flags, series, env, outcomes, notes; raw text
        store.conn.set_trace_callback(None)


def test_a_missing_run_among_several_is_named(store_location):
    with Store(store_location) as store:
        run_id = stored_run(store)
        with pytest.raises(UserError, match=f"there is no run {run_id + 7} in "):
            store.get_runs([run_id, run_id + 7])
