"""Does `disklab run saturate` find the peak? Compare it with an exhaustive fio sweep of queue depth x jobs.

Run by hand (not part of the tests), on a directory of the disk to measure:

    .venv/bin/python bench/saturate_vs_sweep.py /var/tmp --size 1G --runtime 3

Both sides read 4 KiB at random with direct I/O from a file of the same size in that directory. The issue's goal:
saturate's peak within 10 % of the sweep's best.
"""

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
JOBS = (1, 2, 3, 4)


def disklab_saturate(target: Path, size: str, runtime: str, ramp: str) -> tuple[dict, float]:
    """The peak disklab found (from the store) and how long the whole saturate run took, levels included."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DISKLAB_HOME": home}
        command = [sys.executable, "-m", "disklab", "run", "saturate", "--target", str(target), "--size", size,
                   "--runtime", runtime, "--ramp", ramp]
        started = time.monotonic()
        subprocess.run(command, check=True, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        seconds = time.monotonic() - started
        with closing(sqlite3.connect(Path(home) / "results.db")) as conn:
            (value,) = conn.execute("SELECT value_json FROM run_outcomes WHERE key = 'saturation'").fetchone()
            search_steps = conn.execute("SELECT COUNT(*) FROM tests WHERE label NOT LIKE '% at %'").fetchone()[0]
    outcome = json.loads(value)
    return {**outcome["peak"], "search_steps": search_steps}, seconds


def fio_point(path: Path, size: str, iodepth: int, jobs: int, runtime: str, ramp: str) -> float:
    command = [
        "fio", "--output-format=json", "--name=sweep", f"--filename={path}", f"--size={size}", "--rw=randread",
        "--bs=4k", "--direct=1", "--ioengine=io_uring", f"--iodepth={iodepth}", f"--numjobs={jobs}", "--thread",
        "--group_reporting", "--time_based", f"--runtime={runtime}", f"--ramp_time={ramp}", "--randrepeat=0",
    ]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output[output.index("{"):])["jobs"][0]["read"]["iops"]


def sweep(target: Path, size: str, runtime: str, ramp: str) -> tuple[dict, float]:
    path = target / "saturate-vs-sweep.dat"
    try:
        subprocess.run(["fio", "--name=layout", f"--filename={path}", f"--size={size}", "--rw=write", "--bs=1M",
                        "--direct=1", "--output-format=json"], check=True, capture_output=True)
        started = time.monotonic()
        points = {(q, j): fio_point(path, size, q, j, runtime, ramp) for q in DEPTHS for j in JOBS}
        seconds = time.monotonic() - started
    finally:
        path.unlink(missing_ok=True)
    (q, j), iops = max(points.items(), key=lambda item: item[1])
    return {"iops": iops, "iodepth": q, "jobs": j, "points": points}, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--size", default="1G")
    parser.add_argument("--runtime", default="3", help="seconds per step, both sides")
    parser.add_argument("--ramp", default="1")
    args = parser.parse_args()
    found, saturate_s = disklab_saturate(args.directory, args.size, args.runtime, args.ramp)
    best, sweep_s = sweep(args.directory, args.size, args.runtime, args.ramp)
    print(f"sweep of QD {DEPTHS[0]}..{DEPTHS[-1]} x jobs {JOBS[0]}..{JOBS[-1]} ({len(best['points'])} fio runs, "
          f"{sweep_s:.0f} s):")
    for q in DEPTHS:
        print(f"  QD{q:<4}" + "".join(f"{best['points'][q, j]:>10,.0f}" for j in JOBS))
    print(f"sweep best:      {best['iops']:>10,.0f} IOPS at QD{best['iodepth']} x {best['jobs']} jobs")
    print(f"saturate peak:   {found['iops']:>10,.0f} IOPS at QD{found['iodepth']} x {found['jobs']} jobs "
          f"({found['search_steps']} search steps; whole run with load levels {saturate_s:.0f} s)")
    ratio = found["iops"] / best["iops"]
    print(f"ratio saturate / sweep best: {ratio:.3f} ({'within' if ratio >= 0.9 else 'NOT within'} 10 %)")


if __name__ == "__main__":
    main()
