"""nitpicker.query against a real crawl of the fixture site (``/query/`` and the error pages).

One crawl per module (``--no-render``): roots ``/query/``, ``/error-status/``, ``/errors/``,
``/redirect/``, ``/meta/``. Every expectation below is a fact of the fixture site.
"""

from __future__ import annotations

import inspect
import json
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted

from nitpicker import query
from nitpicker.policy.signature import meta_signature
from nitpicker.query import (
    INTEGER_RANGES,
    LINK_TYPES,
    MISMATCH_TYPES,
    check_headers,
    find_duplicates,
    find_mismatches,
    get_distributions,
    get_duplicate_clusters,
    get_page_detail,
    get_page_html,
    get_resource_referrers,
    get_summary,
    get_violations,
    list_broken_links,
    list_cluster_pages,
    list_crawl_runs,
    list_external_links,
    list_images,
    list_links,
    list_orphaned_pages,
    list_page_images,
    list_page_resources,
    list_pages,
    list_resources,
    open_archive,
)
from tests.helpers import crawl

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from fixtures.site import FixtureSite

ROOTS = ("/query/", "/error-status/", "/errors/", "/redirect/", "/meta/")
REFUSED = "http://127.0.0.1:1/refused"


@pytest_twisted.async_fixture(scope="module")
async def archive_path(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = await crawl(tmp_path_factory.mktemp("query"), [site.url(r) for r in ROOTS],
                          predict_pagination=False)  # the counts are of linked pages
    archive.conn.close()
    return archive.path


@pytest.fixture
def conn(archive_path: Path) -> Iterator[sqlite3.Connection]:
    connection = open_archive(archive_path)
    yield connection
    connection.close()


@pytest.fixture
def u(site: FixtureSite) -> Any:
    """``u("/path")``: the fixture site's URL of a path."""
    return site.url


def _page_id(conn: sqlite3.Connection, url: str) -> int:
    return int(conn.execute("SELECT id FROM pages WHERE url = ?", (url,)).fetchone()[0])


# -- summary ------------------------------------------------------------------------------------


def test_summary(conn: sqlite3.Connection, u: Any) -> None:
    summary = get_summary(conn)
    fulfillment = summary.pop("metadata_fulfillment")
    assert summary == {
        "base_url": u("/query/"),
        "roots": [u(r) for r in ROOTS],
        # 33 rows - 2 redirect sources - /query/missing (text/plain)
        "total_pages": 30,
        "internal_pages": 28,
        "external_pages": 2,  # the refused URL and external-like
        "status_distribution": [
            {"status": -1, "count": 2},
            {"status": 200, "count": 25},
            {"status": 403, "count": 1},
            {"status": 404, "count": 1},
            {"status": 500, "count": 1},
        ],
    }
    # 27 internal HTML pages: 15 with a description, 11 with og:title, 2 with og:description
    assert fulfillment == pytest.approx({
        "title": 1.0, "description": 15 / 27, "keywords": 1 / 27, "og_title": 11 / 27,
        "og_description": 2 / 27, "og_image": 1 / 27,
    })


# -- pages ----------------------------------------------------------------------------------------


def test_pages_are_the_page_list_by_url_and_page_through(conn: sqlite3.Connection, u: Any) -> None:
    everything = list_pages(conn, limit=1000)
    urls = [item["url"] for item in everything["items"]]
    assert everything["total"] == len(urls) == 30
    assert urls == sorted(urls)
    assert u("/redirect/start") not in urls  # redirect source
    assert u("/query/missing") not in urls  # known non-HTML (a plain-text 404)
    assert u("/errors/reset") in urls  # unreachable rows stay visible
    window = list_pages(conn, limit=4, offset=5)
    assert [i["url"] for i in window["items"]] == urls[5:9]
    assert (window["total"], window["limit"], window["offset"]) == (30, 4, 5)
    assert list_pages(conn, limit=4, offset=30)["items"] == []


def test_page_item_shape(conn: sqlite3.Connection, u: Any) -> None:
    item = list_pages(conn, url_pattern=u("/meta/full"))["items"][0]
    assert item.pop("link_score") > 0  # type: ignore[misc]  # (its share of the crawl's links)
    assert item == {
        "url": u("/meta/full"), "title": "Full Meta Page", "status": 200,
        "content_type": "text/html", "is_external": False, "has_description": True,
        "has_og_title": True, "noindex": False, "charset": "utf-8", "extracted": {},
    }


@pytest.mark.parametrize(
    ("filters", "paths"),
    [
        ({"status": 404}, ["/error-status/not-found"]),
        ({"status_min": 400}, ["/error-status/forbidden", "/error-status/not-found",
                               "/error-status/server-error"]),
        ({"status_min": 401, "status_max": 499}, ["/error-status/forbidden",
                                                  "/error-status/not-found"]),
        ({"status_max": -1}, [REFUSED, "/errors/reset"]),
        ({"is_external": True}, [REFUSED, "EXT/external-like"]),
        ({"missing_title": True}, [REFUSED, "/errors/reset"]),
        ({"missing_title": True, "is_external": False}, ["/errors/reset"]),
        ({"noindex": True}, ["/meta/robots-noindex"]),
        ({"url_pattern": "%/dup-%"}, ["/query/dup-a", "/query/dup-b", "/query/dup-c"]),
        ({"directory": "/query/archive/"}, ["/query/archive/2024", "/query/archive/2025",
                                            "/query/archive/2026"]),
        ({"directory": "query/archive"}, ["/query/archive/2024", "/query/archive/2025",
                                          "/query/archive/2026"]),
        ({"directory": "/redirect"}, ["/redirect/", "/redirect/dest"]),
        ({"directory": "/archive/"}, []),  # a path prefix, not a substring
        ({"search": "duplicate title"}, ["/query/dup-a", "/query/dup-b", "/query/dup-c"]),
        ({"search": "dup-b"}, ["/query/dup-b"]),  # in the URL
        ({"search": "_"}, []),  # taken literally: no title or URL holds an underscore
        ({"search": "%2B"}, ["/query/list?page=1.5e%2B32"]),  # a literal %
        ({"directory": "/meta/", "missing_description": True},
         ["/meta/", "/meta/minimal", "/meta/robots-noindex"]),
    ],
)
def test_page_filters(conn: sqlite3.Connection, site: FixtureSite, filters: dict[str, Any],
                      paths: list[str]) -> None:
    expected = [p if p.startswith("http") else
                p.replace("EXT", site.external_url) if p.startswith("EXT") else site.url(p)
                for p in paths]
    result = list_pages(conn, **filters)
    assert [item["url"] for item in result["items"]] == expected
    assert result["total"] == len(expected)


def test_directory_as_url_prefix(conn: sqlite3.Connection, u: Any) -> None:
    result = list_pages(conn, directory=u("/query/archive"))
    assert result["total"] == 3


def test_page_sorts(conn: sqlite3.Connection, u: Any) -> None:
    by_status = list_pages(conn, sort_by="status", sort_order="desc", limit=3)["items"]
    assert [(i["status"], i["url"]) for i in by_status] == [
        (500, u("/error-status/server-error")), (404, u("/error-status/not-found")),
        (403, u("/error-status/forbidden"))]
    ascending = list_pages(conn, sort_by="status", limit=2)["items"]
    assert [(i["status"], i["url"]) for i in ascending] == [(-1, REFUSED), (-1, u("/errors/reset"))]
    titles = [i["title"] for i in list_pages(conn, sort_by="title", limit=1000)["items"]]
    assert titles == sorted(titles)
    assert titles[:2] == ["", ""] and titles[-1] == "Server Error"
    assert [i["title"] for i in list_pages(conn, sort_by="title", sort_order="desc",
                                           limit=2)["items"]] == ["Server Error", "Robots Noindex"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"sort_by": "size"}, "Invalid sort field: 'size'. Must be one of: url, status, title"),
        ({"sort_order": "up"}, "Invalid sort order: 'up'. Must be one of: asc, desc"),
        ({"limit": -1}, "Invalid limit: -1"),
        ({"offset": -5}, "Invalid offset: -5"),
    ],
)
def test_page_list_rejects_bad_values(conn: sqlite3.Connection, options: dict[str, Any],
                                      message: str) -> None:
    with pytest.raises(ValueError, match=message):
        list_pages(conn, **options)


