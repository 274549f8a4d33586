"""A search for text (runs --name/--device/--search, serve's q=) folds case as Python's casefold does, on both
stores: SQLite in SQL (its own lower() for ASCII text, casefold for the rest: store/dialect.py), PostgreSQL in SQL
for the runs whose text is all ASCII and in Python for the others (store/filters.py searched_apart). Both must
answer as casefold would, for text in any script."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disklab.store.filters import RunFilter
from disklab.store.repository import Store
from tests.unit.test_store import new_run

# Text whose case folds unlike ASCII's: ß (ss), ſ (s), the Kelvin sign (k), ﬁ (fi), final sigma, dotted İ; and what
# JSON escapes in device_env (store/filters.py reads its text before its JSON).
FOLDING = "ßſKﬁςΣİıÖö"
texts = st.text(st.sampled_from('aAsSkKfiIoO-_ 9"\\' + FOLDING), min_size=1, max_size=8)
wanted = st.text(st.sampled_from('asSkfiIoO9"\\' + FOLDING), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs=st.lists(st.tuples(texts, texts, texts), min_size=1, max_size=4), query=wanted,
       field=st.sampled_from(["name", "text", "device"]))
def test_a_search_folds_as_casefold_on_both_stores(store_location, runs, query, field):
    with Store(store_location) as store:
        store.delete_runs([info.id for info in store.list_runs(None)])
        numbers = []
        for name, target, model in runs:
            numbers.append(store.create_run(new_run(name=name, target=f"/mnt/{target}")))
            store.finish_run(numbers[-1], "complete")  # a running run is never deleted (the next example's)
            store.set_run_values("run_env", numbers[-1], {"devices": "sda", "device.sda.model": model,
                                                          "device.sda.serial": "S1"})
        where = RunFilter(**{field: query})
        found = sorted(info.id for info in store.list_runs(None, where))
        counted = store.count_runs(where)
    folded = query.casefold()
    expected = sorted(number for number, (name, target, model) in zip(numbers, runs) if any(
        folded in text.casefold() for text in {"name": [name], "device": [model],
                                               "text": [name, "quick", f"/mnt/{target}", "testhost", model]}[field]))
    assert found == expected and counted == len(expected), runs
