"""Publishing again into a published folder: only the pages of what changed are drawn, the others carried over as
hard links, and the site is the one a --full publish writes, byte for byte apart from the time each page was drawn."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from disklab.fio.parse import parse_fio_output
from disklab.store.notes import add_note
from disklab.store.repository import Store
from disklab.web import history, pages, publish_update
from disklab.web.pages import render_run_row
from disklab.web.publish import publish
from disklab.web.published import MANIFEST
from tests.conftest import fixture_text
from tests.unit.test_compare import DEFAULTS
from tests.unit.test_history import around, disk_env, run_at
from tests.unit.test_publish import parsed, publish as publish_command
from tests.unit.test_store import new_run

# The time a page was drawn, which a page carried over keeps from the publish that drew it.
_DRAWN_AT = re.compile(r"(?<=[Ss]hown )\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


def real_run(store: Store, day: int, env: dict, finished: bool = True, **changes) -> int:
    """A run of one real fio job (its job file and json+ output as fio wrote them) on 2026-01-DAY."""
    output = fixture_text("randread-4k-q32.jsonplus.json")
    (result,) = parse_fio_output(output).jobs
    started = f"2026-01-{day:02d}T10:00:00+00:00"
    run_id = store.create_run(new_run(started_at=started, suite_text="name = 'real'\n", planned_tests=1, **changes))
    store.add_test(run_id, 0, "RND4K Q32", {**DEFAULTS, "iodepth": 32}, fixture_text("randread-4k-q32.fio"), output,
                   "", started, result)
    store.set_run_values("run_env", run_id, env)
    if finished:
        store.finish_run(run_id, "complete")
    return run_id


def tree(site: Path) -> dict[str, str]:
    """Every file of the site, the times its pages were drawn masked."""
    files = {}
    for root, _, names in os.walk(site):
        for name in names:
            path = Path(root) / name
            files[path.relative_to(site).as_posix()] = _DRAWN_AT.sub("TIME", path.read_text())
    return files


def inodes(site: Path) -> dict[str, int]:
    return {path.relative_to(site).as_posix(): path.stat().st_ino for path in site.rglob("*") if path.is_file()}


@pytest.fixture
def paged(monkeypatch):
    """Pages of two runs, each judged against the two runs before it: a few runs make a history of many pages."""
    monkeypatch.setattr(history, "HISTORY_PAGE_RUNS", 2)
    monkeypatch.setattr(history, "CONTEXT_RUNS", 2)


def test_an_incremental_publish_is_the_full_publish_of_the_store_as_it_is_now(tmp_path, paged):
    """Runs added to a device and of a new one, renamed, deleted, noted, a running run finished, runs left out: each
    time the site published again equals a --full publish of the store into another folder."""
    db, site, full = tmp_path / "results.db", tmp_path / "site", tmp_path / "full"
    with Store(db) as store:
        for day, (iops, firmware) in enumerate(((1000, "2.1"), (1010, "2.1"), (1500, "2.2"), (1490, "2.2"),
                                                (1480, "2.2")), start=1):
            run_at(store, day, around(iops), disk_env(firmware))
        real_run(store, 6, disk_env(serial="S2"))
        real_run(store, 7, {"devices": "vda", "device.vda.model": "QEMU HARDDISK", "device.vda.serial": None})
        running = real_run(store, 8, disk_env("2.2"), finished=False)
        publish(store, site)

        def changed(*, excluded=()):
            publish(store, site, excluded=excluded)
            publish(store, full, excluded=excluded, full=True)
            assert tree(site) == tree(full)

        real_run(store, 9, disk_env("2.2"))  # a new run of a device: its newest page takes it
        changed()
        real_run(store, 10, disk_env(serial="S3"))  # a run of a new device
        changed()
        store.rename_run(2, "after the move")
        changed()
        store.finish_run(running, "complete")
        changed()
        add_note(store, 1, "cabled to the second HBA")
        changed()
        store.delete_runs([3])  # every page of its device after it moves by one run
        changed()
        changed(excluded=[4, 9])
        changed()
    assert "after the move" in (site / "runs/2.html").read_text() and not (site / "runs/3.html").exists()


def test_only_the_pages_of_what_changed_are_drawn_and_the_others_are_the_previous_sites_files(tmp_path, paged,
                                                                                               monkeypatch):
    """And of the runs list, the rows of the runs that changed: the others are the earlier list's."""
    db, site = tmp_path / "results.db", tmp_path / "site"
    with Store(db) as store:
        for day in range(1, 8):
            run_at(store, day, around(1000 + day), disk_env())
        real_run(store, 8, disk_env(serial="S2"))
        publish(store, site)
        before = inodes(site)
        run_at(store, 9, around(1009), disk_env())
        store.rename_run(8, "renamed")
        rows = []
        monkeypatch.setattr(pages, "render_run_row", lambda info, *args: rows.append(info.id) or
                            render_run_row(info, *args))
        again = publish(store, site)
    assert sorted(rows) == [8, 9]
    after = inodes(site)
    drawn = {name for name in after if before.get(name) != after[name]}
    with Store(db, read_only=True) as store:
        first, second = (device.key for device in history.store_devices(store))
    assert drawn == {
        "index.html", "devices/index.html", MANIFEST,  # drawn every time
        *(name for name in after if re.match(r"runs/[89][./]", name)),  # the renamed run's files, the new run's
        f"devices/{first}.html",  # the newest page of its device: runs 7 and 9 now (pages of two runs)
        f"devices/{first}-3.html",  # runs 5 and 6, of the newest page before: a page of their own now
        f"devices/{first}-2.html",  # runs 3 and 4: their newer page is no longer the newest
        f"devices/{second}.html",  # the renamed run's device: its runs table names it
        "compare/7,9.html",  # the step to the new run
    }
    assert again.files == len(after)
    assert all(before[name] == after[name] for name in ("runs/1.html", f"devices/{first}-1.html", "compare/1,2.html",
                                                         "compare/6,7.html"))