def _integer_parameters() -> list[tuple[str, str]]:
    """(function, parameter) for every integer argument of every public query function."""
    found = []
    for name in query.__all__:
        function = getattr(query, name)
        if not inspect.isfunction(function):
            continue
        parameters = inspect.signature(function).parameters
        if next(iter(parameters), None) != "conn":
            continue
        found += [(name, parameter) for parameter, p in parameters.items()
                  if p.annotation in ("int", "int | None")]  # postponed annotations: strings
    return found


INTEGER_PARAMETERS = _integer_parameters()
REQUIRED = {"url": "http://localhost/", "type": None, "plugin": "search", "signature": "0" * 40,
            "urls": ["http://localhost/"], "issue_id": "status/server-error", "pattern": "x",
            "kind": "exact", "cluster": 1}


def test_every_integer_parameter_has_a_range() -> None:
    assert len(INTEGER_PARAMETERS) > 25
    assert {parameter for _, parameter in INTEGER_PARAMETERS} <= set(INTEGER_RANGES)


@pytest.mark.parametrize(("function", "parameter"), INTEGER_PARAMETERS)
def test_integers_out_of_range_are_value_errors(conn: sqlite3.Connection, function: str,
                                                parameter: str) -> None:
    """Beyond 64 bits SQLite raised OverflowError; past a documented bound the query ran."""
    call = getattr(query, function)
    required = {name: REQUIRED[name] for name, p in inspect.signature(call).parameters.items()
                if name in REQUIRED and name != parameter and p.default is inspect.Parameter.empty}
    if "type" in required:
        required["type"] = (MISMATCH_TYPES if function == "find_mismatches" else LINK_TYPES)[0]
    low, high = INTEGER_RANGES[parameter]
    label = parameter.replace("_", " ")
    for value in (high + 1, 2**64, low - 1, -(2**64)):
        with pytest.raises(ValueError, match=(f"^Invalid {label}: -?[0-9]+. "
                                              f"Must be between {low} and {high}$")):
            call(conn, **required, **{parameter: value})
    call(conn, **required, **{parameter: high})  # the bounds themselves are accepted
    call(conn, **required, **{parameter: low})


