"""The planner held to the measurement: an array that was built and measured (`run --members ... --array md:...`),
predicted by the planner's own model from one of its members measured alone, figure by figure.

The member's run becomes a drive of kind "measured" (as `capacity calibrate` makes one: per direction the best IOPS
measured at the smallest block size as the rating, a block-size sweep's fitted transfer rate where there is one,
the latency of one I/O in flight as the drive's idle latency); the array's record (md's level, raid_disks and
chunk, as md reported them) becomes the layout; each of the array run's tests becomes the model's workload. The
model is the planner's (model.predict); nothing here predicts on its own. A test is predicted only where the member
was measured in the same pattern, direction and block sizes: the member's figures stand for the drive, not an
extrapolation of it.

Records in, figures out: the caller finds the runs (the store) and prints them (measured_render.py).
"""

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from disklab.capacity.bands import Band, Evidence, build_band
from disklab.capacity.calibrate import best_sequential_rate, best_time_per_size, fit_line, idle_latency
from disklab.capacity.catalogue import SMALL_BLOCK, Drive
from disklab.capacity.layout import LEVELS, Layout
from disklab.capacity.model import Ceilings, predict, workload_from_params
from disklab.store.records import RunInfo, RunRecord, StoredTest
from disklab.units import format_size

DIRECTIONS = ("read", "write")
# The measured figures already carry the member's interface; the widest one, so that none caps them again.
MEASURED_INTERFACE = "nvme-pcie5-x4"
# States the model plans: an array whose members all work. A degraded array reads the lost member's data from all
# the others, a rebuilding one shares its drives with the rebuild: no term of the model says how.
PLANNED_STATES = ("clean", "assume-clean")
# LVM's segment types as the planner's levels: a striped volume is RAID0; its raid types are md's (dm-raid).
LVM_LEVELS = {"striped": "raid0"}
# A test within this much of its prediction "holds" in the summaries (the kernel tier's check holds md to it).
HELD_PERCENT = 25.0


@dataclass(frozen=True)
class ArrayShape:
    """What the model needs of a measured array, as md reported it (else as asked)."""

    kind: str
    level: str
    members: tuple[str, ...]
    state: str
    raid_disks: int
    chunk_bytes: int | None
    copies: int = 2  # raid10: copies of each block (md's near, far or offset copies)
    layout: str | None = None  # mdadm's word, shown only


@dataclass(frozen=True)
class HeldFigure:
    """One test of the array run: measured, predicted from the member, and the error (measured / predicted - 1)."""

    seq: int  # the array run's test number, from 1
    test: str
    params: dict
    measured_iops: float
    predicted_iops: float
    limit: str  # what decides the prediction (model.LIMIT_*)
    member_iops: float | None  # the member's own figure in the same test, where it ran one

    @property
    def error_percent(self) -> float:
        return (self.measured_iops / self.predicted_iops - 1) * 100

    @property
    def held(self) -> bool:
        return abs(self.error_percent) <= HELD_PERCENT


@dataclass(frozen=True)
class HeldArray:
    """One array run against the model; `reason` says why there is no prediction at all."""

    run: RunInfo
    member_run: RunInfo | None
    layout: str | None  # the planner's words for it, e.g. "4 x member raid5 strip=64KiB"
    figures: tuple[HeldFigure, ...] = ()
    left_out: tuple[str, ...] = ()  # tests not predicted, each with its reason
    reason: str | None = None


@dataclass(frozen=True)
class HeldSeries:
    arrays: tuple[HeldArray, ...]
    band: Band  # what the user's own figures support, cross-validated across the arrays

    @property
    def figures(self) -> tuple[HeldFigure, ...]:
        return tuple(f for a in self.arrays for f in a.figures)


