"""Device history: runs grouped by the disk they measured (model + serial), each test's figures run after run, and
change points only where compare's noise verdict says a figure moved, with what changed in the environment."""

import re

import pytest

from disklab.analysis.compare import compare_runs
from disklab.analysis.history import device_history, device_key_of, group_devices, run_group
from disklab.analysis.verdict import BETTER, INCONCLUSIVE, NO_VERDICT, WITHIN_NOISE, WORSE
from disklab.store.repository import Store
from tests.unit.test_compare import BASE, SHIFTED_4, SHIFTED_5, job, passes, stored_run


@pytest.fixture
def store(store_location):
    """A device's history is read from either backend alike."""
    with Store(store_location) as s:
        yield s


def disk_env(firmware: str = "2.1", name: str = "sda", model: str = "ACME NVMe 1TB", serial: str = "S1",
             **more) -> dict:
    return {"devices": name, f"device.{name}.model": model, f"device.{name}.serial": serial,
            f"device.{name}.firmware": firmware, "kernel": "6.1", **more}


def around(iops: float) -> list[float]:
    """Three passes 1 % apart: a measured spread, as a default run has."""
    return [iops * 0.99, iops, iops * 1.01]


def run_at(store, day: int, iops: list[float], env: dict | None, tests=None, **changes):
    """A run on 2026-01-DAY of one random-read test (its repeats: `iops`)."""
    tests = tests or [("4k random read", {}, [job(v) for v in iops])]
    return stored_run(store, tests, env, started_at=f"2026-01-{day:02d}T10:00:00+00:00", **changes)


def history_of(records, **options):
    (device,) = group_devices(run_group(r.info, r.env) for r in records)
    return device_history(device, records, **options)


def cells_of(test, metric: str, direction: str = "read"):
    (i,) = [i for i, c in enumerate(test.columns) if (c.direction, c.metric) == (direction, metric)]
    return [entry.cells[i] for entry in test.entries]


def test_a_step_beyond_noise_with_a_firmware_change_is_a_change_point_that_names_the_change(store):
    runs = [run_at(store, 1, around(1000), disk_env("2.1")), run_at(store, 2, around(1040), disk_env("2.1")),
            run_at(store, 3, around(1500), disk_env("2.2"))]
    history = history_of(runs)
    (test,) = history.tests
    assert [e.run.id for e in test.entries] == [r.info.id for r in runs]
    iops = cells_of(test, "iops")
    assert [c.summary.mean for c in iops] == [pytest.approx(v) for v in (1000, 1040, 1500)]
    assert [c.verdict for c in iops] == [None, WITHIN_NOISE, BETTER]
    assert [e.change_point for e in test.entries] == [False, False, True]
    assert test.entries[2].environment == ("sda: firmware: 2.1 -> 2.2",)
    assert test.entries[2].previous.id == runs[1].info.id
    assert [c.verdict for c in cells_of(test, "clat_p99_us")] == [None, WITHIN_NOISE, WITHIN_NOISE]
    assert history.change_points == 1


def test_single_pass_runs_make_no_change_point_however_far_apart(store):
    """The issue's history: 4 single runs of one file target, 2x apart by noise, outlined 17 change points."""
    runs = [run_at(store, day, [iops], disk_env()) for day, iops in enumerate((1701, 4051, 1900, 3900), start=1)]
    (test,) = history_of(runs).tests
    assert [c.verdict for c in cells_of(test, "iops")] == [None, NO_VERDICT, NO_VERDICT, NO_VERDICT]
    assert not any(e.change_point for e in test.entries) and history_of(runs).change_points == 0


def test_a_difference_within_noise_is_never_a_change_even_with_an_environment_change(store):
    # Repeats 5.4 % apart, significant by Welch's test but within the 10 % tolerance: within noise.
    runs = [run_at(store, 1, BASE, disk_env("2.1")), run_at(store, 2, SHIFTED_5, disk_env("2.2", kernel="6.5"))]
    (test,) = history_of(runs).tests
    assert cells_of(test, "iops")[1].verdict == WITHIN_NOISE
    assert test.entries[1].environment == ("kernel: 6.1 -> 6.5", "sda: firmware: 2.1 -> 2.2")
    assert not test.entries[1].change_point
    # With a 1 % tolerance the repeats cannot tell (not significant): inconclusive is no change either.
    strict = history_of([runs[0], run_at(store, 3, SHIFTED_4, disk_env("2.2"))], tolerance_percent=1)
    assert cells_of(strict.tests[0], "iops")[1].verdict == INCONCLUSIVE
    assert strict.change_points == 0


