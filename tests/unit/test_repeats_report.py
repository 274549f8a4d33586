"""Runs with repeats are shown per planned test: means, 95 % intervals, and a warning for spreads too wide to trust."""

import csv
import io
import json

from disklab.analysis.stats import summarize
from disklab.report.export import to_csv, to_json, to_markdown
from disklab.report.rows import summary_rows
from disklab.report.table import run_results, spread_warning
from disklab.store.repository import Store
from tests.unit.test_precision import job
from tests.unit.test_store import new_run

PARAMS = {"pattern": "random", "bs": 4096, "iodepth": 32, "jobs": 1}


def stored(tmp_path, series: dict[str, list[float]]):
    """One planned test per label, its repeats interleaved as --repeat runs them."""
    with Store(tmp_path / "r.db") as store:
        run_id = store.create_run(new_run(options={"repeat": max(len(v) for v in series.values())}))
        seq = 0
        for attempt in range(1, max(len(v) for v in series.values()) + 1):
            for plan_index, (label, values) in enumerate(series.items()):
                if attempt <= len(values):
                    store.add_test(run_id, seq, label, PARAMS, "", "{}", "", "2026-01-01T00:00:00+00:00",
                                   job(values[attempt - 1]), plan_index=plan_index, attempt=attempt)
                    seq += 1
        store.finish_run(run_id, "complete")
        return store.get_run(run_id)


TIGHT = [50_100, 49_900, 50_050, 49_980, 50_020]  # +/- 0.2 %
NOISY = [41_000, 52_000, 38_500, 60_200, 45_100]  # +/- 23.1 %


def test_one_row_per_planned_test_with_mean_interval_and_verdict(tmp_path):
    rows = summary_rows(stored(tmp_path, {"RND4K tight": TIGHT, "RND4K noisy": NOISY}))
    assert [(r.test, r.direction, r.iops.n) for r in rows] == [("RND4K tight", "read", 5), ("RND4K noisy", "read", 5)]
    tight, noisy = rows
    assert tight.iops.mean == 50_010 and tight.iops.ci95_percent < 0.3 and not tight.too_wide
    assert round(noisy.iops.ci95_percent, 1) == 23.1 and noisy.too_wide
    assert noisy.mb_per_s.mean == 47_360 * 4096 / 1e6
    assert spread_warning(rows, {"repeat": 5}) == (
        "spread too wide to trust (95 % interval beyond +/- 10 % of the mean): RND4K noisy; use --precision or more "
        "--repeat")
    # A run that had --precision already repeated them until its budget ran out: the advice is its budget.
    after_precision = spread_warning(rows, {"precision": 2.0, "max_time": 60.0})
    assert "RND4K noisy" in after_precision and "longer --max-time" in after_precision
    assert "use --precision" not in after_precision


def test_a_run_without_repeats_looks_as_before(tmp_path):
    record = stored(tmp_path, {"a": [1000], "b": [2000]})
    (table,) = run_results(record)
    assert [c.header for c in table.columns] == ["Test", "Dir", "MB/s", "IOPS", "Mean lat µs", "p50 µs", "p99 µs",
                                                 "p99.9 µs"]
    assert "+/-" not in to_markdown(record)
    assert to_csv(record).splitlines()[0].startswith("run_id,run_name,seq,planned_test,attempt,host,test,direction")


def test_the_terminal_shows_the_interval_and_names_the_wide_test(tmp_path):
    table, warning = run_results(stored(tmp_path, {"tight": TIGHT, "noisy": NOISY}))
    assert [c.header for c in table.columns][:7] == ["Test", "Dir", "n", "MB/s", "+/-", "IOPS", "+/-"]
    assert list(table.columns[6].cells) == ["0.2 %", "23.1 % !"]
    assert warning.plain.endswith(": noisy; use --precision or more --repeat")


def test_markdown_carries_the_summary_and_csv_every_repeat_in_one_table(tmp_path):
    record = stored(tmp_path, {"tight": TIGHT, "noisy": NOISY})
    markdown = to_markdown(record)
    assert "| noisy | read | 5 | 194.0 | 23.1 % ! | 47,360 | 23.1 % ! |" in markdown
    assert "**spread too wide to trust" in markdown
    text = to_csv(record)
    assert "\n\n" not in text, "one table: a second one would break pandas.read_csv"
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 10, "every repeat its own row"
    noisy = [float(r["iops"]) for r in rows if r["test"] == "noisy"]
    assert [int(r["attempt"]) for r in rows if r["test"] == "noisy"] == [1, 2, 3, 4, 5]
    assert {r["planned_test"] for r in rows if r["test"] == "noisy"} == {"2"}
    assert noisy == NOISY and summarize(noisy).mean == 47_360, "the summary is derived from the rows alone"


def test_json_keeps_every_test_and_adds_each_planned_tests_summary(tmp_path):
    document = json.loads(to_json(stored(tmp_path, {"tight": TIGHT, "noisy": NOISY})))
    assert len(document["tests"]) == 10
    assert [(t["plan_index"], t["attempt"]) for t in document["tests"][:3]] == [(0, 1), (1, 1), (0, 2)]
    noisy = document["planned"][1]
    assert noisy["label"] == "noisy" and noisy["seqs"] == [2, 4, 6, 8, 10]
    read = noisy["summary"]["read"]
    assert read["iops"]["n"] == 5 and read["iops"]["mean"] == 47_360
    assert round(read["iops"]["stdev"], 1) == 8809.8 and round(read["iops"]["ci95_percent"], 1) == 23.1
    assert read["bw_bytes_per_s"]["mean"] == 47_360 * 4096
    assert read["bw_bytes_per_s"]["ci95_percent"] == read["iops"]["ci95_percent"] and read["too_wide"]
