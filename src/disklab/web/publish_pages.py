"""The pages and downloads of a published site, written into the new folder of a publish (web/publish.py): each page
whose fingerprint (web/published.py) is the one the earlier publish recorded is carried over from the previous
site as a hard link, the others drawn. A run's record is read only for a page drawn, and at most once a device.
"""

import errno
import json
import os
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from urllib.parse import unquote

from disklab.analysis.history import Device
from disklab.errors import UserError
from disklab.report.parts import Parts
from disklab.store.db import now_iso
from disklab.store.records import RunInfo, RunRecord
from disklab.store.repository import Store
from disklab.web.history import (
    context_runs, history_pages, page_history, page_pairs, page_runs, render_device_page, render_devices_page,
    store_devices,
)
from disklab.web.links import StaticLinks
from disklab.web.pages import (
    FIGURE_TYPES, RUNS_PER_PAGE, RunsListing, disk_models, render_compare_page, render_message_page, render_run_page,
    render_runs_page, render_template, run_figures,
)
from disklab.web.published import (
    MANIFEST, Earlier, comparison_fingerprint, device_page_fingerprint, manifest_document, run_fingerprints,
)

# A file system without hard links (FAT, some FUSE): files are copied into the new folder instead.
NO_LINKS = {errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EXDEV}
_OPEN_FOLDERS = 256  # folder descriptors a site keeps open between carried-over files


class _WholeList(RunsListing):
    """Every run on the static site's one runs page, which the browser filters, sorts and pages (site-index)."""

    @property
    def pages(self) -> int:
        return 1


class Site:
    """The files of one publish, written into the new folder (no reader sees it before the swap) or carried over
    from the previous site, and what of it could not be drawn."""

    def __init__(self, folder: Path, shown: Path, previous: Path | None, earlier: Earlier):
        self.folder = folder
        self.shown = shown  # the folder the user named, for messages
        self.earlier = earlier
        self.written: set[str] = set()
        self.fingerprints: dict[str, str] = {}  # of the pages drawn whole or carried over
        self.links: dict[str, tuple[tuple[int, int], ...]] = {}  # device page -> the comparisons it links to
        self.problems: list[str] = []
        self._previous = _Folders(previous) if previous is not None and earlier.trusted else None
        self._new = _Folders(folder, make=True)

    def write(self, name: str, text: str) -> None:
        """A new file ("x": never one carried over, whose inode the previous site shares)."""
        path = self.folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8") as out:
                out.write(text)
        except OSError as exc:
            raise UserError(f"cannot write {self.shown / name}: {exc.strerror or exc}") from None
        self.written.add(name)

    def carry(self, names: Sequence[str], fingerprint: str | None) -> bool:
        """The files of one page as the earlier publish wrote them, when its fingerprint is the same and each is
        there as a file (reached through no link); False, and nothing carried, otherwise."""
        if self._previous is None or not names or not self.earlier.unchanged(names[0], fingerprint):
            return False
        carried = []
        try:
            for name in names:
                _carry_file(self._previous, self._new, name)
                carried.append(name)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EISDIR):
                raise UserError(f"cannot publish into {self.shown}: {exc.strerror or exc}") from None
            for name in carried:
                os.unlink(self.folder / name)
            return False
        self.written.update(names)
        self.fingerprints[names[0]] = fingerprint
        return True

    def write_message(self, name: str, title: str, message: str) -> None:
        """In place of a page that could not be drawn: one that says why, so that no link of the site is broken."""
        self.write(name, render_message_page(title, message, StaticLinks(name.count("/"))))

    def draw(self, what: str, build):
        """build(), or None with the failure noted as a problem of the site."""
        parts = Parts()
        drawn = parts.draw(what, build)
        self.note(parts)
        return drawn

    def note(self, parts: Parts) -> bool:
        """Whether all was drawn."""
        self.problems += [str(undrawn) for undrawn in parts.undrawn]
        return not parts.undrawn

    def record(self) -> None:
        self.write(MANIFEST, json.dumps(manifest_document(self.written, self.fingerprints, self.links)) + "\n")

    def close(self) -> None:
        for folders in (self._previous, self._new):
            if folders is not None:
                folders.close()


