"""`disklab trace`: what a trace holds (show), a synthetic suite that approximates it (suite), traces made elsewhere
turned into disklab's (import)."""

import json
from pathlib import Path

import click
from rich.table import Table

from disklab.cli.common import stdout_console, write_output
from disklab.cli.helptext import examples
from disklab.system.outputs import checked_output
from disklab.trace.iolog import read_meta, read_trace
from disklab.trace.summary import TraceSummary, summarize, summary_document
from disklab.units import format_duration, format_size
from disklab.report.runs import markdown_cell
from disklab.report.terminal import terminal_text

FORMATS = ("table", "json", "markdown")
QD_UNKNOWN = "unknown: an iolog holds no completions"


@click.group(epilog=examples(
    "disklab trace show mydb.trace",
    "disklab trace suite mydb.trace -o mydb.toml",
    "disklab trace import app.iolog -o app.trace"))
def trace():
    """Block I/O traces: show one, approximate one with a suite, import one made elsewhere."""


@trace.command(epilog=examples(
    "disklab trace show mydb.trace                    # tables in the terminal",
    "disklab trace show mydb.trace --format json",
    "disklab trace show mydb.trace -f markdown -o mydb-trace.md"))
@click.argument("trace_path", metavar="TRACE", type=click.Path(path_type=Path))
@click.option("--format", "-f", "output_format", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--output", "-o", help="Write to FILE ('-' for stdout, the default); json and markdown only.")
def show(trace_path, output_format, output):
    """What TRACE holds: sizes, read share, randomness, inter-arrival times, queue depth, footprint, rate over time."""
    if output_format == "table" and output not in (None, "-"):
        raise click.UsageError("a table goes to the terminal; use --format json or markdown with --output")
    summary = _summary(trace_path, output)
    if output_format == "json":
        write_output(json.dumps(summary_document(summary), indent=2) + "\n", output)
    elif output_format == "markdown":
        write_output(_markdown(trace_path.name, summary), output)
    else:
        console = stdout_console()
        for title, rows in _sections(trace_path.name, summary):
            table = Table(title=title, title_justify="left")
            for index, heading in enumerate(rows[0]):
                table.add_column(heading, justify="right" if index and heading != "value" else "left")
            for row in rows[1:]:
                table.add_row(*row)
            console.print(table)
        for line in _warnings(summary):
            console.print(line, style="yellow", highlight=False)


@trace.command(epilog=examples(
    "disklab trace suite mydb.trace -o mydb.toml      # suite name: mydb (or --name)",
    "disklab run mydb.toml --target /mnt/new"))
@click.argument("trace_path", metavar="TRACE", type=click.Path(path_type=Path))
@click.option("--output", "-o", help="Write the suite to NAME.toml ('-' for stdout, the default).")
@click.option("--name", help="The suite's name (default: NAME of -o NAME.toml, else the trace's name).")
def suite(trace_path, output, name):
    """A synthetic suite that approximates TRACE (pattern, rwmixread, bssplit, iodepth, size, rate, runtime), to run
    where the trace cannot be replayed; its header says what it leaves out."""
    from disklab.trace.synthesize import synthesize_suite

    if name is None:
        name = Path(output).stem if output not in (None, "-") else trace_path.stem
    write_output(synthesize_suite(_summary(trace_path, output), name, trace_path.name), output)


@trace.command(name="import", epilog=examples(
    "disklab trace import app.iolog -o app.trace                      # a fio iolog, version 2 or 3",
    "disklab trace import sdb.blktrace.* -o sdb.trace                 # blktrace's per-CPU files",
    "disklab trace import host.blktrace.* --device 8:16 -o sdb.trace  # one device of a blktrace of several"))
@click.argument("files", metavar="FILE...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--output", "-o", required=True, type=click.Path(path_type=Path), help="The trace to write, NAME.trace.")
@click.option("--device", metavar="MAJ:MIN", help="The device to keep of a blktrace that holds several.")
def import_trace(files, output, device):
    """Turn a fio iolog (v2 or v3) or a blktrace's per-CPU files (NAME.blktrace.N, read through blkparse) into a
    trace: an iolog v3 with its metadata in NAME.trace.json."""
    from disklab.trace.imports import import_trace as convert

    count, meta = convert(list(files), output, device)
    click.echo(f"{count:,} I/Os written to {output} (method {meta.method}); 'disklab trace show {output}' shows it",
               err=True)


def _summary(path: Path, output: str | None) -> TraceSummary:
    """The output is checked first: a FIFO or device named by mistake is refused before a long read, not after."""
    if output not in (None, "-"):
        checked_output(output)
    return summarize(read_trace(path), read_meta(path))


def _seconds(seconds: float) -> str:
    return f"{seconds:.3f} s" if seconds < 60 else format_duration(seconds)


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.1f} %"


