"""The kernel's trace text (a tracefs instance's `trace` or `trace_pipe`), read into events: what the raw decoder's
output is checked against, and the text fixtures that tests/unit/test_trace_capture.py feeds to RecordBuilder.
`disklab capture` once read this text itself (it now copies the binary pages: src/disklab/trace/rawevents.py)."""

import re
from collections.abc import Iterator
from typing import IO

from disklab.trace.blockevents import COMPLETE, FORK, ISSUE, LOST, REQUEUE, BlockEvent, seconds_to_ns

_KINDS = {"block_rq_issue": ISSUE, "block_rq_complete": COMPLETE, "block_rq_requeue": REQUEUE}
# `fio-14781   [001] ..... 23496.605739: block_rq_issue: 7,0 R 4096 () 7904 + 8 be,0,4 [fio]`: the task name may
# hold spaces and dashes; the flags column (irq-info) may be absent; the timestamp is seconds.microseconds.
_LINE = re.compile(r"^\s*(?P<comm>.*)-(?P<pid>\d+)\s+(?:\(\s*[-\d]+\)\s+)?\[(?P<cpu>\d+)\]\s+(?:\S{4,5}\s+)?"
                   r"(?P<time>\d+\.\d+):\s+(?P<event>\w+):\s+(?P<body>.*)$")
# Issue: `7,0 R 4096 () 7904 + 8 ...`; complete and requeue have no byte count: `7,0 R () 7904 + 8 ...`.
_REQUEST = re.compile(r"^(?P<major>\d+),(?P<minor>\d+) (?P<rwbs>\S+) (?:(?P<bytes>\d+) )?\(.*?\) "
                      r"(?P<sector>\d+) \+ (?P<sectors>\d+)")
_FORK = re.compile(r"\bpid=(?P<pid>\d+) .*\bchild_pid=(?P<child>\d+)")
_LOST = re.compile(r"^CPU:\s*\d+ \[LOST (?P<count>\d+) EVENTS\]")


def parse_tracefs_lines(lines: IO[str]) -> Iterator[BlockEvent]:
    """Events of trace_pipe text; lines of other events and anything unreadable are skipped."""
    for line in lines:
        match = _LINE.match(line)
        if match is None:
            lost = _LOST.match(line.strip())
            if lost:
                yield BlockEvent(LOST, count=int(lost["count"]))
            continue
        event, body = match["event"], match["body"]
        time_ns, pid = seconds_to_ns(match["time"]), int(match["pid"])
        if event == "sched_process_fork":
            fork = _FORK.search(body)
            if fork:
                yield BlockEvent(FORK, time_ns, pid=int(fork["pid"]), child_pid=int(fork["child"]))
            continue
        request = _REQUEST.match(body) if event in _KINDS else None
        if request is None:
            continue
        yield BlockEvent(
            _KINDS[event], time_ns, (int(request["major"]), int(request["minor"])), int(request["sector"]),
            int(request["sectors"]), int(request["bytes"] or 0), request["rwbs"], pid,
        )
