"""A published site updated in place (web/publish.py): the files drawn (web/publish_pages.py, into a folder beside
the site that no reader sees) are each renamed over their names in the site, in an order that never leaves a link
broken, and the files the site no longer has are removed after every page that linked to them was replaced.

The order: first the files new to the site (no page of it links to them yet), then the files they replace (whose
links now lead to files that are there, old or new); each of the two as a run's downloads, its page, the
comparisons, the pages of the devices' histories, the devices page, the runs list; the manifest last. Each rename
replaces one whole file, so a reader or a kill at any moment sees every file whole, old or new, and every link of a
page reachable from the runs list or the devices page leads to a file (a new page may link to another new one not
yet renamed in, but no reader reaches it before every new file is in). Before the first
rename the manifest is written with every page this update replaces marked as not drawn and every file it adds
listed: a publish after a kill draws those pages again and removes what the site no longer has, finishing the job.

Nothing is read, written or removed through a symbolic link inside the site: the site's folders are opened from its
root without following links, a rename replaces a link itself, and a folder the site needs that is a link (or not
a folder) stops the update before anything is renamed (publish then writes the site whole).
"""

import errno
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from disklab.system.outputs import write_whole
from disklab.web.published import (
    DEVICES, INDEX, MANIFEST, DeviceEntry, Earlier, RunEntry, comparison_file, manifest_document, run_files,
)
from disklab.web.publish_pages import Site

_OPEN_FOLDERS = 256  # folder descriptors kept open at a time
_NOT_A_FOLDER = (errno.ELOOP, errno.ENOTDIR)
_LAST = (DEVICES, INDEX)  # the pages that link to all the others


class NotAFolder(Exception):
    """A folder the site needs is a symbolic link or not a folder: the update is not begun."""


def update_in_place(site: Site, folder: Path) -> None:
    """Move the files `site` drew (in site.folder) into `folder`, which holds the earlier publish's site, and remove
    what the site no longer has; raises NotAFolder before any change when a folder it needs is none."""
    staged, stale = _ordered(site.written, _replaced(site)), _stale(site.earlier, site)
    with _Folders(folder) as live, _Folders(site.folder) as drawn:
        for name in staged:
            live.open(_folder_of(name), make=True)  # each one made or checked before anything changes
            _flush(drawn, name)  # on disk before its name is taken: a crash finds the old file or the new one
        _write(live, drawn, MANIFEST, json.dumps(_pending(site)) + "\n")
        for name in staged:
            _move(drawn, live, name)
        for name in stale:
            _remove(live, name)
        for name in _run_folders(stale):
            _remove_folder(live, name)
        _write(live, drawn, MANIFEST, site.manifest())


def _ordered(names: Iterable[str], replaced: set[str]) -> list[str]:
    """The files new to the site first (no page of it links to them yet), then the ones they replace, each after
    the files it links to (the order of the module's docstring); in the order drawn within."""
    def rank(name: str) -> tuple[bool, int]:
        if name in _LAST:
            return name in replaced, 4 + _LAST.index(name)
        if name.startswith("runs/"):
            return name in replaced, 0 if "/" in name[len("runs/"):] else 1
        return name in replaced, 2 if name.startswith("compare/") else 3

    return sorted(names, key=rank)


def _replaced(site: Site) -> set[str]:
    """The files drawn that the earlier site has."""
    earlier = site.earlier
    runs = [name for run_id, entry in site.runs.items()
            if (before := earlier.runs.get(run_id)) is not None and before is not entry  # drawn, not kept
            for name in run_files(run_id, before)]
    return {*_LAST, *runs, *earlier.devices, *(comparison_file(pair) for pair in site.compared & earlier.comparisons)}


def _stale(earlier: Earlier, site: Site) -> list[str]:
    """The files of the earlier site that the new one has not: of runs no longer published (or of tests they no
    longer have), history pages no longer there and comparisons no longer linked."""
    names = []
    for run_id, entry in earlier.runs.items():
        now = site.runs.get(run_id)
        if now is None or now.tests != entry.tests:
            kept = set() if now is None else set(run_files(run_id, now))
            names += [name for name in run_files(run_id, entry) if name not in kept]
    names += sorted(set(earlier.devices) - set(site.devices))
    linked = {pair for entry in site.devices.values() for pair in entry.pairs}
    return names + [comparison_file(pair) for pair in sorted(earlier.comparisons - linked)]