def write_site(site: Site, store: Store, infos: Sequence[RunInfo]) -> tuple[int, int, int]:
    """Every page and download of these runs into the site; (runs, devices, comparisons)."""
    generated_at = now_iso()
    runs = run_fingerprints(store, infos)
    devices = store_devices(store, set(runs))
    run_files = site.earlier.run_files()
    comparisons = 0
    for device in devices:
        comparisons += _write_device(site, store, device, runs, run_files, generated_at)
    site.write(page(StaticLinks(0).devices()), render_devices_page(devices, StaticLinks(1)))
    site.write(page(StaticLinks(0).runs()), _index(store, infos))
    return len(infos), len(devices), comparisons


def _write_device(site: Site, store: Store, device: Device, runs: Mapping[int, str | None],
                  run_files: Mapping[int, list[str]], generated_at: str) -> int:
    """The device's runs, the pages of its history and the comparisons they link to, oldest page first; the records
    read are kept while a later page may read them as context. Returns the comparisons written."""
    records: dict[int, RunRecord | None] = {}

    def read(run_id: int) -> RunRecord | None:
        if run_id not in records:
            records[run_id] = site.draw(f"run {run_id}", partial(store.get_run, run_id))
        return records[run_id]

    comparisons = 0
    pages = history_pages(device)
    for number in range(1, pages + 1):
        for run_id in page_runs(device, number):
            root = page(StaticLinks(0).run(run_id))
            if not site.carry([root, *sorted(set(run_files.get(run_id, ())) - {root})], runs[run_id]):
                _write_run(site, store, run_id, read, runs[run_id], generated_at)
        name = page(StaticLinks(0).device(device.key, None if number == pages else number))
        fingerprint = device_page_fingerprint(device, number, runs)
        if site.carry([name], fingerprint):
            pairs = site.earlier.links.get(name, ())
        else:
            pairs = _write_history(site, device, number, read, name, fingerprint)
        site.links[name] = pairs
        for pair in pairs:
            _write_comparison(site, pair, runs, read, generated_at)
        comparisons += len(pairs)
        kept = set(context_runs(device, number + 1))
        records = {run_id: record for run_id, record in records.items() if run_id in kept}
    return comparisons


def _write_history(site: Site, device: Device, number: int, read: Callable[[int], RunRecord | None], name: str,
                   fingerprint: str | None) -> tuple[tuple[int, int], ...]:
    """One page of the device's history; the comparisons it links to."""
    what = f"the history of {device.label}" + (f", page {number}" if history_pages(device) > 1 else "")
    history = site.draw(what, partial(page_history, device, number, read))
    if history is None:
        site.write_message(name, f"The history of {device.label}", site.problems[-1])
        return ()
    parts = Parts()
    site.write(name, render_device_page(history, StaticLinks(1), number, parts))
    if site.note(parts) and fingerprint is not None:
        site.fingerprints[name] = fingerprint
    return tuple(sorted(page_pairs(history, number)))


def _write_comparison(site: Site, pair: tuple[int, int], runs: Mapping[int, str | None],
                      read: Callable[[int], RunRecord | None], generated_at: str) -> None:
    name, fingerprint = page(StaticLinks(0).compare(pair)), comparison_fingerprint(pair, runs)
    if site.carry([name], fingerprint):
        return
    what, parts = f"the comparison of runs {pair[0]} and {pair[1]}", Parts()
    records = [read(run_id) for run_id in pair]
    html = None if None in records else site.draw(what, lambda: render_compare_page(records, StaticLinks(1),
                                                                                    generated_at, parts))
    if html is None:
        site.write_message(name, f"Runs {pair[0]} and {pair[1]}", site.problems[-1] if site.problems else
                           f"run {pair[0]} or {pair[1]} could not be read")
        return
    site.write(name, html)
    if site.note(parts) and fingerprint is not None:
        site.fingerprints[name] = fingerprint


