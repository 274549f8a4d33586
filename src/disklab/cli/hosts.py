"""`disklab hosts`: fio servers for runs on many hosts (`run --hosts`): serve one here, check them before a run."""

import click
from rich.table import Table

from disklab.cli.common import stderr_console, stdout_console
from disklab.cli.helptext import examples
from disklab.errors import FioError
from disklab.fio.clientstats import DEFAULT_FIO_PORT
from disklab.fio.features import detect_fio
from disklab.hosts.check import check_hosts
from disklab.hosts.hosts import Host, parse_host, parse_hosts
from disklab.hosts.serve import beyond_loopback
from disklab.hosts.serve import serve as serve_fio

SECURITY_WARNING = (
    "warning: fio's server has no authentication and runs any job it is sent (it can read and overwrite any file "
    "this user may); {bind} is reachable from beyond this machine: use it only on a trusted network, or keep the "
    "server on 127.0.0.1 and reach it through an SSH tunnel (ssh -L {port}:localhost:{port} HOST)"
)


@click.group(epilog=examples(
    "disklab hosts serve --bind 10.0.0.5                          # on each host",
    "disklab hosts check h1 h2 h3 --target /mnt/shared/disklab    # then, here:",
    "disklab run blocksize --hosts h1,h2,h3 --target /mnt/shared/disklab"))
def hosts():
    """fio servers on other hosts: runs on many hosts at once go through fio's own client/server mode."""


@hosts.command(epilog=examples(
    "disklab hosts serve                     # 127.0.0.1 only",
    "disklab hosts serve --bind 10.0.0.5     # the address the lab's network reaches",
    "disklab hosts serve --bind 10.0.0.5 --port 8766"))
@click.option("--bind", default="127.0.0.1", show_default=True,
              help="The address fio's server listens on; anything but loopback is reachable from the network.")
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_FIO_PORT, show_default=True)
def serve(bind, port):
    """Run fio's server here, in the foreground, bound to one address (stop it with Ctrl-C)."""
    host = Host(parse_host(bind).address, port)
    if beyond_loopback(host.address):
        stderr_console().print(SECURITY_WARNING.format(bind=host.address, port=port), style="yellow")
    fio = detect_fio()
    stderr_console().print(f"fio server ({fio.version_text}) on {host.name}; 'disklab run SUITE --hosts ...' drives it")
    code = serve_fio(fio.path, host)
    if code not in (0, -2, 130):
        raise FioError(f"fio's server ended with exit {code}")


@hosts.command(epilog=examples(
    "disklab hosts check h1 h2 h3",
    "disklab hosts check h1 h2:8766 --target /mnt/shared/disklab",
    "disklab hosts check @hosts.txt --target /data   # one host a line"))
@click.argument("host_list", nargs=-1, required=True, metavar="HOST...")
@click.option("--target", "-t", help="A directory that must exist (and be writable) on every host.")
def check(host_list, target):
    """Check that every HOST (ADDR[:PORT], or @FILE) runs a reachable fio server of this machine's fio version."""
    named = tuple(h for item in host_list for h in parse_hosts(item))
    fio = detect_fio()
    checks = check_hosts(named, fio.path, fio.version_text, target)
    table = Table()
    for heading in ("Host", "Reachable", "fio", "Target", "Problem"):
        table.add_column(heading)
    for c in checks:
        present = "-" if c.target_present is None else ("yes" if c.target_present else "no")
        table.add_row(c.host.name, "yes" if c.fio_version else "no", c.fio_version or "-", present, c.problem or "")
    stdout_console().print(table)
    failed = [c for c in checks if not c.ok]
    if failed:
        raise FioError(f"{len(failed)} of {len(checks)} hosts not ready: "
                       + "; ".join(f"{c.host.name}: {c.problem}" for c in failed))
    stderr_console().print(f"all {len(checks)} hosts ready (local {fio.version_text})")
