"""fio's windowed logs -> series, against the real logs of a 4-job randrw run with log_avg_msec=1000."""

import statistics

import pytest

from disklab.errors import FioError
from disklab.fio.logs import KINDS, SeriesPoint, parse_logs
from tests.conftest import FIO_FIXTURES, fixture_json

CASE = "randrw-70-4k-4jobs-log1s"
JOBS = (1, 2, 3, 4)
DIRECTIONS = {"read": 0, "write": 1}


def fixture_logs() -> dict[str, str]:
    return {path.name: path.read_text() for path in (FIO_FIXTURES / f"{CASE}.logs").iterdir()}


def raw_lines(log: str, job: int, direction: str) -> list[tuple[int, int]]:
    """(time_ms, value) of one job's log in one direction, as fio wrote them."""
    rows = [[int(f) for f in line.split(",")] for line in fixture_logs()[f"disklab_{log}.{job}.log"].splitlines()]
    return [(row[0], row[1]) for row in rows if row[2] == DIRECTIONS[direction]]


def by_key(series) -> dict:
    return {(s.kind, s.direction): s.points for s in series}


def test_the_fixture_is_fios_own_layout():
    """One file per log type and job; five fields, windowed (block size and offset 0)."""
    names = set(fixture_logs())
    assert names == {f"disklab_{log}.{job}.log" for log in ("iops", "bw", "lat", "clat", "slat") for job in JOBS}
    for text in fixture_logs().values():
        for line in text.splitlines():
            fields = [f.strip() for f in line.split(",")]
            assert len(fields) == 5 and fields[2] in ("0", "1") and fields[3:] == ["0", "0"]


def test_each_kind_and_direction_is_one_series_on_whole_seconds():
    series = parse_logs(fixture_logs(), 1000)
    assert [(s.kind, s.direction) for s in series] == [(k, d) for k in KINDS for d in DIRECTIONS]
    for s in series:
        times = [p.t_ms for p in s.points]
        assert len(times) >= 2 and times == sorted(set(times)) and all(t % 1000 == 0 and t > 0 for t in times)


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_iops_and_bandwidth_are_summed_over_the_jobs(direction):
    series = by_key(parse_logs(fixture_logs(), 1000))
    for log, kind, factor in (("iops", "iops", 1), ("bw", "bw_bytes_per_s", 1024)):
        first = series[kind, direction][0]
        assert first == SeriesPoint(1000, sum(raw_lines(log, job, direction)[0][1] * factor for job in JOBS))


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_the_series_agree_with_fios_own_figures_for_the_run(direction):
    series = by_key(parse_logs(fixture_logs(), 1000))
    reported = fixture_json(f"{CASE}.jsonplus.json")["jobs"][0][direction]
    iops = [p.value for p in series["iops", direction]]
    bw = [p.value for p in series["bw_bytes_per_s", direction]]
    # fio's iops_mean and bw_mean (KiB/s) summarise the very samples it logs, jobs summed per window.
    assert reported["iops_samples"] == len(JOBS) * len(iops)
    assert statistics.mean(iops) == pytest.approx(reported["iops_mean"], rel=1e-9)
    assert statistics.mean(bw) == pytest.approx(reported["bw_mean"] * 1024, rel=1e-9)
    # And the whole run's IOPS, which also counts the last second: fio's helper thread often wakes just after
    # the job has ended and logs no sample for it.
    assert statistics.mean(iops) == pytest.approx(reported["iops"], rel=0.05)
    assert statistics.mean(bw) == pytest.approx(reported["bw_bytes"], rel=0.05)
    # Both logs count the same 4 KiB I/Os.
    assert [b / i for b, i in zip(bw, iops)] == pytest.approx([4096] * len(iops), rel=0.01)


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_latency_is_averaged_over_the_jobs_weighted_by_their_iops(direction):
    series = by_key(parse_logs(fixture_logs(), 1000))
    lat_1s = [raw_lines("lat", job, direction)[0][1] for job in JOBS]
    iops_1s = [raw_lines("iops", job, direction)[0][1] for job in JOBS]
    expected = sum(lat * iops for lat, iops in zip(lat_1s, iops_1s)) / sum(iops_1s)
    assert series["lat_mean_ns", direction][0] == SeriesPoint(1000, expected)
    # Weighted by I/O count, the per-second means come back to fio's mean latency for the run.
    lat = series["lat_mean_ns", direction]
    weights = {p.t_ms: p.value for p in series["iops", direction]}
    weighted = sum(p.value * weights[p.t_ms] for p in lat) / sum(weights[p.t_ms] for p in lat)
    reported = fixture_json(f"{CASE}.jsonplus.json")["jobs"][0][direction]["lat_ns"]["mean"]
    assert weighted == pytest.approx(reported, rel=0.10)


