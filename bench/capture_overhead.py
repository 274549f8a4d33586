"""What does `disklab capture` cost the I/O it traces? fio alone vs the same fio while a capture runs.

Run by hand as root (not part of the tests):

    .venv/bin/python bench/capture_overhead.py --rounds 5 --runtime 5s --size 1GiB [--sparse] [--direct-io]

A loop device over a file in /var/tmp (written in full by fio first, unless --sparse: reads of a hole never reach
the backing file's pages, so they come faster and trace more events per second). The loop device reads its backing
file through the page cache (300k+ IOPS here: the kernel's cost per traced event weighs most), or with --direct-io
the disk under /var/tmp itself (its 100-150k IOPS: a capture of a real disk's workload). Each round runs A (fio alone:
random 4 KiB reads, QD32, direct, libaio) then B (the same fio while `disklab capture LOOPDEV` runs from before fio
starts until after it ends), so that drift on a shared machine falls on both alike. Per round: IOPS alone, IOPS
under capture, their ratio, the share of a CPU the capture process took while fio ran (less noisy than the ratio on
a shared machine), the capture's lost events, and the trace's reads against fio's (`total_ios`); then the spread
of the ratio. The issue's goal: a ratio of 0.95 or more at 100k+ IOPS, 0 lost events, every I/O traced. The
loop device and the files are removed at the end, also on Ctrl-C.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from disklab.trace.iolog import read_meta, read_trace

TRACEFS = Path("/sys/kernel/tracing")


def fio(device: str, runtime: str, engine: str) -> tuple[float, int]:
    """fio's IOPS and total_ios of one random-read run."""
    out = subprocess.run(["fio", "--name=bench", f"--filename={device}", "--rw=randread", "--bs=4k", "--iodepth=32",
                          f"--ioengine={engine}", "--direct=1", f"--runtime={runtime}", "--time_based",
                          "--output-format=json"], check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    read = json.loads(out.stdout)["jobs"][0]["read"]
    return read["iops"], read["total_ios"]


def tracing(capture: subprocess.Popen, method: str) -> bool:
    """Whether the capture's kernel tracing is on (tracefs: its instance says so; blktrace: after its first second)."""
    if method != "tracefs":
        time.sleep(2)
        return capture.poll() is None
    flag = TRACEFS / "instances" / f"disklab-{capture.pid}" / "tracing_on"
    for _ in range(300):
        try:
            if flag.read_text().strip() == "1":
                return True
        except OSError:
            pass
        if capture.poll() is not None:
            return False
        time.sleep(0.1)
    return False


def cpu_seconds(pid: int) -> float:
    """A process's CPU time so far (user + system), from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def captured(device: str, runtime: str, engine: str, method: str,
             trace: Path) -> tuple[float, int, int, int, float]:
    """fio under a capture: its IOPS and total_ios, the trace's reads, its lost events, and the share of a CPU the
    capture process used while fio ran (its own reading and copying; the kernel's tracepoints run in fio's time)."""
    capture = subprocess.Popen([str(Path(sys.executable).parent / "disklab"), "capture", device, "--method", method,
                                "--duration", "1h", "-o", str(trace)], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        if not tracing(capture, method):
            raise SystemExit(f"the capture did not start: {capture.communicate(timeout=60)[1]}")
        before = cpu_seconds(capture.pid)
        started = time.monotonic()
        iops, ios = fio(device, runtime, engine)
        busy = (cpu_seconds(capture.pid) - before) / (time.monotonic() - started)
        # SIGTERM ends a capture as Ctrl-C does; SIGINT would not reach one started in the background by a shell.
        capture.send_signal(signal.SIGTERM)
        _, stderr = capture.communicate(timeout=600)
    finally:
        if capture.poll() is None:
            capture.send_signal(signal.SIGTERM)
            capture.wait(timeout=600)
    if capture.returncode not in (0, 1):  # 1: written, but the kernel dropped events (counted below)
        raise SystemExit(f"the capture failed ({capture.returncode}): {stderr}")
    reads = sum(record.action == "read" for record in read_trace(trace))
    lost = read_meta(trace).lost_events
    trace.unlink()
    Path(f"{trace}.json").unlink()
    return iops, ios, reads, lost, busy


def interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # a kill cleans up as Ctrl-C does


def main() -> None:
    signal.signal(signal.SIGTERM, interrupt)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runtime", default="5s", help="fio's runtime in each run (default 5s)")
    parser.add_argument("--size", default="1GiB", help="the loop device's backing file (default 1GiB)")
    parser.add_argument("--sparse", action="store_true", help="leave the backing file sparse (not written first)")
    parser.add_argument("--method", default="tracefs", choices=("tracefs", "blktrace", "auto"))
    parser.add_argument("--engine", default="libaio", choices=("libaio", "io_uring"))
    parser.add_argument("--direct-io", action="store_true", help="the loop device reads the disk, not the page cache")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: loop devices and the kernel's tracing are root-only")

    with tempfile.TemporaryDirectory(prefix="disklab-bench-capture-", dir="/var/tmp") as scratch:
        backing, device = Path(scratch) / "backing.img", None
        try:
            if args.sparse:
                subprocess.run(["truncate", "-s", args.size.replace("iB", ""), str(backing)], check=True)
            else:
                subprocess.run(["fio", "--name=fill", f"--filename={backing}", "--rw=write", "--bs=1M",
                                f"--size={args.size}", "--ioengine=psync", "--end_fsync=1", "--output=/dev/null"],
                               check=True, capture_output=True)
            device = subprocess.run(["losetup", "--find", "--show", f"--direct-io={'on' if args.direct_io else 'off'}",
                                     str(backing)], check=True, capture_output=True, text=True).stdout.strip()
            print(f"random 4 KiB reads, QD32, {args.engine}, {args.runtime} per run, on {device} over a "
                  f"{'sparse' if args.sparse else 'written'} {args.size} file in /var/tmp (read "
                  f"{'direct' if args.direct_io else 'through the page cache'}); capture --method "
                  f"{args.method}; {args.rounds} rounds of A (fio alone) then B (fio under capture); load average "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
            # Warm-up: the backing file read whole into the page cache (unless --direct-io, the loop device reads
            # through it), so that the first round does not read the disk under /var/tmp.
            subprocess.run(["fio", "--name=warm", f"--filename={device}", "--rw=read", "--bs=1M", "--direct=1",
                            "--output=/dev/null"], check=True, capture_output=True)
            ratios = []
            for n in range(1, args.rounds + 1):
                alone, _ = fio(device, args.runtime, args.engine)
                under, ios, reads, lost, busy = captured(device, args.runtime, args.engine, args.method,
                                                   Path(scratch) / "bench.trace")
                ratios.append(under / alone)
                print(f"  round {n}: alone {alone:10,.0f} IOPS  under capture {under:10,.0f} IOPS  ratio "
                      f"{under / alone:.3f}  capture's CPU {busy:.1%}  lost {lost}  trace I/Os {reads:,} vs fio's {ios:,}"
                      f"{'' if reads == ios else '  DIFFERENT'}", flush=True)
            print(f"ratio under capture / alone: min {min(ratios):.3f}  median {statistics.median(ratios):.3f}  "
                  f"max {max(ratios):.3f}; load average {os.getloadavg()[0]:.2f} at the end")
        finally:
            if device:
                subprocess.run(["losetup", "-d", device], check=False)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # cleaned up on the way out
        raise SystemExit(130) from None
