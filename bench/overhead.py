"""What does `disklab run` cost on top of fio? One test through disklab vs fio alone on `disklab export`'s job file.

Run by hand (not part of the tests), on a directory of the disk to measure:

    .venv/bin/python bench/overhead.py /var/tmp --rounds 5 --runtime 3s --size 256MiB [--repeat 3]

Each round runs A (`disklab run` of a one-test suite, in a fresh process, the way a user starts it) then B (fio alone
on the same test's exported job file, `fio --output-format=json+ JOBFILE`), so that drift on a shared machine falls on
both alike. Both lay out a fresh test file of the same size. disklab's wall time includes everything it does around
fio (start-up, probes, environment and SMART, the store, removing its test file); fio's is fio alone, and the time
it then takes to remove the test file fio leaves behind is measured apart, so that the overhead is given both
against fio alone and against fio doing the same work (laying out, measuring and removing the file). Issue 43's
goal: at most 0.15 s per test against fio doing the same work, and disklab's IOPS within fio's own run-to-run spread.
With --repeat N, disklab runs the test N times in one run (`run --repeat N`, as its default passes do) and fio runs
N times in a row on the same file, so that the overhead per test is the run's fixed costs (start-up, environment,
SMART) shared by N tests plus what each test adds. fio's own start-up is measured beside it, since every test is
one fio start on both sides: `fio --version`, and the same job file cut to a 1 ms runtime on the laid-out file.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """name = "bench-overhead"
description = "one test: the overhead of disklab around fio"

[defaults]
runtime = "{runtime}"
ramp = "0s"
size = "{size}"
direct = true

[[group]]
name = "RND4K Q32T1 read"
label = "RND4K Q32T1 read"
pattern = "random"
bs = "4k"
iodepth = 32
direction = "read"
"""


def disklab_env(home: str, bytecode: Path | None) -> dict:
    """A private store; compiled modules cached outside the checkout, as an installed disklab has them."""
    env = {**os.environ, "DISKLAB_HOME": home}
    env.pop("DISKLAB_DB", None)
    if bytecode is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    return env


def disklab_round(suite: Path, target: Path, env: dict, repeat: int) -> tuple[float, float]:
    """Wall seconds of the whole `disklab run` and the median IOPS of the tests it stored."""
    started = time.monotonic()
    subprocess.run([str(Path(sys.executable).parent / "disklab"), "run", str(suite), "--target", str(target),
                    "--repeat", str(repeat)], check=True, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    seconds = time.monotonic() - started
    shown = subprocess.run([str(Path(sys.executable).parent / "disklab"), "show", "last", "--format", "json"],
                           check=True, env=env, capture_output=True, text=True).stdout
    return seconds, statistics.median(t["metrics"]["read"]["iops"] for t in json.loads(shown)["tests"])


def fio_round(jobfile: Path, test_file: Path, output: Path, repeat: int) -> tuple[float, float, float]:
    """Wall seconds of fio alone, `repeat` times (the test file laid out anew by the first), the median of their IOPS,
    and the seconds it then took to remove the test file (fio leaves it; disklab's wall time includes removing it)."""
    test_file.unlink(missing_ok=True)
    outputs = [output.with_name(f"{output.stem}-{i}.json") for i in range(repeat)]
    started = time.monotonic()
    for out in outputs:
        subprocess.run(["fio", "--output-format=json+", f"--output={out}", str(jobfile)], check=True,
                       stdin=subprocess.DEVNULL, capture_output=True)
    seconds = time.monotonic() - started
    test_file.unlink()
    removal = time.monotonic() - started - seconds
    iops = statistics.median(json.loads(out.read_text())["jobs"][0]["read"]["iops"] for out in outputs)
    return seconds, iops, removal


def fio_start_up(jobfile: Path, test_file: Path, output: Path, times: int) -> tuple[list[float], list[float]]:
    """Wall seconds of `fio --version`, and of the job file cut to a 1 ms runtime on its laid-out test file (fio
    starting, its clock and job thread set up, its report written): what every test costs in fio itself."""
    short = output.with_name("short.fio")
    short.write_text("".join(("runtime=1ms\n" if line.startswith("runtime=") else
                              "ramp_time=0\n" if line.startswith("ramp_time=") else line)
                             for line in jobfile.read_text().splitlines(keepends=True)))
    command = ["fio", "--output-format=json+", f"--output={output}", str(short)]
    subprocess.run(command, check=True, stdin=subprocess.DEVNULL, capture_output=True)  # lays the file out
    version, job = [], []
    try:
        for _ in range(times):
            for seconds, argv in ((version, ["fio", "--version"]), (job, command)):
                started = time.monotonic()
                subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, capture_output=True)
                seconds.append(time.monotonic() - started)
    finally:
        test_file.unlink(missing_ok=True)
    return version, job


