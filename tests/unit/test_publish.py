"""`disklab publish`: the server's pages as a static folder whose every link is a file of the folder (from file:// and
from any web server), its downloads the store's own text, and a folder of anything else refused."""

import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from click.testing import CliRunner

from disklab.cli.main import cli
from disklab.fio.parse import parse_fio_output
from disklab.store.repository import Store
from tests.conftest import fixture_text
from tests.unit.test_compare import DEFAULTS
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
