"""Stores of valid runs with odd values, made by Hypothesis, through every command and page that reads runs.

Each run is made as `disklab run` makes it, minus fio: a suite (built-in, written by a user, a fio job file, or fio's
options on the command line) planned and split into passes, its schedule choosing every step from the results so far
(repeats, --precision, steady-state rounds, a saturation search), fio's JSON and interval logs read by disklab's own
parsers, the flags the run raises, its environment, SMART, outcomes and status stored through the store's API; or a
pgbench sweep, or a run on many hosts, stored as their sessions store them. Only the figures are odd: huge (1e15 IOPS,
2^62 bytes) and tiny (1e-9), zero, missing latency percentiles, directions without I/O, no series or long ones, a
single pass, identical passes, runs with no tests, unicode and markup in every name.

Every such store is read back by report (each run, and all together), serve's run, compare and device pages, the
exports, compare's outputs, show and publish: every part is drawn (report/parts.py's safety net is never used), every
page holds each of its runs, every JSON parses.
"""

import csv
import io
import itertools
import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from rich.console import Console

from disklab.analysis.compare import compare_runs
from disklab.analysis.contention import busy_machine
from disklab.analysis.traps import cache_traps
from disklab.cli.main import cli
from disklab.database.benchmark import OUTCOME_KEY, step_figures, store_step
from disklab.database.pgbench import StepResult, plan_steps
from disklab.database.pgbench_output import PgbenchSummary, ProgressPoint
from disklab.errors import UserError
from disklab.env.registry import DEVICE_KEYS, KEYS, device_key
from disklab.fio.logs import LOG_PREFIX, parse_logs
from disklab.fio.parse import PERCENTILES, parse_fio_output
from disklab.hosts.aggregate import HostResult, aggregate_job
from disklab.hosts.steps import SLOWEST_HOST_FLAG, slowest_line
from disklab.imports.fio_output import RW_MODES, read_fio_json, store_import as import_run
from disklab.plan.build import Overrides, Plan, build_plan, fit_to_target, resolve_engines
from disklab.plan.jobfile import log_avg_msec, render_jobfile
from disklab.plan.passes import default_passes, in_passes
from disklab.report.compare import compare_renderables, shown, to_csv as compare_csv, to_json as compare_json
from disklab.report.compare import to_markdown as compare_markdown
from disklab.report.export import to_csv, to_json, to_markdown
from disklab.report.html.model import build_report
from disklab.report.html.render import render_html
from disklab.report.parts import Parts
from disklab.run.execute import single_job
from disklab.run.prepare import schedule_for
from disklab.run.schedule import Finished
from disklab.run.session import new_run
from disklab.store.names import run_name
from disklab.store.notes import add_note
from disklab.store.repository import Store
from disklab.suite.fio_jobfile import adhoc_suite_text, jobfile_suite_text
from disklab.suite.loader import load_suite, parse_suite
from disklab.suite.model import IO_DIRECTIONS, METRICS
from disklab.system.contention import Contention
from disklab.system.cpu import CpuUse
from disklab.system.textfile import toml_string
from disklab.targets.target import Target
from disklab.web.history import device_page, history_pages, store_devices
from disklab.web.links import ServerLinks
from disklab.web.pages import render_compare_page, render_run_page
from disklab.web.publish import publish
from disklab.web.published import MANIFEST, read_manifest

# --- odd values -------------------------------------------------------------------------------------------------

MARKUP = "Größe ✓ 日本 <b>&amp;"
odd_text = st.one_of(
    st.sampled_from([MARKUP, "x", "💽 disk", "<script>alert(1)</script>", "a\tb", "\u202eevil", "Ω" * 60]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20),
)


def is_run_name(text: str) -> bool:
    """What `run --name` and `rename` take (store/names.py)."""
    try:
        return run_name(text) == text
    except ValueError:
        return False


run_names = st.one_of(st.none(), st.sampled_from([MARKUP, "old array", "{size} }{", "💽 " + MARKUP]),
                      st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs")), min_size=1,
                              max_size=30).filter(is_run_name))
HUGE = 2**62
counts = st.one_of(st.sampled_from([1, 2, 999, 2**31 - 1, 2**53 + 1, HUGE]), st.integers(1, HUGE))
# Figures from 1e-9 to 1e15, or 0. fio writes its figures with six decimals (%f), so below 1e-6 it writes 0; far
# smaller ones (1e-300, 5e-324) come only from JSON made by hand, and their ratios to 1e15 overflow a float.
figures_between = st.floats(1e-9, 1e15)
rates = st.one_of(st.sampled_from([0.0, 1e-9, 1e-3, 1.0, 4096.0, 1e9, 1e15]), figures_between)
nanoseconds = st.one_of(st.sampled_from([0.0, 1e-9, 1.0, 1e3, 1e6, 1e9, 1e15]), figures_between)
milliseconds = st.one_of(st.sampled_from([0, 1, 1000, 60_000, 2**31, 10**12]), st.integers(0, 10**12))
rarely = st.integers(0, 5).map(lambda n: n == 5)  # about one draw in six, not Hypothesis's favourite zero
percents = st.one_of(st.sampled_from([0.0, 1e-9, 100.0]), st.floats(1e-9, 100))


