"""What an earlier `disklab publish` wrote into a folder (its manifest), and the fingerprints that tell, without
drawing a page, whether the page would come out as it did then.

A page's fingerprint is a hash of everything it is drawn from:
- a run's page and its downloads: the run's row (RunInfo: status, name, finished time, options, planned and
  finished tests ...) and its notes. A finished run's tests, environment, SMART and flags are all stored before it
  finishes; afterwards only its row changes (renamed, resumed, marked interrupted) and its notes. A run still
  running has no fingerprint: its page is drawn again each time.
- a page of a device's history: the page's place (its number; the newest page also the device's totals) and the
  fingerprints of its runs and of the runs before it that it may read as context (web/history.py).
- a comparison: the fingerprints of its two runs.
The filters and --exclude need no fingerprint of their own: a page shows the runs it is drawn from, whichever
selection took them. The runs list and the devices page are drawn every time. A manifest of another disklab
version (its pages may be drawn otherwise) or of an older format is not trusted: the site is drawn whole.
"""

import hashlib
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field

from disklab import __version__
from disklab.analysis.history import Device
from disklab.store.notes import all_notes
from disklab.store.records import RunInfo
from disklab.web.history import context_runs, history_pages, page_runs

MANIFEST = ".disklab-publish.json"
# Bump when the manifest changes shape. 1: the files written, relative to the folder. 2: and the disklab version,
# each page's fingerprint ("fingerprints": {file: hash}) and the comparisons each device page links to ("links").
MANIFEST_VERSION = 2
_RUN_FILE = re.compile(r"runs/(\d+)(?:\.html|/.*)")


@dataclass(frozen=True)
class Earlier:
    """What the earlier publish into the folder recorded; `trusted`: its fingerprints may be reused."""

    files: frozenset[str] = frozenset()
    trusted: bool = False
    fingerprints: Mapping[str, str] = field(default_factory=dict)
    links: Mapping[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)

    def unchanged(self, name: str, fingerprint: str | None) -> bool:
        return self.trusted and fingerprint is not None and self.fingerprints.get(name) == fingerprint

    def run_files(self) -> dict[int, list[str]]:
        """The files each run's page and downloads were written as."""
        files: dict[int, list[str]] = {}
        for name in self.files:
            if matched := _RUN_FILE.fullmatch(name):
                files.setdefault(int(matched.group(1)), []).append(name)
        return files


def read_manifest(document: Mapping, full: bool) -> Earlier:
    """The earlier publish's manifest (its document checked as a manifest); `full`: nothing of it is reused."""
    files = frozenset(name for name in document["files"] if isinstance(name, str))
    fingerprints, links = document.get("fingerprints"), document.get("links")
    if full or document.get("format_version") != MANIFEST_VERSION or document.get("disklab_version") != __version__ \
            or not isinstance(fingerprints, dict) or not isinstance(links, dict):
        return Earlier(files)
    try:
        pairs = {name: tuple((int(first), int(second)) for first, second in linked) for name, linked in links.items()}
    except (TypeError, ValueError):
        return Earlier(files)
    return Earlier(files, True, {name: value for name, value in fingerprints.items() if isinstance(value, str)}, pairs)


def manifest_document(files: Collection[str], fingerprints: Mapping[str, str],
                      links: Mapping[str, Collection[tuple[int, int]]]) -> dict:
    return {"format": "disklab-publish", "format_version": MANIFEST_VERSION, "disklab_version": __version__,
            "files": sorted(files), "fingerprints": dict(sorted(fingerprints.items())),
            "links": {name: sorted(pairs) for name, pairs in sorted(links.items())}}


def run_fingerprints(store, infos: Sequence[RunInfo]) -> dict[int, str | None]:
    """Each run's fingerprint (None: still running), from the runs' rows and one read of every note."""
    notes = all_notes(store)
    return {info.id: None if info.status == "running" else
            _hash([asdict(info), [asdict(note) for note in notes.get(info.id, ())]]) for info in infos}


def device_page_fingerprint(device: Device, page: int, runs: Mapping[int, str | None]) -> str | None:
    """What a page of the device's history is drawn from (see render_device_page): None when a run of it is running."""
    pages = history_pages(device)
    drawn = [runs[run_id] for run_id in (*context_runs(device, page), *page_runs(device, page))]
    if None in drawn:
        return None
    place = [device.key, device.label, page, pages] if page == pages else [device.key, device.label, page,
                                                                            page + 1 == pages]
    totals = [len(device.run_ids), device.first, device.last] if page == pages else []
    return _hash([place, totals, list(context_runs(device, page)), list(page_runs(device, page)), drawn])


def comparison_fingerprint(pair: tuple[int, int], runs: Mapping[int, str | None]) -> str | None:
    drawn = [runs.get(run_id) for run_id in pair]
    return None if None in drawn else _hash([list(pair), drawn])


def _hash(inputs) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()[:32]
