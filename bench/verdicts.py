"""Does compare call noise a change, and does it find a real one? Verdicts of default runs on this machine.

Run by hand (not part of the tests), on a directory of the disk to measure (--judge HOME judges kept runs again):

    .venv/bin/python bench/verdicts.py /var/tmp/verdicts [--pairs 5] [--trials 3] [--db-pairs 1]
                                       [--variants default,repeat1,repeat3] [--variant-pairs 2]

Same configuration: `disklab run quick` twice back to back with nothing changed, then `disklab compare A B`; every
cell that reads better or worse is a false verdict (each pair of runs is one experiment). The same for the database
grid's QD1 row (database-quick's 8 KiB random read shares 0-100 % at queue depth 1; --db-pairs 0 leaves it out).

A real difference: run quick uncapped (A), then quick with every test capped by fio's rate_iops at 2/3 of the IOPS
A measured for it (B). `compare A B` must call B's IOPS and MB/s cells worse and `compare B A` better; latency cells
are reported apart, since a rate cap moves latency either way (less queueing, or idle time between I/Os).

Variants: the defaults (what a user gets), --repeat 1 (one pass: no verdict by design) and --repeat 3 (three
passes of the whole runtime each); the defaults get --pairs / --trials, the others --variant-pairs each. Every run
goes to a private store in a temporary folder, so the user's store is untouched.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

DISKLAB = str(Path(sys.executable).parent / "disklab")
CALLED = ("better", "worse")
THROUGHPUT_METRICS = ("iops", "mb_per_s")
VARIANTS = {"default": [], "repeat1": ["--repeat", "1"], "repeat3": ["--repeat", "3"]}


@dataclass
class Tally:
    """Cells of one kind of experiment: how many, and how many got each verdict."""

    cells: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)

    def add(self, verdict: str) -> None:
        self.cells += 1
        self.verdicts[verdict] = self.verdicts.get(verdict, 0) + 1

    def count(self, *verdicts: str) -> int:
        return sum(self.verdicts.get(v, 0) for v in verdicts)

    def rate(self, *verdicts: str) -> str:
        n = self.count(*verdicts)
        return f"{n}/{self.cells} ({100 * n / self.cells:.1f} %)" if self.cells else "no cells"


def disklab(env: dict, *args: str) -> str:
    done = subprocess.run([DISKLAB, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"disklab {' '.join(args)}: exit {done.returncode}: {done.stderr.strip()[-400:]}")
    return done.stdout


def run(env: dict, suite: str, target: Path, variant: list[str]) -> int:
    before = time.monotonic()
    out = disklab(env, "run", suite, "--target", str(target), "--quiet", "--format", "json", *variant)
    run_id = json.loads(out)["run"]["id"]
    print(f"  run {run_id}: {suite} {' '.join(variant) or '(defaults)'}: {time.monotonic() - before:.0f} s",
          flush=True)
    return run_id


def compare(env: dict, baseline: int, other: int) -> list[dict]:
    return json.loads(disklab(env, "compare", str(baseline), str(other), "--format", "json"))["rows"]


def tally_same(rows: list[dict], tally: Tally) -> None:
    for row in rows:
        tally.add(row["values"][1]["verdict"])


def capped_suite(env: dict, uncapped: int, folder: Path) -> Path:
    """quick with each test's rate_iops at 2/3 of what the uncapped run measured for it (the mean of its passes)."""
    shown = json.loads(disklab(env, "show", str(uncapped), "--format", "json"))
    iops: dict[str, list[float]] = {}
    params: dict[str, dict] = {}
    for test in shown["tests"]:
        iops.setdefault(test["label"], []).append(sum(m["iops"] for m in test["metrics"].values()))
        params[test["label"]] = test["params"]
    lines = ['name = "quick-capped"', 'description = "quick, each test capped at 2/3 of an uncapped run"', "",
             "[defaults]", 'runtime = "5s"', 'ramp = "1s"', 'size = "1GiB"', "direct = true", ""]
    for label, values in iops.items():
        p = params[label]
        cap = max(1, round(2 / 3 * sum(values) / len(values)))
        lines += ["[[group]]", f'name = "{label}"', f'pattern = "{p["pattern"]}"', f'bs = "{p["bs"]}"',
                  f"iodepth = {p['iodepth']}", f'direction = "{p["direction"]}"', f"rate_iops = {cap}", ""]
    path = folder / f"quick-capped-{uncapped}.toml"
    path.write_text("\n".join(lines))
    return path


def tally_real(rows: list[dict], expected: str, throughput: Tally, latency: Tally) -> None:
    """IOPS and MB/s cells count as found only with the expected verdict; a call the wrong way is its own count."""
    for row in rows:
        verdict = row["values"][1]["verdict"]
        if row["metric"] not in THROUGHPUT_METRICS:
            latency.add(verdict)
            continue
        throughput.add("found" if verdict == expected else verdict)
        if verdict != expected:
            ratio = row["values"][1]["ratio"]
            print(f"    missed: {row['test']} {row['metric']}: {verdict}" + (f" ({ratio:.2f}x)" if ratio else ""))