def test_a_huge_number_is_named_by_its_size(conn: sqlite3.Connection) -> None:
    with pytest.raises(ValueError, match=r"Invalid offset: 100000000000… \(61 digits\)\."):
        list_pages(conn, offset=10**60)
    with pytest.raises(ValueError, match=r"Invalid offset: a number of more than 4000 digits\."):
        list_pages(conn, offset=10**5000)


# -- one page ---------------------------------------------------------------------------------------


def test_page_detail(conn: sqlite3.Connection, site: FixtureSite, u: Any) -> None:
    detail = get_page_detail(conn, u("/query/"))
    assert detail is not None
    assert (detail["url"], detail["status"], detail["title"], detail["is_target"]) == (
        u("/query/"), 200, "Query Top", True)
    assert detail["description"] == "Pages for the query tests."
    # the crawl timed it (Scrapy's download_latency, migration 0014_response_time)
    assert isinstance(detail["response_time_ms"], int) and 0 <= detail["response_time_ms"] < 30_000
    assert detail["redirect_to"] is None and detail["redirect_from"] == []
    headers = {h["name"].lower(): h["value"] for h in detail["response_headers"]}
    assert headers["content-type"] == "text/html; charset=UTF-8"
    outbound = detail["outbound_links"]
    assert detail["outbound_total"] == len(outbound) == 18
    assert [o["url"] for o in outbound[:3]] == [u("/query/"), u("/query/dup-a"), u("/query/dup-b")]
    by_url = {o["url"]: o for o in outbound}
    assert by_url[u("/query/missing")]["status"] == 404
    assert by_url[u("/error-status/not-found")]["text"] == "Not found"
    external = by_url[f"{site.external_url}/external-like"]
    assert (external["status"], external["is_external"], external["final_url"]) == (200, True, None)
    # only the page itself links to the crawl root
    assert detail["inbound_links"] == [{"url": u("/query/"), "text": "Query Top",
                                        "through": u("/query/")}]
    assert detail["inbound_total"] == 1
    assert json.loads(json.dumps(detail)) == detail


def test_page_detail_of_a_redirect_destination_and_source(conn: sqlite3.Connection, u: Any) -> None:
    dest = get_page_detail(conn, u("/redirect/dest"))
    assert dest is not None
    assert dest["redirect_from"] == [u("/redirect/middle"), u("/redirect/start")]
    # links reach it through the redirect chain's first URL
    assert sorted((i["url"], i["through"]) for i in dest["inbound_links"]) == [
        (u("/redirect/"), u("/redirect/start")), (u("/redirect/dest"), u("/redirect/start"))]
    assert dest["inbound_total"] == 2
    back = dest["outbound_links"][0]
    assert (back["url"], back["final_url"], back["status"]) == (
        u("/redirect/start"), u("/redirect/dest"), 200)
    source = get_page_detail(conn, u("/redirect/start"))
    assert source is not None
    assert (source["status"], source["redirect_to"]) == (301, u("/redirect/dest"))
    assert (source["redirect_kind"], dest["redirect_kind"]) == ("http", None)


