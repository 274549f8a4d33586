"""Every kind of run disklab can store (tests/run_kinds.py: built-in suites with default passes, --repeat 1,
--best-of, --precision, ad-hoc --rw/--bs runs of several bs spellings, a fio job file, saturate, steady, write
saturation, sync, file sets, pgbench, replay, --hosts, configured series, an interrupted and a failed run, imported
fio output of several fio versions, an imported bundle, a series of md arrays after their member alone, made in the
kernel tier's guest), made for real in one store, through every command and page
that reads runs: show in every form, compare (pairs and a mix of kinds), report (HTML and PDF), export-run and
import, serve (every page kind, the figures and downloads, the device histories) and publish.

What fails a test: an exit other than the documented ones, an internal error or a traceback, a page that is not 200,
and any part a page or command could not draw (`Not drawn`, `disklab: warning: ... could not be drawn`)."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from contextlib import ExitStack
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.children import Children
from tests.integration.conftest import NEEDS_FIO, disklab_command, wait_for
from tests.run_kinds import MAKERS, Zoo, make_zoo

pytestmark = [pytest.mark.integration, NEEDS_FIO]

KINDS = list(MAKERS)
UNDRAWN = "could not be drawn"
# What a reading command may answer besides 0: one line saying why it does not apply (two runs with no test in
# common, a run without figures to compare, --per-host of a run on one host).
NOT_APPLICABLE = 2


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> Zoo:
    folder = tmp_path_factory.mktemp("run-kinds")
    children = Children()
    with ExitStack() as stack:
        stack.callback(children.end_all)
        yield make_zoo(folder, disklab_command(), stack, children)


@pytest.fixture(scope="module")
def server(zoo: Zoo):
    """`disklab serve` over the store, on a free port; its address."""
    children = Children()
    process = children.start([*zoo.command, "serve", "--port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=zoo.env)
    try:
        line = process.stdout.readline()
        found = re.search(r"at (http://[^/]+)/", line)
        assert found, f"serve said {line!r}"
        yield found[1]
    finally:
        children.end_all()


@dataclass(frozen=True)
class Answer:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def read(zoo: Zoo):
    """A reading command, run in this process by click's runner: the code of the `disklab` command (its exit
    status, stdout and stderr), without starting Python for each of the matrix's thousand readings."""
    from click.testing import CliRunner

    from disklab.cli.main import cli

    runner = CliRunner()
    overrides = {name: zoo.env.get(name) for name in ("DISKLAB_HOME", "DISKLAB_CONFIG", "COLUMNS", "DISKLAB_STORE",
                                                        "DISKLAB_DB")}

    def invoke(*args: str, home: Path | None = None) -> Answer:
        env = {**overrides, **({"DISKLAB_HOME": str(home)} if home else {})}
        result = runner.invoke(cli, list(args), env=env, prog_name="disklab")
        return Answer(result.exit_code, result.stdout, result.stderr)

    return invoke


def runs_of(zoo: Zoo, kind: str) -> list[int]:
    if kind in zoo.missing:
        pytest.skip(f"not run: {zoo.missing[kind]}")
    return zoo.runs[kind]


def drawn_whole(done: subprocess.CompletedProcess | Answer, *allowed: int) -> Answer:
    """The command answered as documented, with no part left undrawn and no internal error."""
    assert done.returncode in (0, *allowed), done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert UNDRAWN not in done.stderr, done.stderr
    if done.returncode:
        assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("disklab: error:"), done.stderr
    return done


def test_every_kind_is_made(zoo: Zoo):
    assert set(zoo.runs) | set(zoo.missing) == set(KINDS)
    assert all(zoo.runs.get(kind) for kind in KINDS if kind not in zoo.missing), zoo.runs
    statuses = {run["id"]: run["status"] for run in json.loads(zoo("runs", "--all", "-f", "json").stdout)["runs"]}
    assert sorted(statuses) == zoo.all_runs()
    assert {statuses[n] for n in zoo.runs.get("interrupted", ())} <= {"interrupted"}
    assert {statuses[n] for n in zoo.runs.get("failed", ())} <= {"failed"}