def test_the_verdict_at_a_step_is_the_one_compare_gives_the_two_runs(store):
    a = run_at(store, 1, [100, 104, 98, 102], disk_env())
    b = run_at(store, 2, [80, 81, 79, 80], disk_env())
    (test,) = history_of([a, b]).tests
    compared = {(row.direction, row.metric): row.cells[1] for row in compare_runs([a, b]).rows}
    for column, cell in zip(test.columns, test.entries[1].cells):
        assert cell == compared[column.direction, column.metric]
    assert cells_of(test, "iops")[1].verdict == WORSE and test.entries[1].change_point


def test_a_device_with_one_run_has_figures_and_no_steps(store):
    history = history_of([run_at(store, 1, [1000], disk_env())])
    (test,) = history.tests
    (entry,) = test.entries
    assert entry.previous is None and entry.environment == () and not entry.change_point
    assert all(c.verdict is None for c in entry.cells) and cells_of(test, "iops")[0].summary.mean == 1000


def test_a_test_a_run_skipped_is_judged_against_its_last_run_with_the_condition_that_changed(store):
    other = [("4k random read QD4", {"iodepth": 4}, passes(500))]
    a = run_at(store, 1, around(1000), disk_env())
    b = run_at(store, 2, [], disk_env(), tests=other)
    c = run_at(store, 3, [], disk_env(), tests=[("4k random read", {"runtime": 30.0}, passes(700))])
    history = history_of([c, a, b])  # any order: the history is in time order
    first, second = history.tests
    assert [e.run.id for e in first.entries] == [a.info.id, c.info.id]
    assert first.entries[1].previous.id == a.info.id
    assert first.entries[1].conditions == (("runtime", 5.0, 30.0),)
    assert cells_of(first, "iops")[1].verdict == WORSE
    assert [e.run.id for e in second.entries] == [b.info.id]


def test_runs_group_by_model_and_serial_whatever_the_disk_was_called(store):
    a = run_at(store, 1, [1000], disk_env("2.1", name="sda"))
    b = run_at(store, 2, [1000], disk_env("2.2", name="sdb"))  # the same disk, found as sdb after a reboot
    other = run_at(store, 3, [1000], disk_env(serial="S2"))
    unknown = run_at(store, 4, [1000], {"devices": "vda", "device.vda.model": "QEMU", "device.vda.serial": None})
    old = run_at(store, 5, [1000], None, target="/dev/vdb")
    devices = group_devices(run_group(r.info, r.env) for r in (a, b, other, unknown, old))
    assert [(list(d.run_ids), d.known) for d in devices] == [
        ([a.info.id, b.info.id], True), ([other.info.id], True), ([old.info.id], False), ([unknown.info.id], False),
    ], "known devices first, then by label"

    assert devices[0].label == "ACME NVMe 1TB · serial S1"
    assert devices[3].label == "/mnt/x on testhost (runs that recorded no disk serial)"
    assert (devices[0].first, devices[0].last) == (a.info.started_at, b.info.started_at)
    (test,) = device_history(devices[0], [a, b]).tests
    assert test.entries[1].environment == ("sda: firmware: 2.1 -> 2.2",), "one disk, not sda gone and sdb new"


