"""Every link a page holds, made in one place: the server's URLs, or a static site's relative file names.

A page renderer takes a Links and never spells a URL itself, so that `disklab serve` and `disklab publish`
write the same pages. Device keys and run ids are quoted here; a static site's files are named by the raw key,
which a browser finds again from its quoted link.
"""

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from urllib.parse import quote, urlencode


class Links(ABC):
    """What a page may link to; `dynamic`: a server answers queries (filters, sorting, any comparison), so the
    runs list shows its filter form, sortable headings and tick boxes; a static site's list pages only."""

    dynamic = False

    @abstractmethod
    def _path(self, path: str) -> str:
        """A file of the site, given from its root."""

    @abstractmethod
    def runs(self, query: Mapping[str, str | int] | None = None) -> str:
        """The runs list; `query`: its filters, sort and page (a static site: the page only)."""

    @abstractmethod
    def run(self, run_id: int) -> str: ...

    @abstractmethod
    def compare(self, run_ids: Sequence[int]) -> str: ...

    def job_file(self, run_id: int, test_id: int) -> str:
        return self._path(f"runs/{run_id}/tests/{test_id}/job.fio")

    def fio_output(self, run_id: int, test_id: int) -> str:
        return self._path(f"runs/{run_id}/tests/{test_id}/fio.json")

    def suite_file(self, run_id: int) -> str:
        return self._path(f"runs/{run_id}/suite.toml")

    def figures(self, run_id: int, form: str) -> str:
        """The run's figures as `disklab export` writes them: figures.csv or figures.json."""
        return self._path(f"runs/{run_id}/figures.{form}")

    @abstractmethod
    def devices(self) -> str: ...

    @abstractmethod
    def device(self, key: str, page: int | None = None) -> str:
        """A device's history: its newest page, or page N of it counted from its oldest run."""


class ServerLinks(Links):
    """Absolute paths on the server: /runs/5, /compare/1,5,9, /devices/KEY."""

    dynamic = True

    def _path(self, path: str) -> str:
        return "/" + path

    def runs(self, query: Mapping[str, str | int] | None = None) -> str:
        kept = {key: value for key, value in (query or {}).items() if value not in (None, "")}
        return "/" + (f"?{urlencode(kept)}" if kept else "")

    def run(self, run_id: int) -> str:
        return f"/runs/{int(run_id)}"

    def compare(self, run_ids: Sequence[int]) -> str:
        return "/compare/" + ",".join(str(int(i)) for i in run_ids)

    def compare_form(self) -> str:
        """Where the runs list's tick boxes go without JavaScript: /compare?run=1&run=5 redirects."""
        return "/compare"

    def devices(self) -> str:
        return "/devices"

    def device(self, key: str, page: int | None = None) -> str:
        return "/devices/" + quote(key, safe="") + (f"?page={int(page)}" if page is not None else "")


class StaticLinks(Links):
    """Relative file names for a page `depth` folders below the site's root (index.html: 0, runs/5.html: 1),
    so that the site works from a file system and from any folder of any web server."""

    def __init__(self, depth: int = 0):
        self.up = "../" * depth

    def _path(self, path: str) -> str:
        return self.up + path

    def runs(self, query: Mapping[str, str | int] | None = None) -> str:
        """index.html, and index-N.html for page N of the list; a static site has no filters or sorting."""
        kept = {key: value for key, value in (query or {}).items() if value not in (None, "")}
        page = int(kept.pop("page", 1))
        if kept:
            raise ValueError(f"a static site has no runs list for {kept}")
        return self._path("index.html" if page == 1 else f"index-{page}.html")

    def run(self, run_id: int) -> str:
        return self._path(f"runs/{int(run_id)}.html")

    def compare(self, run_ids: Sequence[int]) -> str:
        return self._path("compare/" + ",".join(str(int(i)) for i in run_ids) + ".html")

    def devices(self) -> str:
        return self._path("devices/index.html")

    def device(self, key: str, page: int | None = None) -> str:
        return self._path("devices/" + quote(key, safe="") + (f"-{int(page)}" if page is not None else "") + ".html")