def test_a_manifest_of_an_older_format_or_full_draws_every_page_again(tmp_path, paged):
    db, site = tmp_path / "results.db", tmp_path / "site"
    with Store(db) as store:
        for day in range(1, 5):
            run_at(store, day, around(1000 + day), disk_env())
    assert publish_command(db, site).exit_code == 0
    first = inodes(site)
    assert publish_command(db, site).exit_code == 0
    carried = inodes(site)
    assert carried["runs/1.html"] == first["runs/1.html"] and carried["index.html"] != first["index.html"]
    result = publish_command(db, site, "--full")
    assert result.exit_code == 0, result.output
    full = inodes(site)
    assert not set(full.items()) & set(carried.items()), "--full: every file drawn again"
    manifest = json.loads((site / MANIFEST).read_text())
    assert manifest["format_version"] == 3 and manifest["runs"]["1"].partition("|")[0]
    (site / MANIFEST).write_text(json.dumps({"format": "disklab-publish", "format_version": 2,
                                             "files": sorted(inodes(site)), "fingerprints": {}, "links": {}}))
    assert publish_command(db, site).exit_code == 0
    assert not set(inodes(site).items()) & set(full.items()), "a manifest of format 2: every file drawn again"
    manifest["disklab_version"] = "0.0.1"
    (site / MANIFEST).write_text(json.dumps(manifest))
    drawn = inodes(site)
    assert publish_command(db, site).exit_code == 0
    assert not set(inodes(site).items()) & set(drawn.items()), "another disklab's site: every file drawn again"


def _links_of(page: Path) -> set[Path]:
    """The files of the site each relative link of a page names."""
    found = parsed(page)
    return {(page.parent / unquote(urlsplit(target).path)).resolve() for target in found.targets
            if not urlsplit(target).scheme and urlsplit(target).path}


def assert_whole_and_linked(site: Path, label) -> None:
    """Every page reachable from the runs list and the devices page is whole, and each of its links a file."""
    reachable, seen = [site / "index.html", site / "devices/index.html"], set()
    while reachable:
        page = reachable.pop()
        if page in seen:
            continue
        seen.add(page)
        assert page.read_text().rstrip().endswith("</html>"), (label, page)
        for target in _links_of(page):
            assert target.is_file(), (label, page, target)
            if target.suffix == ".html":
                reachable.append(target)