def _sections(name: str, s: TraceSummary) -> list[tuple[str, list[tuple[str, ...]]]]:
    """Every section as (title, [headings, rows...]): one source for the terminal tables and Markdown."""
    meta = s.meta
    overview = [("", "value"),
                ("method", meta.method), ("device", meta.device or "-"),
                ("device size", format_size(meta.device_bytes) if meta.device_bytes else "-"),
                ("captured", meta.captured_at or "-"), ("kernel", meta.kernel or "-"),
                ("lost events", f"{meta.lost_events:,}"),
                ("I/O span (first to last I/O)", f"{_seconds(s.io_span_s)} (from {_seconds(s.first_io_s)})"),
                ("capture window", _seconds(s.duration_s)),
                ("mean rate (over the I/O span)", f"{s.mean_iops:,.1f} IOPS" if s.mean_iops else "-"),
                ("read share (I/Os)", _percent(s.read_share_ios)), ("read share (bytes)", _percent(s.read_share_bytes)),
                ("sequential (read / write / all)", " / ".join(_percent(s.sequential_share[k])
                                                               for k in ("read", "write", "all"))),
                ("pattern", s.verdict or "-"),
                ("footprint (highest offset)", format_size(s.footprint_bytes)),
                ("distinct MiB touched", f"{s.distinct_mib:,}" if s.distinct_mib is not None else "not counted")]
    depth = s.queue_depth
    unknown = QD_UNKNOWN if meta.method == "fio-iolog" else "unknown: the trace holds no completions"
    overview.append(("queue depth (mean / p50 / p99 / max)", unknown if depth is None else
                     f"{depth.mean:.1f} / {depth.p50:.0f} / {depth.p99:.0f} / {depth.max:.0f}"))
    gaps = s.gaps_us
    if gaps:
        overview.append(("inter-arrival µs (mean / p50 / p90 / p99 / max)",
                         f"{gaps.mean:,.0f} / {gaps.p50:,.0f} / {gaps.p90:,.0f} / {gaps.p99:,.0f} / {gaps.max:,.0f}"))
    actions = [("action", "I/Os", "bytes")] + [(a, f"{ios:,}", format_size(size))
                                                for a, (ios, size) in s.actions.items() if ios]
    data = s.data_ios or 1
    sizes = [("size", "I/Os", "share")] + [(format_size(size), f"{ios:,}", _percent(ios / data))
                                           for size, ios in s.sizes[:10]]
    if len(s.sizes) > 10 or s.sizes_other:
        rest = sum(ios for _, ios in s.sizes[10:]) + s.sizes_other
        sizes.append(("other sizes", f"{rest:,}", _percent(rest / data)))
    buckets = [("up to", "I/Os", "share")] + [(format_size(bound), f"{ios:,}", _percent(ios / data))
                                              for bound, ios in s.size_buckets]
    rate = [("from", "seconds", "IOPS", "MB/s")] + [(f"{r.start_s:,.0f} s", f"{r.seconds:,.2f}", f"{r.iops:,.0f}",
                                                     f"{r.mb_per_s:,.2f}") for r in s.rate]
    sections = [(f"trace {name}", overview), ("I/Os by action", actions), ("request sizes (exact)", sizes),
                ("request sizes (power-of-two buckets)", buckets), ("rate over time", rate)]
    if meta.notes:
        sections.append(("notes", [("note",), *((note,) for note in meta.notes)]))
    return [(title, rows) for title, rows in sections if len(rows) > 1]


def _warnings(s: TraceSummary) -> list[str]:
    lines = []
    if s.meta.lost_events:
        lines.append(f"warning: the kernel lost {s.meta.lost_events:,} events while tracing: the trace is "
                     "incomplete (capture with a larger buffer, or a shorter time)")
    if s.out_of_order:
        lines.append(f"warning: {s.out_of_order:,} records go back in time; their inter-arrival time counts as 0")
    return lines


def _markdown(name: str, s: TraceSummary) -> str:
    out = []
    for title, rows in _sections(name, s):
        out += [f"## {terminal_text(title)}", "", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        out += ["| " + " | ".join(markdown_cell(cell) for cell in row) + " |" for row in rows[1:]]
        out.append("")
    out += [f"> {terminal_text(line)}" for line in _warnings(s)]
    return "\n".join(out).rstrip("\n") + "\n"
