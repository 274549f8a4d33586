"""`disklab publish`: the server's pages as a static folder (asv-style) that works from a file system and from any
web server: the same renderers with StaticLinks (relative file names), and the downloads written as files.

A static site has no server to answer queries: the runs list is one page of every run that a small inline script
filters, sorts and pages in the browser, and the comparisons written are the ones the pages link to (each step of a
device's history); comparing any runs needs `disklab serve` or `disklab report`. A folder that holds files is only
written into when an earlier publish left its manifest there; the files that publish wrote and no longer writes
(a deleted run's) are removed, and nothing else is touched.
"""

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from disklab.analysis.history import device_history
from disklab.errors import UserError
from disklab.store.db import now_iso
from disklab.store.records import RunRecord
from disklab.store.repository import RunFilter, Store
from disklab.web.history import (
    compare_pairs, history_pages, render_device_page, render_devices_page, store_devices,
)
from disklab.web.links import StaticLinks
from disklab.web.pages import (
    RUNS_PER_PAGE, RunsListing, list_runs, render_compare_page, render_run_page, render_runs_page, render_template,
)

MANIFEST = ".disklab-publish.json"
# Bump when the manifest changes shape. 1: first version (the files written, relative to the folder).
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class Published:
    runs: int
    devices: int
    comparisons: int
    files: int


@dataclass(frozen=True)
class _WholeList(RunsListing):
    """Every run on the static site's one runs page, which the browser filters, sorts and pages (site-index)."""

    @property
    def pages(self) -> int:
        return 1


class _Site:
    """The files of one publish, written as they come and recorded in the manifest."""

    def __init__(self, folder: Path, earlier: set[str]):
        self.folder = folder
        self.earlier = earlier
        self.written: set[str] = set()

    def write(self, name: str, text: str) -> None:
        path = self.folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
        self.written.add(name)

    def record(self, files: Iterable[str]) -> None:
        document = {"format": "disklab-publish", "format_version": MANIFEST_VERSION, "files": sorted(files)}
        self.write(MANIFEST, json.dumps(document, indent=1) + "\n")

    def remove_stale(self) -> None:
        """The earlier publish's files this one did not write again, and the folders that leaves empty."""
        for name in sorted(self.earlier - self.written, reverse=True):
            path = self.folder / name
            path.unlink(missing_ok=True)
            for parent in path.parents:
                if parent == self.folder or any(parent.iterdir()):
                    break
                parent.rmdir()


def publish(store: Store, folder: Path) -> Published:
    """Write the site into `folder` (created if missing); refused when it holds files of anything but a publish."""
    site = _Site(folder, _earlier_files(folder))
    site.record(site.earlier)  # first: a publish cut short still leaves a folder a next publish may overwrite
    generated_at = now_iso()
    devices = store_devices(store)
    comparisons = 0
    for device in devices:  # every run belongs to one device: each run's record is read once
        records = {info.id: store.get_run(info.id) for info in device.runs}
        for record in records.values():
            _write_run(site, store, record, generated_at)
        history = device_history(device, list(records.values()))
        for page in range(1, history_pages(device) + 1):
            site.write(_page(StaticLinks(0).device(device.key, page)), render_device_page(history, StaticLinks(1), page))
        for pair in sorted(compare_pairs(history)):
            html = render_compare_page([records[run_id] for run_id in pair], StaticLinks(1), generated_at)
            site.write(_page(StaticLinks(0).compare(pair)), html)
            comparisons += 1
    site.write(_page(StaticLinks(0).devices()), render_devices_page(devices, StaticLinks(1)))
    runs = sum(len(d.runs) for d in devices)
    site.write(_page(StaticLinks(0).runs()), _index(store, runs))
    site.record(site.written | {MANIFEST})
    site.remove_stale()
    return Published(runs, len(devices), comparisons, len(site.written))


def _earlier_files(folder: Path) -> set[str]:
    """The files an earlier publish wrote into `folder`; none for a new or empty folder. Anything else is refused."""
    if not folder.exists():
        return set()
    if not folder.is_dir():
        raise UserError(f"cannot publish into {folder}: it is a file, not a folder")
    manifest = folder / MANIFEST
    try:
        if not any(folder.iterdir()):
            return set()
        if not manifest.is_file():
            raise UserError(f"{folder} is not empty and holds no earlier disklab publish: publish into a new or "
                            "empty folder, or into one an earlier publish wrote")
        document = json.loads(manifest.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {folder}: {exc.strerror or exc}") from None
    except ValueError:
        document = None
    if not isinstance(document, dict) or document.get("format") != "disklab-publish" \
            or not isinstance(document.get("files"), list):
        raise UserError(f"{manifest} is not a disklab publish manifest: publish into a new or empty folder")
    files = {name for name in document["files"] if isinstance(name, str)}
    if not all(_inside(name) for name in files):
        raise UserError(f"{manifest} names files outside {folder}: it was not written by disklab publish")
    return files


def _inside(name: str) -> bool:
    """A manifest's name of a file in the folder, not a way out of it ('../x', '/etc/x')."""
    return not os.path.isabs(name) and ".." not in Path(name).parts


def _page(link: str) -> str:
    """A StaticLinks link from the site's root -> the file's name in the folder (links quote what names do not)."""
    from urllib.parse import unquote

    return unquote(link)


def _write_run(site: _Site, store: Store, record: RunRecord, generated_at: str) -> None:
    """runs/N.html and the files its download links name."""
    run_id = record.info.id
    root = StaticLinks(0)
    site.write(_page(root.run(run_id)), render_run_page(record, store.smart(run_id), StaticLinks(1), generated_at))
    site.write(_page(root.suite_file(run_id)), record.suite_text)
    for test in record.tests:
        site.write(_page(root.job_file(run_id, test.id)), test.jobfile)
        site.write(_page(root.fio_output(run_id, test.id)), test.fio_output)


def _index(store: Store, runs: int) -> str:
    """Every run on one page (read a page of the server's list at a time), with the script that filters it."""
    pages = [list_runs(store, RunFilter(), page=page) for page in range(1, -(-runs // RUNS_PER_PAGE) + 1)]
    listing = _WholeList(
        runs=tuple(info for page in pages for info in page.runs),
        models={run_id: models for page in pages for run_id, models in page.models.items()},
        matched=runs, page=1, order="-id", query={},
    )
    links = StaticLinks(0)
    html = render_runs_page(listing, links)
    tools = render_template("site-index.html.j2", links, per_page=RUNS_PER_PAGE)
    if html.count("</main>") != 1:
        raise ValueError("the runs page has no single <main> to add the static site's tools to")
    return html.replace("</main>", tools + "</main>")
