"""What every chart carries inside its SVG besides its figures, filled in one place for every chart of a report.

fio-plot prints the disk, fio and the job's parameters inside its PNGs and OpenBenchmarking prints "higher is
better" on every chart: a chart copied into an article, out of the report, must still say what made its figures
(a footer line) and which way is better (beside its y axis).
"""

from collections.abc import Sequence
from dataclasses import replace

from disklab.report.html.charts import ChartSpec
from disklab.report.labels import axis_label, device_name, record_labels
from disklab.report.metrics import better
from disklab.store.records import RunInfo, RunRecord


def stamped(charts: Sequence[ChartSpec], records: Sequence[RunRecord]) -> tuple[ChartSpec, ...]:
    """The charts with their footer and their y axis' direction, unless a chart set its own."""
    return tuple(replace(chart, footer=chart.footer or footer(records, chart.tests, chart.runs),
                         y_better=chart.y_better or better(chart.y_label)) for chart in charts)


def footer(records: Sequence[RunRecord], tests: Sequence[str] = (), runs: Sequence[int] = ()) -> str:
    """'Samsung SSD 990 PRO 2 TB · ext4 · fio-3.36 libaio · bs 4KiB · QD32 · 1 job · runtime 5s · size 1GiB ·
    2026-11-26 · disklab 0.9'; for several runs each run's part is named by its label. `tests`: the labels of the
    tests drawn, whose runs alone are named; (): every test of the runs, whose parameters then show as ranges. `runs`:
    the ids of the runs a chart of one run draws; (): every run with such tests."""
    labels = record_labels(records)  # as the legends name the runs, before the runs without such tests are left out
    drawn = [(r, label) for r, label in zip(records, labels) if (not runs or r.info.id in runs)
             and (not tests or any(t.label in tests for t in r.tests))]
    runs = [f"{label}: {_run_part(r)}" if len(drawn) > 1 else _run_part(r) for r, label in drawn]
    params = [t.params for r, _ in drawn for t in r.tests if not tests or t.label in tests]
    return "; ".join(runs) + "".join(f" · {text}" for text in parameters(params))


def runs_footer(disk: str, infos: Sequence[RunInfo], params: dict) -> str:
    """A device history's chart: one disk, one test, many runs: the fio, dates and disklab versions they span."""
    fios = list(dict.fromkeys(i.tool for i in infos))
    versions = list(dict.fromkeys(f"disklab {i.disklab_version}" for i in infos))
    dates = sorted({i.started_at[:10] for i in infos})
    return " · ".join([disk, *fios, *parameters([params]), "-".join(dict.fromkeys([dates[0], dates[-1]])), *versions])


def _run_part(record: RunRecord) -> str:
    info, env = record.info, record.env
    disk = device_name(env) or (f"{device_name(env, unnamed=True)} (model not recorded)" if env.get("devices")
                                else f"{info.shown_target} (disk not recorded)")
    fs = env.get("fs_type") or ("no file system" if "fs_type" in env else "file system not recorded")
    best_of = info.options.get("best_of")
    return " · ".join([disk, fs, info.tool,
                       *([f"best of {best_of} passes"] if best_of else []),
                       info.started_at[:10], f"disklab {info.disklab_version}"])


def parameters(params: Sequence[dict]) -> list[str]:
    """Block size, queue depth, jobs, runtime and size of the tests: one value, or the range they span."""
    texts = []
    for field, one, span in _PARAMETERS:
        values = sorted({p[field] for p in params if p.get(field) is not None})
        if field == "bs":
            values += sorted({p["bssplit"] for p in params if p.get("bssplit")})
        if len(values) == 1:
            texts.append(one.format(axis_label(field, values[0])))
        elif any(isinstance(v, str) for v in values):  # a bssplit beside block sizes: no range holds both
            texts.append(f"{field} various")
        elif values:
            texts.append(span.format(*(_range_end(field, v) for v in (values[0], values[-1]))))
    return texts


def _range_end(field: str, value) -> str:
    """Counts bare in a range ('QD1-32', 'jobs 1-16'), sizes and times with their units."""
    return str(value) if field in ("iodepth", "jobs") else axis_label(field, value)


# (field, its text for one value, for a range): the key parameters fio-plot prints, as the tables write them.
_PARAMETERS = (
    ("bs", "bs {}", "bs {}-{}"), ("iodepth", "{}", "QD{}-{}"), ("jobs", "{}", "jobs {}-{}"),
    ("runtime", "runtime {}", "runtime {}-{}"), ("size", "size {}", "size {}-{}"),
)