def test_device_keys_are_url_safe_distinct_and_stable(store):
    envs = [disk_env(model="Samsung SSD 980 PRO 2TB", serial="S/N 12?#&é"), disk_env(model="Samsung SSD 980 PRO",
            serial="2TB S N 12"), disk_env(model="***", serial="///")]
    runs = [run_at(store, day, [1000], env) for day, env in enumerate(envs, start=1)]
    keys = [d.key for d in group_devices(run_group(r.info, r.env) for r in runs)]
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9-]*", key) for key in keys)
    assert len(set(keys)) == 3, "the same slug, told apart by the hash of model and serial"
    assert keys == [d.key for d in group_devices(run_group(r.info, r.env) for r in reversed(runs))]
    assert any(key.startswith("samsung-ssd-980-pro-2tb-s-n-12-") for key in keys)
    assert sorted(device_key_of(r.info, r.env) for r in runs) == sorted(keys), "a run's page can link its device"


def test_a_disk_that_reports_a_serial_but_no_model_is_told_by_its_serial(store):
    virtio = {"devices": "vda", "device.vda.model": None, "device.vda.serial": "19866367170593707"}
    (device,) = group_devices(run_group(r.info, r.env)
                              for r in (run_at(store, 1, [1], virtio), run_at(store, 2, [1], virtio)))
    assert device.known and device.label == "model unknown · serial 19866367170593707" and len(device.run_ids) == 2


def test_a_target_of_several_disks_is_one_device_of_all_of_them(store):
    env = {"devices": "sda, sdb", "device.sda.model": "A", "device.sda.serial": "1",
           "device.sdb.model": "B", "device.sdb.serial": "2"}
    swapped = {"devices": "sda, sdb", "device.sda.model": "B", "device.sda.serial": "2",
               "device.sdb.model": "A", "device.sdb.serial": "1"}
    (device,) = group_devices(run_group(r.info, r.env)
                              for r in (run_at(store, 1, [1], env), run_at(store, 2, [1], swapped)))
    assert device.disks == (("A", "1"), ("B", "2")) and device.label == "2 disks: A · serial 1, B · serial 2"


def test_the_devices_page_lists_each_device_and_links_its_history(tmp_path):
    from disklab.web.history import devices_page
    from disklab.web.links import ServerLinks

    with Store(tmp_path / "results.db") as store:
        run_at(store, 1, [1000], disk_env(model="<b>Evil</b> SSD", serial="S&1"))
        run_at(store, 3, [1000], disk_env(model="<b>Evil</b> SSD", serial="S&1"))
        run_at(store, 2, [1000], None)
        html = devices_page(store, ServerLinks())
        (device, _) = group_devices(run_group(info, store.run_values("run_env", info.id))
                                    for info in store.list_runs())
    assert '<table id="devices">' in html and "<b>Evil" not in html
    row = html[html.index(f'<tr data-device-key="{device.key}">'):].split("</tr>")[0]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    assert [c.strip() for c in cells] == [
        "&lt;b&gt;Evil&lt;/b&gt; SSD", "S&amp;1", "2", "2026-01-01T10:00:00+00:00", "2026-01-03T10:00:00+00:00",
        f'<a class="device-link" href="/devices/{device.key}">history</a>',
    ]
    assert "/mnt/x on testhost (runs that recorded no disk serial)" in html


def test_the_device_page_marks_the_change_point_and_an_unknown_key_is_not_found(tmp_path):
    from werkzeug.exceptions import NotFound

    from disklab.web.history import device_page, store_devices
    from disklab.web.links import ServerLinks

    with Store(tmp_path / "results.db") as store:
        for day, (iops, firmware) in enumerate(((1000, "2.1"), (1050, "2.1"), (1400, "2.2")), start=1):
            run_at(store, day, around(iops), disk_env(firmware))
        (device,) = store_devices(store)
        html = device_page(store, device.key, ServerLinks())
        with pytest.raises(NotFound):
            device_page(store, "no-such-device", ServerLinks())
    assert html.count('<table class="history">') == 1
    points = re.findall(r'<td class="figure change-point verdict-better" title="([^"]*)">([^<]*)</td>', html)
    assert [text for _, text in points] == ["1,400 ±2.5 % (better)", "5.7 ±2.5 % (better)"]
    assert points[0][0] == ("read IOPS: 1,050 ±2.5 % in run 2 -&gt; 1,400 ±2.5 % (1.33x, better; t-test, tolerance 10 %) · "
                            "changed since run 2: sda: firmware: 2.1 -&gt; 2.2")
    assert 'class="figure verdict-within-noise"' in html and html.count("change-point verdict") == 2
    assert '<a class="compare-link" href="/compare/2,3">' in html
    assert '<svg' in html and "change points (beyond noise): run 3" in html


