"""What an earlier `disklab publish` wrote into a folder (its manifest), and the fingerprints that tell, without
drawing a page, whether the page would come out as it did then.

A page's fingerprint is a hash of everything it is drawn from:
- a run's page and its downloads: the run's row (RunInfo: status, name, finished time, options, planned and
  finished tests ...) and its notes. A finished run's tests, environment, SMART and flags are all stored before it
  finishes; afterwards only its row changes (renamed, resumed, marked interrupted) and its notes. A run still
  running has no fingerprint: its page is drawn again each time.
- a page of a device's history: the page's place (its number; the newest page also the device's totals) and the
  fingerprints of its runs and of the runs before it that it may read as context (web/history.py).
- a comparison: the fingerprints of its two runs (unchanged when theirs are).
The filters and --exclude need no fingerprint of their own: a page shows the runs it is drawn from, whichever
selection took them. The runs list and the devices page are drawn every time. A manifest of another disklab
version (its pages may be drawn otherwise) or of an older format is not trusted: the site is drawn whole.
"""

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from urllib.parse import unquote

from disklab import __version__
from disklab.analysis.history import Device
from disklab.store.notes import notes_by_run
from disklab.store.records import RunInfo
from disklab.web.history import context_runs, history_pages, page_runs
from disklab.web.links import StaticLinks
from disklab.web.pages import FIGURE_TYPES

MANIFEST = ".disklab-publish.json"
# Bump when the manifest changes shape. 1: the files written, relative to the folder. 2: and the disklab version,
# each page's fingerprint ("fingerprints": {file: hash}) and the comparisons each device page links to ("links").
# 3: no list of files, which took 170 MB at 100,000 runs: each run's fingerprint and its tests' ids (its files'
# names follow from them), each device page's fingerprint and the comparisons it links to, each as one string (8 MB
# at 100,000 runs), and the comparisons whose page could not be drawn whole; a comparison's fingerprint follows
# from its runs'.
MANIFEST_VERSION = 3
LISTS = (INDEX, DEVICES) = ("index.html", "devices/index.html")  # drawn every time


@dataclass(frozen=True)
class RunEntry:
    """A run as published: its fingerprint (None: drawn again next time) and its tests' ids as (first, count) runs
    of consecutive ids, as a run's tests are stored (None: its page only, one that says why it could not be drawn).
    In the manifest: "FINGERPRINT|FIRST+COUNT,...", or "FINGERPRINT|page"."""

    fingerprint: str | None
    tests: tuple[tuple[int, int], ...] | None
    text: str | None = field(default=None, compare=False, repr=False)  # as the manifest read had it

    @classmethod
    def of(cls, fingerprint: str | None, test_ids: Iterable[int] | None) -> "RunEntry":
        if test_ids is None:
            return cls(fingerprint, None)
        ranges: list[list[int]] = []
        for test_id in sorted(set(test_ids)):
            if ranges and ranges[-1][0] + ranges[-1][1] == test_id:
                ranges[-1][1] += 1
            else:
                ranges.append([test_id, 1])
        return cls(fingerprint, tuple((first, count) for first, count in ranges))

    def test_ids(self) -> list[int]:
        return [first + n for first, count in self.tests or () for n in range(count)]

    def encoded(self) -> str:
        if self.text is not None:
            return self.text
        tests = "page" if self.tests is None else ",".join(f"{first}+{count}" for first, count in self.tests)
        return f"{self.fingerprint or ''}|{tests}"

    @classmethod
    def decoded(cls, text: str) -> "RunEntry":
        fingerprint, _, tests = text.partition("|")
        return cls(fingerprint or None, None if tests == "page" else tuple(
            (int(first), int(count)) for first, _, count in (run.partition("+") for run in tests.split(",") if run)),
            text)


@dataclass(frozen=True)
class DeviceEntry:
    """A page of a device's history as published: its fingerprint and the comparisons it links to. In the
    manifest: "FINGERPRINT|A,B A,B ..."."""

    fingerprint: str | None
    pairs: tuple[tuple[int, int], ...]

    def encoded(self) -> str:
        return f"{self.fingerprint or ''}|{' '.join(f'{first},{second}' for first, second in self.pairs)}"

    @classmethod
    def decoded(cls, text: str) -> "DeviceEntry":
        fingerprint, _, pairs = text.partition("|")
        return cls(fingerprint or None, tuple((int(first), int(second)) for first, _, second in
                                              (pair.partition(",") for pair in pairs.split())))