@dataclass(frozen=True)
class Figures:
    """One direction's figures as fio writes them in its JSON."""

    total_ios: int
    io_bytes: int
    iops: float
    bw_bytes: float
    runtime_ms: int
    lat_mean_ns: float
    clat_mean_ns: float
    clat_max_ns: float
    percentiles: tuple[float | None, ...]  # of PERCENTILES' keys in order; None: not written (fio's percentile_list)
    bins: tuple[tuple[int, int], ...]  # json+'s latency histogram, ns -> I/Os; () without json+


@st.composite
def figures(draw) -> Figures:
    total_ios = draw(counts)
    written = draw(st.lists(st.booleans(), min_size=len(PERCENTILES), max_size=len(PERCENTILES)))
    values = sorted(draw(st.lists(nanoseconds, min_size=len(PERCENTILES), max_size=len(PERCENTILES))))
    bins = ()
    if draw(st.booleans()):
        latencies = draw(st.lists(st.integers(1, 10**15), min_size=1, max_size=4, unique=True))
        share = total_ios // len(latencies)
        spread = [share] * (len(latencies) - 1) + [total_ios - share * (len(latencies) - 1)]
        bins = tuple((ns, n) for ns, n in zip(sorted(latencies), spread) if n)
    return Figures(total_ios, draw(counts), draw(rates), draw(rates), draw(milliseconds), draw(nanoseconds),
                   draw(nanoseconds), draw(nanoseconds),
                   tuple(v if w else None for v, w in zip(values, written)), bins)


@dataclass(frozen=True)
class StepFigures:
    """What fio reports of one step, whatever the test: each direction's figures (those the test does I/O in are
    used), which side of a mixed test did no I/O, the interval logs' windows and values, and other work beside it."""

    read: Figures
    write: Figures
    sync: Figures
    silent: str | None  # 'read' or 'write': the side of a mixed test fio did no I/O in
    usr_cpu: float
    sys_cpu: float
    windows: tuple[int, ...]  # logged windows (a missing one: no I/O in it); () no log lines at all
    logged: tuple[int, ...]  # each window's value, in the log's unit
    busy: Contention | None  # other work seen beside the step


@st.composite
def step_figures_(draw) -> StepFigures:
    windows = tuple(sorted(draw(st.sets(st.integers(0, 400), max_size=draw(st.sampled_from([0, 1, 3, 60]))))))
    logged = tuple(draw(st.lists(st.one_of(st.sampled_from([0, 1, HUGE]), st.integers(0, 10**9)),
                                 min_size=len(windows), max_size=len(windows))))
    busy = draw(st.one_of(st.none(), st.builds(Contention, st.floats(0.001, 1e6), st.floats(1e-9, 64),
                                               st.one_of(st.none(), rates))))
    return StepFigures(draw(figures()), draw(figures()), draw(figures()),
                       draw(st.sampled_from([None, "read", "write"])), draw(percents), draw(percents), windows, logged,
                       busy)


# --- what a run is ----------------------------------------------------------------------------------------------

# Built-in fio suites (pgbench's is made below, as its session stores it): fixed ones, and those whose schedules
# decide their steps (drawn as often as all fixed ones, for their outcomes and charts).
FIXED = ("quick", "sync", "mixed", "blocksize", "profile", "fill", "smallfiles", "video", "desktop-mix",
         "transfer-sweep", "database-quick", "database", "matrix", "iozone")
DECIDING = ("steady", "write-saturation", "overprovision", "saturate")
SIZES = st.one_of(st.sampled_from([512, 4096, 8192, 131072, 1048576, 2**30]), st.sampled_from(["4k", "64KiB", "1M",
                                                                                                "8k", "1m"]))


