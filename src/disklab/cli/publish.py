"""`disklab publish`: the pages of `disklab serve` as a static folder, to open from disk or put on any web server."""

from pathlib import Path

import click

from disklab.cli.common import store_location
from disklab.cli.helptext import examples
from disklab.cli.serve import check_store
from disklab.store.locations import store_file
from disklab.store.repository import Store
from disklab.system.signals import interrupt_on_termination


@click.command(epilog=examples(
    "disklab publish -o site/                      # every run, device history and linked comparison",
    "disklab publish -o /srv/www/lab --db lab.db   # another store"))
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path), metavar="DIR",
              help="Folder to write the site into: new, empty, or one an earlier publish wrote (it is replaced whole); "
                   "a link to a folder is followed once and stays a link.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
              help="Results store file to publish (default: disklab's --store or --db, its environment, the config).")
@click.pass_context
def publish(ctx, output, db):
    """Write every run, device history and the comparisons they link to as static HTML into DIR (index.html);
    links are relative, so the folder works from a file system and from any web server. The site is written beside
    DIR and swapped in whole: a reader, or a kill, finds the previous site or the new one. Nothing is written to the
    store."""
    location = store_file(db) if db else store_location(ctx)
    check_store(location)
    from disklab.web.publish import publish as write_site  # jinja2 and the pages load only for this command

    # SIGTERM and SIGHUP as Ctrl-C: the new site in the making is removed, and the previous one stays.
    with Store(location, read_only=True) as store, interrupt_on_termination():
        site = write_site(store, output)
    click.echo(f"published {site.runs:,} run{'s' * (site.runs != 1)}, {site.devices:,} device"
               f"{'s' * (site.devices != 1)} and {site.comparisons:,} comparison{'s' * (site.comparisons != 1)} "
               f"({site.files:,} files) to {output / 'index.html'}")
