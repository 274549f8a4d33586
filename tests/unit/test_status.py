"""fio's --status-interval output (a real capture, tests/fixtures/fio/status/) read as live figures, and the output
kept without its interim reports."""

import json
import shutil
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disklab.fio.executor import SubprocessExecutor
from disklab.fio.histogram import histogram_percentile
from disklab.fio.parse import parse_fio_output, read_fio_document
from disklab.fio.status import (StatusReader, documents, final_output, live_figures, status_interval_s,
                                status_report)
from tests.conftest import FIO_FIXTURES

CAPTURE = FIO_FIXTURES / "status" / "randread-4k-q4-pause1-ramp1.status.jsonplus.txt"


def reports(text: str) -> list[dict]:
    return [value for _, _, value in documents(text)]


def test_the_phases_follow_fio_starting_ramp_measuring():
    text = CAPTURE.read_text()
    phases = [status_report(r).phase for r in reports(text)]
    assert phases == ["starting", "ramp", "measuring", "measuring", "measuring", "measuring"]


def test_a_second_is_the_difference_of_two_cumulative_reports():
    raw = reports(CAPTURE.read_text())
    before, now = (status_report(r) for r in raw[3:5])
    figures = live_figures(before, now)
    read_before, read_now = raw[3]["jobs"][0]["read"], raw[4]["jobs"][0]["read"]
    seconds = (read_now["runtime"] - read_before["runtime"]) / 1000
    assert figures.iops == pytest.approx((read_now["total_ios"] - read_before["total_ios"]) / seconds)
    assert figures.bw_bytes_per_s == pytest.approx((read_now["io_bytes"] - read_before["io_bytes"]) / seconds)
    lat_sum = [r["lat_ns"]["mean"] * r["lat_ns"]["N"] for r in (read_before, read_now)]
    assert figures.lat_mean_ns == pytest.approx((lat_sum[1] - lat_sum[0]) / (read_now["lat_ns"]["N"]
                                                                          - read_before["lat_ns"]["N"]))


def test_after_the_ramp_fio_starts_counting_again_and_the_report_stands_alone():
    raw = reports(CAPTURE.read_text())
    ramp, first = status_report(raw[1]), status_report(raw[2])
    figures = live_figures(ramp, first)
    read = raw[2]["jobs"][0]["read"]
    assert figures.phase == "measuring"
    assert figures.iops == pytest.approx(read["iops"], rel=1e-9)  # fio's own figure of that report
    assert figures.bw_bytes_per_s == pytest.approx(read["bw_bytes"], rel=1e-3)
    assert figures.lat_mean_ns == pytest.approx(read["lat_ns"]["mean"])


def test_ramp_has_no_latency_and_a_short_span_gives_the_phase_alone():
    raw = reports(CAPTURE.read_text())
    ramp = live_figures(status_report(raw[0]), status_report(raw[1]))
    assert ramp.phase == "ramp" and ramp.lat_mean_ns is None  # fio records no latency in ramp_time
    final = live_figures(status_report(raw[4]), status_report(raw[5]))  # the final report, ms after the last one
    assert final.iops is None


def test_the_output_kept_is_the_final_report_verbatim():
    text = CAPTURE.read_text()
    kept = final_output(text)
    last_start = documents(text)[-1][0]
    assert kept == text[last_start:]
    assert read_fio_document(kept).data == read_fio_document(text).data
    assert read_fio_document(kept).notes == ()
    assert parse_fio_output(kept).jobs == parse_fio_output(text).jobs


def test_notes_around_the_reports_are_kept():
    text = "note: something fio said\n" + CAPTURE.read_text()
    assert final_output(text).startswith("note: something fio said\n{")


def test_the_reader_follows_the_file_as_fio_writes_it(tmp_path):
    text = CAPTURE.read_text()
    path = tmp_path / "output.json"
    reader = StatusReader(path)
    assert reader.poll() is None  # fio has not made its output yet
    shown = []
    with open(path, "w") as output:
        for start, end, _ in documents(text):
            middle = (start + end) // 2
            output.write(text[start:middle])
            output.flush()
            assert reader.poll() is None  # half a report is not read
            output.write(text[middle:end + 1])
            output.flush()
            shown.append(reader.poll())
    assert [f.phase if f else None for f in shown] == ["starting", "ramp", "measuring", "measuring", "measuring", None]
    assert all(f.iops > 0 and f.lat_mean_ns > 0 for f in shown[2:5])


def test_an_older_fio_layout_gives_no_live_figures():
    older = json.loads((FIO_FIXTURES / "layouts" / "layout-fio-3.1.randrw.json").read_text())
    assert status_report(older) is None


def test_the_first_report_of_a_test_gives_figures_however_short_its_span():
    raw = reports(CAPTURE.read_text())
    first = status_report(raw[2])
    short = replace(first, runtime_ms=100)  # a short test's first report, a tenth of a second into its measurement
    figures = live_figures(None, short)
    assert figures.phase == "measuring" and figures.iops == pytest.approx(first.ios / 0.1)
    assert figures.lat_mean_ns is not None and figures.clat_p99_ns is not None


def test_p99_is_that_of_the_span_from_the_difference_of_fios_histograms():
    raw = reports(CAPTURE.read_text())
    before, now = (status_report(r) for r in raw[3:5])
    bins_before, bins_now = (r["jobs"][0]["read"]["clat_ns"]["bins"] for r in raw[3:5])
    span = {float(v): c - bins_before.get(v, 0) for v, c in bins_now.items() if c > bins_before.get(v, 0)}
    figures = live_figures(before, now)
    assert figures.clat_p99_ns == histogram_percentile(span, 0.99)
    assert min(span) <= figures.clat_p99_ns <= max(span)
    # fio's json (no bins): its own p99 of the report stands in
    without_bins = replace(now, clat_bins=None)
    assert live_figures(before, without_bins).clat_p99_ns == raw[4]["jobs"][0]["read"]["clat_ns"]["percentile"][
        "99.000000"]


@given(st.floats(min_value=0, max_value=30 * 24 * 3600))
def test_the_status_interval_suits_the_test_from_a_quarter_second_to_one_second(seconds):
    interval = status_interval_s(seconds)
    assert 0.25 <= interval <= 1
    assert interval == 1 or interval == 0.25 or interval * 8 == pytest.approx(seconds)


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_real_fio_reports_figures_with_p99_on_a_two_second_test(tmp_path):
    path = tmp_path / "test.bin"
    jobfile = (f"[t]\nfilename={path}\nsize=4m\nrw=randread\nbs=4k\ntime_based=1\nruntime=2\nioengine=psync\n")
    shown = []
    SubprocessExecutor(shutil.which("fio")).run(jobfile, on_status=shown.append,
                                                status_interval_s=status_interval_s(2))
    measured = [f for f in shown if f.iops is not None]
    assert measured, shown
    assert all(f.iops > 0 and f.lat_mean_ns > 0 and f.clat_p99_ns > 0 for f in measured)
