"""The viewer's numbers in paths and query strings (``nitpicker/viewer/params.py``): only ASCII
digits are a number. ``²`` and ``١`` pass ``str.isdigit``, and ``int()`` reads ``١``, ``1_0``
and ``+1``: an archive number that is not one is a 404, a query parameter a 400, never a 500.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from nitpicker.viewer.params import ascii_int
from tests.helpers import ChangesCrawls
from tests.viewer_process import Viewer


@pytest.fixture(scope="module")
def viewer(changes_crawls: ChangesCrawls, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[Viewer]:
    directory = tmp_path_factory.mktemp("viewer-params")
    for name in ("old", "new"):
        shutil.copyfile(changes_crawls.dir / f"{name}.nitpicker", directory / f"{name}.nitpicker")
    server = Viewer(str(directory / "old.nitpicker"), str(directory / "new.nitpicker"),
                    "--port", "0")
    yield server
    code, err = server.stop()
    assert code == 0 and "Traceback" not in err and "Error serving" not in err, err


@pytest.mark.parametrize("index", ["²", "١", "٠", "𝟘", "1_0", "+1", "-0", " 1", "0x1", "1" * 5000])
@pytest.mark.parametrize("view", ["", "pages", "snapshot"])
def test_an_archive_number_that_is_no_ascii_number_is_404(viewer: Viewer, index: str,
                                                          view: str) -> None:
    answer = viewer.get(f"/a/{quote(index)}/{view}?url=x", headers={"Accept": "application/json"})
    assert answer.status_code == 404, answer.text
    assert answer.json()["error"].startswith("No archive number ")


@pytest.mark.parametrize(("path", "name"), [
    ("/a/0/pages?page=²", "page"), ("/a/0/pages?page=١", "page"), ("/a/0/pages?page=1_0", "page"),
    ("/a/0/pages?status=٢٠٠", "status"), ("/a/0/clusters?min=%2B1", "min"),
    ("/a/0/page?url=x&links_in=²", "links_in"), ("/compare?old=٠&new=1", "old"),
    ("/compare?old=0&new=¹", "new"),
])
def test_a_query_number_that_is_no_ascii_number_is_400(viewer: Viewer, path: str,
                                                       name: str) -> None:
    answer = viewer.get(path, headers={"Accept": "application/json"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"].startswith(f"Invalid {name}: ")


def test_ascii_numbers_still_work(viewer: Viewer) -> None:
    assert viewer.get("/a/1/pages?page=1&format=json").status_code == 200
    assert viewer.get("/compare?old=1&new=0&format=json").status_code == 200
    assert viewer.get("/a/2/?format=json").status_code == 404


@pytest.mark.parametrize(("raw", "value"), [
    ("0", 0), ("12", 12), ("-3", -3), ("²", None), ("١", None), ("1_0", None), ("+1", None),
    (" 1", None), ("", None), ("-", None), ("9" * 4001, None),
])
def test_ascii_int(raw: str, value: int | None) -> None:
    assert ascii_int(raw) == value
