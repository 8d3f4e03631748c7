"""The analysis browser is offline: ``nitpicker analyze --plugin axe`` loads nothing a crawled
page names on another host, and only the page's own recorded stylesheets on the crawled one;
``--online`` and ``--deny-private-networks`` (axe and Lighthouse) as the manual says.

Two servers of the test's own, both on 127.0.0.1: the *site* (crawled as ``localhost``) serves
a page whose markup names a stylesheet, a script, an image, a frame, a ``fetch()``, an
``@import``, a redirecting stylesheet and more on the *other* server, which counts every
request it gets — a stand-in for another local service a page must not make the analysis call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.counting_server import CountingServer as Server
from tests.helpers import count, run

if TYPE_CHECKING:
    from collections.abc import Iterator


CSS = {"Content-Type": "text/css"}
HTML = {"Content-Type": "text/html; charset=utf-8"}


def page(other: str) -> str:
    """The page: its own stylesheet makes ``.faint`` grey on white (too low a contrast); the
    other server's would make it black, and everything else there must not be asked for."""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>A page naming another local service</title>
<link rel="stylesheet" href="/own.css">
<link rel="stylesheet" href="/moved.css">
<link rel="stylesheet" href="{other}/other.css">
<link rel="preload" as="style" href="{other}/preload.css">
<link rel="icon" href="{other}/icon.png">
<script src="{other}/script.js"></script>
<script>fetch('{other}/fetch?delete=all', {{method: 'POST'}});</script>
<style>@import url("{other}/inline-import.css"); body {{ background: url({other}/bg.png); }}</style>
</head>
<body>
<main>
<h1>Contrast</h1>
<p class="faint">This sentence is grey on white: its contrast is too low to read.</p>
<p><img src="{other}/img.png" alt="a picture" width="10" height="10"></p>
<p><img src="{other}/onerror.png" alt="x" onerror="new Image().src='{other}/handler'"></p>
<iframe title="frame" src="{other}/frame"></iframe>
<video src="{other}/video.mp4" title="video"></video>
</main>
</body>
</html>
"""


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[Server, Server]]:
    other = Server()
    url = f"http://127.0.0.1:{other.port}"
    site = Server()
    site.routes.update({
        "/": (200, HTML, page(url)),
        "/own.css": (200, CSS, (f'@import url("{url}/own-import.css");\n'
                               ".faint { color: #b0b0b0; background-color: #ffffff; }\n"
                               f"@font-face {{ font-family: x; src: url({url}/font.woff); }}\n"
                               f"main {{ border-image: url({url}/css-border.png); }}\n")),
        "/moved.css": (302, {"Location": f"{url}/redirected.css"}, ""),
    })
    other.routes.update({
        path: (200, CSS, ".faint { color: #000000; }") for path in (
            "/other.css", "/preload.css", "/inline-import.css", "/own-import.css",
            "/redirected.css")})
    yield site, other
    for server in (site, other):
        server.stop()


@pytest.fixture(scope="module")
def crawled(servers: tuple[Server, Server], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site crawled as ``localhost`` (so the other server is another host)."""
    site, other = servers
    directory = tmp_path_factory.mktemp("offline")
    done = run("crawl", f"http://localhost:{site.port}/", "-o", "site", "--retry", "0",
               "--silent", cwd=directory)
    assert done.returncode == 0, done.stderr
    other.taken()
    site.taken()
    return directory / "site.nitpicker"


