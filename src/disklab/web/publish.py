"""`disklab publish`: the server's pages as a static folder (asv-style) that works from a file system and from any
web server: the same renderers with StaticLinks (relative file names), and the downloads written as files.

A static site has no server to answer queries: the runs list is one page of every run that a small inline script
filters, sorts and pages in the browser, and the comparisons written are the ones the pages link to (each step of a
device's history); comparing any runs needs `disklab serve` or `disklab report`. A folder that holds files is only
published into when an earlier publish left its manifest there.

The site is written whole as a new folder beside DIR (DIR.disklab-new-PID) and swapped in by renaming, so a reader
or a kill at any moment finds the previous site or the new one, never a half-written page: renameat2's exchange
where the file system has it, else the old folder renamed aside (DIR.disklab-old-PID) just before the new one takes
its name. What a killed publish left is found by its PID and removed by the next publish into DIR (a site it had set
aside is put back first). The files of the old folder that no publish wrote (the lab's own notes) move into the new
one as hard links; the ones publish wrote and no longer writes (a deleted run's) go with the old folder. Nothing is
ever written or removed through a symbolic link inside DIR: a link is carried over as a link. DIR itself may be a
link to a folder: it is resolved once, the site is swapped in where it points, and the link is left as it is. DIR
must not be a mount point, and its parent must be writable, for the new folder is made beside it.
"""

import ctypes
import errno
import json
import os
import shutil
import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath

from disklab.analysis.history import device_history
from disklab.errors import UserError
from disklab.store.db import now_iso
from disklab.report.parts import Parts
from disklab.store.records import RunInfo, RunRecord
from disklab.store.filters import RunFilter
from disklab.store.repository import Store
from disklab.system.leftovers import dead_entries, remove_dead, remove_entry
from disklab.web.history import (
    compare_pairs, history_pages, render_device_page, render_devices_page, store_devices,
)
from disklab.web.links import StaticLinks
from disklab.web.pages import (
    FIGURE_TYPES, RUNS_PER_PAGE, RunsListing, disk_models, render_compare_page, render_message_page, render_run_page,
    render_runs_page, render_template, run_figures,
)

MANIFEST = ".disklab-publish.json"
# Bump when the manifest changes shape. 1: first version (the files written, relative to the folder).
MANIFEST_VERSION = 1
# Beside DIR while a publish runs, each followed by the PID of the publish: the site in the making, and (where the
# file system cannot exchange two names) the previous site between its two renames.
NEW, ASIDE = ".disklab-new-", ".disklab-old-"
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>
# A file system or libc without renameat2's exchange (NFS, FUSE, an old kernel or libc): rename aside instead.
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP}
# A file system without hard links (FAT, some FUSE): the lab's own files are copied into the new folder instead.
_NO_LINKS = {errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EXDEV}


@dataclass(frozen=True)
class Published:
    runs: int
    devices: int
    comparisons: int
    files: int
    # Each run, device page or comparison the site holds only in part, with why (its page says it too); () when all
    # of it was drawn.
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class _WholeList(RunsListing):
    """Every run on the static site's one runs page, which the browser filters, sorts and pages (site-index)."""

    @property
    def pages(self) -> int:
        return 1


class _Site:
    """The files of one publish, written into the new folder (no reader sees it before the swap), and what of it
    could not be drawn."""

    def __init__(self, folder: Path, shown: Path):
        self.folder = folder
        self.shown = shown  # the folder the user named, for messages
        self.written: set[str] = set()
        self.problems: list[str] = []

    def write(self, name: str, text: str) -> None:
        path = self.folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write {self.shown / name}: {exc.strerror or exc}") from None
        self.written.add(name)

    def write_message(self, name: str, title: str, message: str) -> None:
        """In place of a page that could not be drawn: one that says why, so that no link of the site is broken."""
        self.write(name, render_message_page(title, message, StaticLinks(name.count("/"))))

    def draw(self, what: str, build):
        """build(), or None with the failure noted as a problem of the site."""
        parts = Parts()
        drawn = parts.draw(what, build)
        self.note(what, parts)
        return drawn

    def note(self, what: str, parts: Parts) -> None:
        self.problems += [str(undrawn) for undrawn in parts.undrawn]

    def record(self) -> None:
        document = {"format": "disklab-publish", "format_version": MANIFEST_VERSION, "files": sorted(self.written)}
        self.write(MANIFEST, json.dumps(document, indent=1) + "\n")


