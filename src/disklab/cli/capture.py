"""`disklab capture`: trace a device's block I/O while an application runs, into a trace fio can replay."""

from pathlib import Path

import click

from disklab.cli.common import converter, stderr_console
from disklab.cli.helptext import examples
from disklab.cli.options import WholeNumber
from disklab.errors import DisklabError
from disklab.trace.capture import DEFAULT_BUFFER_KB, DEFAULT_DURATION_S, METHODS, CaptureRequest, capture
from disklab.trace.iolog import meta_path
from disklab.units import format_duration, human_size, parse_duration, parse_size


def _duration(text: str) -> float:
    seconds = parse_duration(text)
    if seconds <= 0:
        raise ValueError(f"{text} is no time to trace; give e.g. 10s or 2m")
    return seconds


def _buffer_kb(text: str) -> int:
    kb = parse_size(text) // 1024
    if not 64 <= kb <= 4 * 1024 * 1024:
        raise ValueError(f"{text} is not a buffer from 64 KiB to 4 GiB per CPU")
    return kb


@click.command("capture", epilog=examples(
    "sudo disklab capture /dev/nvme0n1 --duration 60s -o mydb.trace      # while the application runs",
    "sudo disklab capture /dev/sdb --pid 1234 --duration 5m -o pg.trace  # only process 1234's I/O",
    "sudo disklab capture /dev/sdb1 -o build.trace                       # a partition: offsets relative to it"))
@click.argument("device")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The trace to write (fio iolog v3), e.g. mydb.trace; its metadata goes to OUTPUT.json.")
@click.option("--duration", default=f"{DEFAULT_DURATION_S:g}s", show_default=True, callback=converter(_duration),
              help="How long to trace (5s, 2m); Ctrl-C ends it earlier and still writes the trace.")
@click.option("--pid", type=WholeNumber(1, 2**22), help="Keep only this process's I/O (and its children's).")
@click.option("--method", type=click.Choice(METHODS), default="auto", show_default=True,
              help="blktrace, the kernel's block tracepoints (tracefs), or auto: blktrace where it works.")
@click.option("--buffer-size", "buffer_kb", default=f"{DEFAULT_BUFFER_KB // 1024}M", show_default=True,
              callback=converter(_buffer_kb), help="tracefs's event buffer per CPU; larger loses fewer events.")
def capture_command(device, output, duration, pid, method, buffer_kb):
    """Trace the block requests DEVICE sees (a disk or a partition) and write them as a trace to replay.

    Needs root. Tries blktrace first and falls back to the kernel's block tracepoints through a private tracefs
    instance, saying which was used and why. Exits 1 when the kernel dropped events (the trace is written but
    incomplete, and says so).
    """
    console = stderr_console()
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        console.print(line, markup=False, highlight=False)

    live = console.is_terminal

    def progress(events: int, elapsed_s: float) -> None:
        click.echo(f"\rcapturing {device}: {events:,} events, {format_duration(elapsed_s)} of "
                   f"{format_duration(duration)} (Ctrl-C ends early)\x1b[K", nl=False, err=True)

    request = CaptureRequest(device, output, duration, method, pid, buffer_kb)
    result = capture(request, say, progress if live else None)
    if live:
        click.echo(err=True)
    meta = result.meta
    kinds = ", ".join(f"{n:,} {a}{'s' if n != 1 else ''}" for a in ("read", "write", "trim", "sync")
                      if (n := result.actions.get(a, 0)))
    say(f"captured {result.records:,} records ({kinds or 'no I/O'}) of {device} "
        f"({human_size(meta.device_bytes)}) in {format_duration(meta.duration_s)} with {meta.method}: "
        f"{result.trace}, metadata in {meta_path(result.trace)}")
    for note in meta.notes:
        if note not in said:  # the method, tracefs mounted, --pid's limits: said while tracing
            say(f"  {note}")
    if meta.lost_events:
        raise DisklabError(
            f"the kernel dropped {meta.lost_events:,} events while tracing: {result.trace} is INCOMPLETE (recorded "
            "as lost_events in its metadata); capture again with a larger --buffer-size, and keep the output and "
            "the temporary folder off the traced device")
