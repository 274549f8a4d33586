"""How a run on many hosts is stored: one test per host and step, the step's aggregate, and what each view sees."""

from disklab.hosts.client import split_by_host
from disklab.fio.parse import parse_fio_output
from disklab.hosts.hosts import Host
from disklab.store.repository import NewRun, Store
from tests.conftest import fixture_text

HOSTS = (Host("10.209.1.2"), Host("10.209.2.2"))


def hosts_run(store: Store) -> int:
    return store.create_run(NewRun(
        suite_name="quick", suite_source="built-in", suite_text="", target="/shared", target_kind="directory",
        test_path="/shared/f", options={"hosts": [h.name for h in HOSTS]}, disklab_version="0.1.0",
        fio_version="fio-3.33", fio_engine="psync", hostname="here", kernel="6.1", planned_tests=2,
    ))


def store_step(store: Store, run_id: int, plan_index: int, aggregate: bool = True) -> None:
    """A step as hosts/steps.py stores it, from real client output; the aggregate's figure matters not here."""
    run = split_by_host(fixture_text("hosts-two-hosts.jsonplus.json"), "", HOSTS, 0)
    for name, output in run.per_host.items():
        (job,) = parse_fio_output(output).jobs
        store.add_test(run_id, store.next_seq(run_id), f"t{plan_index} @ {name}", {}, "", output, "", "now", job,
                       plan_index=plan_index, host=name)
    if aggregate:
        (job,) = parse_fio_output(run.per_host[HOSTS[0].name]).jobs
        store.add_test(run_id, store.next_seq(run_id), f"t{plan_index}", {}, "", run.combined, "", "now", job,
                       plan_index=plan_index)


def test_views_see_the_aggregates_and_per_host_adds_the_hosts(store_location):
    with Store(store_location) as store:
        run_id = hosts_run(store)
        store_step(store, run_id, 0)
        store_step(store, run_id, 1)
        record = store.get_run(run_id)
        every = store.get_run(run_id, per_host=True)
    assert [t.label for t in record.tests] == ["t0", "t1"]
    assert record.info.finished_tests == 2, "steps are counted, not each host's test"
    assert [(t.label, t.host) for t in every.tests][:3] == [
        ("t0 @ 10.209.1.2", "10.209.1.2"), ("t0 @ 10.209.2.2", "10.209.2.2"), ("t0", None)]
    assert [t.seq for t in every.tests] == list(range(6))


def test_a_step_cut_off_before_its_aggregate_is_stored_again_whole(store_location):
    with Store(store_location) as store:
        run_id = hosts_run(store)
        store_step(store, run_id, 0)
        store_step(store, run_id, 1, aggregate=False)  # disklab killed between the hosts' tests and the aggregate
        assert [t.label for t in store.get_run(run_id).tests] == ["t0"], "resume sees step 1 as not done"
        store.remove_host_tests(run_id, 1, 1)
        store_step(store, run_id, 1)
        every = store.get_run(run_id, per_host=True)
    assert sorted((t.plan_index, t.host or "") for t in every.tests) == sorted(
        (i, h) for i in (0, 1) for h in ("", "10.209.1.2", "10.209.2.2"))
