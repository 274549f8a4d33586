"""The installed disklab's commands on the runs it made (a quick run, ad-hoc runs, a fio job file): every command
that reads runs, the pages of publish and serve, and the commands that read the package's own data (capacity,
suites, trace import, doctor), each exiting 0 with what a user would look for."""

import gzip
import json
import re
import select
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.error import HTTPError
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import urlopen

import pytest

from tests.installed.conftest import KINDS, ROOT
from tests.run_kinds import COMMAND_TIMEOUT_S, FIXTURES

pytestmark = pytest.mark.installed
CHROMIUM = Path("/usr/bin/chromium")  # report --pdf's engine (Debian's package)
MOST_PAGES = 2000  # a crawl that finds more has found links that never end


class Page(HTMLParser):
    def __init__(self, text: str):
        super().__init__()
        self.links: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.links += [value for name, value in attrs if name in ("href", "src") and value]


def whole_page(text: str) -> bool:
    return text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")


def first_runs(zoo) -> list[str]:
    """One run of each kind, as the commands name them."""
    return [str(zoo.runs[kind][0]) for kind in KINDS]


def test_every_run_made_records_the_installed_version(lab, version, zoo):
    shown = lab.each(*(("show", str(run), "-f", "json") for run in zoo.all_runs()))
    assert {json.loads(s.stdout)["run"]["disklab_version"] for s in shown} == {version}
    assert {json.loads(s.stdout)["run"]["status"] for s in shown} == {"complete"}


def test_show_in_every_format_and_runs(lab, version, zoo):
    for run in map(str, zoo.all_runs()):
        table, as_json, csv, markdown, env, jobfile = lab.each(
            ("show", run), ("show", run, "-f", "json"), ("show", run, "-f", "csv"), ("show", run, "-f", "markdown"),
            ("show", run, "--env", "-f", "json"), ("show", run, "--jobfile"))
        tests = json.loads(as_json.stdout)["tests"]
        assert tests and f"run {run}" in table.stdout, table.stdout[:300]
        assert csv.stdout.startswith("run_id,") and len(csv.stdout.splitlines()) > len(tests)
        assert f"run {run}" in markdown.stdout and "\n|---|" in markdown.stdout
        assert json.loads(env.stdout)["environment"]["fio_version"].startswith("fio-")
        assert f"; disklab {version}, suite " in jobfile.stdout and "[global]" in jobfile.stdout
    listed = json.loads(lab("runs", "--all", "-f", "json").stdout)["runs"]
    assert sorted(r["id"] for r in listed) == zoo.all_runs()


def test_compare_of_runs_with_tests_in_common_and_of_runs_without(lab, zoo):
    same = json.loads(lab("compare", *map(str, zoo.runs["fio job file"]), "-f", "json").stdout)
    assert same["format"] == "disklab-compare" and len(same["rows"]) >= 4
    assert "baseline" in lab("compare", *map(str, zoo.runs["fio job file"])).stdout
    mixed = lab("compare", *first_runs(zoo), check=False)
    assert mixed.returncode == 2 and "have no test in common" in mixed.stderr, mixed.stderr


def test_report_of_every_run_and_a_pdf(lab, zoo, tmp_path):
    report = tmp_path / "report.html"
    lab("report", *map(str, zoo.all_runs()), "-o", str(report))
    html = report.read_text()
    assert whole_page(html) and html.count("<svg") >= len(KINDS)
    script = (ROOT / "src/disklab/report/html/downloads.js").read_text().strip()
    assert script in html, "the charts' downloads script, read from the installed package's files"
    if not CHROMIUM.exists():
        return  # report --pdf needs Debian's chromium (make test installs it)
    pdf = tmp_path / "report.pdf"
    lab("report", *first_runs(zoo), "--pdf", "-o", str(pdf))
    assert pdf.read_bytes().startswith(b"%PDF-")


def test_export_writes_job_files_that_name_the_version(lab, version, tmp_path):
    lab("export", "quick", "--fio", str(tmp_path / "jobs"))
    jobs = sorted((tmp_path / "jobs").glob("*.fio"))
    assert len(jobs) == 8 and (tmp_path / "jobs" / "run-all.sh").exists()
    assert all(job.read_text().startswith(f"; disklab {version}, suite 'quick'") for job in jobs)


def test_export_run_and_import_into_another_store(lab, version, zoo, tmp_path):
    bundle = tmp_path / "runs.json.gz"
    lab("export-run", *map(str, zoo.all_runs()), "-o", str(bundle))
    assert json.loads(gzip.decompress(bundle.read_bytes()))["disklab_version"] == version
    elsewhere = {**lab.env, "DISKLAB_HOME": str(tmp_path / "other-home")}
    lab("import", str(bundle), env=elsewhere)
    listed = json.loads(lab("runs", "--all", "-f", "json", env=elsewhere).stdout)["runs"]
    assert len(listed) == len(zoo.all_runs())


