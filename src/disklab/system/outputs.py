"""Every file disklab writes for the user (a trace, a report, a drive file, a job file, a page): written whole beside
the target and renamed over it, so a reader or a kill sees the old file or the new one, never half of one, and an
output name that is a device node, a FIFO or a folder is refused before anything is written.

The file in the making is `.NAME.PID.disklab-partial` beside NAME: removed on any error or Ctrl-C, and, when a
SIGKILL left it, by the next write of NAME (its PID is dead) or by `disklab doctor`.
"""

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from disklab.errors import UserError
from disklab.system.leftovers import dead_entries, remove_entry

PARTIAL_SUFFIX = ".disklab-partial"


def checked_output(path: Path | str, what: str = "output") -> Path:
    """The path to write: absent, or a regular file (a symbolic link to one is written through, and stays a link);
    anything else is one UserError, before a byte is written."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            raise UserError(f"{what} {path} is a symbolic link to nothing; name the file itself") from None
        return path
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"{what} {path} is a folder; name a file in it")
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"{what} {path} exists and is not a regular file (a device, FIFO or socket); it was left "
                        "as it is: name another file")
    return Path(os.path.realpath(path))


@contextmanager
def whole_file(path: Path | str, what: str = "output", binary: bool = False) -> Iterator[IO]:
    """A file object to write the output through; at the end of the block it replaces `path` in one rename.

    An OSError of the write itself (a missing folder, no permission, a full disk) is one UserError naming `path`;
    an exception from the block leaves `path` as it was.
    """
    target = checked_output(path, what)
    remove_dead_partials(target)
    partial = target.with_name(f".{target.name}.{os.getpid()}{PARTIAL_SUFFIX}")
    try:
        try:
            # O_EXCL: a file planted under the partial's name (or a link there) is never written through.
            out = open(partial, "xb" if binary else "x", **({} if binary else {"encoding": "utf-8"}))
        except OSError as exc:
            raise write_error(path, exc) from None
        with out:
            yield out
            try:
                out.flush()
                os.fsync(out.fileno())
            except OSError as exc:
                raise write_error(path, exc) from None
        _keep_mode(target, partial)
        checked_output(target, what)  # still absent or a regular file: nothing swapped in while we wrote
        try:
            os.replace(partial, target)
        except OSError as exc:
            raise write_error(path, exc) from None
    finally:
        partial.unlink(missing_ok=True)


def write_whole(path: Path | str, content: str | bytes | Iterable[str], what: str = "output") -> None:
    """`content` as the whole of `path` (see whole_file); text in chunks is written as it comes (a list of every
    stored run), and a failure to make a chunk leaves `path` as it was."""
    with whole_file(path, what, binary=isinstance(content, bytes)) as out:
        for chunk in (content,) if isinstance(content, (str, bytes)) else content:
            try:
                out.write(chunk)
            except OSError as exc:
                raise write_error(path, exc) from None


def remove_dead_partials(target: Path) -> None:
    """The partial files of `target` that a killed disklab left beside it."""
    for path in dead_entries(target.parent, f".{target.name}."):
        if path.name.endswith(PARTIAL_SUFFIX) and path.is_file() and not path.is_symlink():
            remove_entry(path)


def _keep_mode(target: Path, partial: Path) -> None:
    """A file written again keeps the permissions its owner gave it."""
    try:
        os.chmod(partial, stat.S_IMODE(os.stat(target).st_mode))
    except OSError:
        pass  # a new file: the umask decides


def write_error(path: Path | str, exc: OSError) -> UserError:
    """An OSError while writing `path` as the line the user reads; a full disk said in words."""
    reason = "the file system is full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else exc.strerror or str(exc)
    return UserError(f"cannot write {path}: {reason}")
