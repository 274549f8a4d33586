"""The latency histograms the store keeps apart from fio's output (migration 13): every bin exactly as fio's output
has it, read without the output, an older test's still read from its output, and made again where a run moves."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disklab.fio.parse import latency_bins, parse_fio_output
from disklab.store.records import StoredTest, recorded_bins
from disklab.store.repository import Store
from tests.conftest import FIO_FIXTURES, fixture_text
from tests.stores import query
from tests.unit.test_bundle import disklab
from tests.unit.test_store import new_run

# fio 3.x json+ (read and write; a write job's fsyncs under 'sync'), fio 2.x json+ (bins in usec), and json (none).
OUTPUTS = ("layouts/jsonplus-randrw.jsonplus.json", "layouts/jsonplus-write-fsync.jsonplus.json",
           "layouts/layout-fio-2.20.randrw.jsonplus.json", "layouts/rw-randrw.json")


def stored(location) -> list[tuple[str, int]]:
    """(fixture, test id) of each of OUTPUTS stored as a test of one run."""
    made = []
    with Store(location) as store:
        run_id = store.create_run(new_run(planned_tests=len(OUTPUTS)))
        for seq, name in enumerate(OUTPUTS):
            output = fixture_text(name)
            (job,) = parse_fio_output(output).jobs
            made.append((name, store.add_test(run_id, seq, name, {}, "", output, "", "2026-01-01T00:00:00+00:00",
                                              job)))
        store.finish_run(run_id, "complete")
    return made


def histograms(location) -> dict[str, dict]:
    """{fixture: {direction: its histogram as the stored test reads it}}."""
    with Store(location, read_only=True) as store:
        (record,) = store.get_runs([store.list_runs(None)[0].id])
    return {test.label: {m.direction: test.latency_bins(m.direction) for m in test.metrics} for test in record.tests}


def test_a_stored_test_reads_its_histograms_exactly_and_without_its_fio_output(store_location):
    stored(store_location)
    expected = {name: {direction: latency_bins(fixture_text(name), direction) for direction in found}
                for name, found in histograms(store_location).items()}
    assert {name: {direction: len(bins or ()) for direction, bins in found.items()}
            for name, found in expected.items()} == {
        OUTPUTS[0]: {"read": 64, "write": 107}, OUTPUTS[1]: {"write": 139, "sync": 154},  # fsyncs have their own
        OUTPUTS[2]: {"read": 39, "write": 15}, OUTPUTS[3]: {"read": 0, "write": 0}}  # json output has none
    assert expected[OUTPUTS[3]] == {"read": None, "write": None}
    with Store(store_location) as store, store.transaction():  # the outputs gone: the store's record is read
        store.conn.execute("UPDATE tests SET fio_output = '{}'")
    found = histograms(store_location)
    assert found == expected
    assert all(type(value) is float for by_direction in found.values() for bins in by_direction.values()
               for value in bins or ())


def test_a_test_stored_before_the_store_kept_histograms_reads_them_from_its_fio_output(store_location):
    stored(store_location)
    expected = histograms(store_location)
    with Store(store_location) as store, store.transaction():
        store.conn.execute("UPDATE metrics SET clat_bins_json = NULL")  # as migration 13 leaves the tests before it
    assert histograms(store_location) == expected and expected["layouts/jsonplus-randrw.jsonplus.json"]["read"]


finite = st.floats(min_value=0, max_value=1e15, allow_nan=False, allow_infinity=False)


@given(st.dictionaries(st.one_of(finite, st.integers(0, 2**53).map(float)), st.integers(0, 2**63 - 1), max_size=40),
       st.sampled_from(("clat_ns", "clat")))
def test_any_histogram_reads_back_bin_for_bin(bins, layout):
    """Whole nanoseconds are kept without their '.0'; every value, whole or not, reads back as the same float."""
    document = json.dumps({"jobs": [{"read": {layout: {"bins": {repr(value): count for value, count in bins.items()}}}}]})
    test = StoredTest(1, 0, "t", {}, "", "", 0.0, 0.0, (), recorded_bins={"read": recorded_bins(document, "read")})
    read_back = test.latency_bins("read")
    assert read_back == latency_bins(document, "read")
    assert all(type(value) is float for value in read_back)


def test_a_moved_run_has_its_histograms_made_again_where_it_arrives(tmp_path, store_location):
    """A bundle leaves them out (the store derives them from the output it carries); the import records them."""
    source = tmp_path / "a.db"
    disklab("--store", str(source), "import", str(FIO_FIXTURES / OUTPUTS[0]))
    bundle = tmp_path / "bundle.json"
    disklab("--store", str(source), "export-run", "1", "-o", str(bundle))
    assert "clat_bins_json" not in bundle.read_text()
    disklab("--store", str(store_location), "import", str(bundle))
    sql = "SELECT direction, clat_bins_json FROM metrics ORDER BY direction"
    assert query(store_location, sql) == query(source, sql)
    assert [bins != "null" for _, bins in query(source, sql)] == [True, True]


@pytest.mark.parametrize("name", ["pgbench-output", ""])
def test_output_that_is_not_fios_records_no_histogram(name):
    assert recorded_bins(name, "read") == "null"


def test_a_row_reads_by_name_and_position_on_both_stores(store_location):
    """PostgreSQL's rows read as sqlite3.Row does: by column name or position, from the end, by slices."""
    stored(store_location)
    with Store(store_location, read_only=True) as store:
        row = store.conn.execute("SELECT direction, total_ios, clat_bins_json FROM metrics ORDER BY test_id, direction"
                                 ).fetchone()
        assert (row["direction"], row[0], row[-3], tuple(row[1:])[0]) == ("read", "read", "read", row["total_ios"])
        assert row["total_ios"] == row[1] > 0 and tuple(row) == (row[0], row[1], row[2])
        with pytest.raises(IndexError):
            row[3]
        with pytest.raises((KeyError, IndexError)):  # sqlite3.Row says IndexError, PostgreSQL's rows KeyError
            row["no_such_column"]
