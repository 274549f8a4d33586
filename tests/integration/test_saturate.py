"""A saturation search on real fio (a 16 MiB file, 0.3 s steps): every stored step is the one the search's rules ask
for given the figures before it, the peak is the mean of its setting's stored passes (as `show` and the report's chart
say), and the load levels and the knee stand on the stored steps."""

import json
import math
from pathlib import Path

import pytest

from disklab.analysis.peak_search import PeakSearch
from disklab.analysis.saturation import Level, knee
from disklab.suite.settings import SaturationSettings
from tests.integration.conftest import NEEDS_FIO, Disklab
from tests.integration.test_method_charts import NS, SATURATE, run_and_report
from tests.unit.test_saturation import probe

pytestmark = [pytest.mark.integration, NEEDS_FIO]

# The chart test's small saturate suite, searching up to QD16 and 2 jobs: a few depths, jobs, repeats.
SUITE = SATURATE.replace("max_iodepth = 2\nmax_jobs = 1", "max_iodepth = 16\nmax_jobs = 2")
assert SUITE != SATURATE


def test_a_search_on_real_fio_follows_its_rules_and_reports_the_mean_of_the_peak_s_passes(disklab: Disklab,
                                                                                          tmp_path: Path):
    outcomes, svgs = run_and_report(disklab, tmp_path, SUITE)
    outcome = outcomes["saturation"]
    (run,) = disklab.runs()
    stored = [(t, json.loads(t["params_json"]), disklab.metrics(t["id"])[0]) for t in disklab.tests(run["id"])]
    search_steps = [(t, params, m) for t, params, m in stored if params["rate_iops"] is None]
    levels = [(t, params, m) for t, params, m in stored if params["rate_iops"] is not None]

    # Replayed through the rules, each stored step is the setting the search wanted after the steps before it
    search = PeakSearch(SaturationSettings(max_iodepth=16, max_jobs=2))
    for test, params, metrics in search_steps:
        assert (params["iodepth"], params["jobs"]) == search.wanted, test["label"]
        search.record(probe(params["iodepth"], params["jobs"], metrics["iops"], metrics["clat_p99_ns"]))
    assert search.wanted is None and outcome["stopped"] == search.reasons
    # a setting measured again keeps its planned test; its passes are attempts 1, 2, 3
    by_setting: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for test, params, _ in search_steps:
        by_setting.setdefault((params["iodepth"], params["jobs"]), []).append((test["plan_index"], test["attempt"]))
    for n, passes in enumerate(by_setting.values()):
        assert passes == [(n, attempt) for attempt in range(1, len(passes) + 1)]

    peak = outcome["peak"]
    passes = [m["iops"] for t, params, m in search_steps if (params["iodepth"], params["jobs"]) ==
              (peak["iodepth"], peak["jobs"])]
    assert peak["passes"] == len(passes) == 3
    assert peak["iops"] == pytest.approx(sum(passes) / 3, rel=1e-3)  # the mean, not the best pass
    assert (peak["iops_min"], peak["iops_max"]) == pytest.approx((min(passes), max(passes)), rel=1e-3)

    # the load levels run at the peak's setting, each job rate-limited to its share of percent x the mean
    assert [(params["iodepth"], params["jobs"]) for _, params, _ in levels] == [(peak["iodepth"], peak["jobs"])] * 10
    assert [params["rate_iops"] for _, params, _ in levels] == [
        math.ceil(peak["iops"] * percent / 100 / peak["jobs"]) for percent in range(10, 101, 10)]
    found = knee([Level(lv["percent"], lv["target_iops"], probe(lv["iodepth"], lv["jobs"], lv["iops"], lv["p99_ns"]))
                  for lv in outcome["levels"]])
    assert (outcome["knee"] or {}).get("percent") == (found.percent if found else None)
    shown = disklab("show", str(run["id"]))
    assert shown.returncode == 0 and f"the mean of 3 passes ({min(passes):,.0f}-{max(passes):,.0f})" in shown.stdout
    svg = svgs["saturate: IOPS vs latency percentiles · run 1"]
    note = " ".join(t.text for t in svg.iter(f"{{{NS['svg']}}}text") if t.get("class") == "chart-note")
    assert f"peak {peak['iops']:,.0f} IOPS (mean of 3 passes, {min(passes):,.0f}-{max(passes):,.0f})" in note