@pytest.mark.parametrize("kind", KINDS)
def test_show_in_every_form(zoo: Zoo, read, kind: str):
    """Every run in each format; the first of its kind in every other way of showing it."""
    for n, run_id in enumerate(runs_of(zoo, kind)):
        run = str(run_id)
        document = json.loads(drawn_whole(read("show", run, "-f", "json")).stdout)
        assert document["run"]["id"] == run_id and "undrawn" not in document
        for form in ("table", "markdown"):
            drawn_whole(read("show", run, "-f", form))
        figures = sum(len(test["metrics"]) for test in document["tests"])
        csv = drawn_whole(read("show", run, "-f", "csv")).stdout
        if "sweep" not in document:  # a pgbench run's CSV is its client sweep
            assert len(csv.splitlines()) == 1 + figures
        jobfiles = [jobfile for jobfile, in stored_tests(zoo, run_id, "jobfile", hosts=False)]
        assert drawn_whole(read("show", run, "--jobfile")).stdout == "\n".join(jobfiles)
        if n:
            continue
        drawn_whole(read("show", run, "--flat"))
        for form in ("table", "json", "markdown"):
            drawn_whole(read("show", run, "--env", "-f", form))
        drawn_whole(read("show", run, "--series"))
        drawn_whole(read("show", run, "--spec", "sata-ssd-consumer-1t"))
        drawn_whole(read("show", run, "--per-host"), NOT_APPLICABLE)


def stored_tests(zoo: Zoo, run_id: int, columns: str, hosts: bool = True) -> list[tuple]:
    """Columns of the run's tests as the store holds them, in their order; `hosts`: each fio server's test of a run
    on many hosts too, not only the aggregates."""
    with sqlite3.connect(f"file:{zoo.store}?mode=ro", uri=True) as conn:
        return [tuple(row) for row in conn.execute(
            f"SELECT {columns} FROM tests WHERE run_id = ? AND (? OR host IS NULL OR NOT EXISTS ("
            "SELECT 1 FROM runs WHERE runs.id = run_id AND json_extract(options_json, '$.hosts') IS NOT NULL)) "
            "ORDER BY seq", (run_id, hosts))]


@pytest.mark.parametrize("kind", KINDS)
def test_report_of_each_run(zoo: Zoo, read, kind: str, tmp_path: Path):
    for run_id in runs_of(zoo, kind):
        report = tmp_path / f"run{run_id}.html"
        drawn_whole(read("report", str(run_id), "-o", str(report)))
        html = report.read_text()
        assert f'id="run-{run_id}"' in html and "Not drawn" not in html
        for svg in re.findall(r"<svg .*?</svg>", html, re.S):
            ET.fromstring(svg)


def test_one_report_of_every_kind_as_html_and_pdf(zoo: Zoo, tmp_path: Path):
    firsts = [str(runs[0]) for runs in zoo.runs.values()]
    drawn_whole(zoo("report", *firsts, "-o", str(tmp_path / "all.html"), check=False))
    html = (tmp_path / "all.html").read_text()
    assert all(f'id="run-{run_id}"' in html for run_id in firsts) and "Not drawn" not in html
    if shutil.which("chromium") is None:
        pytest.skip("not run: Chromium (Debian's 'chromium') is not installed, so no PDF")
    drawn_whole(zoo("report", *firsts, "--pdf", "-o", str(tmp_path / "all.pdf"), check=False))
    assert (tmp_path / "all.pdf").read_bytes().startswith(b"%PDF-")