def database_qd1_suite(folder: Path) -> Path:
    source = Path(__file__).resolve().parent.parent / "src/disklab/suite/builtin/database-quick.toml"
    text = source.read_text().replace('name = "database-quick"', 'name = "database-qd1"')
    text = text.replace("iodepth = [1, 16, 256]", "iodepth = 1")
    path = folder / "database-qd1.toml"
    path.write_text(text)
    return path


def measure(args, env: dict, home: Path) -> list[dict]:
    """Run every experiment; each is written to home/experiments.json as it completes, for --judge to read again."""
    experiments: list[dict] = []

    def done(kind: str, variant: str, a: int, b: int) -> None:
        experiments.append({"kind": kind, "variant": variant, "a": a, "b": b})
        (home / "experiments.json").write_text(json.dumps(experiments, indent=1))

    for name in args.variants.split(","):
        options = VARIANTS[name]
        pairs = args.pairs if name == "default" else args.variant_pairs
        trials = args.trials if name == "default" else args.variant_pairs
        print(f"{name}: {pairs} same-configuration pairs of quick", flush=True)
        for _ in range(pairs):
            done("same", name, run(env, "quick", args.target, options), run(env, "quick", args.target, options))
        db_pairs = args.db_pairs if name == "default" else 0
        if db_pairs:
            print(f"{name}: {db_pairs} same-configuration pairs of the database QD1 row", flush=True)
            suite = str(database_qd1_suite(home))
            size = ["--size", args.db_size] if args.db_size else []
            for _ in range(db_pairs):
                done("db", name, run(env, suite, args.target, options + size), run(env, suite, args.target, options + size))
        print(f"{name}: {trials} trials of a real difference (rate_iops at 2/3)", flush=True)
        for _ in range(trials):
            uncapped = run(env, "quick", args.target, options)
            done("real", name, uncapped, run(env, str(capped_suite(env, uncapped, home)), args.target, options))
    return experiments


def judge(env: dict, experiments: list[dict]) -> dict[str, tuple[Tally, Tally, Tally, Tally]]:
    """Each experiment compared as a user would, with the verdicts of the code at hand."""
    results: dict[str, tuple[Tally, Tally, Tally, Tally]] = {}
    for e in experiments:
        same, db_same, throughput, latency = results.setdefault(e["variant"], (Tally(), Tally(), Tally(), Tally()))
        if e["kind"] == "real":
            tally_real(compare(env, e["a"], e["b"]), "worse", throughput, latency)
            tally_real(compare(env, e["b"], e["a"]), "better", throughput, latency)
        else:
            tally_same(compare(env, e["a"], e["b"]), same if e["kind"] == "same" else db_same)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", type=Path, nargs="?", help="a directory on the disk to measure")
    parser.add_argument("--pairs", type=int, default=5, help="same-configuration pairs of quick, defaults")
    parser.add_argument("--trials", type=int, default=3, help="uncapped/capped pairs of quick, defaults")
    parser.add_argument("--db-pairs", type=int, default=1, help="same-configuration pairs of the database QD1 row")
    parser.add_argument("--db-size", help="--size for the database row (default: the suite's 16 GiB)")
    parser.add_argument("--variants", default="default,repeat1,repeat3")
    parser.add_argument("--variant-pairs", type=int, default=2, help="pairs and trials of each other variant")
    parser.add_argument("--home", type=Path, help="keep the runs in this new DISKLAB_HOME (default: a temporary one)")
    parser.add_argument("--judge", type=Path, metavar="HOME",
                        help="measure nothing: judge the experiments kept in HOME again (after a change of verdicts)")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="disklab-verdicts-") as scratch:
        home = args.judge or args.home or Path(scratch)
        env = {**os.environ, "DISKLAB_HOME": str(home)}
        env.pop("DISKLAB_DB", None)
        if args.judge:
            experiments = json.loads((home / "experiments.json").read_text())
        else:
            if args.target is None:
                parser.error("name a target directory, or --judge HOME")
            args.target.mkdir(parents=True, exist_ok=True)
            if args.home:
                args.home.mkdir(parents=True)  # a new one: the runs of one bench, nothing else
            experiments = measure(args, env, home)
        results = judge(env, experiments)
    print(f"\nverdicts on this machine ({time.monotonic() - started:.0f} s in all; load average now "
          f"{os.getloadavg()[0]:.2f})")
    print("variant   | same config, quick: false better/worse | database QD1 row: false | real difference "
          "(IOPS, MB/s): found | latency cells: better/worse")
    for name, (same, db_same, throughput, latency) in results.items():
        print(f"{name:9} | {same.rate(*CALLED):>38} | {db_same.rate(*CALLED) if db_same.cells else 'not run':>23} | "
              f"{throughput.rate('found'):>26} | {latency.rate(*CALLED)}")
        for label, tally in (("same", same), ("db", db_same), ("real", throughput), ("latency", latency)):
            if tally.cells:
                print(f"    {label}: " + ", ".join(f"{v} {n}" for v, n in sorted(tally.verdicts.items())))


if __name__ == "__main__":
    main()