@st.composite
def user_suite(draw) -> str:
    """A suite file a user wrote: odd names and labels, any parameters the loader takes, maybe a view."""
    lines = [f"name = {toml_string(draw(odd_text).strip() or 'x')}", "[defaults]",
             f"runtime = {toml_string(draw(st.sampled_from(['1ms', '1s', '5s', '1h'])))}",
             f"size = {toml_string(draw(st.sampled_from(['4k', '1GiB', '1048576TiB'])))}"]
    if draw(st.booleans()):
        lines.append(f"log_interval = {toml_string(draw(st.sampled_from(['1ms', '500ms', '1s'])))}")
    if draw(st.booleans()):
        rows = draw(st.sampled_from(["group", "bs", "iodepth", "direction", "pattern"]))
        columns = draw(st.lists(st.sampled_from(["direction", "bs", "iodepth", "jobs", "rwmixread"]), max_size=2,
                                unique=True))
        values = draw(st.lists(st.sampled_from([*METRICS, "metric"]), min_size=1, max_size=3, unique=True))
        lines += ["[view]", f"rows = {json.dumps(rows)}", f"columns = {json.dumps(columns)}",
                  f"values = {json.dumps(values)}"]
    for n in range(draw(st.integers(1, 3))):
        plain = odd_text.map(lambda t: t.replace("{", "(").replace("}", ")"))  # a label's braces are its fields
        label = draw(st.one_of(st.none(), plain.map(lambda t: t + " {direction}"),
                               st.just("{bs} Q{iodepth}T{jobs} {direction} {pass}")))
        directions = draw(st.lists(st.sampled_from(["read", "write", "mixed"]), min_size=1, max_size=3, unique=True))
        lines += ["[[group]]", f"name = {toml_string(f'{draw(odd_text).strip()} {n}')}",
                  f"metric = {json.dumps(draw(st.sampled_from(METRICS)))}",
                  f"pattern = {json.dumps(draw(st.sampled_from(['random', 'sequential'])))}",
                  f"direction = {json.dumps(directions)}",
                  f"bs = {json.dumps(draw(st.lists(SIZES, min_size=1, max_size=2, unique=True)))}",
                  f"iodepth = {draw(st.sampled_from([1, 32, 65536]))}",
                  f"jobs = {draw(st.sampled_from([1, 4, 4096]))}",
                  f"rwmixread = {draw(st.sampled_from([0, 1, 50, 99, 100]))}",
                  f"sync = {json.dumps(draw(st.sampled_from(['none', 'fsync', 'fdatasync', 'dsync'])))}"]
        if label is not None:
            lines.append(f"label = {toml_string(label)}")
    return "\n".join(lines) + "\n"


# fio's options of an ad-hoc run, spelled as users give them (kept as given in the run's options).
fio_options = st.fixed_dictionaries({"rw": st.sampled_from(["read", "write", "randread", "randwrite", "rw", "randrw"])},
                                    optional={"bs": st.sampled_from(["4k", "8k", "8K", "4KiB", "1m", "512", "64kb"]),
                                              "iodepth": st.sampled_from(["1", "8", "256"]),
                                              "numjobs": st.sampled_from(["1", "4"]),
                                              "rwmixread": st.sampled_from(["0", "70", "100"])})


@st.composite
def job_file(draw) -> tuple[Path, str]:
    """A plain fio job file, its name and sections unicode."""
    sections = draw(st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
                                     min_size=1, max_size=12).map(str.strip).filter(
        lambda t: t and t != "global" and not set(t) & set("[];#$=")), min_size=1, max_size=3, unique=True))
    size = draw(st.sampled_from(["", "size=64m\n", "size=4k\n"]))  # none: the whole device or existing file
    text = f"[global]\nbs=4k\n{size}" + "".join(
        f"[{name}]\nrw={draw(st.sampled_from(['randread', 'write', 'randrw']))}\n"
        f"iodepth={draw(st.sampled_from([1, 8]))}\nruntime=1s\ntime_based\n" for name in sections)
    return Path(f"/home/u/{draw(odd_text).replace('/', '_').strip() or 'x'}.fio"), text


@dataclass(frozen=True)
class Made:
    """How the run's suite was given: its TOML and, for options disklab keeps, fio's options as given."""

    suite_text: str
    source: str
    fio_test: dict


@st.composite
def suites(draw) -> Made:
    kind = draw(st.sampled_from(["fixed", "deciding", "user", "adhoc", "jobfile"]))
    if kind in ("fixed", "deciding"):
        suite = load_suite(draw(st.sampled_from(FIXED if kind == "fixed" else DECIDING)))
        return Made(suite.text, "built-in", {})
    if kind == "user":
        return Made(draw(user_suite()), "/home/u/suite.toml", {})
    if kind == "adhoc":
        options = draw(fio_options)
        return Made(adhoc_suite_text(options)[0], "command line", options)
    path, text = draw(job_file())
    return Made(jobfile_suite_text(path, text)[0], str(path), {})


@dataclass(frozen=True)
class RunRecipe:
    """One run as `disklab run` would store it; every figure drawn from `pool` in turn."""

    made: Made
    repeat: int | None  # --repeat; None: the default passes
    best_of: int | None
    precision: float | None
    runtime: float | None  # --runtime
    hosts: tuple[str, ...]  # --hosts: a run on many fio servers
    name: str | None
    target: str
    target_kind: str
    capacity: int | None  # of a device or an existing file; None: a test file disklab makes
    hostname: str
    started_at: str
    steps: int  # the most steps stored; a schedule with more is stopped there (status), else it is complete
    status: str  # of a stopped run: interrupted, failed or running
    error: str
    pool: tuple[StepFigures, ...]
    env: dict
    smart: dict
    notes: tuple[str, ...]
    configuration: dict | None


DISKS = [("ACME NVMe 1TB", "S1"), (MARKUP, "S2"), ("", ""), ("💽 " * 20, "S" * 60)]