def publish(store: Store, folder: Path, where: RunFilter = RunFilter(), excluded: Collection[int] = ()) -> Published:
    """Write the site of the runs `where` takes, but the `excluded`, into `folder` (created if missing); refused
    when it holds files of anything but a publish. A run, device or comparison that cannot be drawn (a bug) is
    published as a page that says so, named in `problems`, and the rest of the site is written."""
    shown, folder = folder, _site_folder(folder)
    try:
        _clear_leftovers(folder)
        earlier = _earlier_files(folder)
        new = folder.with_name(f"{folder.name}{NEW}{os.getpid()}")
        remove_entry(new)  # named by this process's PID: what is there is a dead process's with the same PID
        new.mkdir()
    except OSError as exc:
        raise UserError(f"cannot publish into {shown}: {exc.strerror or exc}") from None
    try:
        site = _Site(new, shown)
        infos = [info for info in store.list_runs(None, where) if info.id not in set(excluded)]
        runs, devices, comparisons = _write_site(site, store, infos)
        site.record()
        try:
            if folder.is_dir():
                _carry_over(folder, new, earlier | {MANIFEST})
                _keep_folder(folder, new)
            _swap_in(new, folder)
        except OSError as exc:
            raise UserError(f"cannot publish into {shown}: {exc.strerror or exc}") from None
    except BaseException:
        remove_entry(new)  # the site in the making, or after the exchange the previous one
        raise
    return Published(runs, devices, comparisons, len(site.written), tuple(site.problems))


def _write_site(site: _Site, store: Store, infos: Sequence[RunInfo]) -> tuple[int, int, int]:
    """Every page and download of these runs into the site; (runs, devices, comparisons)."""
    generated_at = now_iso()
    devices = store_devices(store, {info.id for info in infos})
    comparisons = 0
    for device in devices:  # every run belongs to one device: each run's record is read once
        records = {run_id: record for run_id in device.run_ids
                   if (record := _write_run(site, store, run_id, generated_at)) is not None}
        drawn = site.draw(f"the history of {device.label}", lambda: device_history(device, list(records.values())))
        for page in range(1, history_pages(device) + 1):
            name = _page(StaticLinks(0).device(device.key, page))
            if drawn is None:
                site.write_message(name, f"The history of {device.label}", site.problems[-1])
                continue
            parts = Parts()
            site.write(name, render_device_page(drawn, StaticLinks(1), page, parts))
            site.note(f"the history of {device.label}", parts)
        for pair in sorted(compare_pairs(drawn)) if drawn is not None else ():
            name, parts = _page(StaticLinks(0).compare(pair)), Parts()
            html = site.draw(f"the comparison of runs {pair[0]} and {pair[1]}", lambda: render_compare_page(
                [records[run_id] for run_id in pair], StaticLinks(1), generated_at, parts))
            if html is None:
                site.write_message(name, f"Runs {pair[0]} and {pair[1]}", site.problems[-1])
            else:
                site.write(name, html)
                site.note(f"the comparison of runs {pair[0]} and {pair[1]}", parts)
            comparisons += 1
    site.write(_page(StaticLinks(0).devices()), render_devices_page(devices, StaticLinks(1)))
    site.write(_page(StaticLinks(0).runs()), _index(store, infos))
    return len(infos), len(devices), comparisons


def _site_folder(given: Path) -> Path:
    """DIR with its links resolved once; refused before anything is written when the site cannot be swapped in."""
    folder = Path(os.path.realpath(given))
    if given.is_symlink() and not folder.exists():
        raise UserError(f"cannot publish into {given}: it is a symbolic link to nothing; name the folder itself")
    if folder.exists() and not folder.is_dir():
        raise UserError(f"cannot publish into {given}: it is not a folder (a file, a device or a FIFO); name a folder")
    if folder.is_dir() and os.path.ismount(folder):
        raise UserError(f"cannot publish into {given}: it is a mount point, and the site is swapped in by renaming "
                        "its folder; publish into a folder inside it")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot publish into {given}: {exc.strerror or exc}") from None
    if not os.access(folder.parent, os.W_OK | os.X_OK):
        raise UserError(f"cannot publish into {given}: the new site is written beside it, and {folder.parent} is "
                        "not writable")
    return folder


def _clear_leftovers(folder: Path) -> None:
    """What a killed publish into `folder` left beside it: a previous site it had set aside goes back in place when
    the folder is missing (killed between the two renames), the rest is removed."""
    aside = dead_entries(folder.parent, f"{folder.name}{ASIDE}")
    if aside and not os.path.lexists(folder):
        os.rename(aside[-1], folder)
    for prefix in (ASIDE, NEW):
        remove_dead(folder.parent, f"{folder.name}{prefix}")