def test_publish_writes_every_page_whole_with_every_link_a_file_of_the_site(lab, zoo, tmp_path):
    site = tmp_path / "site"
    lab("publish", "-o", str(site))
    pages = sorted(site.rglob("*.html"))
    assert {f"runs/{run}.html" for run in zoo.all_runs()} | {"index.html", "devices/index.html"} <= {
        page.relative_to(site).as_posix() for page in pages}
    for page in pages:
        text = page.read_text()
        assert whole_page(text), page
        for link in Page(text).links:
            parts = urlsplit(link)
            if parts.scheme or not parts.path:  # inline data, or a place in the page itself
                continue
            assert not parts.netloc and not parts.path.startswith("/"), (page, link)
            assert (page.parent / unquote(parts.path)).resolve().is_file(), f"{page}: {link} is not in the site"


def crawl(base: str, paths: list[str]) -> dict[str, int]:
    """Every page of the server reachable from `paths` by its links, with the status each answered."""
    statuses: dict[str, int] = {}
    waiting = list(paths)
    while waiting:
        path = waiting.pop()
        if path in statuses:
            continue
        assert len(statuses) < MOST_PAGES, sorted(statuses)[-20:]
        try:
            with urlopen(base + path, timeout=COMMAND_TIMEOUT_S) as answer:
                statuses[path], kind, body = answer.status, answer.headers.get_content_type(), answer.read()
        except HTTPError as refused:
            statuses[path] = refused.code
            continue
        if kind == "text/html":
            for link in Page(body.decode()).links:
                target = urlsplit(urljoin(base + path, link))
                if f"{target.scheme}://{target.netloc}" == base:
                    waiting.append(target.path + (f"?{target.query}" if target.query else ""))
    return statuses


def test_serve_answers_every_page_and_download(lab, zoo, children):
    server = children.start([lab.command, "serve", "--port", "0"], cwd=lab.folder, env=lab.env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([server.stdout], [], [], COMMAND_TIMEOUT_S)
    line = server.stdout.readline() if ready else ""
    assert "http://127.0.0.1:" in line, (line, server.poll())
    base = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)
    runs = zoo.all_runs()
    statuses = crawl(base, ["/", "/devices", f"/compare/{runs[0]},{runs[-1]}",
                            f"/compare/{','.join(first_runs(zoo))}", *(f"/runs/{run}" for run in runs)])
    assert {path: status for path, status in statuses.items() if status != 200} == {}
    for kind in (r"/runs/\d+/tests/\d+/job\.fio", r"/runs/\d+/tests/\d+/fio\.json", r"/runs/\d+/suite\.toml",
                 r"/runs/\d+/figures\.csv", r"/runs/\d+/figures\.json", r"/devices/.+", r"/compare/\d+,\d+"):
        assert any(re.fullmatch(kind, path) for path in statuses), f"no page {kind} reached"


def test_capacity_reads_the_drive_catalogue_and_the_published_tables(lab, version, tmp_path):
    plan = tmp_path / "plan.html"
    shown, drives, drive, validated = lab.each(
        ("capacity", "show", "8 x sata-ssd-1.6t raid6", "--html", str(plan)), ("capacity", "drives"),
        ("capacity", "drives", "sata-ssd-1.6t"), ("capacity", "validate"))
    assert "raid6" in shown.stdout and "sata-ssd-1.6t" in drives.stdout and "sata-ssd-1.6t" in drive.stdout
    assert validated.stdout.strip()
    assert whole_page(plan.read_text()) and f"disklab {version} capacity model" in plan.read_text()


def test_trace_import_of_a_fio_iolog_and_of_blktrace_files(lab, tmp_path):
    trace = tmp_path / "app.trace"
    lab("trace", "import", str(FIXTURES / "trace" / "iolog-randrw70-4k-qd8.log"), "-o", str(trace))
    summary = json.loads(lab("trace", "show", str(trace), "-f", "json").stdout)
    assert summary["format"] == "disklab-trace-summary"
    lab("trace", "suite", str(trace), "-o", str(tmp_path / "app.toml"))
    assert "[[group]]" in (tmp_path / "app.toml").read_text()
    if shutil.which("blkparse"):  # blktrace's files are read through blkparse (Debian's blktrace)
        blk = sorted(str(p) for p in (FIXTURES / "trace").glob("blktrace-randrw70-4k-qd8.blktrace.*"))
        lab("trace", "import", *blk, "-o", str(tmp_path / "blk.trace"))
        assert (tmp_path / "blk.trace").stat().st_size > 0


def test_suites_and_doctor(lab, tmp_path):
    listed, quick, doctor = lab.each(("suites",), ("suites", "show", "quick"), ("doctor", "--target", str(tmp_path)))
    assert "quick" in listed.stdout and "matrix" in listed.stdout and "RND4K" in quick.stdout
    assert "fio" in doctor.stdout