def array_shape(info: RunInfo) -> ArrayShape | None:
    """The array a run was made on (`run --array`), or None for a run on one device."""
    configuration = info.options.get("configuration")
    array = configuration.get("array") if isinstance(configuration, dict) else None
    if not isinstance(array, dict):
        return None
    members = tuple(array.get("members") or ())
    if array.get("kind") == "lvm":  # md's personalities under dm-raid, or dm-stripe: the same layouts
        level = str(array.get("level") or "")
        return ArrayShape(kind="lvm", level=LVM_LEVELS.get(level, level), members=members,
                          state=str(array.get("state", "clean")), raid_disks=len(members),
                          chunk_bytes=_number(array.get("stripe_size_bytes")) or None)
    md = array.get("md") if isinstance(array.get("md"), dict) else {}
    level = str(md.get("level") or array.get("level") or "")
    chunk = _number(md.get("chunk_size"))
    copies = 2
    if level == "raid10" and _number(md.get("layout")) is not None:
        number = _number(md["layout"])
        copies = max(number & 0xFF, (number >> 8) & 0xFF)  # near copies in the low byte, far or offset in the next
    return ArrayShape(kind=str(array.get("kind", "md")), level=level, members=members,
                      state=str(array.get("state", "clean")), raid_disks=_number(md.get("raid_disks")) or len(members),
                      chunk_bytes=chunk or None, copies=copies,
                      layout=(md.get("mdadm") or {}).get("Layout") if isinstance(md.get("mdadm"), dict) else None)


def _number(value) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def member_candidates(shape: ArrayShape) -> tuple[str, ...]:
    """The targets a run of one member alone may carry: the members as the array run recorded them."""
    return shape.members


def is_member_run(info: RunInfo, shape: ArrayShape, suite_name: str) -> bool:
    """A run of the same suite on one of the array's members alone, finished."""
    return (array_shape(info) is None and info.suite_name == suite_name and info.target in shape.members
            and info.status == "complete")


def member_drive(member: RunRecord) -> Drive:
    """The member as the planner's drive, from its own run (see the module's docstring)."""
    tests = _plain(member.tests)
    rated, rates, latency = {}, {}, {}
    for direction in DIRECTIONS:
        points = best_time_per_size(tests, direction)
        if not points:
            continue
        if len(points) >= 2:
            fit = fit_line(points, direction)
            rated[direction], rates[direction] = 1 / fit.time_s(SMALL_BLOCK), fit.bytes_per_s
        else:
            size, seconds = points[0]
            # One block size: a rating at it, and a rate that makes the command time 0 (time = 1 / rating there).
            rated[direction], rates[direction] = 1 / seconds, size / seconds
        latency[direction] = idle_latency(tests, direction) or _least_loaded_latency(tests, direction)
    sequential = {d: best_sequential_rate(tests, d) for d in DIRECTIONS}
    fallback = max(rates.values(), default=None) or max((r for r in sequential.values() if r), default=1.0)
    return Drive(
        name=f"member-run-{member.info.id}", description=f"{member.info.target} measured alone (run {member.info.id})",
        kind="measured", interface=MEASURED_INTERFACE, capacity_bytes=1,
        seq_read_bytes_per_s=sequential["read"] or rates.get("read", fallback),
        seq_write_bytes_per_s=sequential["write"] or rates.get("write", fallback),
        sources=(("performance", f"run {member.info.id} of {member.info.target}"),),
        rand_read_iops=rated.get("read"), rand_write_iops=rated.get("write"),
        rand_read_bytes_per_s=rates.get("read"), rand_write_bytes_per_s=rates.get("write"),
        latency_read_s=latency.get("read"), latency_write_s=latency.get("write"),
    )


def member_layout(shape: ArrayShape, drive: Drive) -> Layout | str:
    """The array as the planner's layout of the measured drive, or why the model has none for it."""
    level = LEVELS.get(shape.level)
    if shape.kind not in ("md", "lvm") or level is None or level.zfs or level.grouped:
        return f"the planner has no {shape.kind} {shape.level} layout"
    if shape.state not in PLANNED_STATES:
        return f"the model plans arrays whose members all work, not a {shape.state} one"
    if shape.level == "raid10" and shape.copies != 2:
        return f"the model's raid10 keeps two copies of each block, this one {shape.copies}"
    if shape.raid_disks < level.min_group:
        return f"{shape.raid_disks} members are fewer than the planner's {shape.level} takes ({level.min_group})"
    strip = shape.chunk_bytes or 64 * 1024
    spec = f"{shape.raid_disks} x {drive.name} {shape.level}" + (
        f" strip={format_size(strip)}" if shape.level != "raid1" else "")
    return Layout(spec=spec, count=shape.raid_disks, drive=drive, level=level, groups=1, strip_bytes=strip,
                  controller=None)


