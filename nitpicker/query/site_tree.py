"""The site as a directory tree: the internal URLs by folder of their path, with how many
pages each folder holds (itself and below) and their status mix; one folder at a time.

A folder is read as one range of the ``pages(is_external, url)`` index (the URLs under
``origin + path``), streamed: memory holds the folder's direct sub-folders' counts and one
page of its own pages, however many URLs are below it. A URL's query string does not make a
folder (``/list?page=2`` is a page of ``/``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from typing_extensions import TypedDict

from nitpicker.query._common import check_paging, fetch_all, paged

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterator

    from nitpicker.query._common import Paged

__all__ = ["STATUS_CLASSES", "FolderItem", "FolderTree", "StatusMix", "TreePage",
           "crawled_origin", "folder_tree", "list_origins", "status_class", "url_range"]

STATUS_CLASSES: Final = ("2xx", "3xx", "4xx", "5xx", "error", "other")
"""A status mix's classes: by the status's first digit; ``error`` no HTTP answer (-1);
``other`` a 1xx or an unknown status."""

FOLDERS_SHOWN: Final = 1000
"""Most sub-folders one folder lists (the rest counted in ``folders_total``)."""

_ORIGINS: Final = """SELECT DISTINCT substr(url, 1, 7 + instr(substr(url, 9), '/'))
FROM pages WHERE is_external = 0 AND scraped = 1 AND instr(substr(url, 9), '/') > 0
ORDER BY 1"""

_UNDER: Final = """SELECT url, status, title FROM pages
WHERE is_external = 0 AND url >= :low AND url < :high AND scraped = 1 ORDER BY url"""


class StatusMix(TypedDict):
    """URLs by status class (``STATUS_CLASSES``)."""

    ok: int
    """2xx"""
    redirect: int
    """3xx"""
    client_error: int
    """4xx"""
    server_error: int
    """5xx"""
    error: int
    """No HTTP answer."""
    other: int


_MIX_KEYS: Final = dict(zip(STATUS_CLASSES, StatusMix.__annotations__, strict=True))


class FolderItem(TypedDict):
    path: str
    """From the origin, with its trailing slash: ``/blog/2024/``."""
    name: str
    """Its last segment: ``2024/``."""
    pages: int
    """URLs in it and below."""
    status: StatusMix


class TreePage(TypedDict):
    url: str
    name: str
    """The URL after its folder's path: ``post-1``, ``list?page=2`` (``''``: the folder's
    own URL)."""
    status: int | None
    title: str


class FolderTree(TypedDict):
    """One folder: where it is, what it holds, its sub-folders and one page of its own URLs."""

    origins: list[str]
    """Every origin of the crawl's internal URLs (``https://example.com``)."""
    origin: str
    path: str
    parents: list[FolderItem]
    """The folders from the origin's root down to this one's parent (their counts left 0)."""
    pages: int
    status: StatusMix
    folders: list[FolderItem]
    """Direct sub-folders, by path (at most 1000)."""
    folders_total: int
    files: Paged[TreePage]
    """This folder's own URLs, by URL."""


def status_class(status: int | None) -> str:
    if status is None:
        return "other"
    if status < 0:
        return "error"
    return f"{status // 100}xx" if 2 <= status // 100 <= 5 else "other"


def empty_mix() -> StatusMix:
    return {"ok": 0, "redirect": 0, "client_error": 0, "server_error": 0, "error": 0,
            "other": 0}


def add_status(mix: StatusMix, status: int | None) -> None:
    key = _MIX_KEYS[status_class(status)]
    mix[key] += 1  # type: ignore[literal-required]


def url_range(prefix: str) -> tuple[str, str]:
    """The ``[low, high)`` range of the URLs that start with ``prefix``."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def list_origins(conn: sqlite3.Connection) -> list[str]:
    """Every origin of the crawl's internal URLs."""
    return [row[0].rstrip("/") for row in fetch_all(conn, _ORIGINS)]


def crawled_origin(conn: sqlite3.Connection, origin: str | None) -> str:
    """``origin`` without its trailing slash, or the crawl's first origin when ``None``; a
    ``ValueError`` when the crawl has no such origin."""
    origins = list_origins(conn)
    if origin is None:
        return origins[0] if origins else ""
    if origin.rstrip("/") not in origins:
        raise ValueError(f"Invalid origin: {origin!r}. The crawl's are: {', '.join(origins)}")
    return origin.rstrip("/")


def normalise_folder(path: str) -> str:
    """``path`` as a folder path: a leading and a trailing slash, no query."""
    path = "/" + path.split("?", 1)[0].split("#", 1)[0].strip("/")
    return path if path.endswith("/") else path + "/"


def pages_under(conn: sqlite3.Connection, prefix: str
                ) -> Iterator[tuple[str, int | None, str]]:
    """``(url, status, title)`` of every fetched internal URL under ``prefix``, by URL."""
    low, high = url_range(prefix)
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        yield from cursor.execute(_UNDER, {"low": low, "high": high})
    finally:
        cursor.close()


def folder_tree(conn: sqlite3.Connection, path: str = "/", *, origin: str | None = None,
                limit: int = 50, offset: int = 0) -> FolderTree:
    """The folder ``path`` of ``origin`` (default: the first origin); ``limit`` and
    ``offset`` page its own URLs."""
    check_paging(limit, offset)
    origin = crawled_origin(conn, origin)
    path = normalise_folder(path)
    total_mix = empty_mix()
    folders: dict[str, FolderItem] = {}
    files: list[TreePage] = []
    own = pages = 0
    for url, status, title in pages_under(conn, origin + path):
        rest = url[len(origin) + len(path):]
        segment, slash, _ = rest.split("?", 1)[0].partition("/")
        pages += 1
        add_status(total_mix, status)
        if slash:
            folder = folders.get(segment)
            if folder is None:
                folder = folders[segment] = {"path": f"{path}{segment}/", "name": f"{segment}/",
                                             "pages": 0, "status": empty_mix()}
            folder["pages"] += 1
            add_status(folder["status"], status)
            continue
        if offset <= own < offset + limit:
            files.append({"url": url, "name": rest, "status": status, "title": title})
        own += 1
    listed = sorted(folders.values(), key=lambda folder: folder["path"])
    return {"origins": list_origins(conn), "origin": origin, "path": path,
            "parents": _parents(path),
            "pages": pages, "status": total_mix, "folders": listed[:FOLDERS_SHOWN],
            "folders_total": len(listed), "files": paged(files, own, limit, offset)}


def _parents(path: str) -> list[FolderItem]:
    segments = [s for s in path.split("/") if s]
    parents: list[FolderItem] = [{"path": "/", "name": "/", "pages": 0, "status": empty_mix()}]
    for depth in range(1, len(segments)):
        parents.append({"path": "/" + "/".join(segments[:depth]) + "/",
                        "name": segments[depth - 1] + "/", "pages": 0, "status": empty_mix()})
    return parents if segments else []