@dataclass(frozen=True)
class Earlier:
    """What the earlier publish into the folder recorded; `trusted`: its fingerprints may be reused (and the site
    is updated in place), else only the names of its files count (`listed`, of a manifest of format 1 or 2)."""

    trusted: bool = False
    runs: Mapping[int, RunEntry] = field(default_factory=dict)
    devices: Mapping[str, DeviceEntry] = field(default_factory=dict)
    undrawn: frozenset[tuple[int, int]] = frozenset()  # comparisons not drawn whole
    listed: frozenset[str] | None = None
    comparisons: frozenset[tuple[int, int]] = field(init=False)  # what the device pages link to

    def __post_init__(self):
        object.__setattr__(self, "comparisons", frozenset(pair for entry in self.devices.values()
                                                          for pair in entry.pairs))

    def run_unchanged(self, run_id: int, fingerprint: str | None) -> bool:
        entry = self.runs.get(run_id)
        return self.trusted and fingerprint is not None and entry is not None and entry.fingerprint == fingerprint

    def device_unchanged(self, name: str, fingerprint: str | None) -> bool:
        entry = self.devices.get(name)
        return self.trusted and fingerprint is not None and entry is not None and entry.fingerprint == fingerprint

    def comparison_unchanged(self, pair: tuple[int, int], runs: Mapping[int, str | None]) -> bool:
        """Drawn whole from runs whose fingerprints are still theirs (its own follows from theirs)."""
        return pair not in self.undrawn and pair in self.comparisons and all(
            self.run_unchanged(run_id, runs.get(run_id)) for run_id in pair)

    def files(self) -> frozenset[str]:
        """The name of every file the earlier publish wrote (but the manifest)."""
        if self.listed is not None:
            return self.listed
        return frozenset((*LISTS, *self.devices, *(comparison_file(pair) for pair in self.comparisons),
                          *(name for run_id, entry in self.runs.items() for name in run_files(run_id, entry))))


def run_files(run_id: int, entry: RunEntry) -> list[str]:
    """The files of a run's page and its downloads (web/publish_pages.py writes them), its page last."""
    root = StaticLinks(0)
    downloads = [] if entry.tests is None else [
        root.suite_file(run_id), *(root.figures(run_id, form) for form in FIGURE_TYPES),
        *(name for test_id in entry.test_ids()
          for name in (root.job_file(run_id, test_id), root.fio_output(run_id, test_id)))]
    return [unquote(link) for link in (*downloads, root.run(run_id))]


def comparison_file(pair: tuple[int, int]) -> str:
    return unquote(StaticLinks(0).compare(pair))


def read_manifest(document: Mapping, full: bool) -> Earlier:
    """The earlier publish's manifest (a JSON object with "format": "disklab-publish"); one of an older format or
    another disklab version, or with `full`, counts only for the names of the files it lists."""
    if document.get("format_version") in (1, 2):
        return Earlier(listed=frozenset(name for name in document.get("files", ()) if isinstance(name, str)))
    try:
        earlier = Earlier(
            True, {int(run_id): RunEntry.decoded(text) for run_id, text in document["runs"].items()},
            {str(name): DeviceEntry.decoded(text) for name, text in document["devices"].items()},
            frozenset((int(first), int(second)) for first, second in document["undrawn"]))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"not a manifest of format {MANIFEST_VERSION}: {exc}") from None
    if full or document.get("format_version") != MANIFEST_VERSION or document.get("disklab_version") != __version__:
        return replace(earlier, trusted=False)
    return earlier


def manifest_document(runs: Mapping[int, RunEntry], devices: Mapping[str, DeviceEntry],
                      undrawn: Collection[tuple[int, int]]) -> dict:
    return {"format": "disklab-publish", "format_version": MANIFEST_VERSION, "disklab_version": __version__,
            "runs": {str(run_id): runs[run_id].encoded() for run_id in sorted(runs)},
            "devices": {name: devices[name].encoded() for name in sorted(devices)},
            "undrawn": sorted(list(pair) for pair in undrawn)}


def run_fingerprints(store, infos: Sequence[RunInfo]) -> dict[int, str | None]:
    """Each run's fingerprint (None: still running), from the runs' rows and one read of every note."""
    notes = notes_by_run(store)
    return {info.id: None if info.status == "running" else
            _hash([vars(info), [asdict(note) for note in notes.get(info.id, ())]]) for info in infos}


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


def _hash(inputs) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()[:32]