def _pending(site: Site) -> dict:
    """The manifest while the update runs: the earlier one, each run and page being replaced with no fingerprint
    (drawn again by the next publish), and the files of the earlier site and of the new one both listed."""
    earlier = site.earlier
    runs = dict(earlier.runs)
    for run_id, entry in site.runs.items():
        if (before := earlier.runs.get(run_id)) is not entry:  # drawn, not kept
            runs[run_id] = _both(before, entry)
    devices = dict(earlier.devices)
    for name, entry in site.devices.items():
        if (before := earlier.devices.get(name)) is not entry:
            devices[name] = DeviceEntry(None, tuple(sorted({*(before.pairs if before else ()), *entry.pairs})))
    return manifest_document(runs, devices, {*earlier.undrawn, *site.compared})


def _both(before: RunEntry | None, now: RunEntry) -> RunEntry:
    """A run with no fingerprint and the files either of two publishes of it wrote."""
    if (before is None or before.tests is None) and now.tests is None:
        return RunEntry(None, None)
    return RunEntry.of(None, [*(before.test_ids() if before else ()), *now.test_ids()])


def _run_folders(names: Iterable[str]) -> list[str]:
    """The folders of a run (runs/N, runs/N/tests, runs/N/tests/T) that the files hold, the deepest first."""
    folders = set()
    for name in names:
        folder = _folder_of(name)
        while folder.startswith("runs/"):
            folders.add(folder)
            folder = _folder_of(folder)
    return sorted(folders, key=lambda folder: folder.count("/"), reverse=True)


class _Folders:
    """The site's folders opened by their names from its root, never through a symbolic link (O_NOFOLLOW)."""

    def __init__(self, root: Path):
        self.root = root
        self.opened: dict[str, int] = {}

    def __enter__(self) -> "_Folders":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def open(self, folder: str, make: bool = False) -> int:
        """The folder's descriptor; `make`: made when missing. NotAFolder when it is a link or no folder."""
        if folder in self.opened:
            return self.opened[folder]
        if len(self.opened) >= _OPEN_FOLDERS:
            self.close()
        parent, _, name = folder.rpartition("/")
        if not folder:
            descriptor = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        else:
            above = self.open(parent, make)
            if make:
                try:
                    os.mkdir(name, dir_fd=above)
                except FileExistsError:
                    pass
            try:
                descriptor = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=above)
            except OSError as exc:
                if exc.errno in _NOT_A_FOLDER:
                    raise NotAFolder(folder) from None
                raise
        self.opened[folder] = descriptor
        return descriptor

    def forget(self, folder: str) -> None:
        """The folder is about to be removed: its descriptor closed."""
        if folder in self.opened:
            os.close(self.opened.pop(folder))

    def close(self) -> None:
        for descriptor in self.opened.values():
            os.close(descriptor)
        self.opened.clear()


def _folder_of(name: str) -> str:
    return name.rpartition("/")[0]


def _move(source: _Folders, target: _Folders, name: str) -> None:
    """One drawn file renamed over its name in the site (a link there is replaced, never followed)."""
    base = name.rpartition("/")[2]
    os.rename(base, base, src_dir_fd=source.open(_folder_of(name)), dst_dir_fd=target.open(_folder_of(name), True))


def _write(target: _Folders, scratch: _Folders, name: str, text: str) -> None:
    """A file of the site's root written whole in the scratch folder (which only this publish writes), on disk, then
    renamed over its name in the site."""
    write_whole(scratch.root / name, text, "page")
    _move(scratch, target, name)


def _remove(site: _Folders, name: str) -> None:
    """A file the site no longer has (a link there removed as the link); gone already, or its folder no folder:
    nothing to do."""
    try:
        os.unlink(name.rpartition("/")[2], dir_fd=site.open(_folder_of(name)))
    except (FileNotFoundError, NotAFolder):
        pass


def _remove_folder(site: _Folders, folder: str) -> None:
    """A run's folder once emptied, or the link that stands in its place; one that holds files of the lab's own
    stays."""
    parent, _, name = folder.rpartition("/")
    try:
        above = site.open(parent)
        site.forget(folder)
        if stat.S_ISLNK(os.stat(name, dir_fd=above, follow_symlinks=False).st_mode):
            os.unlink(name, dir_fd=above)
        else:
            os.rmdir(name, dir_fd=above)
    except (FileNotFoundError, NotAFolder):
        pass
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise


def _flush(folders: _Folders, name: str) -> None:
    descriptor = os.open(name.rpartition("/")[2], os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folders.open(_folder_of(name)))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
