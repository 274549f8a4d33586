"""`disklab publish`: the pages of `disklab serve` as a static folder, to open from disk or put on any web server."""

from pathlib import Path

import click

from disklab.cli.common import report_undrawn, store_location
from disklab.cli.completion import complete_run
from disklab.cli.helptext import examples
from disklab.cli.run_filters import run_filter_options
from disklab.cli.serve import check_store
from disklab.store.locations import store_file
from disklab.store.repository import Store
from disklab.store.series import resolve_refs
from disklab.system.signals import interrupt_on_termination


@click.command(epilog=examples(
    "disklab publish -o site/                      # every run, device history and linked comparison",
    "disklab publish -o site/ --suite quick --since 30d --exclude 12 --exclude series:40",
    "disklab publish -o /srv/www/lab --db lab.db   # another store",
    "disklab publish -o site/ --full               # every page drawn again and the site swapped in whole"))
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path), metavar="DIR",
              help="Folder to write the site into: new, empty, or one an earlier publish wrote (it is updated); a "
                   "link to a folder is followed once and stays a link.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path),
              help="Results store file to publish (default: disklab's --store or --db, its environment, the config).")
@run_filter_options
@click.option("--exclude", "excluded", multiple=True, metavar="RUN", shell_complete=complete_run,
              help="Leave this run out (a number, 'last', 'last~N' or series:RUN); repeatable.")
@click.option("--full", is_flag=True,
              help="Draw every page again and swap the site in whole; by default a folder an earlier publish wrote "
                   "is updated in place, only the pages of what changed drawn.")
@click.pass_context
def publish(ctx, output, db, where, excluded, full):
    """Write the stored runs (every run, or those the filters take), their devices' histories and the comparisons
    those link to as static HTML into DIR (index.html); links are relative, so the folder works from a file system
    and from any web server. Nothing is written to the store. A new site (or --full) is written beside DIR and
    swapped in whole: a reader, or a kill, finds the previous site or the new one.

    Into a folder an earlier publish wrote, only the pages of what changed are drawn (the runs, pages of device
    history and comparisons whose runs changed, and the two lists) and renamed into DIR one by one, each whole and
    after the files it links to: a reader or a kill finds every page whole and every link working, the site
    a mix of the two publishes until it ends; the next publish finishes what a killed one began.

    A run, history or comparison that cannot be drawn whole (a bug in disklab) is published as far as it can be,
    its page saying what is missing; each is named on stderr and the exit status is 1."""
    location = store_file(db) if db else store_location(ctx)
    check_store(location)
    from disklab.web.publish import publish as write_site  # jinja2 and the pages load only for this command

    # SIGTERM and SIGHUP as Ctrl-C: the new site in the making is removed, and the previous one stays.
    with Store(location, read_only=True) as store, interrupt_on_termination():
        left_out = resolve_refs(store, excluded)
        site = write_site(store, output, where, left_out, full)
    click.echo(f"published {site.runs:,} run{'s' * (site.runs != 1)}, {site.devices:,} device"
               f"{'s' * (site.devices != 1)} and {site.comparisons:,} comparison{'s' * (site.comparisons != 1)} "
               f"({site.files:,} files) to {output / 'index.html'}")
    report_undrawn(ctx, site.problems, "the site")
