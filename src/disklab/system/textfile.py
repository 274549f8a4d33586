"""Small text files a user names (a suite, a hosts list): checked before reading, so no input can hang or exhaust us."""

import os
import stat
from pathlib import Path

from disklab.errors import UserError

# Far more than any suite or hosts list; /dev/zero or a mistaken disk image is refused before it is read.
MAX_TEXT_FILE_BYTES = 1024**2


def read_text_file(path: Path, what: str, max_bytes: int = MAX_TEXT_FILE_BYTES) -> str:
    """The file's UTF-8 text; a FIFO, device or directory, an oversized file or other bytes are one UserError."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait; it is refused below as not a regular file.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"{what} {path} is not a regular file (a device, FIFO, socket or directory)")
        if info.st_size > max_bytes:
            raise UserError(f"{what} {path} holds {info.st_size} bytes; at most {max_bytes} are read")
        data = os.read(fd, max_bytes + 1)
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # grew while we looked
        raise UserError(f"{what} {path} holds more than {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{what} {path} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})") from None