def test_page_detail_lookup(conn: sqlite3.Connection, u: Any) -> None:
    assert get_page_detail(conn, u("/nowhere")) is None
    found = get_page_detail(conn, u("/meta/full") + "#top")  # normalised before the 2nd try
    assert found is not None and found["url"] == u("/meta/full")
    limited = get_page_detail(conn, u("/query/"), link_limit=2)
    assert limited is not None
    assert (len(limited["outbound_links"]), limited["outbound_total"]) == (2, 18)


def test_page_html(conn: sqlite3.Connection, site: FixtureSite, u: Any) -> None:
    page = get_page_html(conn, u("/query/dup-a"))
    assert page is not None
    assert page["truncated"] is False
    assert "<title>Duplicate Title</title>" in page["html"]
    short = get_page_html(conn, u("/query/dup-a"), max_length=15)
    assert short == {"html": page["html"][:15], "truncated": True}
    assert get_page_html(conn, u("/nowhere")) is None
    assert get_page_html(conn, f"{site.external_url}/external-like") is None  # no snapshot
    with pytest.raises(ValueError, match="Invalid max length: -1"):
        get_page_html(conn, u("/query/dup-a"), max_length=-1)


# -- links ----------------------------------------------------------------------------------------


def test_broken_links(conn: sqlite3.Connection, u: Any) -> None:
    result = list_broken_links(conn)
    pairs = [(i["dest_url"], i["source_url"], i["status"]) for i in result["items"]]
    not_found_sources = sorted([u("/query/"), u("/error-status/")],
                               key=lambda url: _page_id(conn, url))  # linking page, crawl order
    assert pairs == [
        (REFUSED, u("/errors/"), -1),
        (u("/error-status/forbidden"), u("/error-status/"), 403),
        *[(u("/error-status/not-found"), source, 404) for source in not_found_sources],
        (u("/error-status/server-error"), u("/error-status/"), 500),
        (u("/errors/reset"), u("/errors/"), -1),
        (u("/query/missing"), u("/query/"), 404),
    ]
    assert result["total"] == 7
    refused = result["items"][0]
    assert refused["is_external"] is True and "refused" in (refused["status_text"] or "").lower()
    assert refused["text"] == "Connection refused"
    window = list_broken_links(conn, limit=3, offset=2)  # starts inside the not-found group
    assert window["items"] == result["items"][2:5]
    assert list_broken_links(conn, limit=3, offset=7)["items"] == []


def test_external_links(conn: sqlite3.Connection, site: FixtureSite, u: Any) -> None:
    result = list_external_links(conn)
    assert [(i["dest_url"], i["source_url"], i["status"]) for i in result["items"]] == [
        (REFUSED, u("/errors/"), -1),
        (f"{site.external_url}/external-like", u("/query/"), 200),
    ]
    assert result["total"] == 2


def test_orphaned_pages(conn: sqlite3.Connection, u: Any) -> None:
    result = list_orphaned_pages(conn)
    # the roots nobody links to; /query/ links only to itself; /redirect/dest is reached
    # through /redirect/start, so it is not an orphan
    assert [i["url"] for i in result["items"]] == [
        u("/error-status/"), u("/errors/"), u("/meta/"), u("/query/"), u("/redirect/")]
    assert result["items"][0] == {"url": u("/error-status/"), "title": "Error Status Top",
                                  "status": 200, "in_sitemap": False, "in_inventory": False}
    assert result["total"] == 5
    assert list_orphaned_pages(conn, limit=2, offset=4)["items"] == result["items"][4:]
    assert list_orphaned_pages(conn, offset=9) == {"items": [], "total": 5, "offset": 9,
                                                   "limit": 100}


def test_list_links_dispatches_and_checks_the_type(conn: sqlite3.Connection) -> None:
    assert list_links(conn, "broken") == list_broken_links(conn)
    assert list_links(conn, "orphaned", limit=1) == list_orphaned_pages(conn, limit=1)
    with pytest.raises(ValueError, match="Must be one of: broken, external, orphaned"):
        list_links(conn, "dead")


