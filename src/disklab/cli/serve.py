"""`disklab serve`: the store in a web browser, read-only, through waitress (a WSGI server from PyPI)."""

import ipaddress
from pathlib import Path

import click

from disklab.cli.common import store_location
from disklab.cli.helptext import examples
from disklab.cli.options import WholeNumber
from disklab.errors import StoreError
from disklab.store.locations import store_file
from disklab.store.repository import Store
from disklab.system.signals import interrupt_on_termination

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8740


@click.command(epilog=examples(
    "disklab serve                           # http://127.0.0.1:8740/, read-only over the store",
    "disklab serve --port 9000 --db lab.db   # another port, another store"))
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on; anything but a loopback address lets other machines read the store.")
@click.option("--port", type=WholeNumber(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="Port to listen on (0: any free port, printed at start).")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
              help="Results store file to serve (default: disklab's --store or --db, its environment, the config).")
@click.pass_context
def serve(ctx, host, port, db):
    """Browse, search and compare the stored runs in a web browser; Ctrl-C stops it. Nothing is written."""
    location = store_file(db) if db else store_location(ctx)
    shown = check_store(location)
    from disklab.web.app import WebApp
    from disklab.web.server import listen

    server = listen(WebApp(location), host, port)
    if not _loopback(host):
        click.echo(f"disklab: warning: listening on {host}: anyone who can reach this machine can read every stored "
                   "run; use --host 127.0.0.1 to keep it to this machine", err=True)
    listening = getattr(server, "effective_listen", None) or [(server.effective_host, server.effective_port)]
    for address, bound_port in listening:
        shown_address = f"[{address}]" if ":" in str(address) else address
        click.echo(f"serving {shown} read-only at http://{shown_address}:{bound_port}/ (Ctrl-C stops)")
    try:
        with interrupt_on_termination():
            server.run()  # waitress takes Ctrl-C (and so SIGTERM, SIGHUP) as the end of serving: exit 0
    finally:
        server.close()
    click.echo("stopped", err=True)


def check_store(location: Path | str) -> str:
    """A store file that is not there is refused rather than created; a damaged one, or a database that cannot be
    reached, is refused before listening. Returns the store as messages name it."""
    if isinstance(location, Path) and not location.is_file():
        raise StoreError(f"there is no results store at {location}; give one with --store, or store a run first")
    with Store(location, read_only=True) as store:
        store.count_runs()
        return store.name


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may well resolve to an outside address
