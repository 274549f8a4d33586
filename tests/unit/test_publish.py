"""`disklab publish`: the server's pages as a static folder whose every link is a file of the folder (from file:// and
from any web server), its downloads the store's own text, and a folder of anything else refused."""

import errno
import hashlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.fio.parse import parse_fio_output
from disklab.store.repository import Store
from tests.conftest import fixture_text
from disklab.web import publish as site_module
from disklab.web.published import read_manifest
from tests.unit.test_compare import DEFAULTS, job, stored_run
from tests.unit.test_history import around, disk_env, run_at
from tests.unit.test_store import new_run


class _Links(HTMLParser):
    """Every href and src of a page, and the elements the tests look for."""

    def __init__(self):
        super().__init__()
        self.targets: list[str] = []
        self.classes: list[tuple[str, str]] = []  # (tag, class)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.targets += [attrs[name] for name in ("href", "src") if attrs.get(name) is not None]
        self.classes.append((tag, attrs.get("class") or ""))


def parsed(path: Path) -> _Links:
    page = _Links()
    page.feed(path.read_text())
    return page


@pytest.fixture
def db(tmp_path) -> Path:
    """A device with a firmware change that moved its figures, a run on a disk that recorded no serial, a run of a
    real fio job with its job file and output, and a name that is markup."""
    path = tmp_path / "results.db"
    with Store(path) as store:
        run_at(store, 1, around(1000), disk_env("2.1"))
        run_at(store, 2, around(1030), disk_env("2.1"))
        run_at(store, 3, around(1600), disk_env("2.2"), name="<script>alert(1)</script>")
        run_at(store, 4, [900], {"devices": "vda", "device.vda.model": "QEMU HARDDISK", "device.vda.serial": None})
        output = fixture_text("randread-4k-q32.jsonplus.json")
        (result,) = parse_fio_output(output).jobs
        run_id = store.create_run(new_run(started_at="2026-01-05T10:00:00+00:00", suite_text="name = 'real'\n"))
        store.add_test(run_id, 0, "RND4K Q32", {**DEFAULTS, "iodepth": 32}, fixture_text("randread-4k-q32.fio"),
                       output, "", "2026-01-05T10:00:00+00:00", result)
        store.set_run_values("run_env", run_id, disk_env("2.2"))
        store.finish_run(run_id, "complete")
    return path


def publish(db: Path, folder: Path, *more: str):
    return CliRunner().invoke(cli, ["publish", "-o", str(folder), "--db", str(db), *more])


def test_every_link_of_every_page_is_a_file_of_the_site(db, tmp_path):
    site = tmp_path / "site"
    result = publish(db, site)
    assert result.exit_code == 0, result.output
    assert "published 5 runs, 2 devices and 2 comparisons" in result.output
    pages = sorted(site.rglob("*.html"))
    assert {p.relative_to(site).as_posix() for p in pages} >= {
        "index.html", "devices/index.html", "runs/1.html", "runs/5.html", "compare/1,2.html", "compare/2,3.html",
    }
    checked = 0
    for page in pages:
        for target in parsed(page).targets:
            parts = urlsplit(target)
            if parts.scheme == "data":  # inline content (an empty favicon): nothing to fetch
                continue
            assert not parts.scheme and not parts.netloc and not parts.path.startswith("/"), (page, target)
            if parts.path:  # a fragment alone points into the page itself
                assert (page.parent / unquote(parts.path)).resolve().is_file(), f"{page}: {target} is not in the site"
                checked += 1
    assert checked > 50
    compared = (site / "compare/1,2.html").read_text()
    assert compared.index('id="overview"') < compared.index('id="tested"'), "the overview first, as serve shows it"