def test_a_long_history_is_paged_from_the_oldest_run_and_a_page_judges_its_first_step_against_the_run_before(
        tmp_path, monkeypatch):
    """Pages are counted from the oldest run, the newest page holding the runs short of a page too: a new run changes
    the newest page only (a published site rewrites one page of the history)."""
    from werkzeug.exceptions import NotFound

    from disklab.web import history
    from disklab.web.links import ServerLinks, StaticLinks

    monkeypatch.setattr(history, "HISTORY_PAGE_RUNS", 2)
    monkeypatch.setattr(history, "CONTEXT_RUNS", 1)
    with Store(tmp_path / "results.db") as store:
        for day, (iops, firmware) in enumerate(((1000, "2.1"), (1010, "2.1"), (1500, "2.2"), (1490, "2.2"),
                                                (1480, "2.2")), start=1):
            run_at(store, day, around(iops), disk_env(firmware))
        (device,) = history.store_devices(store)
        pages = [history.device_page(store, device.key, ServerLinks(), page) for page in (None, 1, 2)]
        with pytest.raises(NotFound):
            history.device_page(store, device.key, ServerLinks(), 3)

    def rows(html):
        table = html[html.index('<table class="history">'):].split("</table>")[0]
        return [int(n) for n in re.findall(r'<tr data-run-id="(\d+)"', table)]

    assert [rows(html) for html in pages] == [[3, 4, 5], [1, 2], [3, 4, 5]]  # each page oldest first within it
    assert "IOPS of each run of this test on this device on this page, oldest first" in pages[0], "the chart's caption"
    assert f'id="older" href="/devices/{device.key}?page=1"' in pages[0] and 'id="newer"' not in pages[0]
    assert f'id="newer" href="/devices/{device.key}"' in pages[1] and 'id="older"' not in pages[1]
    # The newest page's first run (run 3) is judged against run 2, read from page 1 as context: the firmware step.
    assert "changed since run 2: sda: firmware: 2.1 -&gt; 2.2" in pages[0]
    assert "compare with run 2" in pages[0] and "first run of this test" in pages[1]
    assert StaticLinks(1).device(device.key, 1) == f"../devices/{device.key}-1.html"
    assert StaticLinks(1).device(device.key) == f"../devices/{device.key}.html"


def test_a_page_of_a_device_on_several_hosts_reads_the_same_runs_as_its_whole_listing(store_location, monkeypatch):
    """A page reads only its own runs and those just before it (store/groups.py newest_runs), across the device's
    groups (its disk moved between hosts and targets), a start shared by two runs told apart by number."""
    from disklab.web import history
    from disklab.web.links import ServerLinks

    monkeypatch.setattr(history, "HISTORY_PAGE_RUNS", 2)
    monkeypatch.setattr(history, "CONTEXT_RUNS", 2)
    places = [("lab-a", "/mnt/x"), ("lab-b", "/mnt/y"), ("lab-a", "/dev/sdb")]
    with Store(store_location) as store:
        for n, day in enumerate((3, 1, 4, 1, 5, 9, 2, 6, 7)):
            host, target = places[n % 3]
            run_at(store, day, around(1000 + n), disk_env(), hostname=host, target=target)
        (device,) = history.store_devices(store)
        assert len(device.run_ids) == device.runs == 9
        served = [history.device_page(store, device.key, ServerLinks(), page) for page in (1, 2, 3, 4)]
        assert history.device_page(store, device.key, ServerLinks()) == served[-1]  # the newest, of 3 runs

    def rows(html):
        table = html[html.index('<table class="history">'):].split("</table>")[0]
        return [int(n) for n in re.findall(r'<tr data-run-id="(\d+)"', table)]

    assert device.run_ids == (2, 4, 7, 1, 3, 5, 8, 9, 6)  # by start, then number
    assert [rows(html) for html in served] == [[2, 4], [7, 1], [3, 5], [8, 9, 6]]  # counted from the oldest
    assert [rows(html) for html in served] == [list(history.page_runs(device, page)) for page in (1, 2, 3, 4)]
    assert "compare with run 1" in served[2] and "first run of this test" in served[0]  # run 1: on page 2