@pytest.fixture
def archive(crawled: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "site.nitpicker"
    copy.write_bytes(crawled.read_bytes())
    return copy


def findings(archive: Path, status: str = "violation") -> set[tuple[str, str]]:
    """axe's (rule, the element's HTML) on the page with this status: by default its
    violations, not what it leaves for review (without any stylesheet, the body's background
    image makes the contrast of every text undecidable: needs review)."""
    done = run("query", str(archive), "violations", "--status", status, "--limit", "1000",
               cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    return {(item["rule"], item["code"].split("\n", 1)[0])
            for item in json.loads(done.stdout)["items"]}


FAINT = ("color-contrast", ('<p class="faint">This sentence is grey on white: its contrast is too '
                           "low to read.</p>"))
"""The finding the page's own stylesheet makes: grey on white."""


def test_the_crawl_recorded_what_the_page_names(crawled: Path,
                                                servers: tuple[Server, Server]) -> None:
    """The premise: the other server's URLs are in the archive as the page's resources (a
    browser that fetched "the page's resources" would call them)."""
    _, other = servers
    assert count(crawled, "SELECT count(*) FROM resources WHERE url LIKE "
                          f"'http://127.0.0.1:{other.port}/%'") >= 5


def test_offline_by_default_nothing_reaches_another_host(
        archive: Path, servers: tuple[Server, Server]) -> None:
    """Not the stylesheet, script, image, fetch(), @import, redirect target or frame
    on the other server; the page's own stylesheet still decides the contrast."""
    site, other = servers
    done = run("analyze", str(archive), "--plugin", "axe", cwd=archive.parent, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "axe: 1 pages" in done.stderr and "0 errors" in done.stderr
    assert other.taken() == []
    assert sorted(site.taken()) == ["/moved.css", "/own.css"]  # the redirect is not followed
    assert FAINT in findings(archive)  # grey on white, from /own.css


def test_online_fetches_stylesheets_from_any_host_and_still_nothing_else(
        archive: Path, servers: tuple[Server, Server]) -> None:
    """``--online``: the stylesheets the page names anywhere (the other server's makes the
    text black: no contrast finding), redirects followed; scripts, images, frames still not."""
    site, other = servers
    done = run("analyze", str(archive), "--plugin", "axe", "--online", cwd=archive.parent,
               timeout=300)
    assert done.returncode == 0, done.stderr
    taken = set(other.taken())
    assert {"/other.css", "/redirected.css"} <= taken
    assert taken <= {"/other.css", "/redirected.css", "/inline-import.css", "/own-import.css",
                     "/preload.css"}
    assert "/own.css" in site.taken()
    assert FAINT not in findings(archive)  # black, from the other server's stylesheets


def test_deny_private_networks_refuses_even_the_pages_own_host(
        archive: Path, servers: tuple[Server, Server]) -> None:
    """The private-network guard in front of the browser (its proxy refuses loopback): even
    ``--online`` reaches neither server, so there is no stylesheet and no contrast finding."""
    site, other = servers
    done = run("analyze", str(archive), "--plugin", "axe", "--online",
               "--deny-private-networks", cwd=archive.parent, timeout=300)
    assert done.returncode == 0, done.stderr
    assert other.taken() == []
    assert site.taken() == []  # the page's own stylesheet not fetched either
    found = findings(archive)
    assert FAINT not in found  # no stylesheet at all: browser defaults
    assert ("video-caption", (f'<video src="http://127.0.0.1:{other.port}/video.mp4" '
                             'title="video"></video>')) in findings(
        archive, "needs-review")  # axe did run


def test_lighthouse_with_the_guard_does_not_audit_a_private_page(
        archive: Path, servers: tuple[Server, Server]) -> None:
    """Lighthouse loads the live page: with the guard, a page on a loopback host is not
    loaded at all (its four scores empty, the reason in the notes), and nothing is asked of
    either server. (Lighthouse's browsers go through the same proxy as axe's for every other
    page: ``tests/test_plugin_lighthouse.py``.)"""
    site, other = servers
    done = run("analyze", str(archive), "--plugin", "lighthouse", "--deny-private-networks",
               cwd=archive.parent, timeout=300)
    assert done.returncode == 0, done.stderr
    assert site.taken() == [] and other.taken() == []
    answer = run("query", str(archive), "page-values", "--plugin", "lighthouse",
                 cwd=archive.parent)
    [item] = json.loads(answer.stdout)["items"]
    assert {key: (cell["value"], cell["note"]) for key, cell in item["values"].items()} == {
        key: (None, ("Error: blocked by the private-network guard: localhost resolves to "
                    "127.0.0.1 (loopback)"))
        for key in ("performance", "accessibility", "best-practices", "seo")}