# The cases below are lines as fio 3.33 writes them, cut down to the situation under test.


def test_jobs_timestamps_are_matched_by_window():
    logs = {
        "disklab_iops.1.log": "999, 100, 0, 0, 0\n1999, 110, 0, 0, 0\n",
        "disklab_iops.2.log": "1001, 200, 0, 0, 0\n2001, 210, 0, 0, 0\n",
        # A latency window closes with the first completion after its end, however late.
        "disklab_lat.1.log": "1000, 5000, 0, 0, 0\n2600, 7000, 0, 0, 0\n",
        "disklab_lat.2.log": "1003, 8000, 0, 0, 0\n2046, 9000, 0, 0, 0\n",
    }
    series = by_key(parse_logs(logs, 1000))
    assert series["iops", "read"] == (SeriesPoint(1000, 300.0), SeriesPoint(2000, 320.0))
    assert series["lat_mean_ns", "read"] == (
        SeriesPoint(1000, (5000 * 100 + 8000 * 200) / 300),
        SeriesPoint(2000, (7000 * 110 + 9000 * 210) / 320),
    )


def test_fios_exit_flush_does_not_replace_the_last_window():
    logs = {
        "disklab_iops.1.log": "1000, 100, 1, 0, 0\n2000, 100, 1, 0, 0\n",
        "disklab_lat.1.log": "1000, 5000, 1, 0, 0\n2000, 6000, 1, 0, 0\n2000, 1200, 1, 0, 0\n",
    }
    assert by_key(parse_logs(logs, 1000))["lat_mean_ns", "write"][-1] == SeriesPoint(2000, 6000.0)


def test_latency_without_iops_weights_is_left_out():
    """fio may miss the last window's IOPS sample; that window's latency cannot be weighted."""
    logs = {
        "disklab_iops.1.log": "1000, 100, 0, 0, 0\n",
        "disklab_iops.2.log": "1000, 100, 0, 0, 0\n",
        "disklab_lat.1.log": "1000, 5000, 0, 0, 0\n2000, 6000, 0, 0, 0\n",
        "disklab_lat.2.log": "1000, 7000, 0, 0, 0\n2000, 8000, 0, 0, 0\n",
    }
    assert by_key(parse_logs(logs, 1000))["lat_mean_ns", "read"] == (SeriesPoint(1000, 6000.0),)


def test_bandwidth_is_bytes_trim_is_a_direction_and_priority_and_other_logs_are_ignored():
    logs = {
        "disklab_bw.1.log": "500, 4, 2, 0, 0, 0\n",
        "disklab_clat.1.log": "500, 1, 0, 0, 0\n",
        "disklab_slat.1.log": "garbage\n",
    }
    assert parse_logs(logs, 500) == parse_logs({"disklab_bw.1.log": "500, 4, 2, 0, 0\n"}, 500)
    ((kind, direction, points),) = [(s.kind, s.direction, s.points) for s in parse_logs(logs, 500)]
    assert (kind, direction, points) == ("bw_bytes_per_s", "trim", (SeriesPoint(500, 4096.0),))


@pytest.mark.parametrize("line", ["1000, 12, 7, 0, 0", "1000, twelve, 0, 0, 0", "1000"])
def test_an_unreadable_line_names_the_file_and_line(line):
    with pytest.raises(FioError, match=r"disklab_iops\.3\.log, line 2"):
        parse_logs({"disklab_iops.3.log": f"1000, 5, 0, 0, 0\n{line}\n"}, 1000)


def test_no_logs_no_series():
    assert parse_logs({}, 1000) == ()
