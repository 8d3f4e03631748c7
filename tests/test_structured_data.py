"""Structured data through the command line: ``/structured/`` (``fixtures/structured.py``)
crawled, its JSON-LD, Microdata and RDFa items stored per page, and the structured-data checks
(``nitpicker/query/checks/structured_data.py``) finding exactly the pages made to trip them
(``nitpicker query FILE issue --id ID``), none of the pages made not to."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest

from fixtures.structured import EXPECTED, PAGES
from tests.helpers import rows, run

if TYPE_CHECKING:
    from pathlib import Path

STRUCTURED_CHECKS = sorted(EXPECTED)


@pytest.fixture(scope="module")
def crawled(site: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    directory = tmp_path_factory.mktemp("structured")
    done = run("crawl", site.url("/structured/"), "-o", "structured", "--silent", cwd=directory)
    assert done.returncode == 0, done.stderr
    return directory / "structured.nitpicker", site.url("/structured/")


def _issue(archive: Path, check_id: str) -> list[dict[str, Any]]:
    result = run("query", str(archive), "issue", "--id", check_id, cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["items"]


@pytest.mark.parametrize("check_id", STRUCTURED_CHECKS)
def test_each_check_finds_exactly_the_pages_made_to_trip_it(crawled: tuple[Path, str],
                                                            check_id: str) -> None:
    archive, base = crawled
    found = sorted(item["url"].removeprefix(base) for item in _issue(archive, check_id))
    assert found == EXPECTED[check_id]


def test_the_pages_made_not_to_trip_them_trip_none(crawled: tuple[Path, str]) -> None:
    """The complete items in each syntax (schema: prefixes and full IRIs among them), an
    Open Graph page, the hub: no structured-data finding."""
    archive, base = crawled
    tripped = {item["url"].removeprefix(base) for check_id in STRUCTURED_CHECKS
               for item in _issue(archive, check_id)}
    clean = {"", "json-ld-ok", "microdata-ok", "rdfa-ok", "og-only", "deep"}
    assert clean <= set(PAGES)
    assert not clean & tripped


@pytest.mark.parametrize(("check_id", "path", "element", "message"), [
    ("structured-data/invalid", "json-ld-invalid", "json-ld block 1",
     ("JSON-LD block 1 cannot be read: Expecting property name enclosed in double quotes "
     "(line 1, column 73)")),
    ("structured-data/invalid", "microdata-invalid",
     "microdata: itemtype 'Event' is not an absolute URL",
     "Microdata: itemtype 'Event' is not an absolute URL"),
    ("structured-data/missing-required", "json-ld-missing", "json-ld Product 1",
     "Product (JSON-LD) lacks the required name, one of offers / review / aggregateRating"),
    ("structured-data/missing-required", "microdata-missing", "microdata Event 1",
     "Event (Microdata) lacks the required startDate"),
    ("structured-data/missing-required", "rdfa-missing", "rdfa Recipe 1",
     "Recipe (RDFa) lacks the required image"),
    ("structured-data/missing-recommended", "article-sparse", "json-ld Article 1",
     "Article (JSON-LD) lacks the recommended author, datePublished"),
])
def test_a_finding_names_the_item_and_what_it_lacks(crawled: tuple[Path, str], check_id: str,
                                                    path: str, element: str,
                                                    message: str) -> None:
    archive, base = crawled
    found = {item["url"]: (item["element"], item["message"]) for item in _issue(archive, check_id)}
    assert found[base + path] == (element, message)


def test_each_page_keeps_its_items_in_the_three_syntaxes(crawled: tuple[Path, str]) -> None:
    archive, base = crawled
    items = rows(archive, "SELECT p.url, s.syntax, s.type FROM structured_items s"
                          " JOIN pages p ON p.id = s.page_id ORDER BY p.url, s.position")
    by_page: dict[str, list[tuple[str, str]]] = {}
    for url, syntax, kind in items:
        by_page.setdefault(url.removeprefix(base), []).append((syntax, kind))
    assert by_page == {
        "json-ld-ok": [("json-ld", "Article"), ("json-ld", "Product")],
        "json-ld-missing": [("json-ld", "Product")],
        "article-sparse": [("json-ld", "Article")],
        "microdata-ok": [("microdata", "Event")],
        "microdata-missing": [("microdata", "Event")],
        "microdata-invalid": [("microdata", "Event")],
        "rdfa-ok": [("rdfa", "Recipe")],
        "rdfa-missing": [("rdfa", "Recipe")],
    }
    (data,) = rows(archive, "SELECT s.data FROM structured_items s JOIN pages p"
                            " ON p.id = s.page_id WHERE p.url = ?", base + "microdata-ok")
    event = json.loads(data[0])
    assert event["location"] == {"@type": "Place", "name": "Hall"}
    assert event["startDate"] == "2026-05-01T20:00"


def test_check_runs_them_again_on_an_archive_changed_since(crawled: tuple[Path, str],
                                                           tmp_path: Path) -> None:
    """``nitpicker check`` reads what the archive holds now: an item given what it lacked
    passes, a complete one made to lack a property is found."""
    archive, base = crawled
    copy = tmp_path / "changed.nitpicker"
    copy.write_bytes(archive.read_bytes())
    conn = sqlite3.connect(copy)
    conn.execute("UPDATE structured_items SET data = json_set(data, '$.image', 'x.png')"
                 " WHERE page_id = (SELECT id FROM pages WHERE url = ?)", (base + "rdfa-missing",))
    conn.execute("UPDATE structured_items SET data = json_remove(data, '$.location')"
                 " WHERE page_id = (SELECT id FROM pages WHERE url = ?)", (base + "microdata-ok",))
    conn.commit()
    conn.close()
    result = run("check", str(copy), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = sorted(item["url"].removeprefix(base)
                   for item in _issue(copy, "structured-data/missing-required"))
    assert found == ["json-ld-missing", "microdata-missing", "microdata-ok"]
