"""fio's --status-interval reports, read while fio runs: the live figures of the second just past, and the output
with those interim reports taken out again, so that what is stored is fio's final report alone.

fio appends a full report, cumulative since the job's start, to its --output file every interval (for json and json+
a JSON document each time), and its final report last. Ramp time is told apart by its missing latency samples: fio
counts I/O during ramp_time but records no latency, then zeroes every figure when the ramp ends.
"""

import codecs
import json
import re
from dataclasses import dataclass
from pathlib import Path

from disklab.fio.histogram import histogram_percentile
from disklab.fio.parse import DIRECTIONS

# The longest interval disklab asks fio for: a live figure per second. Short tests get shorter ones (fio takes ms).
STATUS_INTERVAL_S = 1
SHORTEST_STATUS_INTERVAL_S = 0.25  # fio writes a whole report (json+ bins included) each time: not more often
REPORTS_PER_TEST = 8  # a test of 2 s still shows figures from its first quarter of a second
_DOCUMENT_START = re.compile(r"^\{", re.MULTILINE)


@dataclass(frozen=True)
class StatusReport:
    """One interim report, summed over fio's directions (read, write, trim) of its jobs."""

    runtime_ms: int  # fio's own clock of the figures: since the job's I/O (or its measurement) started
    ios: int
    io_bytes: int
    lat_samples: int  # 0 with I/O done: the job is in its ramp_time
    lat_sum_ns: float
    clat_bins: dict[float, int] | None = None  # json+ only: the histogram of completion latency so far, ns -> count
    clat_p99_ns: float | None = None  # fio's own p99 of the report (json), for when there are no bins

    @property
    def phase(self) -> str:
        """"starting" (file layout, startdelay), "ramp" or "measuring"."""
        if self.ios == 0:
            return "starting"
        return "ramp" if self.lat_samples == 0 else "measuring"


@dataclass(frozen=True)
class LiveFigures:
    """The test in flight since fio's report before: a phase, and figures once it does I/O."""

    phase: str
    iops: float | None = None
    bw_bytes_per_s: float | None = None
    lat_mean_ns: float | None = None  # None during ramp_time: fio records no latency then
    clat_p99_ns: float | None = None  # of the span with json+ bins; else fio's p99 since the test's start


def status_interval_s(test_seconds: float) -> float:
    """The interval for a test of about `test_seconds`: REPORTS_PER_TEST reports, within 0.25 s to 1 s."""
    return min(STATUS_INTERVAL_S, max(SHORTEST_STATUS_INTERVAL_S, test_seconds / REPORTS_PER_TEST))


def status_report(document: dict) -> StatusReport | None:
    """The figures of one report; None for one that is not a job report (no 'jobs', or not the fields of fio 3.x)."""
    jobs = document.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        return None
    runtime = ios = io_bytes = samples = 0
    lat_sum = 0.0
    bins: dict[float, int] | None = {}
    p99s = []
    try:
        for job in jobs:
            for name in DIRECTIONS:
                d = job.get(name)
                if not isinstance(d, dict):
                    continue
                runtime = max(runtime, int(d["runtime"]))
                ios += int(d["total_ios"])
                io_bytes += int(d["io_bytes"])
                lat = d["lat_ns"]
                samples += int(lat["N"])
                lat_sum += float(lat["mean"]) * int(lat["N"])
                if not int(d["total_ios"]):
                    continue  # a direction the job does not do has no histogram
                clat = d.get("clat_ns") or {}
                p99s.append(float((clat.get("percentile") or {}).get("99.000000", 0)))
                if bins is not None and "bins" in clat:
                    for value, count in clat["bins"].items():
                        bins[float(value)] = bins.get(float(value), 0) + int(count)
                else:
                    bins = None  # json, not json+: fio's p99 of the report stands in
    except (KeyError, TypeError, ValueError, AttributeError):
        return None  # an older fio's layout: no live figures, the final report is read by fio/parse.py as ever
    return StatusReport(runtime, ios, io_bytes, samples, lat_sum, bins or None, max(p99s, default=0.0) or None)


