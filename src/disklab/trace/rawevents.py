"""The kernel's trace events in their binary form: pages of a tracefs ring buffer, as `trace_pipe_raw` hands them
out, decoded with the layout the kernel publishes (`events/header_page`, `events/header_event`, and each event's
`format`).

Why not the text `trace_pipe`: the kernel formats every event as text while it is read, which cost fio a quarter to
60 % of its IOPS at 100k+ IOPS here; copying the raw pages took 1 to 2 % of one CPU, and the decoding runs after
the capture. Why not Debian's `trace-cmd record` + `trace-cmd report`: its record exits at once on this VM (it must
write /proc/sys/kernel/ftrace_enabled, which the kernel refuses here) and leaves its instance behind; and it would
make the private instance's clean-up, the moment tracing starts (for --pid) and Ctrl-C another program's
(docs/trace.md).

A spool is a folder: `header_page`, `header_event`, `EVENT.format` copied from the tracefs instance before tracing,
and `cpuN.raw`, the pages of CPU N one after another, each `page_bytes` long (the header's data offset + size).
"""

import heapq
import re
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

from disklab.errors import UserError
from disklab.trace.blockevents import COMPLETE, FORK, ISSUE, LOST, REQUEUE, BlockEvent

KINDS = {"block_rq_issue": ISSUE, "block_rq_complete": COMPLETE, "block_rq_requeue": REQUEUE,
         "sched_process_fork": FORK}
# The fields each kind needs, in the order _event takes them; `common_pid` is the task the event ran in.
_NEEDS = {ISSUE: ("dev", "sector", "nr_sector", "rwbs", "common_pid", "bytes"),
          COMPLETE: ("dev", "sector", "nr_sector", "rwbs", "common_pid"),
          REQUEUE: ("dev", "sector", "nr_sector", "rwbs", "common_pid"),
          FORK: ("parent_pid", "child_pid")}
_INTEGERS = {1: "B", 2: "H", 4: "I", 8: "Q"}
# The entry header this decoder knows (include/linux/ring_buffer.h), as header_event describes it.
_HEADER_EVENT = ("type_len : 5 bits", "time_delta : 27 bits", "padding : type == 29", "time_extend : type == 30",
                 "time_stamp : type == 31", "data max type_len == 28")
PADDING, TIME_EXTEND, TIME_STAMP = 29, 30, 31
TS_SHIFT = 27
MISSED_EVENTS, MISSED_STORED = 1 << 31, 1 << 30  # flags in a page's commit field: events lost before this page
COMMIT_MASK = (1 << 27) - 1
MAX_PAGE_BYTES = 1 << 24  # the kernel's pages (sub-buffers) are 4 KiB by default, at most a few MiB
_FIELD = re.compile(r"field:(?P<decl>[^;]+);\s*offset:(?P<offset>\d+);\s*size:(?P<size>\d+);\s*signed:(?P<signed>\d)")


class Field(NamedTuple):
    offset: int
    size: int
    signed: bool
    data_loc: bool  # `__data_loc`: the field holds (length << 16 | offset) of the data in the event


@dataclass(frozen=True)
class Layout:
    """What the decoder takes from a spool's format files."""

    timestamp: Field
    commit: Field
    data: Field
    events: dict[int, tuple[str, struct.Struct, Callable]]  # event ID -> (kind, its fields' struct, their order)

    @property
    def page_bytes(self) -> int:
        return self.data.offset + self.data.size


def parse_fields(text: str) -> dict[str, Field]:
    """`field:dev_t dev; offset:8; size:4; signed:0;` lines -> {name: Field}; `char rwbs[10]` is `rwbs`."""
    fields = {}
    for match in _FIELD.finditer(text):
        decl = match["decl"].strip()
        name = re.sub(r"\[.*?\]$", "", decl.split()[-1])
        fields[name] = Field(int(match["offset"]), int(match["size"]), match["signed"] == "1",
                             decl.startswith("__data_loc"))
    return fields


def read_layout(folder: Path) -> Layout:
    """The spool's format files, checked for everything the decoder needs."""
    try:
        page = parse_fields((folder / "header_page").read_text())
        entry = " ".join((folder / "header_event").read_text().split())
        events = {}
        for path in sorted(folder.glob("*.format")):
            text = path.read_text()
            kind = KINDS.get(path.name.removesuffix(".format"))
            found = re.search(r"^ID:\s*(\d+)", text, re.MULTILINE)
            fields = parse_fields(text)
            if kind is None or found is None or any(name not in fields for name in _NEEDS[kind]):
                raise ValueError(f"{path.name} is not the format of an event capture records")
            events[int(found[1])] = (kind, *_unpacker(fields, _NEEDS[kind]))
    except (OSError, UnicodeDecodeError, ValueError, IndexError, struct.error) as exc:
        raise UserError(f"cannot read the raw events' formats in {folder}: {exc}") from None
    if not all(line in entry for line in _HEADER_EVENT):
        raise UserError(f"{folder}/header_event is not a ring buffer entry header this disklab knows")
    if any(name not in page for name in ("timestamp", "commit", "data")) or not events:
        raise UserError(f"{folder}: header_page or the events' formats are missing what capture needs")
    if not 0 < page["data"].offset + page["data"].size <= MAX_PAGE_BYTES:
        raise UserError(f"{folder}/header_page: pages of {page['data'].offset + page['data'].size} bytes")
    return Layout(page["timestamp"], page["commit"], page["data"], events)