def test_a_page_of_single_pass_runs_renders_its_first_step_against_a_run_on_the_page_before(tmp_path, monkeypatch):
    """The first row of a page has its previous run on another page: its title names that run, not a figure."""
    from disklab.web import history
    from disklab.web.links import ServerLinks

    monkeypatch.setattr(history, "HISTORY_PAGE_RUNS", 2)
    monkeypatch.setattr(history, "CONTEXT_RUNS", 1)
    with Store(tmp_path / "results.db") as store:
        for day, iops in enumerate((1701, 4051, 1900, 3900), start=1):
            run_at(store, day, [iops], disk_env())
        (device,) = history.store_devices(store)
        newest = history.device_page(store, device.key, ServerLinks())
    titles = re.findall(r'<td class="figure verdict-no-verdict" title="([^"]*)">', newest)
    assert titles and "read IOPS: run 2 -&gt; 1,900 (0.47x, no verdict; single runs" in titles[0]
    assert "change-point" not in newest.split('<table class="history">')[1]


def test_a_device_of_more_runs_than_a_page_publishes_and_serves_every_page_of_its_history(tmp_path):
    """Issue 24: past a page of runs a page's first step is judged against a run of the page before, whose figure
    the page does not hold; publish stopped partway (exit 70) and serve answered 500."""
    from click.testing import CliRunner
    from werkzeug.test import Client

    from disklab.cli.main import cli
    from disklab.web.app import WebApp
    from disklab.web.history import HISTORY_PAGE_RUNS, store_devices

    runs = 2 * HISTORY_PAGE_RUNS + HISTORY_PAGE_RUNS // 2  # two pages, the newest holding the runs short of a page
    db = tmp_path / "results.db"
    with Store(db) as store:
        for n in range(1, runs + 1):
            newer = n > HISTORY_PAGE_RUNS  # the newest page's first run moves its figures: a change point
            tests = [("4k random read", {}, [job(v) for v in around(1500 if newer else 1000)]),
                     ("4k random read QD4", {"iodepth": 4}, [job(500 + n % 7 * 50)])]  # single runs: no verdict
            stored_run(store, tests, disk_env("2.2" if newer else "2.1"),
                       started_at=f"2026-01-{1 + n // 24:02d}T{n % 24:02d}:00:00+00:00")
        (device,) = store_devices(store)
    assert len(device.run_ids) == runs

    site = tmp_path / "site"
    result = CliRunner().invoke(cli, ["publish", "-o", str(site), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert f"published {runs} runs, 1 device" in result.output
    static = [(site / "devices" / f"{device.key}.html").read_text(),
              (site / "devices" / f"{device.key}-1.html").read_text()]
    assert not (site / "devices" / f"{device.key}-2.html").exists()

    client = Client(WebApp(db))
    served = [client.get(f"/devices/{device.key}{query}") for query in ("", "?page=1", "?page=3")]
    assert [answer.status_code for answer in served] == [200, 200, 404]
    first = HISTORY_PAGE_RUNS + 1
    for html in (static[0], served[0].get_data(as_text=True)):
        assert html.count('<table class="history">') == 2
        assert f"-&gt; 1,500 ±2.5 % (1.50x, better; t-test, tolerance 10 %) · changed since run {first - 1}: " \
               "sda: firmware: 2.1 -&gt; 2.2" in html, "the page's first step, judged against the page before's run"
        assert f"read IOPS: run {first - 1} -&gt; " in html, "its single run's step names the run before the page"
    for html in (static[1], served[1].get_data(as_text=True)):
        assert re.findall(r'<tr data-run-id="(\d+)"', html)[:1] == ["1"] and "first run of this test" in html


def test_a_page_says_which_runs_it_holds_of_the_device_total_and_judges_a_test_whose_previous_run_is_further_back(
        tmp_path, monkeypatch):
    """The newest page's runs are of one test; it reads the runs before it until that test has its previous run
    (two back), and says that its chart and table hold this page's runs of the device's six; an older page says
    which of the device's runs it holds, and nothing that a new run would change."""
    from disklab.web import history
    from disklab.web.links import ServerLinks

    monkeypatch.setattr(history, "HISTORY_PAGE_RUNS", 2)
    read = []
    with Store(tmp_path / "results.db") as store:
        for day, (iops, qd) in enumerate(((1000, 1), (500, 4), (1010, 1), (510, 4), (1500, 1), (1490, 1)), start=1):
            run_at(store, day, around(iops), disk_env(), tests=[(f"QD{qd}", {"iodepth": qd}, [job(v) for v in
                                                                                          around(iops)])])
        (device,) = history.store_devices(store)
        monkeypatch.setattr(store, "get_run", lambda run_id, get=store.get_run: read.append(run_id) or get(run_id))
        monkeypatch.setattr(store, "get_runs", lambda run_ids, get=store.get_runs: read.extend(run_ids) or get(run_ids))
        newest = history.device_page(store, device.key, ServerLinks())
        oldest = history.device_page(store, device.key, ServerLinks(), 1)
    assert read[:4] == [5, 6, 4, 3], "the page's runs, then back to run 3, the previous run of their test; not run 2"
    assert "6 runs from 2026-01-01T10:00:00+00:00 to 2026-01-06T10:00:00+00:00 (UTC) · this page: the newest 2 runs, " \
           "from 2026-01-05T10:00:00+00:00 to 2026-01-06T10:00:00+00:00" in newest
    assert "run 3 -&gt; 1,500" in newest and "compare with run 3" in newest and "compare with run 5" in newest
    runs_table = newest[newest.index('id="runs-of-device"'):]
    assert re.findall(r'<tr data-run-id="(\d+)"', runs_table) == ["6", "5"], "this page's runs, newest first"
    assert "Runs of this device on this page" in newest
    assert "page 1, oldest first: the device's runs 1 to 2, from 2026-01-01T10:00:00+00:00 to " \
           "2026-01-02T10:00:00+00:00 (UTC)" in oldest and "first run of this test" in oldest
    assert "6 runs" not in oldest and "2026-01-06" not in oldest, "an older page holds nothing of newer runs"


def test_two_arrays_of_the_same_disks_are_two_devices_and_the_disks_alone_a_third(store):
    """RAID 0 and RAID 5 of the same four disks must never be judged as one device that got slower."""
    disks = {"devices": "nvme0n1, nvme1n1", "device.nvme0n1.model": "QEMU NVMe Ctrl", "device.nvme0n1.serial": "D0",
             "device.nvme1n1.model": "QEMU NVMe Ctrl", "device.nvme1n1.serial": "D1"}
    raid0 = run_at(store, 1, [1000], {**disks, "device.array.model": "md raid0, 2 members, chunk 512KiB"})
    raid1 = run_at(store, 2, [1000], {**disks, "device.array.model": "md raid1, 2 members"})
    again = run_at(store, 3, [1000], {**disks, "device.array.model": "md raid0, 2 members, chunk 512KiB"})
    alone = run_at(store, 4, [1000], disks)
    devices = group_devices(run_group(r.info, r.env) for r in (raid0, raid1, again, alone))
    by_label = {d.label: list(d.run_ids) for d in devices}
    assert by_label == {
        "2 disks: QEMU NVMe Ctrl · serial D0, QEMU NVMe Ctrl · serial D1": [alone.info.id],
        "md raid0, 2 members, chunk 512KiB of 2 disks: QEMU NVMe Ctrl · serial D0, QEMU NVMe Ctrl · serial D1":
            [raid0.info.id, again.info.id],
        "md raid1, 2 members of 2 disks: QEMU NVMe Ctrl · serial D0, QEMU NVMe Ctrl · serial D1": [raid1.info.id],
    }
    assert device_key_of(raid0.info, raid0.env).startswith("md-raid0-2-members-chunk-512kib-qemu-nvme-")
    assert device_key_of(alone.info, alone.env) != device_key_of(raid0.info, raid0.env)