def test_the_pages_are_the_servers_with_their_downloads_as_files(db, tmp_path):
    site = tmp_path / "site"
    publish(db, site)
    index = (site / "index.html").read_text()
    assert re.findall(r'<tr data-run-id="(\d+)"', index) == ["5", "4", "3", "2", "1"], "every run, on one page"
    assert "disklab serve" in index and "disklab report" in index and 'id="filter"' in index
    devices = parsed(site / "devices/index.html")
    assert ("table", "") in devices.classes and 'id="devices"' in (site / "devices/index.html").read_text()
    (link,) = [t for t in devices.targets if "/acme-nvme-1tb-s1-" in t]
    history = (site / "devices" / link).read_text()
    (change,) = re.findall(r'<td class="figure change-point verdict-better" title="([^"]*)">1,600', history)
    assert "read IOPS: 1,030 ±2.5 % in run 2 -&gt; 1,600 ±2.5 %" in change and "sda: firmware: 2.1 -&gt; 2.2" in change
    assert history.count('<table class="history">') == 2, "the quick test and the real job's, matched apart"
    with Store(db, read_only=True) as store:
        record = store.get_run(5)
    (test,) = record.tests
    assert (site / f"runs/5/tests/{test.id}/job.fio").read_text() == test.jobfile == fixture_text("randread-4k-q32.fio")
    assert (site / f"runs/5/tests/{test.id}/fio.json").read_text() == test.fio_output
    assert (site / "runs/5/suite.toml").read_text() == "name = 'real'\n"
    assert json.loads((site / "runs/5/figures.json").read_text())["run"]["id"] == 5
    assert (site / "runs/5/figures.csv").read_text().startswith("run_id,")
    run3 = (site / "runs/3.html").read_text()
    assert "<script>alert(1)" not in run3 and "&lt;script&gt;alert(1)&lt;/script&gt;" in run3


def test_the_store_is_only_read(db, tmp_path):
    """The store's bytes stay, and nothing new lands beside it but SQLite's files of any reader in WAL mode."""
    site, wal = tmp_path / "site", tmp_path / f"{db.name}-wal"
    before = hashlib.sha256(db.read_bytes()).hexdigest(), {p.name for p in tmp_path.iterdir()}
    db.chmod(0o444)
    try:
        assert publish(db, site).exit_code == 0
    finally:
        db.chmod(0o644)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before[0]
    assert {p.name for p in tmp_path.iterdir()} - before[1] <= {site.name, f"{db.name}-shm", wal.name}
    assert not wal.exists() or wal.stat().st_size == 0


