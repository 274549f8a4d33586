"""Does `disklab run saturate` find the peak, and how much sooner than an exhaustive fio sweep of queue depth x jobs?

Run by hand (not part of the tests), on a directory of the disk to measure:

    .venv/bin/python bench/saturate_vs_sweep.py /var/tmp --size 1G --runtime 3
    .venv/bin/python bench/saturate_vs_sweep.py /var/tmp --size 256M --runtime 1 --ramp 0   # a quick check

Both sides read 4 KiB at random with direct I/O from a file of the same size in that directory. The sweep's best of
36 noisy cells is biased upwards (the luckiest cell), so its top cells are measured again, alternately (--top cells,
--repeats passes each): the best re-measured mean is the true peak. Saturate's peak (the mean of its passes) is held
against it, and its time against the sweep's (the sweep alone, not the re-measure): the search's time (the whole run
until its peak is chosen: start-up, layout and search steps) and the whole run's, load levels included. The issue's
goal: within 3 % of the true peak, in at most 25 % of the sweep's time. With --saturate-runs N saturate runs N times
and each figure is given as min / median / max.
"""

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from datetime import datetime
from pathlib import Path

DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
JOBS = (1, 2, 3, 4)


def disklab_saturate(target: Path, size: str, runtime: str, ramp: str) -> dict:
    """The peak disklab found (from the store), its search steps, and the seconds of its search and whole run."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DISKLAB_HOME": home}
        command = [sys.executable, "-m", "disklab", "run", "saturate", "--target", str(target), "--size", size,
                   "--runtime", runtime, "--ramp", ramp]
        started = time.monotonic()
        subprocess.run(command, check=True, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        seconds = time.monotonic() - started
        with closing(sqlite3.connect(Path(home) / "results.db")) as conn:
            (value,) = conn.execute("SELECT value_json FROM run_outcomes WHERE key = 'saturation'").fetchone()
            (first_level,) = conn.execute("SELECT MIN(started_at) FROM tests WHERE label LIKE '% at %'").fetchone()
            (finished,) = conn.execute("SELECT finished_at FROM runs").fetchone()
    outcome = json.loads(value)
    # The store keeps whole seconds: the levels' span is good to about a second.
    levels_s = (datetime.fromisoformat(finished) - datetime.fromisoformat(first_level)).total_seconds()
    return {**outcome["peak"], "search_steps": len(outcome["search"]), "whole_s": seconds,
            "search_s": seconds - levels_s, "stopped": outcome.get("stopped", [])}


def fio_point(path: Path, size: str, iodepth: int, jobs: int, runtime: str, ramp: str) -> float:
    command = [
        "fio", "--output-format=json", "--name=sweep", f"--filename={path}", f"--size={size}", "--rw=randread",
        "--bs=4k", "--direct=1", "--ioengine=io_uring", f"--iodepth={iodepth}", f"--numjobs={jobs}", "--thread",
        "--group_reporting", "--time_based", f"--runtime={runtime}", f"--ramp_time={ramp}", "--randrepeat=0",
    ]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output[output.index("{"):])["jobs"][0]["read"]["iops"]


def sweep_and_remeasure(target: Path, size: str, runtime: str, ramp: str, top: int, repeats: int) -> dict:
    """Every cell once (timed), then the `top` best cells `repeats` times each, alternately, so drift spreads over
    all of them."""
    path = target / "saturate-vs-sweep.dat"
    try:
        subprocess.run(["fio", "--name=layout", f"--filename={path}", f"--size={size}", "--rw=write", "--bs=1M",
                        "--direct=1", "--output-format=json"], check=True, capture_output=True)
        started = time.monotonic()
        points = {(q, j): fio_point(path, size, q, j, runtime, ramp) for q in DEPTHS for j in JOBS}
        seconds = time.monotonic() - started
        best = sorted(points, key=points.get, reverse=True)[:top]
        again: dict[tuple[int, int], list[float]] = {cell: [] for cell in best}
        for _ in range(repeats):
            for cell in best:
                again[cell].append(fio_point(path, size, *cell, runtime, ramp))
    finally:
        path.unlink(missing_ok=True)
    return {"points": points, "seconds": seconds, "again": again}


def spread(values: list[float], fmt: str = ",.0f") -> str:
    """min / median / max, or the one value."""
    if len(values) == 1:
        return format(values[0], fmt)
    return " / ".join(format(v, fmt) for v in (min(values), statistics.median(values), max(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path)
    parser.add_argument("--size", default="1G")
    parser.add_argument("--runtime", default="3", help="seconds per step, both sides")
    parser.add_argument("--ramp", default="1")
    parser.add_argument("--top", type=int, default=4, help="the sweep's best cells measured again")
    parser.add_argument("--repeats", type=int, default=3, help="passes of each of those cells")
    parser.add_argument("--saturate-runs", type=int, default=1, help="saturate runs (min / median / max of them)")
    args = parser.parse_args()
    found = [disklab_saturate(args.directory, args.size, args.runtime, args.ramp) for _ in range(args.saturate_runs)]
    sweep = sweep_and_remeasure(args.directory, args.size, args.runtime, args.ramp, args.top, args.repeats)
    points, sweep_s = sweep["points"], sweep["seconds"]
    print(f"sweep of QD {DEPTHS[0]}..{DEPTHS[-1]} x jobs {JOBS[0]}..{JOBS[-1]} ({len(points)} fio runs, "
          f"{sweep_s:.0f} s):")
    for q in DEPTHS:
        print(f"  QD{q:<4}" + "".join(f"{points[q, j]:>10,.0f}" for j in JOBS))
    (q, j) = max(points, key=points.get)
    print(f"sweep's best cell (one pass): {points[q, j]:>10,.0f} IOPS at QD{q} x {j} jobs")
    print(f"its top {args.top} cells measured again, {args.repeats} passes each, alternately (min / median / max):")
    for (q, j), values in sweep["again"].items():
        print(f"  QD{q} x {j}: sweep {points[q, j]:,.0f}; again {spread(values)}; mean {statistics.mean(values):,.0f}")
    (tq, tj), values = max(sweep["again"].items(), key=lambda item: statistics.mean(item[1]))
    true_peak = statistics.mean(values)
    print(f"true peak (best re-measured mean): {true_peak:,.0f} IOPS at QD{tq} x {tj} jobs")
    for n, run in enumerate(found, start=1):
        print(f"saturate run {n}: peak {run['iops']:,.0f} IOPS at QD{run['iodepth']} x {run['jobs']} jobs, the mean "
              f"of {run['passes']} passes ({run['iops_min']:,.0f}-{run['iops_max']:,.0f}); {run['search_steps']} "
              f"search steps, search {run['search_s']:.0f} s, whole run with load levels {run['whole_s']:.0f} s")
        for reason in run["stopped"]:
            print(f"    stopped: {reason}")
    ratios = [run["iops"] / true_peak for run in found]
    search = [run["search_s"] / sweep_s for run in found]
    whole = [run["whole_s"] / sweep_s for run in found]
    print(f"saturate peak / true peak: {spread(ratios, '.3f')} (goal >= 0.97)")
    print(f"saturate search time / sweep time: {spread(search, '.2f')} (goal <= 0.25); "
          f"whole run with its load levels / sweep time: {spread(whole, '.2f')}")


if __name__ == "__main__":
    main()
