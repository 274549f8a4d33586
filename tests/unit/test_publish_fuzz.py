"""Fuzzing `disklab publish` over stores whose text is odd: markup, quotes, control and bidi characters, any unicode,
in every stored text a page shows (a run's name, suite, target and host, a test's label, the disk's model, serial
and firmware, a flag's message). Every page written is whole, its markup the templates' own (the store's text
escaped), its control and bidi characters written out; the downloads are the stored text; every link is a file."""

import itertools
import json
import re
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from disklab.cli.main import cli
from disklab.store.repository import Store
from disklab.web.published import read_manifest
from tests.unit.test_compare import job
from tests.unit.test_history import disk_env, run_at

MARKUP = '<x-evil data-evil="1">" data-evil="2" \'data-evil=3 </td></table><script>x-evil()</script>'
# What a page may not hold raw (report/terminal.py writes them out): controls but the line feed, bidi controls.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
odd = st.one_of(
    st.text(st.sampled_from(list("<>&\"'=/ x\x00\x01\x08\x1b\r\n\t\x7f\x85\x9b\u202a\u202e\u2066\u2069\u200f\u2028"
                                 "\u061c\ufeffé中")), min_size=1, max_size=16),
    st.text(min_size=1, max_size=16),
).map(lambda text: text + MARKUP)
counter = itertools.count()


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.targets: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}
        self.targets += [value for name, value in attrs if name in ("href", "src") and value is not None]


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(texts=st.lists(odd, min_size=9, max_size=9))
def test_every_page_of_a_store_of_odd_text_is_escaped_and_the_site_whole(tmp_path, texts):
    name, suite, target, host, label, model, serial, firmware, flag = texts
    folder = tmp_path / f"example-{next(counter)}"
    db = folder / "results.db"
    folder.mkdir()
    with Store(db) as store:
        for day, iops in enumerate((1000, 1500), start=1):
            record = run_at(store, day, [], disk_env(firmware, model=model, serial=serial),
                            tests=[(label, {}, [job(iops * f) for f in (0.99, 1, 1.01)])], name=name,
                            suite_name=suite, suite_text=suite, target=target, hostname=host)
            store.add_flag(record.tests[0].id, "cache", flag)
    site = folder / "site"
    result = CliRunner().invoke(cli, ["publish", "-o", str(site), "--db", str(db)])
    assert result.exit_code == 0, result.output
    written = read_manifest(json.loads((site / ".disklab-publish.json").read_text()), False).files()
    assert {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()} == {*written,
                                                                                      ".disklab-publish.json"}
    assert (site / "runs/1/suite.toml").read_bytes() == suite.encode(), "a download is the stored text"
    pages = [site / name for name in written if name.endswith(".html")]
    assert len(pages) >= 6
    for page in pages:
        html = page.read_text()
        assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>"), page
        parsed = _Page()
        parsed.feed(html)
        assert not {tag for tag in parsed.tags if "evil" in tag}, page
        assert not {a for a in parsed.attributes if "evil" in a}, page
        assert html.count("<script>") == html.count("</script>") <= 1, page  # the page's own script only
        assert not UNSAFE.search(html), page  # the charts' labels too
        for target_link in parsed.targets:
            parts = urlsplit(target_link)
            if parts.path and not parts.scheme:
                assert (page.parent / unquote(parts.path)).resolve().is_file(), (page, target_link)