# -- resources and images -----------------------------------------------------------------------


def test_resources(conn: sqlite3.Connection, u: Any) -> None:
    result = list_resources(conn)
    assert [(i["url"], i["kind"]) for i in result["items"]] == [
        (u("/query/app.js"), "script"),
        (u("/query/img/empty-alt.png"), "image"),
        (u("/query/img/fine.png"), "image"),
        (u("/query/img/no-alt.png"), "image"),
        (u("/query/img/no-size.png"), "image"),
        (u("/query/img/zero-width.png"), "image"),
        (u("/query/style.css"), "stylesheet"),
    ]
    first = result["items"][0]
    # without a browser a resource is known from the markup only
    assert (first["status"], first["content_type"], first["is_external"]) == (None, None, False)
    assert list_resources(conn, is_external=True)["total"] == 0
    assert list_resources(conn, is_external=False)["total"] == 7
    assert list_resources(conn, content_type="text/css")["total"] == 0


def test_resource_referrers(conn: sqlite3.Connection, u: Any) -> None:
    referrers = get_resource_referrers(conn, u("/query/style.css"))
    assert referrers == {"resource_url": u("/query/style.css"),
                         "page_urls": [u("/query/"), u("/query/images")],
                         "total": 2, "offset": 0, "limit": 100}
    second = get_resource_referrers(conn, u("/query/style.css"), limit=1, offset=1)
    assert second is not None and second["page_urls"] == [u("/query/images")]
    assert get_resource_referrers(conn, u("/query/nothing.css")) is None


def test_images(conn: sqlite3.Connection, u: Any) -> None:
    result = list_images(conn)
    names = [i["src"].rsplit("/", 1)[1] for i in result["items"]]
    assert names == ["fine.png", "no-alt.png", "empty-alt.png", "no-size.png", "zero-width.png"]
    fine = result["items"][0]
    assert fine == {"page_url": u("/query/images"), "src": u("/query/img/fine.png"),
                    "alt": "Fine", "width": 10.0, "height": 10.0, "natural_width": None,
                    "natural_height": None, "is_lazy": False, "viewport_width": None,
                    "file_size": None}

    def srcs(**filters: Any) -> list[tuple[str, str | None]]:
        return [(i["src"].rsplit("/", 1)[1], i["alt"])
                for i in list_images(conn, **filters)["items"]]

    assert srcs(missing_alt=True) == [("no-alt.png", None), ("empty-alt.png", "")]
    assert srcs(missing_dimensions=True) == [("no-size.png", "No size"),
                                             ("zero-width.png", "Zero width")]
    assert srcs(missing_alt=True, missing_dimensions=True) == []
    assert srcs(url_pattern="%/fine.%") == [("fine.png", "Fine")]
    assert srcs(oversized_threshold=0) == []  # natural sizes come from a browser only
    assert list_images(conn, limit=2, offset=3)["items"] == result["items"][3:5]


def test_page_images(conn: sqlite3.Connection, u: Any) -> None:
    result = list_page_images(conn, u("/query/images"))
    assert result is not None
    assert [i["src"] for i in result["items"]] == [i["src"] for i in list_images(conn)["items"]]
    assert result["items"][0] == {"src": u("/query/img/fine.png"), "alt": "Fine", "width": 10.0,
                                  "height": 10.0, "natural_width": None, "natural_height": None,
                                  "is_lazy": False, "viewport_width": None}
    assert result["total"] == 5
    second = list_page_images(conn, u("/query/images"), limit=1, offset=1)
    assert second is not None and second["items"] == result["items"][1:2]
    assert second["total"] == 5
    assert list_page_images(conn, u("/query/"))["total"] == 0  # type: ignore[index]
    assert list_page_images(conn, u("/query/nothing")) is None


def test_page_resources(conn: sqlite3.Connection, u: Any) -> None:
    result = list_page_resources(conn, u("/query/"))
    assert result is not None
    assert [(r["url"], r["kind"]) for r in result["items"]] == [
        (u("/query/app.js"), "script"), (u("/query/style.css"), "stylesheet")]
    assert result["total"] == 2
    images = list_page_resources(conn, u("/query/images"), limit=2)
    assert images is not None and images["total"] == 6 and len(images["items"]) == 2
    assert list_page_resources(conn, u("/query/nothing")) is None