def test_a_folder_of_other_files_is_refused_in_one_line_and_left_alone(db, tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_bytes(b"\xff\xd8")
    result = publish(db, folder)
    assert result.exit_code == 2
    assert result.output == (f"disklab: error: {folder} is not empty and holds no earlier disklab publish: publish "
                             "into a new or empty folder, or into one an earlier publish wrote\n")
    assert [p.name for p in folder.iterdir()] == ["cat.jpg"]
    (tmp_path / "file").write_text("x")
    assert publish(db, tmp_path / "file").output.startswith("disklab: error: cannot publish into ")
    (tmp_path / "empty").mkdir()
    assert publish(db, tmp_path / "empty").exit_code == 0
    missing = publish(tmp_path / "none.db", tmp_path / "site2")
    assert missing.exit_code == 5 and missing.output.count("\n") == 1 and not (tmp_path / "site2").exists()


def test_publishing_again_updates_the_site_and_removes_only_what_it_wrote_before(db, tmp_path):
    site = tmp_path / "site"
    publish(db, site)
    (site / "README.txt").write_text("the lab's own note")
    with Store(db) as store:
        store.delete_runs([4])
    result = publish(db, site)
    assert result.exit_code == 0, result.output
    assert not (site / "runs/4.html").exists() and not (site / "runs/4").exists()
    assert (site / "README.txt").read_text() == "the lab's own note"
    assert not any(p.name.startswith("target-") for p in (site / "devices").iterdir())
    assert 'data-run-id="4"' not in (site / "index.html").read_text()


def site_state(site: Path) -> dict[str, bytes | str]:
    """Every entry of the site: a file's bytes, a link's target (never followed)."""
    state = {}
    for root, folders, files in os.walk(site):
        for name in files + [f for f in folders if os.path.islink(os.path.join(root, f))]:
            path = Path(root) / name
            state[path.relative_to(site).as_posix()] = f"-> {os.readlink(path)}" if path.is_symlink() \
                else path.read_bytes()
    return state


def leftovers(site: Path) -> list[str]:
    return sorted(p.name for p in site.parent.iterdir() if p.name.startswith(f"{site.name}.disklab-"))


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_link_planted_in_the_site_is_never_written_through_nor_its_target_removed(db, tmp_path):
    """Updated in place, the site's pages that did not change are not looked at (a link planted there stays as it
    is, nothing read or written through it); a folder the update needs that is a link makes publish write the
    site whole, and the links under publish's names are gone."""
    site, outside = tmp_path / "site", tmp_path / "outside"
    assert publish(db, site).exit_code == 0
    outside.mkdir()
    (outside / "victim.html").write_text("precious")
    (outside / "suite.toml").write_text("precious too")
    (outside / "1,2.html").write_text("and this")
    (site / "runs/1.html").unlink()
    (site / "runs/1.html").symlink_to(outside / "victim.html")  # a page publish writes again
    for name in ("compare", "runs/4"):  # a folder publish writes into; one it removes (run 4 is deleted below)
        os.rename(site / name, tmp_path / f"moved-{name.replace('/', '-')}")
        (site / name).symlink_to(outside, target_is_directory=True)
    (site / "elsewhere").symlink_to(outside, target_is_directory=True)  # the lab's own link
    (site / "empty").mkdir()
    site.chmod(0o751)
    before = site_state(outside)
    with Store(db) as store:
        store.delete_runs([4])
    result = publish(db, site)  # in place: run 4's files removed, runs 1 to 3 and their comparison unchanged
    assert result.exit_code == 0, result.output
    assert site_state(outside) == before, "nothing written or removed outside the site"
    assert not os.path.lexists(site / "runs/4") and not (site / "runs/4.html").exists()
    assert (site / "runs/1.html").is_symlink() and (site / "compare").is_symlink(), "not looked at"
    with Store(db) as store:
        store.rename_run(1, "renamed")  # its page and its comparison drawn again: one is to go into `compare`
    result = publish(db, site)
    assert result.exit_code == 0, result.output
    assert site_state(outside) == before, "nothing written or removed outside the site"
    assert not (site / "runs/1.html").is_symlink() and "renamed" in (site / "runs/1.html").read_text()
    assert not (site / "compare").is_symlink() and (site / "compare/1,2.html").is_file()
    assert os.readlink(site / "elsewhere") == str(outside), "a link of the lab's own stays a link"
    assert (site / "empty").is_dir() and stat.S_IMODE(site.stat().st_mode) == 0o751
    assert leftovers(site) == []


def test_a_site_folder_given_as_a_link_is_published_where_it_points_and_the_link_stays(db, tmp_path):
    real, link = tmp_path / "www" / "lab", tmp_path / "lab"
    real.mkdir(parents=True)
    link.symlink_to(real, target_is_directory=True)
    for _ in range(2):
        result = publish(db, link)
        assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert (real / "index.html").is_file() and (real / ".disklab-publish.json").is_file()
    assert leftovers(real) == [] and leftovers(link) == []
    (tmp_path / "nowhere").symlink_to(tmp_path / "missing")
    dangling = publish(db, tmp_path / "nowhere")
    assert dangling.exit_code == 2 and "is a symbolic link to nothing" in dangling.output
    assert not (tmp_path / "missing").exists()


def test_the_next_publish_puts_back_a_site_a_killed_publish_had_set_aside_and_removes_its_leftovers(db, tmp_path):
    """Killed between the two renames of a file system without renameat2's exchange: the folder is missing, the
    previous site beside it, the new one (complete or not) beside that."""
    site = tmp_path / "site"
    publish(db, site)
    (site / "README.txt").write_text("the lab's own note")
    pid = dead_pid()
    os.rename(site, tmp_path / f"site.disklab-old-{pid}")
    (tmp_path / f"site.disklab-new-{pid}" / "runs").mkdir(parents=True)
    (tmp_path / f"site.disklab-new-{pid}" / "runs/1.html").write_text("<!DOCTYPE html><html>trunc")
    (tmp_path / "site.disklab-new-1").mkdir()  # PID 1 is alive (init): another publish's, left alone
    result = publish(db, site)
    assert result.exit_code == 0, result.output
    assert (site / "README.txt").read_text() == "the lab's own note"
    assert leftovers(site) == ["site.disklab-new-1"]


def test_without_an_atomic_exchange_the_old_site_is_renamed_aside_and_the_new_one_in(db, tmp_path, monkeypatch):
    def unsupported(first, second):
        raise OSError(errno.EINVAL, "not supported by this file system")

    monkeypatch.setattr(site_module, "_exchange", unsupported)
    site = tmp_path / "site"
    publish(db, site)
    (site / "notes").mkdir()
    (site / "notes/README.txt").write_text("the lab's own note")
    site.chmod(0o750)
    with Store(db) as store:
        store.delete_runs([4])
    result = publish(db, site)
    assert result.exit_code == 0, result.output
    assert (site / "notes/README.txt").read_text() == "the lab's own note" and not (site / "runs/4.html").exists()
    assert stat.S_IMODE(site.stat().st_mode) == 0o750 and leftovers(site) == []


def test_a_mount_point_or_a_folder_whose_parent_is_read_only_is_refused_before_anything_is_written(db, tmp_path,
                                                                                                     monkeypatch):
    assert publish(db, Path("/")).output.startswith("disklab: error: cannot publish into /: it is a mount point")
    (tmp_path / "site").mkdir()
    monkeypatch.setattr(site_module.os, "access", lambda path, mode: Path(path) != tmp_path)  # root writes anyway
    result = publish(db, tmp_path / "site")
    assert result.exit_code == 2 and f"{tmp_path} is not writable" in result.output
    assert not any((tmp_path / "site").iterdir()) and leftovers(tmp_path / "site") == []


KILLED_RUNS = 200  # enough that a publish takes a few seconds on a 2-core machine


def named_store(path: Path, prefix: str) -> Path:
    """KILLED_RUNS runs of one device; every page shows `prefix` (each run is named by it)."""
    with Store(path) as store:
        for n in range(1, KILLED_RUNS + 1):
            stored_run(store, [("4k random read", {}, [job(1000 + n % 7)])], disk_env(), name=f"{prefix} {n}",
                       started_at=f"2026-01-{1 + n // 24:02d}T{n % 24:02d}:00:00+00:00")
    return path


def whole_site(site: Path) -> set[str]:
    """The names in the site's manifest; each must be there, and each page complete."""
    names = set(read_manifest(json.loads((site / ".disklab-publish.json").read_text()), False).files())
    for name in names:
        if name.endswith(".html"):
            assert (site / name).read_text().rstrip().endswith("</html>"), f"{name} is cut short"
        else:
            assert (site / name).is_file(), name
    return names


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used so far: a measure of its progress that a busy machine does not stretch."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_killed_publish_leaves_the_previous_site_whole_and_the_next_one_cleans_up(tmp_path, children):
    """SIGKILL at points from the start to the swap, by the CPU time a whole publish takes: the folder holds the
    previous site as it was, byte for byte, or (killed after the swap) the new one whole; never a mixture or a cut
    page."""
    site = tmp_path / "site"
    first, second = named_store(tmp_path / "a.db", "alpha"), named_store(tmp_path / "b.db", "bravo")
    command = [sys.executable, "-m", "disklab", "publish", "--full", "-o", str(site)]  # whole, then swapped in
    baseline = children.start([*command, "--db", str(first)], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(baseline.pid, 0)
    baseline.returncode = os.waitstatus_to_exitcode(status)
    assert baseline.returncode == 0
    whole = usage.ru_utime + usage.ru_stime
    previous, previous_names = site_state(site), whole_site(site)

    def stopped(fraction: float, sig: signal.Signals) -> int:
        """The exit code of a publish of the second store sent `sig` once it has used `fraction` of that CPU time."""
        process = children.start([*command, "--db", str(second)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        while process.poll() is None:
            try:
                if cpu_seconds(process.pid) >= whole * fraction:
                    os.killpg(process.pid, sig)
                    break
            except FileNotFoundError:  # it ended meanwhile
                break
            time.sleep(0.005)
        return process.wait()

    assert stopped(0.5, signal.SIGTERM) == 130, "SIGTERM is taken as Ctrl-C"
    assert site_state(site) == previous and leftovers(site) == [], "and the site in the making is removed"
    outcomes = []
    for fraction in (0.3, 0.65, 0.9, 1.0):
        stopped(fraction, signal.SIGKILL)
        if whole_site(site) == previous_names and site_state(site) == previous:
            outcomes.append("previous")
            continue
        assert not any(b"alpha" in (site / name).read_bytes() for name in whole_site(site) if name.endswith(".html")),\
            "a mixture of the two sites"
        outcomes.append("new")
        break  # the folder holds the new site now: later kills would show nothing more
    assert "previous" in outcomes, outcomes
    result = subprocess.run([*command, "--db", str(second)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert leftovers(site) == [], "the dead publishes' folders are removed"
    assert b"bravo 1<" in (site / "index.html").read_bytes() and whole_site(site) == previous_names