def live_figures(before: StatusReport | None, now: StatusReport) -> LiveFigures:
    """What fio did between two cumulative reports; from the report alone when fio zeroed its figures in between
    (the end of ramp_time) or when it is the first, so that a short test shows figures from its first report. Two
    reports under half the shortest interval apart (fio's final report, just after the last interim one) give the
    phase alone."""
    if now.ios == 0 or now.runtime_ms <= 0:
        return LiveFigures(now.phase)
    same_span = (before is not None and before.phase == now.phase and now.runtime_ms > before.runtime_ms
                 and now.ios >= before.ios)
    base = before if same_span else StatusReport(0, 0, 0, 0, 0.0)
    seconds = (now.runtime_ms - base.runtime_ms) / 1000
    if same_span and seconds < SHORTEST_STATUS_INTERVAL_S / 2:
        return LiveFigures(now.phase)
    samples = now.lat_samples - base.lat_samples
    latency = (now.lat_sum_ns - base.lat_sum_ns) / samples if samples > 0 else None
    return LiveFigures(now.phase, (now.ios - base.ios) / seconds, (now.io_bytes - base.io_bytes) / seconds, latency,
                       _p99(base, now) if latency is not None else None)


def _p99(base: StatusReport, now: StatusReport) -> float | None:
    """The p99 of the span from the difference of fio's cumulative histograms; without bins, fio's own p99."""
    if now.clat_bins is None:
        return now.clat_p99_ns
    earlier = base.clat_bins or {}
    span = {value: count - earlier.get(value, 0) for value, count in now.clat_bins.items()}
    return histogram_percentile({v: c for v, c in span.items() if c > 0}, 0.99)


def documents(text: str, start: int = 0) -> list[tuple[int, int, object]]:
    """The complete JSON values that open a line in `text` (from `start`), with where each starts and ends; an
    incomplete last one (fio still writing it) is left for later."""
    decoder = json.JSONDecoder()
    found = []
    position = start
    while (match := _DOCUMENT_START.search(text, position)) is not None:
        try:
            value, end = decoder.raw_decode(text, match.start())
        except (json.JSONDecodeError, RecursionError):
            break
        found.append((match.start(), end, value))
        position = end
    return found


def final_output(text: str) -> str:
    """fio's output without its interim reports: every other line (notes, warnings) and the final report, verbatim.
    A cut-off last report is kept as it is, for fio/parse.py to refuse."""
    kept, position = [], 0
    for start, end, _ in documents(text)[:-1]:
        kept.append(text[position:start])
        position = end + 1 if text[end:end + 1] == "\n" else end
    kept.append(text[position:])
    return "".join(kept)


class StatusReader:
    """Follows fio's --output file while fio writes it; each new report gives the figures of the second past."""

    def __init__(self, path: Path):
        self.path = path
        self.read_bytes = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.text = ""
        self.parsed_to = 0
        self.last: StatusReport | None = None
        self.phase = ""

    def poll(self) -> LiveFigures | None:
        """The figures of the newest complete report not seen before, or None when there is nothing new to show."""
        try:
            with open(self.path, "rb") as output:
                output.seek(self.read_bytes)
                new = output.read()
        except OSError:  # fio has not opened its output yet
            return None
        self.read_bytes += len(new)
        self.text += self.decoder.decode(new)
        figures = None
        for _, end, value in documents(self.text, self.parsed_to):
            self.parsed_to = end
            report = status_report(value) if isinstance(value, dict) else None
            if report is None:
                continue
            now = live_figures(self.last, report)
            self.last = report
            if now.iops is not None or now.phase != self.phase:  # figures without any keep the last ones shown
                figures, self.phase = now, now.phase
        self.text, self.parsed_to = self.text[self.parsed_to:], 0  # only what is still to read stays in memory
        return figures