def test_violations_are_empty_before_any_analysis(conn: sqlite3.Connection) -> None:
    assert get_violations(conn) == {"items": [], "total": 0, "offset": 0, "limit": 100}
    assert get_violations(conn, validator="axe", limit=5)["total"] == 0


# -- metadata -----------------------------------------------------------------------------------


def test_duplicate_titles_and_descriptions(conn: sqlite3.Connection, u: Any) -> None:
    listing = [u(f"/query/list?{q}") for q in ("page=1", "page=1.5e%2B32", "page=2", "page=3",
                                               "page=4", "session=f00d")]
    years = [u(f"/query/archive/{y}") for y in (2024, 2025, 2026)]
    titles = find_duplicates(conn, "title")
    assert titles == {
        "items": [
            {"field": "title", "value": "Listing", "count": 6, "urls": listing},
            {"field": "title", "value": "Archive", "count": 3, "urls": years},
            {"field": "title", "value": "Duplicate Title", "count": 3,
             "urls": [u("/query/dup-a"), u("/query/dup-b"), u("/query/dup-c")]},
        ],
        "total": 3, "offset": 0, "limit": 50,
    }
    descriptions = find_duplicates(conn, "description")
    assert [(i["value"], i["count"]) for i in descriptions["items"]] == [
        ("Every item, one page at a time.", 6), ("Every post, by year.", 3),
        ("Shared description", 2)]
    assert descriptions["items"][2]["urls"] == [u("/query/dup-a"), u("/query/dup-b")]
    second = find_duplicates(conn, limit=1, offset=1, max_urls=2)
    assert second["items"] == [{"field": "title", "value": "Archive", "count": 3,
                                "urls": years[:2]}]
    assert second["total"] == 3
    with pytest.raises(ValueError, match="Must be one of: title, description"):
        find_duplicates(conn, "keywords")


def test_mismatches(conn: sqlite3.Connection, u: Any) -> None:
    canonical = find_mismatches(conn, "canonical")
    # /query/dup-b's relative canonical names itself and /meta/full's absolute one too
    assert canonical["items"] == [{"url": u("/query/mismatch"), "type": "canonical",
                                   "actual": u("/query/mismatch"), "expected": u("/query/dup-a")}]
    og_title = find_mismatches(conn, "og:title")
    assert [(i["url"], i["actual"], i["expected"]) for i in og_title["items"]] == [
        (u("/meta/full"), "OG Title", "Full Meta Page"),
        (u("/query/mismatch"), "Another Title", "Mismatch Page"),
    ]
    og_description = find_mismatches(conn, "og:description", limit=1, offset=1)
    assert og_description == {
        "items": [{"url": u("/query/mismatch"), "type": "og:description",
                   "actual": "Another description", "expected": "The real description"}],
        "total": 2, "offset": 1, "limit": 1,
    }
    assert find_mismatches(conn, "og:title", offset=10) == {"items": [], "total": 2,
                                                            "offset": 10, "limit": 100}
    with pytest.raises(ValueError, match="Must be one of: canonical, og:title, og:description"):
        find_mismatches(conn, "og:image")


def test_security_headers(conn: sqlite3.Connection, u: Any) -> None:
    result = check_headers(conn, limit=1000)
    assert result["total"] == 27  # every internal HTML page
    assert result["items"][0] == {"url": u("/error-status/"), "has_csp": False,
                                  "has_x_frame_options": False,
                                  "has_x_content_type_options": False, "has_hsts": False}
    # the fixture server sends none of them, so every page misses one
    missing = check_headers(conn, missing_only=True, limit=10, offset=20)
    assert (missing["total"], len(missing["items"])) == (27, 7)
    assert missing["items"] == result["items"][20:]


