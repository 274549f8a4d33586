"""The pages and downloads of a published site, drawn into a folder no reader sees (web/publish.py): each page whose
fingerprint (web/published.py) is the one the earlier publish recorded is kept as it is (nothing is read or written
of it), the others drawn. A run's record is read only for a page drawn, and at most once a device.
"""

import json
import os
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
    render_runs_page, render_template, run_figures, run_rows,
)
from disklab.web.published import (
    DEVICES, INDEX, LISTS, DeviceEntry, Earlier, RunEntry, comparison_file, device_page_fingerprint,
    manifest_document, run_fingerprints, run_files,
)


class _WholeList(RunsListing):
    """Every run on the static site's one runs page, which the browser filters, sorts and pages (site-index)."""

    @property
    def pages(self) -> int:
        return 1


class Site:
    """The files of one publish, drawn into `folder` (the new site, or what an update in place moves into the site;
    no reader sees either), what the manifest will record of them, and what of them could not be drawn."""

    def __init__(self, folder: Path, shown: Path, earlier: Earlier, live: Path | None = None):
        self.folder = folder
        self.live = live  # the site updated in place, whose runs list's rows are kept
        self.shown = shown  # the folder the user named, for messages
        self.earlier = earlier
        self.written: list[str] = []  # the files drawn, in the order drawn
        self.runs: dict[int, RunEntry] = {}  # the manifest's: every run, device page and comparison of the site
        self.devices: dict[str, DeviceEntry] = {}
        self.undrawn: set[tuple[int, int]] = set()
        self.compared: set[tuple[int, int]] = set()  # the comparisons drawn
        self.problems: list[str] = []

    def write(self, name: str, text: str) -> None:
        """A new file ("x": none is there in a folder of the publish's own)."""
        path = self.folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8") as out:
                out.write(text)
        except OSError as exc:
            raise UserError(f"cannot write {self.shown / name}: {exc.strerror or exc}") from None
        self.written.append(name)

    def earlier_rows(self) -> dict[int, str]:
        """The rows of the runs list the site holds, by run id (read through no link); none when it is not there."""
        if self.live is None or not self.earlier.trusted:
            return {}
        try:
            descriptor = os.open(self.live / INDEX, os.O_RDONLY | os.O_NOFOLLOW)
            with open(descriptor, encoding="utf-8") as page:
                return run_rows(page.read())
        except (OSError, ValueError):
            return {}

    def keep_run(self, run_id: int, fingerprint: str | None) -> bool:
        """Whether the run's page and downloads are the earlier publish's (its fingerprint the same): kept as they
        are, not drawn."""
        if self.earlier.run_unchanged(run_id, fingerprint):
            self.runs[run_id] = self.earlier.runs[run_id]
            return True
        return False

    def keep_device(self, name: str, fingerprint: str | None) -> bool:
        if self.earlier.device_unchanged(name, fingerprint):
            self.devices[name] = self.earlier.devices[name]
            return True
        return False

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

    def manifest(self) -> str:
        return json.dumps(manifest_document(self.runs, self.devices, self.undrawn)) + "\n"

    def files(self) -> int:
        """The files of the site, its manifest with them."""
        runs = sum(len(run_files(run_id, entry)) for run_id, entry in self.runs.items())
        comparisons = {pair for entry in self.devices.values() for pair in entry.pairs}
        return runs + len(self.devices) + len(comparisons) + len(LISTS) + 1


def write_site(site: Site, store: Store, infos: Sequence[RunInfo]) -> tuple[int, int, int]:
    """Every page and download of these runs into the site; (runs, devices, comparisons)."""
    generated_at = now_iso()
    runs = run_fingerprints(store, infos)
    devices = store_devices(store, set(runs))
    comparisons = 0
    for device in devices:
        comparisons += _write_device(site, store, device, runs, generated_at)
    site.write(DEVICES, render_devices_page(devices, StaticLinks(1)))
    site.write(INDEX, _index(site, store, infos, runs))
    return len(infos), len(devices), comparisons


def _write_device(site: Site, store: Store, device: Device, runs: Mapping[int, str | None], generated_at: str) -> int:
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
            if not site.keep_run(run_id, runs[run_id]):
                _write_run(site, store, run_id, read, runs[run_id], generated_at)
        name = page(StaticLinks(0).device(device.key, None if number == pages else number))
        fingerprint = device_page_fingerprint(device, number, runs)
        if site.keep_device(name, fingerprint):
            pairs = site.devices[name].pairs
        else:
            pairs = _write_history(site, device, number, read, name, fingerprint)
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
        site.devices[name] = DeviceEntry(None, ())
        return ()
    parts = Parts()
    site.write(name, render_device_page(history, StaticLinks(1), number, parts))
    pairs = tuple(sorted(page_pairs(history, number)))
    site.devices[name] = DeviceEntry(fingerprint if site.note(parts) else None, pairs)
    return pairs


def _write_comparison(site: Site, pair: tuple[int, int], runs: Mapping[int, str | None],
                      read: Callable[[int], RunRecord | None], generated_at: str) -> None:
    if site.earlier.comparison_unchanged(pair, runs):
        return
    name = comparison_file(pair)
    site.undrawn.add(pair)  # until drawn whole
    site.compared.add(pair)
    what, parts = f"the comparison of runs {pair[0]} and {pair[1]}", Parts()
    records = [read(run_id) for run_id in pair]
    html = None if None in records else site.draw(what, lambda: render_compare_page(records, StaticLinks(1),
                                                                                    generated_at, parts))
    if html is None:
        site.write_message(name, f"Runs {pair[0]} and {pair[1]}", site.problems[-1] if site.problems else
                           f"run {pair[0]} or {pair[1]} could not be read")
        return
    site.write(name, html)
    if site.note(parts) and None not in (runs.get(pair[0]), runs.get(pair[1])):
        site.undrawn.discard(pair)


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
        site.runs[run_id] = RunEntry(None, None)
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
    site.runs[run_id] = RunEntry.of(fingerprint if len(site.problems) == problems else None,
                                    [test.id for test in record.tests])


def page(link: str) -> str:
    """A StaticLinks link from the site's root -> the file's name in the folder (links quote what names do not)."""
    return unquote(link)


def _index(site: Site, store: Store, infos: Sequence[RunInfo], runs: Mapping[int, str | None]) -> str:
    """Every published run on one page, with the script that filters it; the rows of the runs that did not change
    are the earlier runs list's."""
    drawn = {run_id: row for run_id, row in site.earlier_rows().items() if site.earlier.run_unchanged(run_id,
                                                                                                        runs.get(run_id))}
    listing = _WholeList(runs=tuple(infos), models=disk_models(store, [info for info in infos if info.id not in drawn]),
                         matched=len(infos), page=1, order="-id", query={})
    links = StaticLinks(0)
    html = render_runs_page(listing, links, drawn)
    tools = render_template("site-index.html.j2", links, per_page=RUNS_PER_PAGE)
    if html.count("</main>") != 1:
        raise ValueError("the runs page has no single <main> to add the static site's tools to")
    return html.replace("</main>", tools + "</main>")