def changed_store(db: Path, site: Path, full: Path) -> None:
    """A site of two devices published, then a run added to one, a device added and one removed, a run renamed;
    `full`: the store as it is now published --full."""
    with Store(db) as store:
        for day in range(1, 6):
            run_at(store, day, around(1000 + day), disk_env())
        real_run(store, 6, disk_env(serial="S2"))
        publish(store, site)
        (site / "notes.txt").write_text("the lab's own")
        run_at(store, 7, around(1007), disk_env())  # a new run: a new page of its device's history
        real_run(store, 8, disk_env(serial="S3"))  # a new device
        store.rename_run(2, "renamed")
        store.delete_runs([6])  # a device gone, and its files
        publish(store, full, full=True)


# A publish in a process of its own that SIGKILLs itself after so many renames or removals of an update in place.
_KILLED_AFTER = """
import os, signal, sys
from pathlib import Path
from disklab.store.repository import Store
from disklab.web import publish_update
from disklab.web.publish import publish
done, original = 0, {name: getattr(publish_update, name) for name in ("_move", "_remove", "_write")}
def counted(name):
    def step(*args):
        global done
        if done == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)
        done += 1
        return original[name](*args)
    return step
for name in original:
    setattr(publish_update, name, counted(name))
with Store(sys.argv[1], read_only=True) as store:
    publish(store, Path(sys.argv[2]))
"""


def test_a_publish_updating_the_site_in_place_killed_leaves_it_whole_and_the_next_one_finishes_and_cleans_up(
        tmp_path):
    """A real SIGKILL (nothing of the publish runs after it): what it left beside the site is removed by the next
    publish, which makes the site a --full publish makes."""
    db, base, full = tmp_path / "results.db", tmp_path / "base", tmp_path / "full"
    changed_store(db, base, full)
    for killed_after in (0, 1, 5, 15, 25):
        site = tmp_path / f"site-{killed_after}"
        shutil.copytree(base, site, symlinks=True)
        child = subprocess.run([sys.executable, "-c", _KILLED_AFTER, str(db), str(site), str(killed_after)],
                               capture_output=True, text=True, timeout=300)
        assert child.returncode == -signal.SIGKILL, child.stderr
        assert_whole_and_linked(site, killed_after)
        assert [p for p in tmp_path.iterdir() if p.name.startswith(f"{site.name}.disklab-new-")], "left beside it"
        with Store(db, read_only=True) as store:
            publish(store, site)
        assert tree(site) == {**tree(full), "notes.txt": "the lab's own"}, killed_after
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(f"{site.name}.disklab-")], killed_after


def test_a_publish_updating_the_site_in_place_stopped_at_any_step_leaves_it_whole_and_the_next_finishes(
        tmp_path, paged, monkeypatch):
    """Stopped after each rename or removal of an update in place (as by a kill: nothing more is done): every file
    is whole, every link of every page reachable from the runs list and the devices page leads to a file of the
    site, the lab's own file is there; and the next publish makes the site a --full publish makes."""
    db, base, full = tmp_path / "results.db", tmp_path / "base", tmp_path / "full"
    changed_store(db, base, full)
    with Store(db, read_only=True) as store:
        steps, stopped_at = 0, 0
        original = {name: getattr(publish_update, name) for name in ("_move", "_remove", "_write")}

        def step(name):
            def counted(*args):
                nonlocal steps
                if steps == stopped_at:
                    raise KeyboardInterrupt
                steps += 1
                return original[name](*args)
            return counted

        while True:
            site = tmp_path / f"site-{stopped_at}"
            shutil.copytree(base, site, symlinks=True)
            steps = 0
            with monkeypatch.context() as patched:
                for name in original:
                    patched.setattr(publish_update, name, step(name))
                try:
                    publish(store, site)
                    break  # every step done
                except KeyboardInterrupt:
                    pass
            assert_whole_and_linked(site, stopped_at)
            assert (site / "notes.txt").read_text() == "the lab's own"
            publish(store, site)
            assert tree(site) == {**tree(full), "notes.txt": "the lab's own"}, stopped_at
            stopped_at += 1
    assert stopped_at > 10, "the update took its steps"