def hold_array(array: RunRecord, member: RunRecord | None) -> HeldArray:
    """Each test of the array run beside the model's prediction from the member's run."""
    shape = array_shape(array.info)
    if shape is None:
        return HeldArray(array.info, None, None, reason="not a run on an array")
    if member is None:
        return HeldArray(array.info, None, None, reason="no run of a member alone with the same suite: run it on one "
                                                        "member first, or name one (--member RUN)")
    drive = member_drive(member)
    layout = member_layout(shape, drive)
    if isinstance(layout, str):
        return HeldArray(array.info, member.info, None, reason=layout)
    member_tests = _plain(member.tests)
    figures, left_out = [], []
    for seq, label, params, measured in _measured(array.tests):
        why = _not_predicted(params, member_tests, drive)
        if why:
            left_out.append(f"{label}: {why}")
            continue
        prediction = predict(layout, workload_from_params(label, params), Ceilings(None))
        same = [iops for _, _, p, iops in _measured(member.tests) if _key(p) == _key(params)]
        figures.append(HeldFigure(seq, label, params, measured, prediction.iops, prediction.limit,
                                  statistics.fmean(same) if same else None))
    return HeldArray(array.info, member.info, layout.spec.replace(drive.name, "member"), tuple(figures),
                     tuple(left_out))


def hold_series(pairs: Sequence[tuple[RunRecord, RunRecord | None]]) -> HeldSeries:
    """Every array run with its member run; the band the figures support, each array a study of its own."""
    arrays = tuple(hold_array(array, member) for array, member in pairs)
    evidence = [Evidence(f"run {a.run.id}", "measured", f.measured_iops / f.predicted_iops)
                for a in arrays for f in a.figures]
    return HeldSeries(arrays, build_band("measured", evidence))


def _least_loaded_latency(tests: Sequence[StoredTest], direction: str) -> float | None:
    """Without a test of one I/O in flight: the mean latency of the random test with the fewest in flight (of
    those, the smallest blocks), an upper bound of the idle latency."""
    random = [t for t in tests if t.params.get("pattern") == "random" and t.params.get("direction") == direction]
    if not random:
        return None
    least = min(random, key=lambda t: (t.params.get("jobs", 1) * t.params.get("iodepth", 1), t.params["bs"]))
    return next((m.lat_mean_ns / 1e9 for m in least.metrics if m.direction == direction), None)


def _plain(tests: Sequence[StoredTest]) -> list[StoredTest]:
    return [t for t in tests if not t.params.get("bssplit") and t.metrics]


def _measured(tests: Sequence[StoredTest]) -> list[tuple[int, str, dict, float]]:
    """Per planned test: its number, label, parameters and IOPS (reads and writes together), the mean of its
    repeats."""
    by_plan: dict[int, list[StoredTest]] = {}
    for test in tests:
        if test.metrics:
            by_plan.setdefault(test.plan_index, []).append(test)
    return [(group[0].seq + 1, group[0].label, group[0].params,
             statistics.fmean(sum(m.iops for m in t.metrics if m.direction in DIRECTIONS) for t in group))
            for _, group in sorted(by_plan.items())]


def _key(params: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in params.items() if k not in ("offset", "size")))


def _not_predicted(params: dict, member_tests: Sequence[StoredTest], drive: Drive) -> str | None:
    """Why a test of the array run is not predicted from the member's run; None: it is."""
    pattern, direction = params.get("pattern"), params.get("direction")
    if pattern not in ("random", "sequential") or direction not in ("read", "write", "mixed"):
        return "the model predicts random and sequential reads and writes only"
    if params.get("bssplit") or params.get("nrfiles", 1) > 1 or params.get("filesize") or params.get("frame_size"):
        return "mixed block sizes and file sets are not predicted from a member's run"
    needed = DIRECTIONS if direction == "mixed" else (direction,)
    for wanted in needed:
        if not any(t.params.get("pattern") == pattern and t.params.get("direction") == wanted
                   and t.params.get("bs") == params.get("bs") for t in member_tests):
            return (f"the member's run has no {pattern} {wanted} test at {format_size(params['bs'])}")
    for wanted in needed:
        if (drive.rand_read_iops if wanted == "read" else drive.rand_write_iops) is None:
            return f"the member's run has no random {wanted} test to rate it by"
    return None
