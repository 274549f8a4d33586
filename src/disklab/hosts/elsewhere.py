"""--hosts as the run layer sees it (run/prepare.py's Elsewhere): every step on the fio servers of these hosts at once."""

from disklab.fio.features import FioInfo
from disklab.hosts.check import check_hosts, require_ready
from disklab.hosts.client import ClientExecutor
from disklab.hosts.files import clean_up_on_hosts
from disklab.hosts.hosts import Host
from disklab.hosts.steps import HostsStep, refuse_unsupported
from disklab.plan.build import Plan


class OnHosts:
    """The target is `folder` on every host; their fio servers answer for it (reachable, same fio, folder there)."""

    def __init__(self, hosts: tuple[Host, ...], folder: str):
        self.hosts = hosts
        self.folder = folder

    def refuse_unsupported(self, plan: Plan) -> None:
        refuse_unsupported(plan)

    def require_ready(self, fio: FioInfo) -> None:
        require_ready(check_hosts(self.hosts, fio.path, fio.version_text, self.folder))

    def step_runner(self, fio: FioInfo) -> HostsStep:
        return HostsStep(ClientExecutor(fio.path), self.hosts, self.folder)

    def clean_up(self, fio: FioInfo, keep_file: bool) -> list[str]:
        return clean_up_on_hosts(fio.path, self.hosts, self.folder, keep_file)
