"""An ArrayPlan as a Rich table, Markdown, CSV or JSON; every format says it is a model, not a measurement."""

import io
import json

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from disklab.capacity.bands import TARGET_COVERAGE
from disklab.capacity.catalogue import Drive
from disklab.capacity.caveats import caveats
from disklab.capacity.cost import HOURS_PER_YEAR
from disklab.capacity.model import MODEL_NOTE, workload_from_test
from disklab.capacity.planning import ArrayPlan, PlannedArray
from disklab.capacity.validation import band_for
from disklab.analysis.compare import TestKey, match_params
from disklab.report.csv_text import CsvWriter
from disklab.report.compare import crossover_text
from disklab.units import format_size
from disklab.report.terminal import terminal_text

# Bump when the JSON export changes shape. 1: first version. 2: predictions carry error_band_percent, arrays their
# error_band, crossovers the lead and what the model's error could make up; unknown costs are null. 3: bands are
# cross-validated intervals (error_band: low/high ratios and figures, or null with the reason), predictions carry
# their caveats.
JSON_FORMAT_VERSION = 3
FORMATS = ("table", "markdown", "csv", "json")
CURRENCY = "EUR"  # the catalogue's prices


def labels(plan: ArrayPlan) -> list[str]:
    return [a.layout.spec for a in plan.arrays]


def _tb(n_bytes: float) -> str:
    """3.84 TB, 9.6 TB, 12 TB: decimal terabytes as drive makers write them."""
    return f"{n_bytes / 1e12:,.2f}".rstrip("0").rstrip(".") + " TB"


UNKNOWN = "unknown"  # a figure no source gives (a drive file without power or price): never shown as 0


def _figure(value: float | None, unit: str) -> str:
    return UNKNOWN if value is None else f"{value:,.0f} {unit}"


def _money(value: float | None) -> str:
    """None: unknown, as every cost that depends on a drive's unknown price or power."""
    return _figure(value, CURRENCY)


def fact_rows(plan: ArrayPlan) -> list[tuple[str, list[str]]]:
    """(what, one text per array): the layout, capacity, power and money."""
    years = plan.money.years

    def each(text) -> list[str]:
        return [text(a) for a in plan.arrays]

    def tolerated(a: PlannedArray) -> str:
        low, high = a.layout.failures_tolerated, a.layout.failures_tolerated_at_best
        return str(low) if low == high else f"{low} (up to {high}, each in another mirror or group)"

    def stripe(a: PlannedArray) -> str:
        return format_size(a.layout.stripe_width_bytes) if a.layout.level.parity else "-"

    def per_iops(a: PlannedArray) -> str:
        """Unknown without a price; n/a (a different case) when the headline test has no prediction."""
        known_price = a.costs.purchase is not None
        return "n/a" if known_price and a.costs.per_1000_iops is None else _money(a.costs.per_1000_iops)

    return [
        ("level", each(lambda a: a.layout.level.name + (f" in {a.layout.groups} groups" if a.layout.groups > 1 else "")
                       + f": {a.layout.level.description}")),
        ("net capacity", each(lambda a: _tb(a.layout.net_capacity_bytes))),
        ("raw capacity", each(lambda a: _tb(a.layout.raw_capacity_bytes))),
        ("drives that may fail", each(tolerated)),
        ("write penalty (small writes)", each(lambda a: str(a.layout.write_penalty))),
        ("full stripe (no read-modify-write)", each(stripe)),
        ("power under load", each(lambda a: f"{_figure(a.costs.power_w, 'W')} ({a.costs.power_source})")),
        ("energy a year", each(lambda a: _figure(a.costs.energy_kwh_per_year, "kWh"))),
        ("operating cost a year", each(lambda a: _money(a.costs.operating_per_year))),
        ("purchase", each(lambda a: _money(a.costs.purchase))),
        ("purchase per net TB", each(lambda a: _money(a.costs.per_tb))),
        ("purchase per 1,000 IOPS", each(per_iops)),
        (f"total over {years} years", each(lambda a: _money(a.costs.total))),
    ]


def performance_headings(plan: ArrayPlan) -> list[str]:
    texts = ["Workload"]
    for label in labels(plan):
        texts += [f"{label} IOPS", "MB/s", "limit"]
    return texts


def prediction_caveats(a: PlannedArray, test) -> list[str]:
    """What the figure assumes or cannot back, each a sentence (caveats.py); its band's reason when it has none."""
    found = caveats(a.layout, workload_from_test(test))
    texts = [("out of the model, no error band: " if c.out_of_model else "") + c.text for c in found]
    band = band_for(a, test)
    if not band.validated and not any(c.out_of_model for c in found):
        texts.append(f"no error band: {band.why.removeprefix('not validated: ')}")
    return texts