@st.composite
def environments(draw) -> dict:
    """The registry's keys, each of its kind or unknown (None); the disks drawn from a few, so that runs share them."""
    def value(kind):
        return draw(st.one_of(st.none(), {str: odd_text, int: st.sampled_from([0, 1, HUGE]), bool: st.booleans(),
                                          float: rates, dict: st.just({"kernel": "6.1"})}[kind]))

    if draw(rarely):
        return {}  # a run recorded by a disklab that kept no environment
    env = {name: value(key.kind) for name, key in KEYS.items() if not key.optional or draw(st.booleans())}
    names = draw(st.lists(st.sampled_from(["sda", "nvme0n1", "dm-0"]), max_size=2, unique=True))
    env["devices"] = ", ".join(names)
    for name in names:
        model, serial = draw(st.sampled_from(DISKS))
        env.update({device_key(name, field): value(key.kind) for field, key in DEVICE_KEYS.items()})
        env.update({device_key(name, "model"): model, device_key(name, "serial"): serial})
    return env


def smart_fixture(name: str) -> dict:
    return json.loads((Path(__file__).parents[1] / "fixtures" / "smart" / name).read_text())


@st.composite
def smart_reports(draw, env: dict) -> dict:
    """{disk: {phase: smartctl's JSON}} with odd counters, for some disks under the target."""
    reports = {}
    for disk in [d for d in (env.get("devices") or "").split(", ") if d]:
        kind = draw(st.sampled_from([None, "nvme", "ata"]))
        if kind is None:
            continue
        reports[disk] = {}
        for phase in draw(st.sampled_from([("before", "after"), ("before",)])):
            data = smart_fixture(f"{kind}-{phase}.real.json")
            if kind == "nvme":
                log = data["nvme_smart_health_information_log"]
                log.update({k: draw(st.sampled_from([0, 1, HUGE])) for k in log if draw(st.booleans())})
            else:
                for attribute in data["ata_smart_attributes"]["table"]:
                    attribute["raw"]["value"] = draw(st.sampled_from([0, 7, HUGE]))
            reports[disk][phase] = data
    return reports


@st.composite
def recipes(draw, made: Made | None = None) -> RunRecipe:
    """A run of `made`'s suite, or of any."""
    made = made or draw(suites())
    try:
        suite = parse_suite(made.suite_text, made.source, "suite")
    except UserError:  # a suite file the loader refuses is never run
        assume(False)
    fixed = suite.mode == "fixed"
    repeat = draw(st.sampled_from([None, 1, 2, 3, 12])) if fixed else None
    best_of = None
    if fixed and repeat is None and suite.view is not None and draw(rarely):
        best_of = draw(st.sampled_from([1, 3, 5]))
    precision = draw(st.sampled_from([None, 5.0, 1e-9])) if fixed and best_of is None else None
    runtime = draw(st.sampled_from([None, 0.001, 1.0, 86400.0]))
    target_kind = draw(st.sampled_from(["directory", "file", "device"]))
    capacity = None if target_kind == "directory" else draw(st.sampled_from([2**20, 2**40, HUGE]))
    try:
        tests = planned(suite, runtime, target_kind, capacity, repeat or 1, False).tests
    except UserError:  # a plan refused before anything is stored (a block larger than its data set)
        assume(False)
    hosts = ()
    if all(not t.file_set and not t.log_interval for t in tests) and draw(rarely):
        hosts = tuple(draw(st.lists(odd_text.map(lambda t: "h-" + t.strip()), min_size=1, max_size=3, unique=True)))
    env = draw(environments())
    configuration = None
    if suite.configurations is not None or draw(rarely):
        configuration = {"label": draw(odd_text), "file_system": {"fs": "xfs", "label": draw(odd_text),
                                                                    "device": "/dev/" + draw(odd_text)}}
        if suite.rounds is not None:
            configuration["overprovision"] = {"percent": draw(st.sampled_from([0, 7, 28, 50])), "discard": "done",
                                              "used_bytes": draw(counts), "device_bytes": HUGE}
    pool = tuple(draw(st.lists(step_figures_(), min_size=1, max_size=4)))
    return RunRecipe(
        made=made, repeat=repeat, best_of=best_of, precision=precision,
        runtime=runtime, hosts=hosts, name=draw(run_names),
        target="/mnt/" + draw(odd_text).replace("\0", ""), target_kind=target_kind, capacity=capacity,
        hostname=draw(odd_text), started_at=f"2026-01-{draw(st.integers(1, 28)):02d}T10:00:00+00:00",
        steps=draw(st.sampled_from([400, 24, 5, 1, 0, 2, 60])), status=draw(st.sampled_from(["interrupted", "failed",
                                                                                          "running"])),
        error=draw(odd_text), pool=pool, env=env, smart=draw(smart_reports(env)),
        notes=tuple(draw(st.lists(odd_text.map(str.strip).filter(bool), max_size=2))), configuration=configuration,
    )


# --- storing a run as the run session does --------------------------------------------------------------------

