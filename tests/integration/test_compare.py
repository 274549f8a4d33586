"""`disklab compare` on runs of real fio: a crossover set by rate caps, default runs of one target within noise, no
verdict that the spread cannot support (none at all between single runs), and one job of a group never compared with
the whole group."""

import json
import signal
import subprocess
from pathlib import Path

import pytest

from disklab.analysis.verdict import REACHES_ZERO
from disklab.fio.parse import parse_fio_output
from disklab.store.records import RunInfo
from disklab.store.repository import NewRun, Store
from tests.integration.conftest import NEEDS_FIO, Disklab, table_rows

pytestmark = [pytest.mark.integration, NEEDS_FIO]

KIB = 1024
BLOCK_SIZES = (4 * KIB, 16 * KIB, 64 * KIB)
RATE_IOPS = 100
RATE = 100 * 32 * KIB  # bytes/s: 3.3 MB/s, what 100 IOPS of 32 KiB would move

SWEEP = """
name = "{name}"
description = "random reads across block sizes, capped"

[defaults]
runtime = "{runtime}"
size = "16M"

[[group]]
name = "RND"
label = "RND {{bs}}"
pattern = "random"
direction = "read"
bs = [{sizes}]
{cap}
"""


def write_suite(path: Path, name: str, cap: str, sizes=BLOCK_SIZES, runtime: str = "1s") -> Path:
    sizes_text = ", ".join(f'"{bs // KIB}k"' for bs in sizes)
    path.write_text(SWEEP.format(name=name, sizes=sizes_text, cap=cap, runtime=runtime))
    return path


BUSY = "other work ran beside this test (busy-machine)"


def busy_tests(disklab: Disklab) -> int:
    """Tests that ran beside other work: their verdicts are withheld, as they must be on a busy machine."""
    return disklab.query("SELECT COUNT(*) AS n FROM test_flags WHERE flag = 'busy-machine'")[0]["n"]


def run_suite(disklab: Disklab, suite: Path, target: Path, *options: str) -> None:
    result = disklab("run", str(suite), "--target", str(target), *options)
    assert result.returncode == 0, result.stderr


