"""serve takes a series: /compare/series:RUN answers with the address of its runs' comparison, the one to share."""

import pytest
from werkzeug.test import Client

from disklab.store.repository import Store
from disklab.web.app import WebApp
from tests.unit.test_store import new_run


@pytest.fixture
def client(tmp_path) -> Client:
    with Store(tmp_path / "results.db") as store:
        store.create_run(new_run())  # made alone
        first = store.create_run(new_run(name="ext4", options={"configuration": {"label": "ext4"}}))
        store.create_run(new_run(name="xfs", options={"configuration": {"label": "xfs"}, "series": first}))
    return Client(WebApp(tmp_path / "results.db"))


@pytest.mark.parametrize("ref", ["series:2", "series:3", "series:last"])
def test_a_series_redirects_to_the_comparison_of_its_runs(client, ref):
    response = client.get(f"/compare/{ref}")
    assert response.status_code == 303 and response.headers["Location"].endswith("/compare/2,3")


@pytest.mark.parametrize("ref", ["series:1", "series:9", "series:x", f"series:{2**64}", f"series:{'9' * 5000}",
                                 "series:last~99"])
def test_what_is_no_series_is_not_found(client, ref):
    assert client.get(f"/compare/{ref}").status_code == 404