def fio_entry(label: str, directions: dict[str, Figures], sync: Figures | None, step: StepFigures) -> dict:
    """fio 3.x's JSON of one job (group_reporting): every data direction written, those without I/O as zeros."""
    def section(f: Figures | None) -> dict:
        if f is None:
            return {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
                    "lat_ns": {"min": 0, "max": 0, "mean": 0.0}, "clat_ns": {"min": 0, "max": 0, "mean": 0.0}}
        clat = {"min": 0, "max": f.clat_max_ns, "mean": f.clat_mean_ns}
        if any(p is not None for p in f.percentiles):
            clat["percentile"] = {key: p for key, p in zip(PERCENTILES, f.percentiles) if p is not None}
        if f.bins:
            clat["bins"] = {str(ns): n for ns, n in f.bins}
        return {"io_bytes": f.io_bytes, "io_kbytes": f.io_bytes >> 10, "bw_bytes": f.bw_bytes,
                "bw": int(f.bw_bytes) >> 10, "iops": f.iops, "runtime": f.runtime_ms, "total_ios": f.total_ios,
                "lat_ns": {"min": 0, "max": f.clat_max_ns, "mean": f.lat_mean_ns}, "clat_ns": clat}

    entry = {"jobname": label, "groupid": 0, "error": 0, "usr_cpu": step.usr_cpu, "sys_cpu": step.sys_cpu,
             **{name: section(directions.get(name)) for name in ("read", "write", "trim")}}
    if sync is not None:
        entry["sync"] = {"total_ios": sync.total_ios, "lat_ns": {"min": 0, "max": sync.clat_max_ns,
                                                                 "mean": sync.lat_mean_ns}}
    return entry


def fio_json(*entries: dict) -> str:
    return json.dumps({"fio version": "fio-3.33", "timestamp": 1767261600, "jobs": list(entries)}, indent=1)


def fio_logs(directions: list[str], step: StepFigures, interval_ms: int) -> dict[str, str]:
    """fio's interval logs of one job: a line per window, each direction's in turn."""
    numbers = {"read": 0, "write": 1}
    lines = [f"{window * interval_ms}, {value}, {numbers[d]}, 0, 0" for d in directions
             for window, value in zip(step.windows, step.logged)]
    return {f"{LOG_PREFIX}_{log}.1.log": "\n".join(lines) for log in ("iops", "bw", "lat")}


def fio_step(test, step: StepFigures) -> tuple[str, dict[str, str]]:
    """What fio writes for one test: its JSON, and its logs when the test logs."""
    doing = list(IO_DIRECTIONS[test.direction])
    if test.direction == "mixed":
        doing = [d for d in doing if d != {0: "read", 100: "write"}.get(test.rwmixread, step.silent)]
    figures_of = {"read": step.read, "write": step.write}
    sync = step.sync if test.sync in ("fsync", "fdatasync") and "write" in doing else None
    output = fio_json(fio_entry(test.label, {d: figures_of[d] for d in doing}, sync, step))
    return output, fio_logs(doing, step, log_avg_msec(test)) if test.log_interval else {}


def planned(suite, runtime: float | None, target_kind: str, capacity: int | None, repeat: int, shared: bool) -> Plan:
    """The plan as `disklab run` makes it (run/prepare.py): built, fitted to the target, engines chosen, in passes."""
    plan = fit_to_target(build_plan(suite, Overrides(runtime=runtime)), capacity, 512, target_kind == "directory")
    return in_passes(resolve_engines(plan, lambda engine: "io_uring" if engine == "auto" else engine), repeat, shared)


def store_run(store: Store, recipe: RunRecipe) -> int:
    """The run stored as run/session.py and run/execute.py store it, its schedule deciding each step."""
    made = recipe.made
    suite = parse_suite(made.suite_text, made.source, "suite")
    if suite.pgbench is not None:
        return store_pgbench_run(store, recipe, suite)
    repeat = recipe.best_of or recipe.repeat or default_passes(suite, recipe.precision)
    shared = recipe.repeat is None and recipe.best_of is None and repeat > 1
    plan = planned(suite, recipe.runtime, recipe.target_kind, recipe.capacity, repeat, shared)
    schedule = schedule_for(plan, repeat, recipe.precision)
    target = Target(recipe.target_kind, recipe.target, recipe.target + "/disklab.testfile", True, None, None)
    params = {**made.fio_test, "output_format": "table", "repeat": repeat, "passes_share_runtime": shared,
              "best_of": recipe.best_of, "precision": recipe.precision, "runtime": recipe.runtime,
              "hosts": list(recipe.hosts) or None, "name": recipe.name,
              **({"configuration": recipe.configuration, "fs": "xfs"} if recipe.configuration else {})}
    engines = ", ".join(sorted({t.engine for t in plan.tests}))
    run = new_run(suite, target, "fio-3.33", engines, params, schedule.expected_steps())
    run_id = store.create_run(replace(run, hostname=recipe.hostname, started_at=recipe.started_at))
    store_surroundings(store, run_id, recipe)
    done: list[Finished] = []
    pool = itertools.cycle(recipe.pool)
    devices = tuple(d for d in (recipe.env.get("devices") or "").split(", ") if d)
    while (step := schedule.next_step(done)) is not None:
        if len(done) == recipe.steps:
            finish_stopped(store, run_id, recipe)
            return run_id
        figures_now, test, seq = next(pool), step.test, store.next_seq(run_id)
        jobfile = render_jobfile(test, target.test_path, target.file_set_dir, suite.name)
        if recipe.hosts:
            job = store_host_steps(store, run_id, step, recipe.hosts, figures_now, jobfile)
        else:
            output, logs = fio_step(test, figures_now)
            job = single_job(parse_fio_output(output), test.label)
            series = parse_logs(logs, log_avg_msec(test)) if test.log_interval else ()
            test_id = store.add_test(run_id, seq, test.label, test.params(), jobfile, output, "", recipe.started_at,
                                     job, series=series, plan_index=step.plan_index, attempt=step.attempt)
            for flag, message in (cache_traps(test, job, recipe.env, [(f.step.test, f.job) for f in done])
                                  + busy_machine(figures_now.busy, job, devices)):
                store.add_flag(test_id, flag, message)
        done.append(Finished(step, job))
    store.set_run_values("run_outcomes", run_id, schedule.outcomes(done) if hasattr(schedule, "outcomes") else {})
    store.finish_run(run_id, "complete")
    return run_id