def test_compare_names_the_block_size_where_the_leader_changes(disklab: Disklab, tmp_path: Path) -> None:
    # The IOPS cap moves RATE_IOPS * bs bytes/s, the bandwidth cap RATE at every size: the first block size at which
    # the IOPS-capped run moves more is the crossover. The sizes sit 4x apart, so each side leads by 2x, far beyond
    # the noise of this disk; 3 passes of 1 s per test: a leader needs a verdict, and a verdict a measured spread.
    target = tmp_path / "target"
    target.mkdir()
    iops_capped = write_suite(tmp_path / "iops.toml", "iops-capped", f"rate_iops = {RATE_IOPS}")
    run_suite(disklab, iops_capped, target, "--repeat", "3")
    run_suite(disklab, write_suite(tmp_path / "bw.toml", "bandwidth-capped", f"rate = {RATE}"), target, "--repeat", "3")
    crossover = min(bs for bs in BLOCK_SIZES if RATE_IOPS * bs > RATE)

    result = disklab("compare", "1", "2", "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert {v["basis"] for r in document["rows"] for v in r["values"][1:]} == {"t-test"}
    found = [x for x in document["crossovers"] if x["metric"] == "mb_per_s"]
    if not found:  # a busy machine: other work beside the sizes around it, or passes it stalled, leave them without a
        # verdict (the reason says which), so no crossover is called: honest, if not what a quiet machine shows
        reasons = [r["values"][1]["reason"] for r in document["rows"] if r["values"][1]["verdict"] == "inconclusive"]
        assert reasons and all(reasons), document["rows"]
        return
    (mb,) = found
    assert (mb["parameter"], mb["value"], mb["leader"], mb["previous_leader"]) == ("bs", crossover, 1, 2)
    assert {c["parameter"] for c in document["conditions"]} == {"rate", "rate_iops"}

    table = disklab("compare", "1", "2")
    assert table.returncode == 0, table.stderr
    assert f"from {crossover // KIB}KiB on, run 1 delivers more MB/s (run 2 leads below" in table.stdout
    assert "where both runs repeated a test (t-test)" in table.stdout


def test_default_runs_of_one_target_measure_their_spread_and_are_within_noise(disklab: Disklab, tmp_path: Path) -> None:
    """Without --repeat a run measures each test in 5 interleaved passes sharing its runtime (here 5 s: 1 s each)."""
    target = tmp_path / "target"
    target.mkdir()
    suite = write_suite(tmp_path / "capped.toml", "capped", "rate_iops = 200", sizes=(4 * KIB, 64 * KIB), runtime="5s")
    defaults = {k: v for k, v in disklab.env.items() if k != "DISKLAB_REPEAT"}
    for _ in range(2):
        result = disklab("run", str(suite), "--target", str(target), "--ramp", "0", env=defaults)
        assert result.returncode == 0, result.stderr
    assert "5 interleaved passes per test, sharing its runtime (1 s measured per pass)" in result.stderr
    passes = disklab.query("SELECT plan_index, count(*) AS n FROM tests WHERE run_id = 2 GROUP BY plan_index")
    assert [(p["plan_index"], p["n"]) for p in passes] == [(0, 5), (1, 5)]

    document = json.loads(disklab("compare", "last~1", "last", "--format", "json").stdout)
    assert document["baseline"] == 1
    rows = document["rows"]
    assert {(r["test"], r["metric"]) for r in rows} >= {("RND 4KiB", "iops"), ("RND 64KiB", "mb_per_s")}
    assert all(r["values"][1]["n"] == 5 and r["values"][1]["basis"] == "t-test" for r in rows)
    # The cap holds IOPS and MB/s; latency is the disk's own and may really differ between runs.
    capped = [r for r in rows if r["metric"] in ("iops", "mb_per_s")]
    verdicts = [r["values"][1]["verdict"] for r in capped]
    assert len(capped) == 4 and not {"better", "worse"} & set(verdicts), capped
    # A pass a busy machine stalled widens its interval, and other work beside a test withholds its verdict: then
    # inconclusive, with the reason, never better or worse. On a quiet machine most figures are within noise.
    inconclusive = [r["values"][1] for r in capped if r["values"][1]["verdict"] == "inconclusive"]
    assert all(value["reason"] for value in inconclusive), capped
    assert verdicts.count("within noise") >= 2 or busy_tests(disklab) or any(
        value["ci95_percent"] > 10 for value in inconclusive), capped

    # One latency figure per name: show's mean is over every I/O of the passes and its percentiles those of the
    # passes' json+ histograms merged, as computed here from fio's own output; compare centres on the same figures.
    for run_id, index in ((1, 0), (2, 1)):
        planned = json.loads(disklab("show", str(run_id), "-f", "json").stdout)["planned"]
        for test in planned:
            outputs = [row["fio_output"] for row in disklab.query(
                "SELECT fio_output FROM tests WHERE run_id = ? AND plan_index = ?", (run_id, test["plan_index"]))]
            summary = test["summary"]["read"]
            bins: dict[float, int] = {}
            for output in outputs:
                for value, count in json.loads(output)["jobs"][0]["read"]["clat_ns"]["bins"].items():
                    bins[float(value)] = bins.get(float(value), 0) + count
            ios = sum(bins.values())
            assert summary["clat_ios"] == ios, summary
            for key, share in (("p50", 0.5), ("p99", 0.99), ("p99_9", 0.999)):
                if ios * (1 - share) < 10:  # not supported by the sample: not given
                    assert key not in summary["clat_percentiles_ns"], (key, ios)
                    continue
                running = 0
                for value, count in sorted(bins.items()):
                    running += count
                    if running >= share * ios:
                        break
                assert summary["clat_percentiles_ns"][key] == value, (key, summary)
            for metric, figure in (("lat_mean_us", summary["lat_mean_ns"] / 1e3),
                                   ("clat_p99_us", summary["clat_percentiles_ns"].get("p99", 0) / 1e3)):
                (row,) = [r for r in rows if (r["test"], r["metric"]) == (test["label"], metric)] or [None]
                if row is not None:
                    assert row["values"][index]["mean"] == pytest.approx(figure), (metric, row)

    changed = json.loads(disklab("compare", "1", "2", "--only-changed", "--format", "json").stdout)
    shown = {(r["test"], r["metric"]) for r in changed["rows"]}
    assert not shown & {(r["test"], r["metric"]) for r in capped if r["values"][1]["verdict"] == "within noise"}
    assert changed["rows_hidden_within_noise"] >= verdicts.count("within noise")


def stored_like(store: Store, info: RunInfo, options: dict, name: str | None = None) -> int:
    """A new run in the store, made where and with what `info`'s run was."""
    return store.create_run(NewRun(
        suite_name=info.suite_name, suite_source=info.suite_source, suite_text="", target=info.target,
        target_kind=info.target_kind, test_path=info.test_path, options=options,
        disklab_version=info.disklab_version, fio_version=info.fio_version, fio_engine=info.fio_engine,
        hostname=info.hostname, kernel=info.kernel, planned_tests=info.planned_tests, name=name,
    ))


def repeats_of(disklab: Disklab, run_ids: list[int]) -> int:
    """One run holding the single tests of `run_ids` as the repeats of one test: a disk whose speed swung between
    the runs' caps, which no real disk does on cue."""
    with Store(disklab.store_path) as store:
        records = [store.get_run(i) for i in run_ids]
        run_id = stored_like(store, records[0].info, {"repeat": len(records)}, name="swinging")
        for attempt, record in enumerate(records, start=1):
            (test,) = record.tests
            store.add_test(run_id, attempt - 1, test.label, test.params, test.jobfile, test.fio_output, "",
                           test.started_at, test.as_job(), plan_index=0, attempt=attempt)
        store.set_run_values("run_env", run_id, records[0].env)
        store.finish_run(run_id, "complete")
    return run_id


def iops_cell(disklab: Disklab, *args: str) -> dict:
    result = disklab("compare", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    (row,) = [r for r in json.loads(result.stdout)["rows"] if r["metric"] == "iops"]
    return row["values"][1]


def test_a_noisy_repeated_run_against_a_single_run_gets_no_verdict(disklab: Disklab, tmp_path: Path) -> None:
    # Two runs capped at 580 and 1420 IOPS are the repeats of a run whose 95 % interval is +/- 534 % (t = 12.7 at
    # one degree of freedom); the single run at 800 is 20 % below their mean, which the tolerance alone calls worse.
    target = tmp_path / "target"
    target.mkdir()
    for cap in (580, 1420, 800):
        run_suite(disklab, write_suite(tmp_path / f"{cap}.toml", f"capped-{cap}", f"rate_iops = {cap}",
                                       sizes=(4 * KIB,)), target)
    swinging = str(repeats_of(disklab, [1, 2]))

    cell = iops_cell(disklab, "3", swinging)
    assert cell["n"] == 2 and cell["ci95_percent"] > 100, cell
    # Other work beside a run (a busy machine) is named before the figures' own reason (docs/compare.md).
    assert (cell["verdict"], cell["basis"]) == ("inconclusive", "interval") and cell["reason"].endswith(REACHES_ZERO)
    assert iops_cell(disklab, swinging, "3")["verdict"] == "inconclusive", "nor with the repeats as the baseline"
    table = disklab("compare", "3", swinging)
    assert table.returncode == 0, table.stderr
    capped = {(row[2], row[-1]) for row in table_rows(table.stdout) if row[2] in ("IOPS", "MB/s")}
    assert capped == {("IOPS", "inconclusive"), ("MB/s", "inconclusive")}, table.stdout
    assert "--precision 2%" in table.stdout

    # Precise repeats under a cap of 400 are worse than 800, by their interval; two single runs get no verdict, 580 vs
    # 800 IOPS though they are: nothing measured how far one pass strays.
    run_suite(disklab, write_suite(tmp_path / "400.toml", "capped-400", "rate_iops = 400", sizes=(4 * KIB,)),
              target, "--repeat", "2")
    precise = iops_cell(disklab, "3", "last")
    assert (precise["n"], precise["basis"]) == (2, "interval"), precise
    # Worse by its interval; on a busy machine the capped passes may stray too far for the interval to tell (the
    # reason says so), or the run is flagged busy: never better or within noise.
    assert precise["verdict"] == "worse" or precise["verdict"] == "inconclusive" and (
        precise["ci95_percent"] > 10 or busy_tests(disklab) and precise["reason"].startswith(BUSY)), precise
    single = iops_cell(disklab, "3", "1")
    assert (single["verdict"], single["basis"]) == ("no verdict", "single runs") and single["ratio"] < 0.9, single
    table = disklab("compare", "3", "1")
    assert {row[-1] for row in table_rows(table.stdout)} == {"no verdict (single runs)"}, table.stdout
    assert "run both with the default passes (or --repeat 3)" in table.stdout


def test_one_job_of_a_group_is_not_compared_with_the_whole_group(disklab: Disklab, tmp_path: Path) -> None:
    # fio's own output of one job run as 2 jobs, with and without group_reporting; the split one is stored as
    # disklab's import stored it before it combined a group's jobs: a test per job entry.
    outputs = {}
    for shape, extra in (("grouped", ["--group_reporting"]), ("split", [])):
        command = ["fio", f"--name={shape}", "--rw=randread", "--bs=4k", "--size=4M", "--numjobs=2", "--runtime=1",
                   "--time_based", "--rate_iops=100", f"--directory={tmp_path}", "--output-format=json", *extra]
        outputs[shape] = tmp_path / f"{shape}.json"
        outputs[shape].write_text(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    for _ in range(2):
        assert disklab("import", str(outputs["grouped"])).returncode == 0
    data = json.loads(outputs["split"].read_text())
    assert len(data["jobs"]) == 2 and {job["groupid"] for job in data["jobs"]} == {0}
    with Store(disklab.store_path) as store:
        grouped = store.get_run(1)
        (test,) = grouped.tests
        run_id = stored_like(store, grouped.info, {"imported_from": str(outputs["split"])})
        for seq, entry in enumerate(data["jobs"]):
            output = json.dumps({"fio version": data["fio version"], "jobs": [entry]})
            (job,) = parse_fio_output(output).jobs
            store.add_test(run_id, seq, "split", test.params, "", output, "", test.started_at, job)
        store.finish_run(run_id, "complete")

    refused = disklab("compare", "1", str(run_id))
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "the figures of one of its 2 jobs" in refused.stderr

    document = json.loads(disklab("compare", "1", str(run_id), "2", "--format", "json").stdout)
    assert {r["metric"] for r in document["rows"]} >= {"iops", "mb_per_s"}
    assert all(r["values"][1]["n"] == 0 and r["values"][2]["verdict"] for r in document["rows"]), "split: no figure"
    (split,) = document["not_compared"]
    assert (split["run"], split["test"], split["one_job_of"], split["against"]) == (run_id, "split", 2, [1, 2])
    assert document["unmatched"] == {"1": [], str(run_id): [], "2": []}

    # Imported now, the split output is one test of the whole group, compared as the same workload.
    assert disklab("import", str(outputs["split"])).returncode == 0
    combined = json.loads(disklab("compare", "1", "last", "--format", "json").stdout)
    assert combined["not_compared"] == [] and combined["unmatched"] == {"1": [], str(run_id + 1): []}
    (iops,) = [r for r in combined["rows"] if r["metric"] == "iops"]
    assert iops["values"][1]["mean"] == pytest.approx(sum(job["read"]["iops"] for job in data["jobs"]))


def test_other_work_beside_a_run_withholds_the_verdict_it_would_have_made(disklab: Disklab, tmp_path: Path) -> None:
    """Two processes spinning beside the second run (this machine has 2 CPUs): its tests are flagged busy-machine, and
    its capped figures, half the first run's, are inconclusive with the reason, not worse."""
    target = tmp_path / "target"
    target.mkdir()
    run_suite(disklab, write_suite(tmp_path / "200.toml", "capped-200", "rate_iops = 200", sizes=(4 * KIB,)), target,
              "--repeat", "3")
    spin = ["python3", "-c", "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass"]
    for _ in range(2):
        disklab.children.start(spin, stop_signal=signal.SIGKILL)
    run_suite(disklab, write_suite(tmp_path / "100.toml", "capped-100", "rate_iops = 100", sizes=(4 * KIB,)), target,
              "--repeat", "3")
    flags = disklab.query("SELECT flag, message FROM test_flags JOIN tests ON tests.id = test_id WHERE run_id = 2")
    assert len(flags) == 3 and {f["flag"] for f in flags} == {"busy-machine"}, [dict(f) for f in flags]
    assert "CPUs of other processes' time" in flags[0]["message"]

    cell = iops_cell(disklab, "1", "2")
    # capped at half the first run's rate (which a busy machine may not have held either): lower, and not called worse
    assert cell["ratio"] < 0.9 and cell["verdict"] == "inconclusive", cell
    assert cell["reason"].startswith("other work ran beside this test (busy-machine)"), cell