def spread(values: list[float]) -> str:
    return f"min {min(values):.3f}  median {statistics.median(values):.3f}  max {max(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path, help="a directory on the disk to measure (a test file is made there)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runtime", default="3s", help="fio's runtime of the test (default 3s)")
    parser.add_argument("--size", default="256MiB", help="the test file (default 256MiB)")
    parser.add_argument("--repeat", type=int, default=1, help="tests per run (default 1; see above)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="start disklab without compiled modules (as in a checkout with PYTHONDONTWRITEBYTECODE)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="disklab-bench-") as scratch:
        work = Path(scratch)
        suite = work / "overhead.toml"
        suite.write_text(SUITE.format(runtime=args.runtime, size=args.size))
        env = disklab_env(str(work / "home"), None if args.no_bytecode else work / "pycache")
        exported = work / "exported"
        subprocess.run([str(Path(sys.executable).parent / "disklab"), "export", str(suite), "--fio", str(exported),
                        "--target", str(args.target)], check=True, env=env, capture_output=True)
        (jobfile,) = exported.glob("*.fio")
        test_file = Path(next(line.split("=", 1)[1] for line in jobfile.read_text().splitlines()
                              if line.startswith("filename=")))
        print(f"{args.repeat} test(s) per run, random 4 KiB reads at QD32, runtime {args.runtime}, file {args.size} "
              f"on {args.target}; {args.rounds} rounds of disklab then fio; load average {os.getloadavg()[0]:.2f}")
        disklab_round(suite, args.target, env, 1)  # warm-up: compiled modules, fio's feature cache, the page cache
        sides = {"disklab": lambda: (*disklab_round(suite, args.target, env, args.repeat), None),
                 "fio": lambda: fio_round(jobfile, test_file, work / "fio.json", args.repeat)}
        wall = {side: [] for side in sides}
        iops = {side: [] for side in sides}
        removals = []
        try:
            for n in range(1, args.rounds + 1):
                for side, run_once in sides.items():  # alternated: A B A B ...
                    seconds, figure, removal = run_once()
                    wall[side].append(seconds)
                    iops[side].append(figure)
                    if removal is not None:
                        removals.append(removal)
                    print(f"  round {n} {side:7} {seconds:6.3f} s  {figure:12,.0f} IOPS", flush=True)
        finally:
            test_file.unlink(missing_ok=True)
        fio_version, fio_job = fio_start_up(jobfile, test_file, work / "short.json", args.rounds)

    paired = [d - f for d, f in zip(wall["disklab"], wall["fio"])]
    print(f"wall s   disklab: {spread(wall['disklab'])}")
    print(f"wall s   fio:     {spread(wall['fio'])}")
    print(f"overhead per run of {args.repeat} test(s): median of paired differences {statistics.median(paired):.3f} s "
          f"(min {min(paired):.3f}, max {max(paired):.3f}); difference of medians "
          f"{statistics.median(wall['disklab']) - statistics.median(wall['fio']):.3f} s")
    print(f"  of which removing the test file, which fio alone leaves behind: about "
          f"{statistics.median(removals):.3f} s (median of removing fio's)")
    same_work = [d - f - r for d, f, r in zip(wall["disklab"], wall["fio"], removals)]
    print(f"overhead against fio alone doing the same work (fio, then its test file removed): median "
          f"{statistics.median(same_work):.3f} s (min {min(same_work):.3f}, max {max(same_work):.3f})")
    per_test = [d / args.repeat for d in same_work]
    print(f"overhead per test ({args.repeat} per run; issue 43's goal 0.15 s): {spread(per_test)} s")
    print(f"fio's own start-up, in every test on both sides: `fio --version` {spread(fio_version)} s; the job at a "
          f"1 ms runtime on its laid-out file {spread(fio_job)} s")
    fio_median = statistics.median(iops["fio"])
    print(f"IOPS     disklab: {spread(iops['disklab'])}")
    print(f"IOPS     fio:     {spread(iops['fio'])}")
    print(f"IOPS ratio disklab/fio (medians): {statistics.median(iops['disklab']) / fio_median:.3f}; fio's own "
          f"run-to-run spread: {min(iops['fio']) / fio_median:.3f} .. {max(iops['fio']) / fio_median:.3f} "
          "of its median")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
