"""A search for text (runs --name/--device/--search, serve's q=) folds case as Python's casefold does, on both
stores: SQLite in SQL, with its own lower() for ASCII text and casefold for the rest (store/dialect.py), PostgreSQL
in Python (store/filters.py searched). Both must answer alike, for text in any script."""

import json
import sqlite3
from contextlib import closing

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disklab.store.dialect import SQLITE
from disklab.store.filters import RunFilter, searched, where_clause
from disklab.store.repository import Store
from tests.unit.test_store import new_run

# Text whose case folds unlike ASCII's: ß (ss), ſ (s), the Kelvin sign (k), ﬁ (fi), final sigma, dotted İ.
FOLDING = "ßſKﬁςΣİıÖö"
# ... and what JSON escapes in device_env (store/filters.py reads its text before its JSON).
texts = st.text(st.sampled_from('aAsSkKfiIoO-_ 9"\\' + FOLDING), min_size=1, max_size=8)
wanted = st.text(st.sampled_from('asSkfiIoO9"\\' + FOLDING), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(st.tuples(texts, texts, texts), min_size=1, max_size=4), query=wanted,
       field=st.sampled_from(["name", "text", "device"]))
def test_sql_folds_as_python_folds(tmp_path_factory, runs, query, field):
    path = tmp_path_factory.mktemp("fold") / "results.db"
    with Store(path) as store:
        for name, target, model in runs:
            run_id = store.create_run(new_run(name=name, target=f"/mnt/{target}"))
            store.set_run_values("run_env", run_id, {"devices": "sda", "device.sda.model": model,
                                                     "device.sda.serial": "S1"})
        where = RunFilter(**{field: query})
        clause, args = where_clause(where, SQLITE)
        in_sql = sorted(row[0] for row in store.conn.execute(f"SELECT id FROM runs{clause}", args))
    with closing(sqlite3.connect(path)) as conn:  # Python's answer, without the casefold function SQL would need
        in_python = sorted(i for i in searched(where, conn, SQLITE).ids if i)
    folded = query.casefold()
    expected = sorted(n for n, (name, target, model) in enumerate(runs, start=1) if any(
        folded in text.casefold() for text in {"name": [name], "device": [model],
                                               "text": [name, "quick", f"/mnt/{target}", "testhost", model]}[field]))
    assert in_sql == in_python == expected, json.dumps(runs)
