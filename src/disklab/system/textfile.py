"""Files a user names (a suite, a hosts list, a trace): checked before reading, so no input can hang or exhaust us."""

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import BinaryIO

from disklab.errors import UserError

# Far more than any suite or hosts list; /dev/zero or a mistaken disk image is refused before it is read.
MAX_TEXT_FILE_BYTES = 1024**2


def open_regular_file(path: Path, what: str) -> BinaryIO:
    """The file open for reading bytes, to stream; a FIFO, device, socket or directory is one UserError, refused
    before a byte is read (/dev/zero never ends, a FIFO without a writer never answers)."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait; it is refused below as not a regular file.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UserError(f"{what} {path} is not a regular file (a device, FIFO, socket or directory)")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_text_file(path: Path, what: str, max_bytes: int = MAX_TEXT_FILE_BYTES) -> str:
    """The file's UTF-8 text; a FIFO, device or directory, an oversized file or other bytes are one UserError."""
    with open_regular_file(path, what) as handle:
        try:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                raise UserError(f"{what} {path} holds {size} bytes; at most {max_bytes} are read")
            data = handle.read(max_bytes + 1)
        except OSError as exc:  # /proc/self/mem is a regular file that refuses to be read
            raise UserError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew while we looked
        raise UserError(f"{what} {path} holds more than {max_bytes} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{what} {path} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})") from None


def toml_string(text: str) -> str:
    """`text` as a TOML basic string that parse_toml reads back exactly, whatever it holds: JSON's escapes (quotes,
    backslashes, control characters), which are TOML's too, and every other character as it is; JSON's ASCII-only
    form would write a character beyond the BMP as a surrogate pair (\\ud83d\\udcbd), which TOML refuses, and TOML
    refuses the DEL that JSON leaves raw."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def parse_toml(text: str, where: str) -> dict:
    """TOML a user wrote (a suite, a drive file): every way tomllib can refuse it is one UserError."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{where}: not valid TOML: {exc}") from None
    except ValueError:  # tomllib's int() of a number longer than Python converts (4,300 digits)
        raise UserError(f"{where}: holds a number thousands of digits long") from None
    except RecursionError:  # tomllib reads nested arrays and inline tables by recursion
        raise UserError(f"{where}: arrays or tables nested too deeply (hundreds of levels)") from None
    _refuse_nul(data, where)
    return data


def _refuse_nul(data: dict, where: str) -> None:
    """TOML's escape \\u0000 writes a NUL, which PostgreSQL keeps in no text: refused alike whatever the store."""
    pending: list = [data]
    while pending:
        value = pending.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, item in items:
            if "\x00" in str(key) or (isinstance(item, str) and "\x00" in item):
                raise UserError(f"{where}: {str(key).replace(chr(0), '?')}: holds a NUL character (U+0000)")
            pending.append(item)