def test_duplicate_clusters(conn: sqlite3.Connection, u: Any) -> None:
    clusters = get_duplicate_clusters(conn, min_count=3, sample=2)
    assert clusters["total"] == 2
    listing, archive = clusters["items"]
    assert listing == {
        "parent_path": "/query",
        "signature": meta_signature(u("/query/list?page=1"), "Listing",
                                    "Every item, one page at a time.", "Listing",
                                    u("/query/list")),
        "count": 6,
        "og_url_mismatch": True,
        "sample_pages": [u("/query/list?page=1"), u("/query/list?page=1.5e%2B32")],
        "meta_signature_fields": {"title": "Listing",
                                  "description": "Every item, one page at a time.",
                                  "og_title": "Listing", "og_url": u("/query/list")},
    }
    # a path trap: every year folds into its parent directory
    assert (archive["parent_path"], archive["count"], archive["og_url_mismatch"]) == (
        "/query/archive", 3, True)
    assert archive["sample_pages"] == [u("/query/archive/2024"), u("/query/archive/2025")]
    assert get_duplicate_clusters(conn)["total"] == 0  # default: 10 pages or more
    assert get_duplicate_clusters(conn, min_count=3, limit=1, offset=1)["items"] == [
        {**archive, "sample_pages": [u(f"/query/archive/{y}") for y in (2024, 2025, 2026)]}]


def test_cluster_pages(conn: sqlite3.Connection, u: Any) -> None:
    listing = get_duplicate_clusters(conn, min_count=3, sample=10)["items"][0]
    pages = list_cluster_pages(conn, listing["signature"])
    assert [p["url"] for p in pages["items"]] == listing["sample_pages"]
    assert pages["total"] == listing["count"] == 6
    assert {(p["title"], p["og_url"]) for p in pages["items"]} == {("Listing", u("/query/list"))}
    window = list_cluster_pages(conn, listing["signature"], limit=2, offset=5)
    assert (window["items"], window["total"]) == (pages["items"][5:], 6)
    past = list_cluster_pages(conn, listing["signature"], limit=2, offset=9)
    assert (past["items"], past["total"]) == ([], 6)
    assert list_cluster_pages(conn, "0" * 40)["total"] == 0


def test_every_signed_page_is_a_cluster_of_one_or_more(conn: sqlite3.Connection, u: Any) -> None:
    clusters = get_duplicate_clusters(conn, min_count=1, limit=1000)["items"]
    singles = {c["sample_pages"][0]: c for c in clusters if c["count"] == 1}
    # pages with a title and Open Graph; og:url naming the page itself is no trap signal
    assert set(singles) == {u("/meta/full"), u("/query/mismatch")}
    assert singles[u("/meta/full")]["og_url_mismatch"] is False
    # the trap clusters come first, then the rest by size
    assert [c["count"] for c in clusters] == [6, 3, 1, 1]
    assert [c["og_url_mismatch"] for c in clusters] == [True, True, False, False]
    # no Open Graph: never signed (seed 003), however alike
    assert not any(u("/query/dup-a") in c["sample_pages"] for c in clusters)


def test_distributions(conn: sqlite3.Connection) -> None:
    spread = get_distributions(conn)
    # the five roots, then the pages they link; 27 internal HTML pages in all
    assert spread["depth"] == [{"label": "0", "count": 5}, {"label": "1", "count": 22}]
    # the 27 and the other host's page; the two fetch errors have no type; one text 404
    assert spread["content_type"] == [{"label": "text/html", "count": 28},
                                      {"label": "unknown", "count": 2},
                                      {"label": "text/plain", "count": 1}]
    assert spread["validator"] == []  # no analyzer ran


def test_crawl_runs(conn: sqlite3.Connection) -> None:
    runs = list_crawl_runs(conn)
    assert runs["total"] == 1
    run = runs["items"][0]
    assert (run["id"], run["kind"], run["status"], run["stop_reason"]) == (
        1, "crawl", "finished", "finished")
    assert run["errors"] == 2  # the refused URL and the reset connection
    assert run["error_code"] is None
    assert run["pages_done"] == 31
    assert list_crawl_runs(conn, offset=1)["items"] == []


# -- the contract --------------------------------------------------------------------------------


def test_results_are_json_and_ignore_the_callers_row_factory(conn: sqlite3.Connection,
                                                             u: Any) -> None:
    calls = [
        lambda: get_summary(conn), lambda: list_pages(conn),
        lambda: get_page_detail(conn, u("/query/")), lambda: list_links(conn, "broken"),
        lambda: list_images(conn), lambda: find_duplicates(conn),
        lambda: check_headers(conn, missing_only=True),
        lambda: get_duplicate_clusters(conn, min_count=2), lambda: list_crawl_runs(conn),
    ]
    plain = [call() for call in calls]
    for result in plain:
        assert json.loads(json.dumps(result)) == result
    conn.row_factory = sqlite3.Row
    assert [call() for call in calls] == plain
