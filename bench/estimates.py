"""Do the estimates hold? Each suite run with the README's short flags on a small file, a few times: its header's
estimate against the wall time of the whole command, min / median / max.

Run by hand (not part of the tests; tests/integration/test_estimates.py checks the same runs against bounds that
hold on a busy machine):

    .venv/bin/python bench/estimates.py --times 3 --target /var/tmp

The wall time is the command's, from start to exit, so it includes what the store's window leaves out (probing the
target, fio's features). The load average is printed: on a shared machine start-ups stretch and the runs with them.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from tests.integration.test_estimates import SHORT, SUITES, estimate_seconds  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--times", type=int, default=3, help="runs of each suite (default 3)")
    parser.add_argument("--target", default="/var/tmp", help="a directory for the test file (default /var/tmp)")
    parser.add_argument("suites", nargs="*", default=list(SUITES), help=f"default: {' '.join(SUITES)}")
    args = parser.parse_args()
    disklab = str(Path(sys.executable).parent / "disklab")
    print(f"{args.times} runs each with {' '.join(SHORT)}, load average {os.getloadavg()[0]:.2f} at start")
    print(f"{'suite':26} {'estimate':>9} {'wall min':>9} {'median':>9} {'max':>9} {'estimate/median':>16}")
    with tempfile.TemporaryDirectory(prefix="disklab-bench-") as scratch:
        env = {**os.environ, "DISKLAB_HOME": scratch}
        env.pop("DISKLAB_DB", None)
        for suite in args.suites:
            walls, estimate = [], None
            for _ in range(args.times):
                started = time.monotonic()
                done = subprocess.run([disklab, "run", suite, "--target", args.target, *SHORT, *SUITES.get(suite, ())],
                                      env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True)
                walls.append(time.monotonic() - started)
                estimate = estimate_seconds(done.stderr)
            median = statistics.median(walls)
            label = " ".join((suite, *SUITES.get(suite, ())))
            print(f"{label:26} {estimate:>8}s {min(walls):>8.1f}s {median:>8.1f}s {max(walls):>8.1f}s "
                  f"{estimate / median:>16.2f}", flush=True)


if __name__ == "__main__":
    main()