def caveat_numbers(plan: ArrayPlan) -> dict[str, int]:
    """Every caveat of the plan, numbered in order of appearance: the figures carry [n], the notes say what n is."""
    numbers: dict[str, int] = {}
    for test in plan.tests:
        for a in plan.arrays:
            for text in prediction_caveats(a, test):
                numbers.setdefault(text, len(numbers) + 1)
    return numbers


def performance_rows(plan: ArrayPlan) -> list[list[str]]:
    """Each figure with its band and its caveats' numbers: '80,000 -30/+45 % [1]'."""
    numbers = caveat_numbers(plan)
    rows = []
    for i, test in enumerate(plan.tests):
        texts = [test.label]
        for a in plan.arrays:
            p, band = a.predictions[i], band_for(a, test).text()
            marks = "".join(f"[{numbers[text]}]" for text in prediction_caveats(a, test))
            marks = f" {marks}" if marks else ""
            texts += [f"{p.iops:,.0f} {band}{marks}", f"{p.bw_bytes_per_s / 1e6:,.0f} {band}{marks}", p.limit]
        rows.append(texts)
    return rows


def notes(plan: ArrayPlan) -> list[str]:
    names = labels(plan)
    money = plan.money
    lines = [(
        f"{MODEL_NOTE}: per drive, an I/O costs positioning (HDD: seek and rotation, shortened by queued requests; "
        "none when a stream follows on) or a command time (SSD, never above its IOPS rating) + size / the zone's or "
        "the drive's rate; the layout turns host I/Os into drive I/Os (mirror copies, parity read-modify-write, full "
        "stripes, ZFS records); a write-back cache takes writes' wait off the host; the drives, links, the path and "
        "the workload's I/Os in flight cap the result; 'limit' names what decides. MB/s = 10^6 bytes/s"
    )]
    lines.append(
        "error band beside each figure: where the measured figure may lie, from the model's misses on the published "
        "tables disklab ships (`disklab capacity validate`), cross-validated so that each study's figures fell "
        f"inside the band built without it at least {TARGET_COVERAGE:.0%} of the time: "
        + "; ".join(_band_note(a) for a in plan.arrays)
    )
    lines += [f"[{n}] {text}" for text, n in caveat_numbers(plan).items()]
    data_sets = sorted({t.size for t in plan.tests if t.size})
    if data_sets:
        lines.append(f"data set: {', '.join(format_size(s) for s in data_sets)} (the workload's size; HDD seeks "
                     "shorten over a data set smaller than the array; a suite with its own `size` plans yours)")
    lines += [_crossover_note(plan, x, names) for x in plan.crossovers]
    for a in plan.arrays:
        link = a.ceilings.controller_bytes_per_s
        host = a.ceilings.host_bytes_per_s
        via = a.layout.via
        lines.append(
            f"{a.layout.spec}: {a.layout.describe_options()}, controller link "
            + (f"{link / 1e6:,.0f} MB/s" if link else "none") + ", host link "
            + (f"{host / 1e6:,.0f} MB/s" if host else "none")
            + (f"; {via.text} adds {via.per_io_latency_s * 1e6:,.0f} us per I/O" if via.per_io_latency_s else "")
            + (f", caps {1 / via.per_io_busy_s:,.0f} IOPS" if via.per_io_busy_s else "")
            + (f"; not charged, no published figure: {', '.join(via.unknown)}" if via.unknown else "")
            + (f"; the cache absorbs a write burst of up to {format_size(a.layout.controller.cache_bytes)} beyond "
               "what the drives take, then writes run at the sustained rate predicted" if a.layout.write_back else "")
        )
    lines.append(
        f"energy = power x {HOURS_PER_YEAR:,} h; operating cost = energy x {money.price_per_kwh:g} {CURRENCY}/kWh x "
        f"PUE {money.pue:g}; total = purchase + {money.years} years of operation; cost per 1,000 IOPS at "
        f"{plan.tests[plan.headline].label}; catalogue power is the drives' active power, enclosures not included"
    )
    return lines