def host_share(step: StepFigures, hosts: int, n: int) -> StepFigures:
    """Host n's figures of a step on `hosts` hosts: IOPS n times the drawn ones, and a share of the drawn counts, so
    that summed over the hosts they still fit the store (2^63 - 1, fio's own limit too)."""
    def share(f: Figures) -> Figures:
        return replace(f, total_ios=max(1, f.total_ios // hosts), io_bytes=f.io_bytes // hosts, iops=f.iops * n)

    return replace(step, read=share(step.read), write=share(step.write), sync=share(step.sync))


def store_host_steps(store: Store, run_id: int, step, hosts: tuple[str, ...], figures_now: StepFigures,
                     jobfile: str):
    """A step on many hosts as hosts/steps.py stores it: each host's test, then their aggregate with its flag."""
    test = step.test
    outputs = {host: fio_step(test, host_share(figures_now, len(hosts), n))[0] for n, host in enumerate(hosts, start=1)}
    results = tuple(HostResult(host, single_job(parse_fio_output(outputs[host]), test.label)) for host in hosts)
    job = aggregate_job(test.label, results, {})
    for result in results:
        store.add_test(run_id, store.next_seq(run_id), f"{test.label} @ {result.host}", test.params(), jobfile,
                       outputs[result.host], "", "2026-01-01T00:00:00+00:00", result.job, plan_index=step.plan_index,
                       attempt=step.attempt, host=result.host)
    test_id = store.add_test(run_id, store.next_seq(run_id), test.label, test.params(), jobfile,
                             json.dumps({"client_stats": []}), "", "2026-01-01T00:00:00+00:00", job,
                             plan_index=step.plan_index, attempt=step.attempt)
    store.add_flag(test_id, SLOWEST_HOST_FLAG, slowest_line(results))
    return job


def store_surroundings(store: Store, run_id: int, recipe: RunRecipe) -> None:
    """Environment, SMART and notes, as recorded() and `disklab note` keep them."""
    store.set_run_values("run_env", run_id, recipe.env)
    for disk, phases in recipe.smart.items():
        for phase, data in phases.items():
            store.add_smart(run_id, disk, phase, data)
    for text in recipe.notes:
        add_note(store, run_id, text)


def finish_stopped(store: Store, run_id: int, recipe: RunRecipe) -> None:
    """A run stopped before its schedule ended: interrupted, failed with its error, or still running elsewhere."""
    if recipe.status == "interrupted":
        store.finish_run(run_id, "interrupted", "interrupted by the user or a signal")
    elif recipe.status == "failed":
        store.finish_run(run_id, "failed", recipe.error)


def store_pgbench_run(store: Store, recipe: RunRecipe, suite) -> int:
    """A pgbench sweep as database/session.py and benchmark.py store it: each step's TPS and latency, its progress
    as series, and the outcome's figures per step."""
    settings = suite.pgbench
    steps = plan_steps(settings, cpus=2)
    target = Target(recipe.target_kind, recipe.target, recipe.target, False, None, None)
    run = new_run(suite, target, "PostgreSQL 16.4", "pgbench", {"name": recipe.name, "output_format": "table"},
                  len(steps))
    run_id = store.create_run(replace(run, hostname=recipe.hostname, started_at=recipe.started_at))
    store_surroundings(store, run_id, recipe)
    outcome = {"summary": f"pgbench: PostgreSQL 16.4, scale {settings.scale}", "steps": {}}
    pool = itertools.cycle(recipe.pool)
    for seq, step in enumerate(steps):
        if seq == recipe.steps:
            finish_stopped(store, run_id, recipe)
            return run_id
        f = next(pool)
        seconds = max(f.read.runtime_ms, 1) / 1000  # pgbench's TPS is its transactions over the time they took
        summary = PgbenchSummary(step.clients, step.threads, f.read.total_ios, 0, f.read.lat_mean_ns / 1e6, None,
                                 f.read.clat_mean_ns / 1e6, f.read.total_ios / seconds)
        progress = tuple(ProgressPoint(window + 1.0, value, f.read.lat_mean_ns / 1e6, 0)
                         for window, value in zip(f.windows, f.logged))
        result = StepResult(step, "pgbench -c 1", recipe.started_at, "", "", summary, progress,
                            {p: v for p, v in zip(PERCENTILES.values(), f.read.percentiles) if v is not None},
                            f.read.clat_max_ns, CpuUse(f.usr_cpu, f.sys_cpu, 0.0))
        store_step(store, run_id, seq, result)
        outcome["steps"][str(step.clients)] = step_figures(result)
        store.set_run_values("run_outcomes", run_id, {OUTCOME_KEY: outcome})
    store.finish_run(run_id, "complete")
    return run_id


@dataclass(frozen=True)
class ImportRecipe:
    """fio's JSON output made elsewhere, imported: its jobs (name, rw, fio's error number), fio's lines before it."""

    jobs: tuple[tuple[str, str, int], ...]
    said: str  # what fio printed before its JSON: nothing, or the signal that stopped it
    name: str | None
    pool: tuple[StepFigures, ...]


imports = st.builds(ImportRecipe, st.lists(st.tuples(odd_text, st.sampled_from(
    ["read", "randwrite", "randrw", "trim", "randtrim", "trimwrite"]), st.sampled_from([0, 0, 5, 28])),
    min_size=1, max_size=3, unique_by=lambda job: job[0]).map(tuple),
    st.sampled_from(["", "fio: terminating on signal 2\n", "fio: pid=1234, got signal=9\n"]), run_names,
    st.lists(step_figures_(), min_size=1, max_size=2).map(tuple))


def store_imported(store: Store, recipe: ImportRecipe, folder: Path) -> int | None:
    """The run `disklab import` stores of the document; None where import refuses it (then nothing is stored)."""
    entries = []
    for (name, rw, error), step in zip(recipe.jobs, itertools.cycle(recipe.pool)):
        direction = RW_MODES[rw][1]
        doing = {"read": step.read, "write": step.write, "trim": step.read}
        entry = fio_entry(name, {d: doing[d] for d in IO_DIRECTIONS[direction]}, None, step)
        entries.append({**entry, "error": error, "job options": {"rw": rw, "bs": "4k", "iodepth": "8",
                                                                 "runtime": "1", "time_based": "1"}})
    path = folder / f"fio-{len(list(folder.iterdir()))}.json"
    path.write_text(recipe.said + fio_json(*entries))
    try:
        imported = read_fio_json(path)
    except UserError:
        return None
    return import_run(store, imported, recipe.name)


pgbench_recipes = recipes().map(lambda r: replace(r, made=Made(load_suite("pgbench").text, "built-in", {})))
any_recipe = st.integers(0, 9).flatmap(lambda n: pgbench_recipes if n == 9 else imports if n == 8 else recipes())
# Runs of one suite half the time, so that comparisons and device histories have tests in common to judge.
stores = st.one_of(st.integers(1, 4).flatmap(lambda n: st.lists(any_recipe, min_size=n, max_size=n)),
                   st.tuples(suites(), st.integers(2, 4)).flatmap(lambda made_n: st.lists(
                       recipes(made_n[0]), min_size=made_n[1], max_size=made_n[1])))


def store_all(store: Store, made: list, folder: Path) -> list[int]:
    """Each run of the example stored, as `disklab run` or `disklab import` stores it; the ids of those stored."""
    ids = [store_imported(store, recipe, folder) if isinstance(recipe, ImportRecipe) else store_run(store, recipe)
           for recipe in made]
    return [run_id for run_id in ids if run_id is not None]


# --- reading it back through every command and page ----------------------------------------------------------------

def assert_drawn(parts: Parts, what) -> None:
    assert not parts.undrawn, (what, [str(u) for u in parts.undrawn])


def csv_rows(text: str) -> list[list[str]]:
    """The rows a CSV reader gets back, each as long as the header: no field's text split a row."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert all(len(row) == len(rows[0]) for row in rows), text
    return rows


def check_reports(records) -> None:
    """report: each run alone and all together, every part drawn and each run's section there."""
    for chosen in [[record] for record in records] + ([records] if len(records) > 1 else []):
        parts = Parts()
        html = render_html(build_report(chosen, generated_at="2026-01-01T00:00:00+00:00"), parts)
        assert_drawn(parts, ("report", [r.info.id for r in chosen]))
        for record in chosen:
            assert f'id="run-{record.info.id}"' in html


def check_pages(store: Store, records) -> None:
    """serve's run pages (a row and downloads for every test), the comparison of all runs, and each device's
    history, page by page."""
    links = ServerLinks()
    for record in records:
        parts = Parts()
        html = render_run_page(record, store.smart(record.info.id), links, "2026-01-01T00:00:00+00:00", parts)
        assert_drawn(parts, ("run page", record.info.id))
        assert all(f'data-test-id="{test.id}"' in html for test in record.tests)
    if len(records) > 1:
        parts = Parts()
        render_compare_page(records, links, "2026-01-01T00:00:00+00:00", parts)
        assert_drawn(parts, "compare page")
    for device in store_devices(store):
        for page in range(1, history_pages(device) + 1):
            parts = Parts()
            device_page(store, device.key, links, page, parts)
            assert_drawn(parts, ("device page", device.label, page))


def check_exports(records) -> None:
    """show -f json|csv|markdown, as export's figures too: every part there, every test in each."""
    for record in records:
        for flat in (False, True):
            parts = Parts()
            document = json.loads(to_json(record, flat, parts))
            assert "undrawn" not in document and document["run"]["id"] == record.info.id
            assert [test["label"] for test in document["tests"]] == [test.label for test in record.tests]
            rows = csv_rows(to_csv(record, flat, parts))
            if "sweep" not in document:  # pgbench's CSV is its sweep
                assert len(rows) - 1 == sum(len(test.metrics) for test in record.tests)
            to_markdown(record, flat, parts)
            assert_drawn(parts, ("exports", record.info.id))


def check_comparisons(records) -> None:
    """compare of every pair (either way round) and of all: the table, JSON, CSV and Markdown, a row each."""
    console = Console(file=io.StringIO(), width=200)
    pairs = list(itertools.permutations(records, 2)) + ([tuple(records)] if len(records) > 2 else [])
    for chosen in pairs:
        comparison = compare_runs(list(chosen))
        for view in (shown(comparison, only_changed=False), shown(comparison, only_changed=True, metrics=["iops"])):
            for renderable in compare_renderables(view):
                console.print(renderable)
            assert len(json.loads(compare_json(view))["rows"]) == len(view.rows)
            assert len(csv_rows(compare_csv(view))) - 1 == len(view.rows)
            compare_markdown(view)


def check_commands(location: Path, records) -> None:
    """The commands as a user types them: show (the tables, the environment, the series, the job files, each host),
    runs and compare; each exits 0 and leaves nothing out."""
    runner = CliRunner()
    ids = [str(record.info.id) for record in records]
    commands = [["runs"], ["runs", "-f", "csv"], ["compare", *ids[:2]]] if len(ids) > 1 else [["runs"]]
    for record in records:
        shows = [[], ["--env"], ["--series"], ["--jobfile"]]
        if "hosts" in record.info.options:
            shows.append(["--per-host"])
        commands += [["show", str(record.info.id), *extra] for extra in shows]
    for command in commands:
        result = runner.invoke(cli, ["--store", str(location), *command])
        refused = command[0] == "compare" and result.exit_code == UserError.exit_code  # nothing in common: one line
        assert result.exit_code == 0 or refused and result.output.count("\n") == 1, (command, result.output)
        assert "could not be drawn" not in result.output, (command, result.output)


def check_publish(store: Store, folder: Path, records) -> None:
    """publish: every run, device and comparison drawn, every page and download written."""
    published = publish(store, folder)
    assert published.problems == ()
    assert (published.runs, published.devices) == (len(records), len(store_devices(store)))
    written = read_manifest(json.loads((folder / MANIFEST).read_text()), False).files()
    assert all((folder / name).is_file() for name in written)
    for record in records:
        assert f"runs/{record.info.id}.html" in written
        assert {f"runs/{record.info.id}/tests/{test.id}/fio.json" for test in record.tests} <= set(written)


FAST = settings(max_examples=50, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture,  # each example makes its own store under tmp_path
    HealthCheck.too_slow, HealthCheck.data_too_large,  # a store of four runs is a lot of drawn data, by design
])
examples = itertools.count()


def read_back(location: Path | str, tmp_path: Path, made: list) -> None:
    """The example's runs stored at `location`, then read back through every reader."""
    folder = tmp_path / f"example-{next(examples)}"
    folder.mkdir()
    with Store(location) as store:
        records = [store.get_run(run_id) for run_id in store_all(store, made, folder)]
        check_reports(records)
        check_pages(store, records)
        check_exports(records)
        check_comparisons(records)
        check_publish(store, folder / "site", records)
    check_commands(location, records)


@FAST
@given(made=stores)
def test_every_command_and_page_draws_every_part_of_stores_of_odd_valid_runs(tmp_path, made):
    read_back(tmp_path / f"results-{next(examples)}.db", tmp_path, made)


@pytest.mark.postgresql
@settings(FAST, max_examples=12)
@given(made=stores)
def test_a_shared_postgresql_store_of_them_reads_back_alike(postgres_server, tmp_path, made):
    """A few examples on PostgreSQL too (a new database each), whose store answers some reads in its own SQL."""
    assume("\\x00" not in repr(made))  # PostgreSQL keeps no NUL in text: such a run is refused in one line there
    database = postgres_server.create_database()
    try:
        read_back(postgres_server.url(database), tmp_path, made)
    finally:
        postgres_server.drop_database(database)
