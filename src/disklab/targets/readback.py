"""What a condition left on the device, read back rather than taken on the tool's word: blocks spread over the device
are written with a marker just before the erase or discard and read again after it, each found to hold zeros, the
marker still, or something else (a drive's own fill, such as 0xFF). Both ways with O_DIRECT: the marker must reach
the drive before the erase, and after an erase the kernel does not see (an NVMe format) the page cache would hand
the marker back."""

import mmap
import os
import secrets
from dataclasses import dataclass

from disklab.errors import UserError

SAMPLE_BLOCKS = 16  # a bounded sample: the first and last block and 14 between, whatever the device's size
BLOCK_BYTES = 4096  # a multiple of every logical block size up to 4 KiB, as O_DIRECT needs


@dataclass(frozen=True)
class Marked:
    path: str
    offsets: tuple[int, ...]
    block_bytes: int
    marker: bytes  # one block's content, with a token of this run's own in it


@dataclass(frozen=True)
class ReadBack:
    blocks: int
    block_bytes: int
    zeros: int
    marker: int  # still what was written before
    other: int  # neither zeros nor the marker


def mark(path: str, size_bytes: int, logical_block_bytes: int) -> Marked:
    """The sample's blocks of the device at `path` written with a marker, on the drive when this returns."""
    block = max(BLOCK_BYTES, logical_block_bytes)
    last = size_bytes // block - 1
    offsets = tuple(sorted({last * n // (SAMPLE_BLOCKS - 1) * block for n in range(SAMPLE_BLOCKS)})) if last > 0 else ()
    line = f"disklab read-back marker {secrets.token_hex(8)}\n".encode()
    marked = Marked(path, offsets, block, (line * (block // len(line) + 1))[:block])
    buffer = mmap.mmap(-1, block)  # page-aligned, as O_DIRECT needs
    buffer.write(marked.marker)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
        try:
            for offset in offsets:
                if os.pwritev(fd, [buffer], offset) != block:
                    raise OSError(f"a short write at byte {offset:,}")
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise UserError(f"writing the read-back marker to {path} failed: {exc.strerror or exc}") from None
    return marked


def read_back(marked: Marked) -> ReadBack:
    """What each marked block holds now."""
    buffer = mmap.mmap(-1, marked.block_bytes)
    zeros = bytes(marked.block_bytes)
    found = []
    try:
        fd = os.open(marked.path, os.O_RDONLY | os.O_DIRECT)
        try:
            for offset in marked.offsets:
                if os.preadv(fd, [buffer], offset) != marked.block_bytes:
                    raise OSError(f"a short read at byte {offset:,}")
                found.append(buffer[:])
        finally:
            os.close(fd)
    except OSError as exc:
        raise UserError(f"reading {marked.path} back failed: {exc.strerror or exc}") from None
    return ReadBack(len(found), marked.block_bytes, found.count(zeros), found.count(marked.marker),
                    sum(block not in (zeros, marked.marker) for block in found))
