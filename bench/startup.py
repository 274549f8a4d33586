"""How fast do plain commands start? `disklab --version`, `runs`, `show` and `compare`, each in a fresh process.

Run by hand (not part of the tests):

    .venv/bin/python bench/startup.py --times 10

The store is a small private one: two runs imported from the test fixtures (real fio output) and a run of the
built-in suite `mixed` made here with real fio (1 s tests on a 16 MiB file), the last run, which `show` shows as
its suite's view and tables as a user sees it after `disklab run`. By default disklab starts with its modules
compiled once beforehand (as an installed disklab has them); --no-bytecode measures a checkout run with
PYTHONDONTWRITEBYTECODE, where every module is compiled again at each start. Wall and CPU time (user + system) are
printed; on a shared machine the CPU time is the steadier. The issue's goals: `runs` and `show` under 0.15 s of CPU,
every command under 0.2 s. `python -c pass` is measured too, as the floor of this machine at this moment. Another
checkout's Python (OTHER/.venv/bin/python bench/startup.py) measures that checkout's disklab with this same script.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "tests" / "fixtures" / "fio"
# Two imports of the same test (json and json+ output): runs 1 and 2, comparable.
IMPORTED = ("randread-4k-q32.json.json", "randread-4k-q32.jsonplus.json")
COMMANDS = (("--version",), ("runs",), ("show",), ("show", "1"), ("compare", "1", "2"))
# A real run of a built-in suite that has a [view]: showing it loads the suite and the plan too.
REAL_RUN = ("run", "mixed", "--runtime", "1s", "--ramp", "0s", "--pause", "0s", "--size", "16MiB")


def timed(command: list[str], env: dict) -> tuple[float, float]:
    """Wall seconds, and CPU seconds (user + system) of the process and what it waited for: the figure that holds
    when other work shares the machine, where wall time also counts waiting for a core."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    subprocess.run(command, check=True, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    wall, after = time.monotonic() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def spread(values: list[float]) -> str:
    return f"min {min(values):.3f}  median {statistics.median(values):.3f}  max {max(values):.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=10, help="starts of each command (default 10)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="start without compiled modules (as in a checkout with PYTHONDONTWRITEBYTECODE)")
    args = parser.parse_args()
    disklab = str(Path(sys.executable).parent / "disklab")

    with tempfile.TemporaryDirectory(prefix="disklab-bench-") as scratch:
        env = {**os.environ, "DISKLAB_HOME": scratch}
        env.pop("DISKLAB_DB", None)
        if args.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
        subprocess.run([disklab, "import", *(str(FIXTURES / name) for name in IMPORTED)], check=True, env=env,
                       capture_output=True)
        subprocess.run([disklab, *REAL_RUN, "--target", scratch], check=True, env=env, capture_output=True)
        print(f"{args.times} starts each, {'no' if args.no_bytecode else 'compiled'} bytecode, "
              f"load average {os.getloadavg()[0]:.2f} at start")
        rows = [("python -c pass", [sys.executable, "-c", "pass"])]
        rows += [(f"disklab {' '.join(c)}", [disklab, *c]) for c in COMMANDS]
        for _, command in rows:
            timed(command, env)  # warm-up: compiles the modules (unless --no-bytecode), fills the page cache
        for name, command in rows:
            wall, cpu = zip(*(timed(command, env) for _ in range(args.times)))
            print(f"{name:24} wall {spread(wall)} s; CPU {spread(cpu)} s")
        print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
