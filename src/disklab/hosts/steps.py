"""One step of a run on every host at once: each host's result stored under its name, then the aggregate.

The aggregate is stored as the step's own test (host NULL), so show, compare, export, report and resume see one
test per step as they do without hosts; the per-host tests beside it carry the host (`show --per-host`).
"""

from dataclasses import dataclass
from typing import Callable

from disklab.errors import FioError, UserError
from disklab.run.execute import Execution, single_job
from disklab.hosts.client import ClientExecutor
from disklab.plan.jobfile import render_jobfile
from disklab.fio.parse import JobResult, latency_bins, parse_fio_output
from disklab.hosts.aggregate import HostResult, aggregate_job, slowest_host
from disklab.hosts.files import host_test_file
from disklab.hosts.hosts import Host
from disklab.plan.build import Plan
from disklab.run.schedule import Step
from disklab.store.db import now_iso
from disklab.store.repository import Store

SLOWEST_HOST_FLAG = "slowest-host"


@dataclass(frozen=True)
class HostsStep:
    client: ClientExecutor
    hosts: tuple[Host, ...]
    directory: str  # the target directory on the hosts

    def __call__(self, execution: Execution, step: Step, store: Store, on_tick: Callable[[], None]) -> JobResult:
        """Raises naming the host when one gives no result; nothing of this step is stored then."""
        test = step.test
        jobfiles = {
            host: render_jobfile(test, host_test_file(self.directory, host), "", execution.plan.suite.name)
            for host in self.hosts
        }
        started_at = now_iso()
        client_run = self.client.run(jobfiles, on_tick=on_tick)
        results = tuple(
            HostResult(host.name, _host_job(host, client_run.per_host[host.name], test.label)) for host in self.hosts
        )
        bins = {d.direction: latency_bins(client_run.combined, d.direction) for r in results for d in r.job.directions}
        job = aggregate_job(test.label, results, bins)
        store.remove_host_tests(execution.run_id, step.plan_index, step.attempt)
        for host, result in zip(self.hosts, results):
            store.add_test(
                execution.run_id, store.next_seq(execution.run_id), f"{test.label} @ {host.name}", test.params(),
                jobfiles[host], client_run.per_host[host.name], "", started_at, result.job,
                plan_index=step.plan_index, attempt=step.attempt, host=host.name,
            )
        test_id = store.add_test(
            execution.run_id, store.next_seq(execution.run_id), test.label, test.params(),
            "\n".join(f"; on fio server {host.name}\n{jobfiles[host]}" for host in self.hosts), client_run.combined,
            client_run.stderr, started_at, job, plan_index=step.plan_index, attempt=step.attempt,
        )
        store.add_flag(test_id, SLOWEST_HOST_FLAG, slowest_line(results))
        return job


def refuse_unsupported(plan: Plan) -> None:
    """File sets and interval logs live on the hosts' disks, where disklab cannot collect them yet."""
    for test in plan.tests:
        if test.file_set or test.log_interval:
            what = "a file set" if test.file_set else "an interval log (log_interval)"
            raise UserError(f"suite {plan.suite.name!r}: test {test.label!r} uses {what}, which runs on this machine "
                            "only; run it without --hosts")


def slowest_line(results: tuple[HostResult, ...]) -> str:
    """The slowest host and its share, so that a sum held back by one host is seen (not a fault)."""
    slowest = slowest_host(results)
    total = sum(d.iops for r in results for d in r.job.directions if d.direction != "sync")
    own = sum(d.iops for d in slowest.job.directions if d.direction != "sync")
    return f"{slowest.host}: {own:,.0f} of the {total:,.0f} IOPS summed over {len(results)} hosts"


def _host_job(host: Host, output: str, label: str) -> JobResult:
    try:
        return single_job(parse_fio_output(output), label)
    except FioError as exc:
        raise FioError(f"host {host.name}: {exc}") from None