def _write_run(site: Site, store: Store, run_id: int, read: Callable[[int], RunRecord | None],
               fingerprint: str | None, generated_at: str) -> None:
    """runs/N.html and the files its download links name; a page saying why when it cannot be drawn at all."""
    root = StaticLinks(0)
    record, problems = read(run_id), len(site.problems)
    parts = Parts()
    html = None if record is None else site.draw(
        f"run {run_id}", lambda: render_run_page(record, store.smart(run_id), StaticLinks(1), generated_at, parts))
    if html is None:
        site.write_message(page(root.run(run_id)), f"Run {run_id}", site.problems[-1])
        return
    site.note(parts)
    site.write(page(root.run(run_id)), html)
    site.write(page(root.suite_file(run_id)), record.suite_text)
    for form in FIGURE_TYPES:
        figures = site.draw(f"run {run_id} · figures.{form}", partial(run_figures, record, form))
        site.write(page(root.figures(run_id, form)), figures if figures is not None else site.problems[-1] + "\n")
    for test in record.tests:
        site.write(page(root.job_file(run_id, test.id)), test.jobfile)
        site.write(page(root.fio_output(run_id, test.id)), test.fio_output)
    if len(site.problems) == problems and fingerprint is not None:
        site.fingerprints[page(root.run(run_id))] = fingerprint


def page(link: str) -> str:
    """A StaticLinks link from the site's root -> the file's name in the folder (links quote what names do not)."""
    return unquote(link)


def _index(store: Store, infos: Sequence[RunInfo]) -> str:
    """Every published run on one page, with the script that filters it."""
    listing = _WholeList(runs=tuple(infos), models=disk_models(store, infos), matched=len(infos), page=1, order="-id",
                         query={})
    links = StaticLinks(0)
    html = render_runs_page(listing, links)
    tools = render_template("site-index.html.j2", links, per_page=RUNS_PER_PAGE)
    if html.count("</main>") != 1:
        raise ValueError("the runs page has no single <main> to add the static site's tools to")
    return html.replace("</main>", tools + "</main>")


class _Folders:
    """A site's folders opened by their names from its root, never through a symbolic link (O_NOFOLLOW); `make`:
    made when missing."""

    def __init__(self, root: Path, make: bool = False):
        self.root, self.make = root, make
        self.opened: dict[str, int] = {}

    def open(self, folder: str) -> int:
        if folder in self.opened:
            return self.opened[folder]
        if len(self.opened) >= _OPEN_FOLDERS:
            self.close()
        parent, _, name = folder.rpartition("/")
        if not folder:
            descriptor = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        else:
            above = self.open(parent)
            if self.make:
                try:
                    os.mkdir(name, dir_fd=above)
                except FileExistsError:
                    pass
            descriptor = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=above)
        self.opened[folder] = descriptor
        return descriptor

    def close(self) -> None:
        for descriptor in self.opened.values():
            os.close(descriptor)
        self.opened.clear()


def _carry_file(previous: _Folders, new: _Folders, name: str) -> None:
    """One file of the previous site as a hard link in the new one (a copy where the file system has no links);
    OSError ENOENT, ELOOP or ENOTDIR when it is not a file there, reached through folders only."""
    folder, _, base = name.rpartition("/")
    source = previous.open(folder)
    if not stat.S_ISREG(os.stat(base, dir_fd=source, follow_symlinks=False).st_mode):
        raise OSError(errno.ENOENT, "not a file", name)
    target = new.open(folder)
    try:
        os.link(base, base, src_dir_fd=source, dst_dir_fd=target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in NO_LINKS:
            raise
        reading = os.open(base, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=source)
        writing = os.open(base, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=target)
        with open(reading, "rb") as source_file, open(writing, "wb") as target_file:
            shutil.copyfileobj(source_file, target_file)