@pytest.mark.parametrize("kind", KINDS)
def test_compare_with_its_own_kind_and_the_next(zoo: Zoo, read, kind: str):
    """Each run against the next of its kind, and the first against the first of the next kind, in each format; a
    pair with no test in common, or a run without figures, is one line and exit 2."""
    runs = runs_of(zoo, kind)
    kinds = list(zoo.runs)
    following = zoo.runs[kinds[(kinds.index(kind) + 1) % len(kinds)]]
    for pair in [*zip(runs, runs[1:]), (runs[0], following[0])]:
        for form in ("table", "json", "csv", "markdown"):
            done = drawn_whole(read("compare", *map(str, pair), "-f", form), NOT_APPLICABLE)
            if form == "json" and done.returncode == 0:
                assert [run["id"] for run in json.loads(done.stdout)["runs"]] == list(pair)


def test_compare_a_mix_of_every_kind(zoo: Zoo, read):
    firsts = [str(runs[0]) for runs in zoo.runs.values()]
    for some in (firsts[:12], firsts[12:], firsts[::2]):
        drawn_whole(read("compare", *some), NOT_APPLICABLE)


def _moved(document: dict) -> dict:
    """show -f json of a run, less what a move changes: its number (and the view's title, which names it), its
    origin and its series' number."""
    document["run"].pop("id"), document["run"].pop("origin")
    document["run"]["options"].pop("series", None)
    document.get("view", {}).pop("title", None)
    return document


@pytest.mark.parametrize("kind", KINDS)
def test_export_run_and_import_move_each_kind_whole(zoo: Zoo, read, kind: str, tmp_path: Path):
    runs = runs_of(zoo, kind)
    bundle, other = tmp_path / "runs.json.gz", tmp_path / "other"
    drawn_whole(read("export-run", *map(str, runs), "-o", str(bundle)))
    drawn_whole(read("import", str(bundle), home=other))
    for moved, run_id in enumerate(runs, start=1):
        before = json.loads(read("show", str(run_id), "-f", "json").stdout)
        after = json.loads(read("show", str(moved), "-f", "json", home=other).stdout)
        assert _moved(after) == _moved(before)


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=120) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def page(server: str, path: str) -> str:
    status, text = fetch(server + path)
    assert status == 200, f"{path}: {status}\n{text[:500]}"
    assert "Not drawn" not in text, f"{path}: {text[:2000]}"
    return text


@pytest.mark.parametrize("kind", KINDS)
def test_serve_answers_every_page_and_download_of_each_run(zoo: Zoo, read, server: str, kind: str):
    for run_id in runs_of(zoo, kind):
        html = page(server, f"/runs/{run_id}")
        stored = {test_id: (jobfile, output)
                  for test_id, jobfile, output in stored_tests(zoo, run_id, "id, jobfile, fio_output")}
        # Every test's downloads, each exactly as stored (a run on many hosts lists each host's test too).
        assert {int(t) for t in re.findall(r'data-test-id="(\d+)"', html)} <= set(stored)
        for test_id, (jobfile, output) in stored.items():
            assert page(server, f"/runs/{run_id}/tests/{test_id}/job.fio") == jobfile
            assert page(server, f"/runs/{run_id}/tests/{test_id}/fio.json") == output
        page(server, f"/runs/{run_id}/suite.toml")
        for form in ("json", "csv"):  # as `show -f FORM` writes them
            assert page(server, f"/runs/{run_id}/figures.{form}") == read("show", str(run_id), "-f", form).stdout
        for device in set(re.findall(r'href="(/devices/[^"?]+)"', html)):
            page(server, unescape(device))
        others = [runs[0] for name, runs in zoo.runs.items() if name != kind][:3]
        page(server, f"/compare/{run_id}," + ",".join(map(str, others)))


def unescape(href: str) -> str:
    return href.replace("&amp;", "&")


def test_serve_lists_searches_and_groups_every_run(zoo: Zoo, server: str):
    listed = page(server, "/?sort=name")
    assert all(f'href="/runs/{run_id}"' in listed for run_id in zoo.all_runs()[-50:])
    page(server, "/?q=%C3%9F")  # ß, in a run's name
    devices = page(server, "/devices")
    for device in set(re.findall(r'href="(/devices/[^"]+)"', devices)):
        page(server, unescape(device))


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.links += [value for name, value in attrs if name in ("href", "src") and value]


