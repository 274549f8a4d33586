"""`disklab run replay --trace FILE --target T`: a captured or imported trace replayed through fio on a target, stored as
a run of one test (per --repeat pass) with the replay's fidelity; --dry-run with --fio writes the job file and the
rewritten iolog beside it, for fio alone."""

from dataclasses import replace
from pathlib import Path

import click

from disklab.cli.common import open_store, stdout_console
from disklab.errors import FioError, UserError
from disklab.fio.executor import SubprocessExecutor
from disklab.fio.features import choose_engine, detect_fio
from disklab.plan.jobfile import render_jobfile, render_layout_jobfile, write_jobfiles
from disklab.run.prepare import prepare
from disklab.run.replay import (ReplaySchedule, flag_unfaithful, for_fio, iolog_folder, lay_out, replay_plan,
                                with_iolog)
from disklab.run.session import carry_out, start_run
from disklab.targets.target import remove_test_file, resolve_target
from disklab.trace.replay import parse_speed, scan_trace

# Options of `disklab run` a replay takes; any other given is refused rather than ignored.
REPLAY_OPTIONS = ("trace", "target", "new_file", "speed", "wrap", "destroy_data", "force", "keep_file", "cache_bytes",
                  "repeat", "dry_run", "fio_folder", "name", "quiet", "output_format")


def run_replay(ctx, params: dict, given: list[str], say, progress, print_plan, show_finished) -> None:
    """`given`: the other options the user set, refused here; the printing helpers are cli/run.py's."""
    if given:
        raise UserError(f"{', '.join(given)}: not for a replay, which takes --trace, --target, --new-file, --speed, "
                        "--wrap, --destroy-data, --force, --keep-file, --cache, --repeat, --dry-run, --fio and --name")
    if not params["trace"]:
        raise click.UsageError("run replay needs --trace FILE (a trace from 'disklab capture' or 'disklab trace import')")
    if not params["target"]:
        raise click.UsageError("--target is required: a directory (a test file of the trace's footprint is made "
                               "there), a file or a block device")
    if params["fio_folder"] and not params["dry_run"]:
        raise UserError("--fio writes the replay's job file and iolog instead of running it: give it with --dry-run")
    speed = parse_speed(params["speed"] or "1x")
    facts = scan_trace(Path(params["trace"]))
    target = resolve_target(params["target"], params["new_file"])
    plan = replay_plan(facts, speed, target, params["wrap"])
    if params["dry_run"]:
        plan = for_fio(plan, _fio_version())
        print_plan(plan, target, ReplaySchedule(plan, facts, params["repeat"] or 1))
        if params["fio_folder"]:
            _export(plan, facts, target, params["wrap"], Path(params["fio_folder"]))
        return
    plan, fio = prepare(for_fio(plan, _fio_version()), target, params["destroy_data"], params["force"], say)
    with iolog_folder() as folder:
        plan = with_iolog(plan, facts, target, params["wrap"], folder)
        schedule = ReplaySchedule(plan, facts, params["repeat"] or 1)  # of the plan as fio will run it
        say(f"replay of {facts.identity} ({facts.total_ios:,} I/Os over {facts.duration_us / 1e6:.2f} s) at {speed} "
            f"on {target.test_path} ({target.kind}), queue depth {plan.tests[0].iodepth}")
        try:
            lay_out(plan, target, SubprocessExecutor(fio.path))
            with open_store(ctx, write=True) as store:
                run_params = {**params, "speed": speed}
                run_id = start_run(store, plan, target, fio, schedule, run_params, params["destroy_data"],
                                   params["force"], say)
                say(f"run {run_id} started")
                # carry_out records an interrupted or failed run; a replay is not resumed (run/session.py)
                outcomes = carry_out(store, run_id, plan, target, fio, schedule, (), params["keep_file"],
                                     params["cache_bytes"], progress, say)
                flag_unfaithful(store, run_id, outcomes)
                show_finished(store, run_id, outcomes, params["output_format"])
        except BaseException:
            remove_test_file(target)  # laid out but never run; carry_out removes (or keeps) it once running
            raise

def _export(plan, facts, target, wrap: bool, folder: Path) -> None:
    """The job file and, beside it, the iolog it reads: fio alone replays the trace as disklab would."""
    folder.mkdir(parents=True, exist_ok=True)
    plan = with_iolog(plan, facts, target, wrap, folder.absolute())
    test = replace(plan.tests[0], engine=_engine(plan.tests[0].engine))
    jobfiles = [(test.label, render_jobfile(test, target.test_path, target.file_set_dir, "replay"))]
    if target.disklab_owns_file:
        jobfiles.insert(0, (f"layout {test.label}", render_layout_jobfile(test, target.test_path)))
    written = write_jobfiles(jobfiles, folder)
    stdout_console().print(f"wrote {', '.join(map(str, written))} and {test.iolog}")


def _engine(wanted: str) -> str:
    """As 'disklab export' chooses: what works here, or libaio where no fio is installed to say."""
    try:
        return choose_engine(detect_fio(), wanted)
    except FioError:
        return "libaio" if wanted == "auto" else wanted


def _fio_version() -> tuple[int, ...]:
    """This fio's version; with none installed (a dry run may export for another machine), the newest behaviour."""
    try:
        return detect_fio().version
    except FioError:
        return (99,)
