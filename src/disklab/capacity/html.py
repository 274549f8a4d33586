"""An ArrayPlan as the HTML report's model: the same page, tables and charts as stored runs get."""

import disklab
from disklab.capacity.model import MODEL_NOTE
from disklab.capacity.planning import ArrayPlan
from disklab.capacity.render import fact_rows, labels, notes, performance_headings, performance_rows
from disklab.capacity.validation import band_for
from disklab.report.html.charts import SWEEP_MIN_POINTS, ChartSpec, SeriesSpec, describe, log_scale, y_axis_label
from disklab.report.html.model import ReportModel, TableModel
from disklab.report.labels import axis_label
from disklab.report.metrics import better

_METRICS = (("iops", "IOPS", lambda p: p.iops), ("mb-per-s", "MB/s", lambda p: p.bw_bytes_per_s / 1e6))


def plan_report(plan: ArrayPlan, generated_at: str) -> ReportModel:
    names = labels(plan)
    facts = TableModel(f"planned arrays · {MODEL_NOTE}", ("", *names),
                       tuple((what, *texts) for what, texts in fact_rows(plan)))
    performance = TableModel(f"predicted performance · {MODEL_NOTE}", tuple(performance_headings(plan)),
                             tuple(tuple(row) for row in performance_rows(plan)), tuple(notes(plan)))
    return ReportModel(title=f"disklab capacity · {' vs '.join(names)} · {MODEL_NOTE}", generated_at=generated_at,
                       tested=facts, comparison=performance, charts=blocksize_charts(plan), runs=())


def blocksize_charts(plan: ArrayPlan) -> tuple[ChartSpec, ...]:
    """IOPS and MB/s over block size (log2 axis), one line per array, for each workload that sweeps bs; the
    caption gives each line's error band (the table's notes say how it is made)."""
    sweeps: dict[tuple, list[int]] = {}
    for i, test in enumerate(plan.tests):
        if not test.bssplit:
            key = (test.pattern, test.direction, test.rwmixread, test.iodepth, test.jobs)
            sweeps.setdefault(key, []).append(i)
    charts = []
    for n, indexes in enumerate((ix for ix in sweeps.values() if len(ix) >= SWEEP_MIN_POINTS), start=1):
        sizes = [plan.tests[i].bs for i in indexes]
        workload = describe(plan.tests[indexes[0]].params(), "bs")
        for slug, unit, value in _METRICS:
            series = tuple(SeriesSpec(a.layout.spec, tuple((float(plan.tests[i].bs), value(a.predictions[i]))
                                                           for i in indexes),
                                      ranges=tuple(band_for(a, plan.tests[i]).range(value(a.predictions[i]))
                                                   for i in indexes)) for a in plan.arrays)
            charts.append(ChartSpec(
                id=f"capacity-{slug}-{n}", kind="line", title=f"Predicted {unit} over block size · {workload}",
                caption=f"{MODEL_NOTE} · one line per array · read + write"
                + (" · MB/s = 10^6 bytes/s" if unit == "MB/s" else "") + " · shaded: each figure's error band, as "
                "the predicted-performance table prints it beside the figure; none where the table says not validated",
                note=_band_note(plan, indexes),
                x_label="block size (log2 scale)", y_label=y_axis_label(unit, series), series=series,
                x_ticks=tuple((size, axis_label("bs", size)) for size in sizes), x_log2=True, y_log=log_scale(series),
                # No run made it: the footer says what did (provenance.py's footer is a run's).
                footer=f"{MODEL_NOTE}: disklab {disklab.version()} capacity model · {' vs '.join(labels(plan))} · "
                f"{describe(plan.tests[indexes[0]].params(), 'bs')}", y_better=better(unit),
            ))
    return tuple(charts)


def _band_note(plan: ArrayPlan, indexes: list[int]) -> str:
    """What the shading is, inside the chart: each array's band over these tests ('raid10-4 -30/+45 %')."""
    texts = [f"{a.layout.spec} {' / '.join(dict.fromkeys(band_for(a, plan.tests[i]).text() for i in indexes))}"
             for a in plan.arrays]
    return "shaded: error band, where the measured figure may lie (cross-validated on published tables) · " \
        + ", ".join(texts)
