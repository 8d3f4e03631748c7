"""Checks of the fixture website (fixtures/site.py) that the crawler tests rely on."""

from __future__ import annotations

import http.client
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from email.message import Message
from pathlib import Path

import pytest

from fixtures.site import BIG_SIZE, PDF_SIZE, SITE_ROOT, FixtureSite

REPO_ROOT = Path(__file__).resolve().parent.parent


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect)


def fetch(url: str, method: str = "GET") -> tuple[int, Message, bytes]:
    """(status, headers, body) without following redirects or raising on 4xx/5xx."""
    request = urllib.request.Request(url, method=method)
    try:
        with _opener.open(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.headers, err.read()


def title_of(body: bytes, encoding: str = "utf-8") -> str | None:
    match = re.search(r"<title>(.*?)</title>", body.decode(encoding), re.DOTALL)
    return match.group(1) if match else None


def hrefs_of(body: bytes) -> list[str]:
    return [h.replace("&amp;", "&") for h in re.findall(r'href="([^"]*)"', body.decode())]


def wait_stable(read: object, settle: float = 0.3, limit: float = 5.0) -> int:
    """Poll ``read()`` until it has not changed for ``settle`` seconds."""
    assert callable(read)
    deadline = time.monotonic() + limit
    last, since = read(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = read()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= settle:
            break
    return int(last)


def sent_eventually(site: FixtureSite, path: str, expected: int, limit: float = 5.0) -> int:
    """bytes_sent[path] once it reaches ``expected`` (the server counts a chunk only after
    ``wfile.write`` returned, which can be just after the client has read it)."""
    deadline = time.monotonic() + limit
    while site.bytes_sent.get(path, 0) != expected and time.monotonic() < deadline:
        time.sleep(0.01)
    return site.bytes_sent.get(path, 0)


@pytest.fixture(scope="module")
def site() -> Iterator[FixtureSite]:
    """A server of this module's own (not conftest's shared ``site``): these tests read its
    request log and byte counts, which a download another module left running would change."""
    with FixtureSite() as s:
        yield s


# --------------------------------------------------------------------------------------------
# Spec §11.2 routes
# --------------------------------------------------------------------------------------------

PAGES = [
    ("/", 200, "Test Top"),
    ("/about", 200, "About"),
    ("/recursive/", 200, "Recursive Top"),
    ("/recursive/page-a", 200, "Page A"),
    ("/recursive/page-b", 200, "Page B"),
    ("/recursive/page-c", 200, "Page C"),
    ("/external-like", 200, "External Page"),
    ("/redirect/", 200, "Redirect Top"),
    ("/redirect/dest", 200, "Redirect Destination"),
    ("/meta/", 200, "Meta Top"),
    ("/meta/full", 200, "Full Meta Page"),
    ("/meta/robots-noindex", 200, "Robots Noindex"),
    ("/meta/minimal", 200, "Minimal Page"),
    ("/exclude/", 200, "Exclude Top"),
    ("/exclude/page-a", 200, "Exclude Page A"),
    ("/exclude/page-b", 200, "Exclude Page B"),
    ("/exclude/secret/hidden", 200, "Secret Hidden"),
    ("/exclude/external-a", 200, "External A"),
    ("/exclude/external-b", 200, "External B"),
    ("/options/", 200, "Options Top"),
    ("/options/page-a?tab=1", 200, "Options Page A"),
    ("/options/external", 200, "Options External"),
    ("/error-status/", 200, "Error Status Top"),
    ("/error-status/not-found", 404, "Not Found"),
    ("/error-status/server-error", 500, "Server Error"),
    ("/error-status/forbidden", 403, "Forbidden"),
    ("/error-status/normal", 200, "Normal Page"),
    ("/scope/blog/", 200, "Blog Top"),
    ("/scope/blog/post-1", 200, "Post 1"),
    ("/scope/blog/post-2", 200, "Post 2"),
    ("/scope/docs/", 200, "Docs Top"),
    ("/scope/docs/api", 200, "API Docs"),
    ("/scope/admin/", 200, "Admin"),
    ("/scope/admin/settings", 200, "Settings"),
    ("/pagination/", 200, "Pagination Index"),
    ("/pagination/page/1", 200, "Page 1"),
    ("/pagination/page/10", 200, "Page 10"),
    ("/pagination/links", 200, "Pagination Links"),
    ("/pagination/runaway", 200, "Pagination Runaway"),
    ("/scroll-jack/", 200, "Scroll Jack Page"),
    ("/scroll-jack/mobile/", 200, "Mobile Redirect"),
    # extra routes of the port
    ("/robots-test/", 200, "Robots Test"),
    ("/robots-test/allowed", 200, "Allowed"),
    ("/private/", 200, "Private"),
    ("/files/", 200, "Files"),
    ("/norm/", 200, "Normalisation"),
    ("/norm/target?a=1&b=2", 200, "Norm Target"),
    ("/errors/", 200, "Errors"),
    ("/list/a", 200, "List A"),
    ("/list/b", 200, "List B"),
    ("/list/c", 200, "List C"),
    ("/list/d", 200, "List D"),
    ("/deep/", 200, "Deep Top"),
    ("/deep/1", 200, "Deep 1"),
    ("/deep/30", 200, "Deep 30"),
    ("/wide/", 200, "Wide Top"),
    ("/wide/p/1", 200, "Wide 1"),
    ("/wide/p/120", 200, "Wide 120"),
    ("/pager/", 200, "Pager page 1"),
    ("/pager/?page=2", 200, "Pager page 2"),
    ("/pager/?page=200", 200, "Pager page 200"),
    ("/pager/?page=201", 404, "Page not found"),
    ("/pager/?page=0", 404, "Page not found"),
    ("/pager/?page=x", 404, "Page not found"),
]


@pytest.mark.parametrize(("path", "status", "title"), PAGES)
def test_html_routes(site: FixtureSite, path: str, status: int, title: str) -> None:
    code, headers, body = fetch(site.url(path))
    assert code == status
    assert headers["Content-Type"] == "text/html; charset=UTF-8"
    assert int(headers["Content-Length"]) == len(body)
    assert body.startswith(b"<!doctype html>")
    assert title_of(body) == title


@pytest.mark.parametrize(
    "path",
    [
        "/pagination/page/0",
        "/pagination/page/11",
        "/pagination/page/x",
        "/deep/31",
        "/wide/p/121",
        "/does-not-exist",
        "/recursive",  # no trailing slash: not a route
        "/recursive/page-a.html",  # file names are not routes
        "/recursive/index",
        "/../site.py",
    ],
)
def test_not_found(site: FixtureSite, path: str) -> None:
    code, headers, body = fetch(site.url(path))
    assert code == 404
    assert headers["Content-Type"].startswith("text/plain")
    assert body == b"404 Not Found"


def test_redirect_chain(site: FixtureSite) -> None:
    code, headers, body = fetch(site.url("/redirect/start"))
    assert (code, headers["Location"], body) == (301, "/redirect/middle", b"")
    code, headers, body = fetch(site.url("/redirect/middle"))
    assert (code, headers["Location"], body) == (302, "/redirect/dest", b"")
    with urllib.request.urlopen(site.url("/redirect/start"), timeout=10) as response:
        assert response.url == site.url("/redirect/dest")
        assert title_of(response.read()) == "Redirect Destination"


def test_home_page_images(site: FixtureSite) -> None:
    body = fetch(site.url("/"))[2].decode()
    assert '<a href="/about">About</a>' in body
    assert 'alt="test image" width="100" height="100"' in body
    assert 'alt="lazy image" width="200" height="150" loading="lazy"' in body


def test_external_placeholders_substituted(site: FixtureSite) -> None:
    ext = site.external_url
    assert ext == f"http://127.0.0.1:{site.port}"
    assert site.base_url == f"http://localhost:{site.port}"
    assert f"{ext}/external-like" in hrefs_of(fetch(site.url("/recursive/page-b"))[2])
    exclude = hrefs_of(fetch(site.url("/exclude/"))[2])
    assert exclude == [
        "/exclude/page-a",
        "/exclude/page-b",
        "/exclude/secret/hidden",
        f"{ext}/exclude/external-a",
        f"{ext}/exclude/external-b",
    ]
    options = hrefs_of(fetch(site.url("/options/"))[2])
    assert options == [
        "/options/page-a?tab=1",
        f"{ext}/options/external",
        "/options/data.json",
        f"{ext}/options/data.json",
    ]


def _route_of(file: Path) -> str:
    rel = file.relative_to(SITE_ROOT).as_posix()
    if rel == "index.html":
        return "/"
    if rel.endswith("/index.html"):
        return "/" + rel[: -len("index.html")]
    if rel.endswith(".html"):
        return "/" + rel[: -len(".html")]
    return "/" + rel


def test_every_static_file_is_served_without_placeholders(site: FixtureSite) -> None:
    files = sorted(p for p in SITE_ROOT.rglob("*") if p.is_file())
    assert len(files) > 40
    for file in files:
        code, _, body = fetch(site.url(_route_of(file)))
        assert code == 200, file
        assert b"{{" not in body, file


def test_meta_full(site: FixtureSite) -> None:
    body = fetch(site.url("/meta/full"))[2].decode()
    base = site.base_url
    assert '<html lang="ja">' in body
    for snippet in [
        '<meta name="description" content="Test description">',
        '<meta name="keywords" content="test,meta,nitpicker">',
        '<meta name="robots" content="index,follow">',
        f'<link rel="canonical" href="{base}/meta/full">',
        f'<link rel="alternate" hreflang="en" href="{base}/meta/full-en">',
        '<meta property="og:type" content="website">',
        '<meta property="og:title" content="OG Title">',
        '<meta property="og:site_name" content="Test Site">',
        '<meta property="og:description" content="OG Description">',
        f'<meta property="og:url" content="{base}/meta/full">',
        f'<meta property="og:image" content="{base}/og-image.png">',
        '<meta name="twitter:card" content="summary_large_image">',
    ]:
        assert snippet in body
    assert hrefs_of(body.encode())[-2:] == ["/meta/robots-noindex", "/meta/minimal"]
    noindex = fetch(site.url("/meta/robots-noindex"))[2].decode()
    assert '<meta name="robots" content="noindex,nofollow,noarchive">' in noindex
    assert "<meta" not in fetch(site.url("/meta/minimal"))[2].decode()


def test_exclude_keyword_page(site: FixtureSite) -> None:
    assert b"FORBIDDEN_KEYWORD" in fetch(site.url("/exclude/page-b"))[2]
    assert b"FORBIDDEN_KEYWORD" not in fetch(site.url("/exclude/page-a"))[2]


def test_options_json(site: FixtureSite) -> None:
    for url in (site.url("/options/data.json"), site.external_url + "/options/data.json"):
        code, headers, body = fetch(url)
        assert (code, headers["Content-Type"], body) == (200, "application/json", b'{"test":true}')


def test_pagination_chain(site: FixtureSite) -> None:
    for n in range(1, 11):
        code, _, body = fetch(site.url(f"/pagination/page/{n}"))
        assert code == 200
        expected = [f"/pagination/page/{n + 1}"] if n < 10 else []
        assert hrefs_of(body) == expected


def test_pager_links_first_previous_next(site: FixtureSite) -> None:
    assert hrefs_of(fetch(site.url("/pager/"))[2]) == ["/pager/", "/pager/?page=2"]
    assert hrefs_of(fetch(site.url("/pager/?page=2"))[2]) == [
        "/pager/", "/pager/", "/pager/?page=3"]
    assert hrefs_of(fetch(site.url("/pager/?page=57"))[2]) == [
        "/pager/", "/pager/?page=56", "/pager/?page=58"]
    assert hrefs_of(fetch(site.url("/pager/?page=200"))[2]) == ["/pager/", "/pager/?page=199"]


def test_pager_delay(site: FixtureSite) -> None:
    site.pager_delay = 0.2
    try:
        started = time.monotonic()
        fetch(site.url("/pager/?page=3"))
        assert time.monotonic() - started >= 0.2
    finally:
        site.pager_delay = 0.0


def test_scroll_jack(site: FixtureSite) -> None:
    body = fetch(site.url("/scroll-jack/"))[2].decode()
    assert "window.innerWidth < 500" in body and "/scroll-jack/mobile/" in body
    assert 'alt="desktop image" width="100" height="100"' in body


# --------------------------------------------------------------------------------------------
# Extra routes
# --------------------------------------------------------------------------------------------


def test_robots(site: FixtureSite) -> None:
    code, headers, body = fetch(site.url("/robots.txt"))
    assert code == 200
    assert headers["Content-Type"].startswith("text/plain")
    assert body.decode().splitlines() == ["User-agent: *", "Disallow: /private/"]
    assert hrefs_of(fetch(site.url("/robots-test/"))[2]) == ["/private/", "/robots-test/allowed"]


def test_norm_links_all_reach_target(site: FixtureSite) -> None:
    links = hrefs_of(fetch(site.url("/norm/"))[2])
    assert links == [
        "/norm/target?b=2&a=1",
        "/norm/target?a=1&b=2#frag",
        "/norm//target?a=1&b=2&PHPSESSID=abc",
    ]
    for link in links:
        assert title_of(fetch(site.url(link))[2]) == "Norm Target"


def test_list_pages_link_to_d(site: FixtureSite) -> None:
    for x in "abc":
        assert hrefs_of(fetch(site.url(f"/list/{x}"))[2]) == ["/list/d"]


def test_deep_chain(site: FixtureSite) -> None:
    assert hrefs_of(fetch(site.url("/deep/"))[2]) == ["/deep/1"]
    assert hrefs_of(fetch(site.url("/deep/7"))[2]) == ["/deep/8"]
    assert hrefs_of(fetch(site.url("/deep/30"))[2]) == []


def test_wide_section_and_delay(site: FixtureSite) -> None:
    links = hrefs_of(fetch(site.url("/wide/"))[2])
    assert links == [f"/wide/p/{n}" for n in range(1, 121)]
    assert hrefs_of(fetch(site.url("/wide/p/5"))[2]) == ["/wide/", "/wide/p/6"]
    assert hrefs_of(fetch(site.url("/wide/p/120"))[2]) == ["/wide/"]
    site.delay = 0.3
    try:
        started = time.monotonic()
        fetch(site.url("/wide/p/2"))
        assert time.monotonic() - started >= 0.3
        started = time.monotonic()
        fetch(site.url("/wide/"))  # only /wide/p/* is delayed
        assert time.monotonic() - started < 0.3
    finally:
        site.delay = 0.0


def test_charset_pages(site: FixtureSite) -> None:
    code, headers, body = fetch(site.url("/charset/"))
    assert code == 200
    assert headers["Content-Type"] == "text/html; charset=shift_jis"
    assert title_of(body, "shift_jis") == "日本語のページ"
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    code, headers, body = fetch(site.url("/charset/meta"))
    assert code == 200
    assert headers["Content-Type"] == "text/html"
    assert b'<meta charset="euc-jp">' in body
    assert title_of(body, "euc_jp") == "メタ文字コード"


def test_errors_page_and_reset(site: FixtureSite) -> None:
    assert hrefs_of(fetch(site.url("/errors/"))[2]) == [
        "http://127.0.0.1:1/refused",
        "/errors/reset",
    ]
    for method in ("GET", "HEAD"):
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            fetch(site.url("/errors/reset"), method)


def test_files(site: FixtureSite) -> None:
    assert hrefs_of(fetch(site.url("/files/"))[2]) == [
        "/files/report.pdf",
        "/files/photo.png",
        "/files/big.bin",
    ]
    site.clear_log()
    for path, ctype, size in [
        ("/files/report.pdf", "application/pdf", PDF_SIZE),
        ("/files/big.bin", "application/octet-stream", BIG_SIZE),
    ]:
        code, headers, body = fetch(site.url(path), "HEAD")
        assert (code, headers["Content-Type"], int(headers["Content-Length"])) == (200, ctype, size)
        assert body == b""
    assert site.bytes_sent == {}

    code, headers, body = fetch(site.url("/files/report.pdf"))
    assert len(body) == PDF_SIZE and body.startswith(b"%PDF-") and body.endswith(b"%%EOF\n")
    assert sent_eventually(site, "/files/report.pdf", PDF_SIZE) == PDF_SIZE

    code, headers, body = fetch(site.url("/files/photo.png"))
    assert headers["Content-Type"] == "image/png"
    assert body.startswith(b"\x89PNG\r\n\x1a\n") and body.endswith(b"IEND\xaeB`\x82")
    assert sent_eventually(site, "/files/photo.png", len(body)) == len(body)

    assert [(m, p) for m, _, p in site.request_log] == [
        ("HEAD", "/files/report.pdf"),
        ("HEAD", "/files/big.bin"),
        ("GET", "/files/report.pdf"),
        ("GET", "/files/photo.png"),
    ]


def test_big_file_full_and_aborted(site: FixtureSite) -> None:
    site.clear_log()
    code, _, body = fetch(site.url("/files/big.bin"))
    assert code == 200 and len(body) == BIG_SIZE
    assert sent_eventually(site, "/files/big.bin", BIG_SIZE) == BIG_SIZE

    site.clear_log()
    with socket.create_connection(("127.0.0.1", site.port), timeout=10) as sock:
        sock.sendall(f"GET /files/big.bin HTTP/1.1\r\nHost: localhost:{site.port}\r\n\r\n".encode())
        head = sock.recv(4096)
        assert head.startswith(b"HTTP/1.1 200")
    sent = wait_stable(lambda: site.bytes_sent.get("/files/big.bin", 0))
    assert 0 < sent < BIG_SIZE // 2


def test_request_log_and_hosts(site: FixtureSite) -> None:
    target_size = len(fetch(site.url("/norm/target"))[2])
    site.clear_log()
    fetch(site.url("/norm/target?b=2&a=1"))
    fetch(site.external_url + "/external-like", "HEAD")
    assert site.request_log == [
        ("GET", f"localhost:{site.port}", "/norm/target?b=2&a=1"),
        ("HEAD", f"127.0.0.1:{site.port}", "/external-like"),
    ]
    assert sent_eventually(site, "/norm/target", target_size) == target_size
    assert site.bytes_sent == {"/norm/target": target_size}
    site.clear_log()
    assert site.request_log == [] and site.bytes_sent == {}


def test_keep_alive(site: FixtureSite) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", site.port, timeout=10)
    try:
        conn.request("GET", "/about", headers={"Host": f"localhost:{site.port}"})
        first = conn.getresponse()
        assert first.status == 200 and first.version == 11
        assert first.getheader("Connection") is None  # not closing
        first.read()
        sock = conn.sock
        conn.request("HEAD", "/files/big.bin", headers={"Host": f"localhost:{site.port}"})
        second = conn.getresponse()
        second.read()
        conn.request("GET", "/redirect/start", headers={"Host": f"localhost:{site.port}"})
        third = conn.getresponse()
        third.read()
        assert (second.status, third.status) == (200, 301)
        assert conn.sock is sock  # all three on one connection
    finally:
        conn.close()


def test_stop_closes_port() -> None:
    s = FixtureSite().start()
    port = s.port
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/")
    conn.getresponse().read()  # leaves a keep-alive connection open
    s.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    conn.close()


@pytest.mark.integration  # starts a process
def test_module_entry_point() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fixtures.site", "--port", "0"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://localhost:\d+", base)
        code, _, body = fetch(base + "/")
        assert code == 200 and title_of(body) == "Test Top"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0
