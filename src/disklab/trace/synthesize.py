"""A synthetic suite that approximates a trace with the suite format's own keys, for disks the trace cannot replay on.

What it keeps: the read share, the request sizes, random or sequential, the queue depth, the footprint, the mean
rate and the duration (both over the I/O span, first to last I/O: a capture window is longer than the workload). What
it cannot keep is said in the file's header: bursts and idle periods (fio issues at an even rate), locality (hot
regions, the order of offsets), and the mix of several files.
"""

from disklab.errors import UserError
from disklab.suite.loader import parse_suite
from disklab.system.textfile import toml_string
from disklab.trace.summary import TraceSummary
from disklab.units import fio_size, human_size

MAX_SPLIT_SIZES = 8  # bssplit entries: the most frequent sizes; the rest are left out and their share spread
MIB = 1024**2


def synthesize_suite(summary: TraceSummary, name: str, trace_name: str) -> str:
    """The suite's TOML text; checked with the suite loader before it is returned."""
    if not summary.data_ios:
        raise UserError(f"{trace_name} has no reads or writes: there is no workload to approximate")
    notes = [f"Approximates the trace {trace_name} ({summary.data_ios:,} reads and writes over "
             f"{summary.io_span_s:.3f} s, first to last, in a capture window of {summary.duration_s:.3f} s) with "
             "fio's synthetic parameters."]
    group = {"name": "trace", "label": "trace approximation"}
    group["pattern"] = summary.verdict
    notes.append(f"pattern: {_percent(summary.sequential_share['all'])} of I/Os started where the previous one of "
                 f"the same file and direction ended, so {summary.verdict}.")
    direction, mix = _direction(summary)
    group["direction"] = direction
    if mix is not None:
        group["rwmixread"] = mix
    split = bssplit(summary)
    if ":" in split:
        group["bssplit"] = split
        left = summary.data_ios - sum(ios for _, ios in summary.sizes[:MAX_SPLIT_SIZES])
        if left:
            notes.append(f"bssplit: the {MAX_SPLIT_SIZES} most frequent sizes; {left:,} I/Os of other sizes left out.")
    else:
        group["bs"] = split.partition("/")[0]
    if summary.queue_depth:
        group["iodepth"] = max(1, round(summary.queue_depth.p90))
        notes.append(f"iodepth: 90 % of the I/Os were issued with at most this many in flight (mean "
                     f"{summary.queue_depth.mean:.1f}): an application refilling its queue in batches issues at every "
                     "depth up to its own.")
    else:
        group["iodepth"] = 1
        notes.append("iodepth: 1, because the trace records no completions (an iolog does not), so its queue depth "
                     "is unknown; set it by hand if you know it.")
    size = max(MIB, -(-summary.footprint_bytes // MIB) * MIB)
    group["size"] = fio_size(size)
    notes.append(f"size: the footprint, the highest offset touched ({human_size(summary.footprint_bytes)}), "
                 "rounded up to a MiB.")
    rate = summary.mean_iops
    if rate and mix is None:
        group["rate_iops"] = max(1, round(rate))
        notes.append(f"rate_iops: the trace's MEAN rate over its I/O span ({rate:,.1f} IOPS); its peaks are not "
                     "reproduced.")
    elif rate:
        notes.append(f"rate_iops: left out, so this runs unthrottled. The trace's mean was {rate:,.1f} IOPS, but fio "
                     "caps reads and writes each at one rate_iops, which breaks the read share (70/30 ran 50/50).")
    runtime_ms = max(1000, round(summary.io_span_s * 1000))
    group["runtime"] = f"{runtime_ms}ms" if runtime_ms % 1000 else f"{runtime_ms // 1000}s"
    group["time_based"] = True
    notes.append("runtime: the trace's I/O span, first to last I/O, not its capture window"
                 + (" (at least 1 s)." if summary.io_span_s < 1 else "."))
    notes.append("Left out: bursts and idle periods (fio issues evenly), locality (hot regions, the order of "
                 "offsets), dependencies between I/Os, syncs and trims, and which of several files an I/O went to.")
    text = _toml(name, f"synthetic approximation of the trace {trace_name}", notes, group)
    parse_suite(text, source="trace suite", where=f"suite synthesized from {trace_name}")  # never hand out a bad file
    return text


def bssplit(summary: TraceSummary) -> str:
    """fio's block-size split of the most frequent sizes, shares in whole percent adding up to 100 (largest
    remainders); a size that would round to 0 % is left out."""
    top = [(size, ios) for size, ios in summary.sizes if size > 0][:MAX_SPLIT_SIZES]
    if not top:
        raise UserError("every read and write of the trace has a length of 0: there are no sizes to split")
    total = sum(ios for _, ios in top)
    exact = [(size, ios * 100 / total) for size, ios in top]
    shares = {size: int(share) for size, share in exact}
    by_remainder = sorted(exact, key=lambda item: item[1] - int(item[1]), reverse=True)
    for size, _ in by_remainder[: 100 - sum(shares.values())]:
        shares[size] += 1
    return ":".join(f"{fio_size(size)}/{share}" for size, share in shares.items() if share)


def _direction(summary: TraceSummary) -> tuple[str, int | None]:
    reads, writes = summary.actions["read"][0], summary.actions["write"][0]
    if not writes:
        return "read", None
    if not reads:
        return "write", None
    return "mixed", min(99, max(1, round(summary.read_share_ios * 100)))


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.1f} %"


def _toml(name: str, description: str, notes: list[str], group: dict) -> str:
    lines = ["# " + "".join(c if c.isprintable() else "?" for c in note) for note in notes]
    lines += ["", f"name = {toml_string(name)}", f"description = {toml_string(description)}", "", "[[group]]"]
    for key, value in group.items():
        text = ("true" if value else "false") if isinstance(value, bool) else str(value) if isinstance(value, int) \
            else toml_string(value)
        lines.append(f"{key} = {text}")
    return "\n".join(lines) + "\n"