def crossover_lead(plan: ArrayPlan, crossover) -> tuple[float, float | None]:
    """(the new leader's lead at the crossover, the lead the model's error could make up, None where the model is
    not validated): a lead inside the error bands is no verdict."""
    keys = [TestKey(match_params(t.params())) for t in plan.tests]
    i = next(i for i, key in enumerate(keys) if key.get(crossover.parameter) == crossover.value
             and key.without(crossover.parameter) == crossover.context)
    leader, other = (plan.arrays[n] for n in (crossover.leader, crossover.previous_leader))
    lead = leader.predictions[i].bw_bytes_per_s / other.predictions[i].bw_bytes_per_s - 1
    leading, trailing = (band_for(a, plan.tests[i]) for a in (leader, other))
    if not (leading.validated and trailing.validated):
        return lead, None
    return lead, trailing.high / leading.low - 1  # the leader at its band's low end, the other at its high end


def _crossover_note(plan: ArrayPlan, crossover, names: list[str]) -> str:
    lead, error = crossover_lead(plan, crossover)
    where = f"at {format_size(crossover.value)} the lead is {lead:.0%}"
    if error is None:
        return f"{crossover_text(crossover, names)}; {where}, and the model is not validated there"
    verdict = "beyond" if lead > error else "within"
    return f"{crossover_text(crossover, names)}; {where}, {verdict} what the model's error could make up ({error:.0%})"


def _band_note(a: PlannedArray) -> str:
    band = band_for(a)
    if not band.validated:
        return f"{a.layout.spec} {band.why}"
    return f"{a.layout.spec} {band.text()} under random I/O ({band.points} {band.kind} points from {band.studies} studies)"