def test_publish_writes_every_run_and_every_link_resolves(zoo: Zoo, tmp_path: Path):
    site = tmp_path / "site"
    done = zoo("publish", "-o", str(site), check=False)
    drawn_whole(done)
    for run_id in zoo.all_runs():
        assert (site / "runs" / f"{run_id}.html").is_file()
    pages = sorted(site.rglob("*.html"))
    for path in pages:
        html = path.read_text()
        assert "Not drawn" not in html, path
        parser = _Links()
        parser.feed(html)
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("#") or not parts.path:
                continue
            assert (path.parent / unquote(parts.path)).resolve().is_file(), f"{path}: {link}"


def test_publish_leaves_out_the_runs_excluded_or_filtered(zoo: Zoo, read, tmp_path: Path):
    complete = [r["id"] for r in json.loads(read("runs", "--all", "--status", "complete", "-f", "json").stdout)["runs"]]
    series = zoo.runs.get("configured series", [])
    if not series:
        pytest.skip(f"not run: {zoo.missing.get('configured series')}")
    left_out = zoo.runs["builtin repeat 1"][0]
    site = tmp_path / "site"
    drawn_whole(zoo("publish", "-o", str(site), "--status", "complete", "--exclude", str(left_out),
                    "--exclude", f"series:{series[0]}", check=False))
    published = {int(p.stem) for p in (site / "runs").glob("*.html")}
    assert published == set(complete) - {left_out} - set(series[:2])
    assert set(zoo.all_runs()) - set(complete) and published < set(complete)
    index = (site / "index.html").read_text()
    assert f"runs/{left_out}.html" not in index and all(f"runs/{n}.html" in index for n in published)


def test_a_run_that_cannot_be_drawn_in_part_says_so_and_the_rest_is_drawn(zoo: Zoo, tmp_path: Path):
    """A stored value no disklab writes (a run's options edited by hand: 'repeat' as words) reaches a bug in the
    per-test table and the findings: report, serve and publish draw every other part and run, name the parts
    missing (on the page and on stderr) and exit 1."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(zoo.store, home / "results.db")
    damaged, other = zoo.runs["builtin repeat 1"][0], zoo.runs["builtin default passes"][0]
    with sqlite3.connect(home / "results.db") as conn:
        options = json.loads(conn.execute("SELECT options_json FROM runs WHERE id = ?", (damaged,)).fetchone()[0])
        conn.execute("UPDATE runs SET options_json = ? WHERE id = ?",
                     (json.dumps({**options, "repeat": "five", "runtime": "x"}), damaged))
    env = {**zoo.env, "DISKLAB_HOME": str(home)}

    done = zoo("report", str(damaged), str(other), "-o", str(tmp_path / "r.html"), env=env, check=False)
    assert done.returncode == 1, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("disklab: warning:")]
    assert warnings and all(UNDRAWN in line for line in warnings), done.stderr
    assert any(f"run {damaged}" in line and "every test" in line for line in warnings), done.stderr
    assert not any(f"run {other}" in line for line in warnings), done.stderr
    assert done.stderr.splitlines()[-1].startswith("disklab: error:") and "internal error" not in done.stderr
    html = (tmp_path / "r.html").read_text()
    assert "Not drawn" in html and f'id="run-{damaged}"' in html
    assert "<table>" in html[html.index(f'id="run-{other}"'):], "the other run's tables are drawn"

    site = tmp_path / "site"
    done = zoo("publish", "-o", str(site), env=env, check=False)
    assert done.returncode == 1 and done.stdout.startswith("published"), done.stderr
    assert "Not drawn" in (site / "runs" / f"{damaged}.html").read_text()
    assert "Not drawn" not in (site / "runs" / f"{other}.html").read_text()
    assert {int(p.stem) for p in (site / "runs").glob("*.html")} == set(zoo.all_runs())