def read_spool(folder: Path) -> Iterator[BlockEvent]:
    """Every CPU's events, merged in time order (one clock for every CPU: see tracefs's trace_clock)."""
    layout = read_layout(folder)
    cpus = sorted(folder.glob("cpu*.raw"), key=lambda path: int(path.stem.removeprefix("cpu") or 0))
    yield from heapq.merge(*(_cpu_events(path, layout) for path in cpus), key=lambda event: event.time_ns)


def _cpu_events(path: Path, layout: Layout) -> Iterator[BlockEvent]:
    try:
        with path.open("rb") as pages:
            while page := pages.read(layout.page_bytes):
                yield from decode_page(page, layout)
    except (struct.error, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise UserError(f"damaged raw events in {path}: {exc}") from None


def decode_page(page: bytes, layout: Layout) -> Iterator[BlockEvent]:
    """One ring buffer page: its header (first timestamp, bytes used and lost-event flags), then entries that each
    carry a time delta. ValueError (or struct.error) where the page is not one."""
    if len(page) != layout.page_bytes:
        raise ValueError(f"a page of {len(page)} bytes, not {layout.page_bytes}")
    time_ns = _unsigned(page, layout.timestamp)
    commit = _unsigned(page, layout.commit)
    start, used = layout.data.offset, commit & COMMIT_MASK
    if used > layout.data.size:
        raise ValueError(f"a page claims {used} bytes of events in {layout.data.size}")
    if commit & MISSED_EVENTS:  # the count follows the events when it fitted, else it is not known: at least 1
        stored = commit & MISSED_STORED and used + 8 <= layout.data.size
        yield BlockEvent(LOST, time_ns, count=max(1, int.from_bytes(page[start + used:start + used + 8], "little"))
                         if stored else 1)
    position, end = start, start + used
    while position < end:
        (header,) = struct.unpack_from("<I", page, position)
        type_len, delta = header & 0x1F, header >> 5
        if type_len == PADDING:
            if delta == 0:  # the rest of the page is empty
                return
            position += 4 + _word(page, position + 4, end)
        elif type_len in (TIME_EXTEND, TIME_STAMP):
            extended = (_word(page, position + 4, end) << TS_SHIFT) + delta
            time_ns = time_ns + extended if type_len == TIME_EXTEND else extended
            position += 8
        else:
            if type_len:
                payload, size = position + 4, type_len * 4
            else:
                length = _word(page, position + 4, end)
                if length < 4:
                    raise ValueError(f"an entry of {length} bytes")
                payload, size = position + 8, (length - 4 + 3) & ~3
            if payload + size > end:
                raise ValueError("an entry runs past the end of its page")
            time_ns += delta
            event = _event(page, payload, size, time_ns, layout)
            if event is not None:
                yield event
            position = payload + size


def _event(page: bytes, payload: int, size: int, time_ns: int, layout: Layout) -> BlockEvent | None:
    known = layout.events.get(struct.unpack_from("<H", page, payload)[0])
    if known is None:  # an event capture did not ask for
        return None
    kind, fields, order = known
    if fields.size > size:
        raise ValueError("an event shorter than its format")
    values = order(fields.unpack_from(page, payload))
    if kind == FORK:
        return BlockEvent(FORK, time_ns, pid=values[0], child_pid=values[1])
    dev, sector, sectors, rwbs, pid, *issued = values
    return BlockEvent(kind, time_ns, (dev >> 20, dev & 0xFFFFF), sector, sectors, issued[0] if issued else 0,
                      rwbs.split(b"\0", 1)[0].decode("ascii"), pid)


def _unpacker(fields: dict[str, Field], names: tuple[str, ...]) -> tuple[struct.Struct, Callable]:
    """One struct for the fields `names` (at their offsets, read in one call) and what puts them in that order."""
    ranked = sorted(names, key=lambda name: fields[name].offset)
    layout, end = "<", 0
    for name in ranked:
        field = fields[name]
        if field.offset < end or field.data_loc or (name != "rwbs" and field.size not in _INTEGERS):
            raise ValueError(f"field {name} is not where or what the decoder expects")
        code = f"{field.size}s" if name == "rwbs" else _INTEGERS[field.size]
        layout += f"{field.offset - end}x{code.lower() if field.signed and name != 'rwbs' else code}"
        end = field.offset + field.size
    return struct.Struct(layout), itemgetter(*(ranked.index(name) for name in names))


def _unsigned(page: bytes, field: Field) -> int:
    return int.from_bytes(page[field.offset:field.offset + field.size], "little")


def _word(page: bytes, position: int, end: int) -> int:
    if position + 4 > end:
        raise ValueError("an entry runs past the end of its page")
    return struct.unpack_from("<I", page, position)[0]