def renderables(plan: ArrayPlan) -> list[RenderableType]:
    title = f"{' vs '.join(labels(plan))} · {MODEL_NOTE}"
    facts = Table(title=title, title_justify="left")
    facts.add_column("", no_wrap=True)
    for label in labels(plan):
        facts.add_column(label, justify="right")
    for what, texts in fact_rows(plan):
        facts.add_row(what, *texts)
    performance = Table(title=f"predicted performance · {MODEL_NOTE}", title_justify="left")
    for i, heading in enumerate(performance_headings(plan)):
        performance.add_column(heading, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for texts in performance_rows(plan):
        performance.add_row(*texts)
    return [facts, performance] + [Text(terminal_text(line)) for line in notes(plan)]


def to_markdown(plan: ArrayPlan) -> str:
    names = labels(plan)
    lines = [f"**{' vs '.join(names)} · {MODEL_NOTE}**", "", "| | " + " | ".join(names) + " |",
             "|---|" + "---:|" * len(names)]
    lines += [f"| {what} | " + " | ".join(texts) + " |" for what, texts in fact_rows(plan)]
    headings = performance_headings(plan)
    lines += ["", f"**predicted performance · {MODEL_NOTE}**", "", "| " + " | ".join(headings) + " |",
              "|---|" + "---:|" * (len(headings) - 1)]
    lines += ["| " + " | ".join(texts) + " |" for texts in performance_rows(plan)]
    return "\n".join(lines + [""] + [f"- {line}" for line in notes(plan)]) + "\n"


def to_csv(plan: ArrayPlan) -> str:
    """Predictions in raw units, one line per workload and array; a blank line; the facts per array."""
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.writerow(["workload", "array", "iops", "bw_bytes_per_s", "limit", "iops_low", "iops_high",
                     "band_basis", "caveats", "note"])
    for i, test in enumerate(plan.tests):
        for a in plan.arrays:
            p, band = a.predictions[i], band_for(a, test)
            low, high = band.range(p.iops) or ("", "")
            writer.writerow([test.label, a.layout.spec, p.iops, p.bw_bytes_per_s, p.limit, low, high, band.why,
                             "; ".join(prediction_caveats(a, test)), MODEL_NOTE])
    out.write("\n")
    writer.writerow(["array", "net_capacity_bytes", "failures_tolerated", "power_w", "energy_kwh_per_year",
                     "operating_per_year", "purchase", "per_tb", "per_1000_iops", "total", "years", "currency"])
    for a in plan.arrays:
        c = a.costs
        writer.writerow([a.layout.spec, a.layout.net_capacity_bytes, a.layout.failures_tolerated, c.power_w,
                         c.energy_kwh_per_year, c.operating_per_year, c.purchase, c.per_tb, c.per_1000_iops,
                         c.total, c.years, CURRENCY])  # csv writes None (unknown) as an empty cell
    return out.getvalue()


def to_json(plan: ArrayPlan) -> str:
    names = labels(plan)
    document = {
        "format": "disklab-capacity",
        "format_version": JSON_FORMAT_VERSION,
        "note": MODEL_NOTE,
        "currency": CURRENCY,
        "money": {"price_per_kwh": plan.money.price_per_kwh, "pue": plan.money.pue, "years": plan.money.years},
        "workloads": [{"label": t.label, "params": t.params()} for t in plan.tests],
        "arrays": [
            {
                "spec": a.layout.spec, "drives": a.layout.count, "drive": a.layout.drive.name,
                "level": a.layout.level.name, "groups": a.layout.groups, "strip_bytes": a.layout.strip_bytes,
                "net_capacity_bytes": a.layout.net_capacity_bytes, "raw_capacity_bytes": a.layout.raw_capacity_bytes,
                "failures_tolerated": a.layout.failures_tolerated,
                "failures_tolerated_at_best": a.layout.failures_tolerated_at_best,
                "write_penalty": a.layout.write_penalty,
                "ceilings": {"controller_bytes_per_s": a.ceilings.controller_bytes_per_s,
                             "host_bytes_per_s": a.ceilings.host_bytes_per_s},
                "costs": {"power_w": a.costs.power_w, "power_source": a.costs.power_source,
                          "energy_kwh_per_year": a.costs.energy_kwh_per_year,
                          "operating_per_year": a.costs.operating_per_year, "purchase": a.costs.purchase,
                          "per_tb": a.costs.per_tb, "per_1000_iops": a.costs.per_1000_iops,
                          "total": a.costs.total, "years": a.costs.years},
                "predictions": [{"workload": p.workload, "iops": p.iops, "bw_bytes_per_s": p.bw_bytes_per_s,
                                 "limit": p.limit, "idle_latency_s": p.idle_latency_s,
                                 "error_band": _band_json(band_for(a, test), p.iops, p.bw_bytes_per_s),
                                 "caveats": prediction_caveats(a, test)}
                                for p, test in zip(a.predictions, plan.tests)],
            }
            for a in plan.arrays
        ],
        "crossovers": [
            {"parameter": x.parameter, "value": x.value, "below": x.below, "leader": names[x.leader],
             "previous_leader": names[x.previous_leader], "text": _crossover_note(plan, x, names),
             "lead_percent": lead * 100, "error_could_make_up_percent": None if error is None else error * 100}
            for x, (lead, error) in ((x, crossover_lead(plan, x)) for x in plan.crossovers)
        ],
        "notes": notes(plan),
    }
    return json.dumps(document, indent=2) + "\n"


def _band_json(band, iops: float, bw_bytes_per_s: float) -> dict:
    """The band as ratios and as figures; low and high are null where the model has no validated band."""
    iops_range, bw_range = band.range(iops) or (None, None), band.range(bw_bytes_per_s) or (None, None)
    return {"kind": band.kind, "low": band.low, "high": band.high, "iops_low": iops_range[0],
            "iops_high": iops_range[1], "bw_bytes_per_s_low": bw_range[0], "bw_bytes_per_s_high": bw_range[1],
            "target_coverage": TARGET_COVERAGE, "cross_validated_coverage": band.coverage, "basis": band.why}


EXPORTERS = {"markdown": to_markdown, "csv": to_csv, "json": to_json}


def drive_rows(drives: list[Drive]) -> list[list[str]]:
    """The catalogue as `capacity drives` lists it."""
    rows = []
    for d in drives:
        if d.kind == "hdd":
            random = f"{d.rpm:,} rpm, seek {d.seek_read_s * 1e3:g}/{d.seek_write_s * 1e3:g} ms"
        else:
            random = f"{d.rand_read_iops:,.0f}/{d.rand_write_iops:,.0f} IOPS"
        watts = (d.power_idle_w, d.power_active_w)
        power = UNKNOWN if watts == (None, None) else "/".join(UNKNOWN if w is None else f"{w:g}" for w in watts)
        sequential = f"{d.seq_read_bytes_per_s / 1e6:,.0f}/{d.seq_write_bytes_per_s / 1e6:,.0f}"
        if d.seq_inner_bytes_per_s:
            sequential += f", inner {d.seq_inner_bytes_per_s / 1e6:,.0f}"
        endurance = ", ".join(text for text in (d.endurance_tbw and f"{d.endurance_tbw:,.0f} TBW",
                                                 d.dwpd and f"{d.dwpd:g} DWPD") if text) or "-"
        rows.append([d.name, d.kind, d.interface, _tb(d.capacity_bytes), sequential, random, power,
                     _money(d.price_eur), endurance])
    return rows


DRIVE_HEADINGS = ["Drive", "Kind", "Interface", "Capacity", "Seq MB/s r/w", "Random r/w", "W idle/active",
                  "Price", "Endurance"]
