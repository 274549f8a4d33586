"""`disklab publish`: the server's pages as a static folder (asv-style) that works from a file system and from any
web server: the same renderers with StaticLinks (relative file names), and the downloads written as files.

A static site has no server to answer queries: the runs list is one page of every run that a small inline script
filters, sorts and pages in the browser, and the comparisons written are the ones the pages link to (each step of a
device's history); comparing any runs needs `disklab serve` or `disklab report`. A folder that holds files is only
published into when an earlier publish left its manifest there.

A folder an earlier publish of this disklab version wrote is updated in place (web/publish_update.py): only the
pages whose fingerprint (web/published.py) differs from the one the manifest recorded are drawn, into a folder
beside DIR (DIR.disklab-new-PID) that no reader sees, then each renamed over its name in DIR in an order that never
breaks a link, the files of runs no longer published removed after the pages that linked to them, the manifest
last. Nothing else of the site is read or touched: one new run costs its own pages, its device's newest history
page, their comparisons, the devices page and the runs list (whose other rows are kept), not the whole site.

The first publish into a folder, `full`, and a folder whose manifest is of an older format or another disklab
version have the site written whole as the new folder and swapped in by renaming, so a reader or a kill at any
moment finds the previous site or the new one, never a half-written page: renameat2's exchange where the file
system has it, else the old folder renamed aside (DIR.disklab-old-PID) just before the new one takes its name. The
files of the old folder that no publish wrote (the lab's own notes) move into the new one as hard links; the ones
publish wrote and no longer writes (a deleted run's) go with the old folder. What a killed publish left beside DIR
is found by its PID and removed by the next publish into DIR (a site it had set aside is put back first). Nothing
is ever written or removed through a symbolic link inside DIR: a link is carried over as a link. DIR itself may be
a link to a folder: it is resolved once, the site is written where it points, and the link is left as it is. DIR
must not be a mount point, and its parent must be writable, for the new folder is made beside it.
"""

import ctypes
import errno
import json
import os
import shutil
import stat
from collections.abc import Collection
from dataclasses import dataclass, replace
from pathlib import Path

from disklab.errors import UserError
from disklab.store.filters import RunFilter
from disklab.store.repository import Store
from disklab.system.leftovers import dead_entries, remove_dead, remove_entry
from disklab.web.publish_pages import Site, write_site
from disklab.web.publish_update import NotAFolder, update_in_place
from disklab.web.published import MANIFEST, Earlier, read_manifest

# A file system without hard links (FAT, some FUSE): the lab's own files are copied into the new site instead.
NO_LINKS = {errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EXDEV}

# Beside DIR while a publish runs, each followed by the PID of the publish: the site in the making, and (where the
# file system cannot exchange two names) the previous site between its two renames.
NEW, ASIDE = ".disklab-new-", ".disklab-old-"
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>
# A file system or libc without renameat2's exchange (NFS, FUSE, an old kernel or libc): rename aside instead.
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP}


@dataclass(frozen=True)
class Published:
    runs: int
    devices: int
    comparisons: int
    files: int
    # Each run, device page or comparison the site holds only in part, with why (its page says it too); () when all
    # of it was drawn.
    problems: tuple[str, ...] = ()