def _earlier_files(folder: Path) -> set[str]:
    """The files an earlier publish wrote into `folder`; none for a new or empty folder. Anything else is refused."""
    if not folder.exists():
        return set()
    manifest = folder / MANIFEST
    try:
        if not any(folder.iterdir()):
            return set()
        if not stat.S_ISREG(os.lstat(manifest).st_mode):  # a link is no manifest: nothing is read through one
            raise FileNotFoundError
        document = json.loads(manifest.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{folder} is not empty and holds no earlier disklab publish: publish into a new or "
                        "empty folder, or into one an earlier publish wrote") from None
    except OSError as exc:
        raise UserError(f"cannot read {folder}: {exc.strerror or exc}") from None
    except ValueError:
        document = None
    if not isinstance(document, dict) or document.get("format") != "disklab-publish" \
            or not isinstance(document.get("files"), list):
        raise UserError(f"{manifest} is not a disklab publish manifest: publish into a new or empty folder")
    return {name for name in document["files"] if isinstance(name, str)}


def _carry_over(old: Path, new: Path, published: set[str]) -> None:
    """The entries of `old` that no publish wrote, hard-linked into `new` (a link as the link itself, never
    followed); a name the new site has, or a publish wrote or made a folder of, is the site's, and an entry removed
    meanwhile is not carried."""
    ours = published | {parent.as_posix() for name in published for parent in PurePosixPath(name).parents}
    # A link to a folder is listed in `folders` and not entered; a folder that cannot be read stops the publish
    # (its files would go with the old folder).
    for root, folders, files in os.walk(old, onerror=_unless_gone):
        here = Path(root)
        base = here.relative_to(old)
        links = [name for name in folders if (here / name).is_symlink()]
        for name in (*files, *links):
            if (base / name).as_posix() in ours or os.path.lexists(new / base / name):
                continue
            try:
                (new / base).mkdir(parents=True, exist_ok=True)
                _link(here / name, new / base / name)
            except (FileNotFoundError, FileExistsError, NotADirectoryError):
                continue
        for name in folders:  # an empty folder of the lab's own
            if name not in links and (base / name).as_posix() not in ours and not any((here / name).iterdir()):
                (new / base / name).mkdir(parents=True, exist_ok=True)


def _unless_gone(exc: OSError) -> None:
    if not isinstance(exc, FileNotFoundError):
        raise exc


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in _NO_LINKS:
            raise
        shutil.copy2(source, target, follow_symlinks=False)


def _keep_folder(old: Path, new: Path) -> None:
    """The new folder takes the old one's permissions (a web server reads it) and, where allowed, its owner."""
    info = os.stat(old)
    os.chmod(new, stat.S_IMODE(info.st_mode))
    try:
        os.chown(new, info.st_uid, info.st_gid)
    except PermissionError:
        pass  # not root: the folder is the publisher's, as the files in it are


def _swap_in(new: Path, folder: Path) -> None:
    """`new` becomes `folder` in one step, and the previous site is removed."""
    try:
        os.rename(new, folder)  # no folder there, or an empty one: replaced whole
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    try:
        _exchange(new, folder)
        previous = new
    except OSError as exc:
        if exc.errno not in _NO_EXCHANGE:
            raise
        previous = folder.with_name(f"{folder.name}{ASIDE}{os.getpid()}")
        os.rename(folder, previous)
        try:
            os.rename(new, folder)
        except BaseException:
            os.rename(previous, folder)
            raise
    remove_entry(previous)  # a failure leaves it to the next publish, which finds it by its dead PID


def _exchange(first: Path, second: Path) -> None:
    """renameat2(RENAME_EXCHANGE): the two names swap their folders at once, so `second` is never missing."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "this C library has no renameat2")
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(second))


def _page(link: str) -> str:
    """A StaticLinks link from the site's root -> the file's name in the folder (links quote what names do not)."""
    from urllib.parse import unquote

    return unquote(link)


def _write_run(site: _Site, store: Store, run_id: int, generated_at: str) -> RunRecord | None:
    """runs/N.html and the files its download links name; the run's record, or None (and a page saying why) when its
    page cannot be drawn at all."""
    root = StaticLinks(0)
    record = site.draw(f"run {run_id}", partial(store.get_run, run_id))
    parts = Parts()
    html = None if record is None else site.draw(
        f"run {run_id}", lambda: render_run_page(record, store.smart(run_id), StaticLinks(1), generated_at, parts))
    if html is None:
        site.write_message(_page(root.run(run_id)), f"Run {run_id}", site.problems[-1])
        return None
    site.note(f"run {run_id}", parts)
    site.write(_page(root.run(run_id)), html)
    site.write(_page(root.suite_file(run_id)), record.suite_text)
    for form in FIGURE_TYPES:
        figures = site.draw(f"run {run_id} · figures.{form}", partial(run_figures, record, form))
        site.write(_page(root.figures(run_id, form)), figures if figures is not None else site.problems[-1] + "\n")
    for test in record.tests:
        site.write(_page(root.job_file(run_id, test.id)), test.jobfile)
        site.write(_page(root.fio_output(run_id, test.id)), test.fio_output)
    return record


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