def publish(store: Store, folder: Path, where: RunFilter = RunFilter(), excluded: Collection[int] = (),
            full: bool = False) -> Published:
    """Write the site of the runs `where` takes, but the `excluded`, into `folder` (created if missing); refused
    when it holds files of anything but a publish. A folder an earlier publish of this disklab wrote is updated in
    place, only the pages of what changed drawn (web/publish_update.py); else (or `full`) the site is drawn whole
    and swapped in. A run, device or comparison that cannot be drawn (a bug) is published as a page that says so,
    named in `problems`, and the rest of the site is written."""
    shown, folder = folder, _site_folder(folder)
    try:
        _clear_leftovers(folder)
        earlier = _earlier(folder, full)
        new = folder.with_name(f"{folder.name}{NEW}{os.getpid()}")
        remove_entry(new)  # named by this process's PID: what is there is a dead process's with the same PID
        new.mkdir()
    except OSError as exc:
        raise UserError(f"cannot publish into {shown}: {exc.strerror or exc}") from None
    try:
        infos = [info for info in store.list_runs(None, where) if info.id not in set(excluded)]
        site, drawn = _drawn(Site(new, shown, earlier, folder), store, infos)
        try:
            if earlier.trusted:
                try:
                    update_in_place(site, folder)
                    return _published(site, drawn)
                except NotAFolder:  # a folder of the site is a link, or no folder: the site is drawn whole
                    remove_entry(new)
                    new.mkdir()
                    site, drawn = _drawn(Site(new, shown, replace(earlier, trusted=False)), store, infos)
            site.write(MANIFEST, site.manifest())
            if folder.is_dir():
                _carry_over(folder, new, earlier.files() | {MANIFEST})
                _keep_folder(folder, new)
            _swap_in(new, folder)
        except OSError as exc:
            raise UserError(f"cannot publish into {shown}: {exc.strerror or exc}") from None
        return _published(site, drawn)
    finally:
        remove_entry(new)  # the drawn files left, the site in the making, or after the exchange the previous one


def _drawn(site: Site, store: Store, infos: list) -> tuple[Site, tuple[int, int, int]]:
    """The site's pages drawn into its folder; the site and its (runs, devices, comparisons)."""
    try:
        return site, write_site(site, store, infos)
    except OSError as exc:
        raise UserError(f"cannot publish into {site.shown}: {exc.strerror or exc}") from None


def _published(site: Site, drawn: tuple[int, int, int]) -> Published:
    return Published(*drawn, site.files(), tuple(site.problems))


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


def _earlier(folder: Path, full: bool) -> Earlier:
    """What an earlier publish wrote into `folder`; nothing for a new or empty folder. Anything else is refused."""
    if not folder.exists():
        return Earlier()
    manifest = folder / MANIFEST
    try:
        if not any(folder.iterdir()):
            return Earlier()
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
    try:
        if not isinstance(document, dict) or document.get("format") != "disklab-publish":
            raise ValueError("no manifest")
        return read_manifest(document, full)
    except ValueError:
        raise UserError(f"{manifest} is not a disklab publish manifest: publish into a new or empty folder") from None


def _carry_over(old: Path, new: Path, published: Collection[str]) -> None:
    """The entries of `old` that no publish wrote, hard-linked into `new` (a link as the link itself, never
    followed); a name the new site has, or a publish wrote or made a folder of, is the site's, and an entry removed
    meanwhile is not carried."""
    ours = _with_folders(published)
    # A link to a folder is listed in `folders` and not entered; a folder that cannot be read stops the publish
    # (its files would go with the old folder). Names are joined as strings: a site holds ~50 files a run.
    for root, folders, files in os.walk(old, onerror=_unless_gone):
        here = Path(root)
        base = os.path.relpath(root, old)
        prefix = "" if base == "." else f"{base}/"
        links = [name for name in folders if os.path.islink(os.path.join(root, name))]
        for name in (*files, *links):
            if prefix + name in ours or os.path.lexists(new / base / name):
                continue
            try:
                (new / base).mkdir(parents=True, exist_ok=True)
                _link(here / name, new / base / name)
            except (FileNotFoundError, FileExistsError, NotADirectoryError):
                continue
        for name in folders:  # an empty folder of the lab's own
            if name not in links and prefix + name not in ours and not any((here / name).iterdir()):
                (new / base / name).mkdir(parents=True, exist_ok=True)


def _with_folders(names: Collection[str]) -> set[str]:
    """The names, and every folder they are in."""
    kept = set(names)
    for name in names:
        folder = name.rpartition("/")[0]
        while folder and folder not in kept:
            kept.add(folder)
            folder = folder.rpartition("/")[0]
    return kept


def _unless_gone(exc: OSError) -> None:
    if not isinstance(exc, FileNotFoundError):
        raise exc


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in NO_LINKS:
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
