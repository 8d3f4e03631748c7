"""Render throughput: nitpicker's browser rendering against a bare scrapy-playwright spider.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/render_throughput.py [--pages 200] [--repeat N] [--keep]

One run does, in order:

1. builds a deterministic (seeded) site of ``--pages`` pages (default 200) and serves it from a
   separate process on 127.0.0.1 (a free port), HTTP/1.1 keep-alive. Every page is 10-20 KB of
   HTML with one stylesheet, one script, 20-40 links to other pages (a "next" link on every
   page, so all are reachable from ``/``), an eager logo, hero and avatar image and 1-3
   ``loading=lazy`` photos further down; the five images, the stylesheet and the script are
   shared by all pages (``Cache-Control: max-age=3600``);
2. (a) runs a bare scrapy-playwright spider in its own process: the same Chromium (executable
   and launch arguments from ``nitpicker.render.chromium``: ``find_chromium()``,
   ``CHROMIUM_ARGS``), the same viewport, the same concurrency (``CONCURRENT_REQUESTS`` =
   ``--parallels``, ``PLAYWRIGHT_MAX_PAGES_PER_CONTEXT`` = 4). Every request has ``meta={"playwright": True}``
   (scrapy-playwright's defaults: navigate and wait for ``load``); it follows links (parsel
   ``a::attr(href)``, ``urljoin``, a seen set checked before a ``Request`` is built, same host
   only) and extracts nothing else;
3. (b) runs ``nitpicker crawl URL -o FILE --silent --ignore-robots -P 4`` (rendering on, the
   default: preflight, DOM content loaded, network idle, snapshot, scroll + lazy images at two
   device presets, resources, archive);
4. for each, measures wall time (process start to exit), pages rendered, CPU seconds of the
   whole process tree (``wait4`` of the crawler, which includes every descendant it reaped,
   plus any orphan reparented to this script, which is made a child subreaper), the peak RSS of
   the whole tree (crawler + Playwright's node driver + Chromium and all its children; the sum
   of the processes' RSS, sampled with psutil every 0.1 s) and, for reference, the peak
   proportional set size (PSS, shared pages divided among the processes; sampled every 1 s);
5. prints pages/s of each, the ratio b/a (target >= 0.8: PASS or BELOW TARGET; exit 0 either
   way), the CPU split (crawler / node driver / Chromium) and the load other processes put on
   the machine during each run (wall-clock figures are only comparable on a quiet machine).

The ``--profile-steps`` mode that timed the rendering steps one by one (and the what-if
variants that led to the page pool) profiled the steps as they were before the rendering pass;
it was removed with them and is in this script at commit 4f6c862.

Internal modes (used by the script itself): ``--_serve`` (the site server process) and
``--_baseline`` (the bare spider process). ``--serve-only`` serves the site until Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import platform
import posixpath
import random
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from measuring import (
    SiteServer,
    archive_page_count,
    busy_cpu_seconds,
    median,
    nitpicker_command,
    self_cpu_seconds,
    start_site_server,
)

HERE = Path(__file__).resolve()
SITE_NAME = "Render Bench"
SECTIONS = ("docs", "blog", "news", "products", "support", "guides", "company", "events")
TARGET_RATIO = 0.8
#: Rendered pages in nitpicker's archive: HTML answered with 200.
RENDERED = "scraped = 1 AND status = 200 AND content_type = 'text/html'"

# ------------------------------------------------------------------------------------------
# The site
# ------------------------------------------------------------------------------------------

# name -> (width, height, base colour): the images every page shares.
IMAGES = {
    "logo.png": (180, 48, (30, 90, 160)),
    "hero.png": (1200, 500, (200, 120, 60)),
    "avatar.png": (96, 96, (90, 160, 90)),
    "photo-1.png": (800, 533, (60, 140, 190)),
    "photo-2.png": (640, 480, (170, 70, 120)),
}


def make_png(width: int, height: int, colour: tuple[int, int, int]) -> bytes:
    """A real (decodable) RGB PNG: a diagonal gradient with stripes, a few KB to tens of KB."""
    r0, g0, b0 = colour
    rows = []
    xs = range(width)
    for y in range(height):
        shade = (y * 96) // max(1, height)
        stripe = 24 if (y // 16) % 2 else 0
        row = bytearray(b"\x00")  # filter: none
        row += bytes(
            v
            for x in xs
            for v in (
                (r0 + shade + (x * 64) // width) & 255,
                (g0 + stripe + (((x >> 3) ^ (y >> 3)) & 15)) & 255,
                (b0 + (x * 32) // width) & 255,
            )
        )
        rows.append(bytes(row))
    raw = b"".join(rows)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6))
            + chunk(b"IEND", b""))


SITE_CSS = """/* Render Bench site stylesheet */
:root { --fg: #1d2330; --muted: #5b6475; --accent: #1e5aa0; --bg: #ffffff; --panel: #f4f6fa;
  --radius: 6px; --max: 1100px; font-size: 16px; }
*, *::before, *::after { box-sizing: border-box; }
html { scroll-behavior: auto; }
body { margin: 0; color: var(--fg); background: var(--bg); line-height: 1.6;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
a { color: var(--accent); text-decoration: none; }
a:hover, a:focus { text-decoration: underline; }
img { max-width: 100%; height: auto; display: block; }
.progress { position: fixed; top: 0; left: 0; height: 3px; background: var(--accent); width: 0; z-index: 10; }
.site-header { display: flex; align-items: center; gap: 2rem; padding: 0.75rem 1.5rem;
  border-bottom: 1px solid #dde2ea; background: #fff; position: sticky; top: 0; z-index: 5; }
.site-header .logo img { width: 180px; height: 48px; }
.site-nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: 1rem; margin: 0; padding: 0; }
.site-nav a { color: var(--fg); font-weight: 500; padding: 0.25rem 0; }
.site-nav a.current { color: var(--accent); border-bottom: 2px solid var(--accent); }
.layout { display: grid; grid-template-columns: minmax(0, 1fr) 280px; gap: 2.5rem;
  max-width: var(--max); margin: 0 auto; padding: 2rem 1.5rem; }
.breadcrumbs { font-size: 0.875rem; color: var(--muted); margin-bottom: 1rem; }
.breadcrumbs a { color: var(--muted); }
article h1 { font-size: 2.25rem; line-height: 1.2; margin: 0 0 0.5rem; }
article h2 { font-size: 1.5rem; margin: 2rem 0 0.75rem; }
article p { margin: 0 0 1rem; }
.byline { display: flex; align-items: center; gap: 0.75rem; color: var(--muted); margin-bottom: 1.5rem; }
.byline img { width: 48px; height: 48px; border-radius: 50%; }
.hero { margin: 0 0 1.5rem; border-radius: var(--radius); overflow: hidden; }
figure { margin: 1.5rem 0; }
figcaption { font-size: 0.875rem; color: var(--muted); margin-top: 0.5rem; }
.toc { background: var(--panel); border-radius: var(--radius); padding: 1rem 1.25rem; margin-bottom: 1.5rem; }
.toc ol { margin: 0; padding-left: 1.25rem; }
aside .panel { background: var(--panel); border-radius: var(--radius); padding: 1rem 1.25rem; margin-bottom: 1.5rem; }
aside h2 { font-size: 1rem; text-transform: uppercase; letter-spacing: 0.05em; margin: 0 0 0.5rem; }
aside ul { list-style: none; margin: 0; padding: 0; }
aside li { padding: 0.35rem 0; border-bottom: 1px solid #e3e7ee; }
aside li:last-child { border-bottom: 0; }
.pager { display: flex; justify-content: space-between; margin: 2rem 0; padding-top: 1rem; border-top: 1px solid #dde2ea; }
.tags { display: flex; flex-wrap: wrap; gap: 0.5rem; margin: 1rem 0; padding: 0; list-style: none; }
.tags li { background: var(--panel); border-radius: 999px; padding: 0.15rem 0.75rem; font-size: 0.875rem; }
.site-footer { background: #1d2330; color: #c9d1de; padding: 2rem 1.5rem; margin-top: 3rem; }
.site-footer a { color: #fff; }
.site-footer .cols { display: grid; grid-template-columns: repeat(3, 1fr); gap: 2rem; max-width: var(--max); margin: 0 auto; }
.reading-time { font-size: 0.875rem; color: var(--muted); }
.js .no-js-only { display: none; }
@media (max-width: 800px) {
  .layout { grid-template-columns: minmax(0, 1fr); padding: 1rem; }
  .site-header { flex-direction: column; align-items: flex-start; gap: 0.5rem; position: static; }
  article h1 { font-size: 1.75rem; }
  .site-footer .cols { grid-template-columns: 1fr; }
}
@media (max-width: 400px) {
  :root { font-size: 15px; }
  .site-nav ul { gap: 0.5rem; }
  .byline { flex-direction: column; align-items: flex-start; }
}
@media print { .site-header, .site-footer, aside, .progress { display: none; } }
"""

SITE_JS = """/* Render Bench site script: table of contents, current nav item, reading time, progress. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  function ready(fn) {
    if (document.readyState !== "loading") { fn(); } else { document.addEventListener("DOMContentLoaded", fn); }
  }
  function slug(text) {
    return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  }
  ready(function () {
    var article = document.querySelector("article");
    if (!article) { return; }
    var heads = article.querySelectorAll("h2");
    var toc = document.getElementById("toc");
    if (toc && heads.length) {
      var list = document.createElement("ol");
      for (var i = 0; i < heads.length; i++) {
        var id = heads[i].id || slug(heads[i].textContent) || "section-" + i;
        heads[i].id = id;
        var item = document.createElement("li");
        var link = document.createElement("a");
        link.href = "#" + id;
        link.textContent = heads[i].textContent;
        item.appendChild(link);
        list.appendChild(item);
      }
      toc.appendChild(list);
    }
    var here = location.pathname;
    var navLinks = document.querySelectorAll(".site-nav a");
    for (var j = 0; j < navLinks.length; j++) {
      if (navLinks[j].getAttribute("href") === here) { navLinks[j].classList.add("current"); }
    }
    var words = (article.textContent || "").split(/\\s+/).length;
    var rt = document.querySelector(".reading-time");
    if (rt) { rt.textContent = Math.max(1, Math.round(words / 230)) + " min read"; }
    var bar = document.querySelector(".progress");
    var ticking = false;
    window.addEventListener("scroll", function () {
      if (ticking || !bar) { return; }
      ticking = true;
      window.requestAnimationFrame(function () {
        var max = document.documentElement.scrollHeight - window.innerHeight;
        bar.style.width = (max > 0 ? (100 * window.scrollY / max) : 0) + "%";
        ticking = false;
      });
    }, { passive: true });
  });
})();
"""


def page_path(i: int) -> str:
    """URL path of page ``i``: page 0 is ``/``, the rest one directory deep."""
    if i == 0:
        return "/"
    return f"/{SECTIONS[i % len(SECTIONS)]}/{i}.html"


def _vocabulary(rng: random.Random, size: int = 2000) -> list[str]:
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["th", "st", "qu", "ch"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    return sorted(words)


class Site:
    """Deterministic pages: the same (pages, seed, base) always gives the same bytes."""

    NAV = 7  # the home page and six hubs

    def __init__(self, pages: int, seed: int, base: str) -> None:
        self.pages = pages
        self.seed = seed
        self.base = base.rstrip("/")
        rng = random.Random(seed)
        self.words = _vocabulary(rng)
        hubs = [0] + list(range(1, min(pages, self.NAV)))
        items = []
        for j in hubs:
            label = "Home" if j == 0 else self._title(rng, 1)
            items.append(f'<li><a href="{page_path(j)}">{label}</a></li>')
        self.nav_html = ('<nav class="site-nav" aria-label="Main"><ul>\n' + "\n".join(items)
                         + "\n</ul></nav>")
        self.nav_count = len(hubs)

    def _text(self, rng: random.Random, n: int) -> str:
        return " ".join(rng.choice(self.words) for _ in range(n))

    def _title(self, rng: random.Random, n: int) -> str:
        return " ".join(w.capitalize() for w in self._text(rng, n).split())

    def href(self, rng: random.Random, here: str, target: int) -> str:
        """A link as sites write them: root-relative, relative or absolute, sometimes a fragment."""
        path = page_path(target)
        roll = rng.random()
        if path == "/" or roll < 0.5:
            href = path
        elif roll < 0.85:
            href = posixpath.relpath(path, posixpath.dirname(here))
        else:
            href = self.base + path
        if rng.random() < 0.05:
            href += "#" + rng.choice(("overview", "details", "comments"))
        return href

    def _targets(self, rng: random.Random, i: int, count: int) -> list[int]:
        n = self.pages
        out = []
        while len(out) < count:
            roll = rng.random()
            if roll < 0.5:
                t = i + len(SECTIONS) * rng.randint(-12, 12)
            elif roll < 0.65:
                t = int(n * rng.random() ** 3)
            else:
                t = rng.randrange(n)
            out.append(t % n)
        return out

    def render(self, i: int) -> bytes:
        rng = random.Random(self.seed * 1_000_003 + i)
        n = self.pages
        here = page_path(i)
        url = self.base + here
        title = self._title(rng, rng.randint(3, 7))
        description = self._text(rng, rng.randint(18, 28))
        section = SECTIONS[i % len(SECTIONS)]
        # 20-40 links: nav + breadcrumb + pager (prev/next) + inline + sidebar.
        total_links = rng.randint(20, 40)
        fixed = 1 + self.nav_count + 1 + 2  # logo, nav, breadcrumb, pager
        free = max(0, total_links - fixed)
        inline_n = free // 2
        targets = self._targets(rng, i, free)
        inline, side = targets[:inline_n], targets[inline_n:]
        href = self.href
        lazy_photos = rng.randint(1, 3)
        parts = [f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} | {SITE_NAME}</title>
<meta name="description" content="{description}">
<link rel="canonical" href="{url}">
<meta property="og:title" content="{title}">
<meta property="og:description" content="{description}">
<meta property="og:url" content="{url}">
<meta property="og:image" content="{self.base}/img/hero.png">
<link rel="stylesheet" href="/static/site.css">
<script src="/static/app.js" defer></script>
</head>
<body>
<div class="progress"></div>
<header class="site-header">
<a class="logo" href="/"><img src="/img/logo.png" alt="{SITE_NAME}" width="180" height="48"></a>
{self.nav_html}
</header>
<div class="layout">
<main>
<nav class="breadcrumbs"><a href="/">Home</a> / <span>{section.capitalize()}</span></nav>
<article>
<h1>{title}</h1>
<div class="byline"><img src="/img/avatar.png" alt="{self._title(rng, 2)}" width="48" height="48">
<span>By {self._title(rng, 2)}</span> <span class="reading-time"></span></div>
<div class="hero"><img src="/img/hero.png" alt="{self._text(rng, 5)}" width="1200" height="500"></div>
<div class="toc" id="toc"><strong>Contents</strong></div>
"""]
        paragraphs = rng.randint(12, 17)
        per_paragraph = max(1, -(-len(inline) // paragraphs))
        photo_at = sorted(rng.sample(range(4, paragraphs), min(lazy_photos, paragraphs - 4)))
        k = 0
        for p in range(paragraphs):
            words = self._text(rng, rng.randint(70, 110)).split()
            chunk = inline[k:k + per_paragraph]
            k += len(chunk)
            for t in chunk:
                pos = rng.randrange(len(words))
                m = rng.randint(1, 4)
                words[pos:pos + m] = [f'<a href="{href(rng, here, t)}">{" ".join(words[pos:pos + m])}</a>']
            if p % 4 == 1:
                parts.append(f"<h2>{self._title(rng, rng.randint(2, 5))}</h2>\n")
            parts.append("<p>" + " ".join(words) + "</p>\n")
            if p in photo_at:
                name = "photo-1.png" if (p + i) % 2 else "photo-2.png"
                w, h = IMAGES[name][:2]
                parts.append(
                    f'<figure><img src="/img/{name}" alt="{self._text(rng, 4)}" width="{w}" '
                    f'height="{h}" loading="lazy"><figcaption>{self._text(rng, 9)}</figcaption>'
                    "</figure>\n"
                )
        tags = "".join(f"<li>{w}</li>" for w in self._text(rng, 5).split())
        prev_t, next_t = (i - 1) % n, (i + 1) % n
        parts.append(
            f'<ul class="tags">{tags}</ul>\n'
            f'<nav class="pager"><a rel="prev" href="{href(rng, here, prev_t)}">Previous</a>'
            f'<a rel="next" href="{page_path(next_t)}">Next</a></nav>\n'
            "</article>\n</main>\n<aside>\n"
        )
        half = len(side) // 2
        for label, group in (("Related", side[:half]), ("Popular", side[half:])):
            items = "\n".join(
                f'<li><a href="{href(rng, here, t)}">{self._title(rng, rng.randint(2, 5))}</a></li>'
                for t in group
            )
            parts.append(f'<section class="panel"><h2>{label}</h2>\n<ul>\n{items}\n</ul></section>\n')
        parts.append(
            "</aside>\n</div>\n<footer class=\"site-footer\"><div class=\"cols\">\n"
            f"<p>{self._text(rng, 30)}</p>\n<p>{self._text(rng, 20)}</p>\n"
            f"<p>&copy; 2026 {SITE_NAME}</p>\n</div></footer>\n</body>\n</html>\n"
        )
        return "".join(parts).encode("utf-8")


def _response(body: bytes, content_type: str, *, cache: bool, status: str = "200 OK") -> bytes:
    head = [f"HTTP/1.1 {status}", "Server: render-bench", f"Content-Type: {content_type}",
            f"Content-Length: {len(body)}"]
    if cache:
        head.append("Cache-Control: public, max-age=3600")
        head.append("Last-Modified: Mon, 30 Nov 2026 00:00:00 GMT")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def _serve(args: argparse.Namespace) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

        def handle_error(self, request, client_address):  # type: ignore[no-untyped-def]
            pass  # a client that hung up (a preflight stopped after the headers)

    responses: dict[str, bytes] = {}
    not_found = _response(b"<!DOCTYPE html><title>Not found</title><h1>Not found</h1>\n",
                          "text/html; charset=utf-8", cache=False, status="404 Not Found")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive
        disable_nagle_algorithm = True

        def _lookup(self) -> bytes:
            return responses.get(self.path.split("?", 1)[0].split("#", 1)[0], not_found)

        def do_GET(self) -> None:
            with contextlib.suppress(OSError):
                self.wfile.write(self._lookup())

        def do_HEAD(self) -> None:
            data = self._lookup()
            with contextlib.suppress(OSError):
                self.wfile.write(data[: data.index(b"\r\n\r\n") + 4])

        def log_message(self, format: str, *a: object) -> None:
            pass

    server = Server(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    site = Site(args.pages, args.seed, f"http://127.0.0.1:{port}")
    sizes = []
    for i in range(args.pages):
        body = site.render(i)
        sizes.append(len(body))
        responses[page_path(i)] = _response(body, "text/html; charset=utf-8", cache=False)
    responses["/static/site.css"] = _response(SITE_CSS.encode(), "text/css", cache=True)
    responses["/static/app.js"] = _response(SITE_JS.encode(), "text/javascript", cache=True)
    image_bytes = 0
    for name, (w, h, colour) in IMAGES.items():
        png = make_png(w, h, colour)
        image_bytes += len(png)
        responses[f"/img/{name}"] = _response(png, "image/png", cache=True)
    info = {"port": port, "html_min": min(sizes), "html_max": max(sizes),
            "html_avg": sum(sizes) / len(sizes), "css": len(SITE_CSS), "js": len(SITE_JS),
            "images": len(IMAGES), "image_bytes": image_bytes}
    print("READY " + json.dumps(info), flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever(poll_interval=0.5)


def start_server(pages: int, seed: int, port: int = 0) -> SiteServer:
    proc, ready, seconds = start_site_server(
        [sys.executable, str(HERE), "--_serve", "--pages", str(pages), "--seed", str(seed),
         "--port", str(port)])
    info = json.loads(ready)
    return SiteServer(proc, int(info["port"]), info, seconds)


# ------------------------------------------------------------------------------------------
# (a) the bare scrapy-playwright spider, in its own process
# ------------------------------------------------------------------------------------------

def baseline_settings(parallels: int) -> dict[str, object]:
    from nitpicker.render.chromium import CHROMIUM_ARGS, find_chromium

    executable = find_chromium()
    if executable is None:
        raise SystemExit("Chromium not found (apt-get install chromium)")
    handler = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
    return {
        "DOWNLOAD_HANDLERS": {"http": handler, "https": handler},
        "TWISTED_REACTOR": "twisted.internet.asyncioreactor.AsyncioSelectorReactor",
        "PLAYWRIGHT_BROWSER_TYPE": "chromium",
        "PLAYWRIGHT_LAUNCH_OPTIONS": {"executable_path": executable, "headless": True,
                                      "args": list(CHROMIUM_ARGS)},
        # nitpicker's context has this viewport too (nitpicker/render/settings.py).
        "PLAYWRIGHT_CONTEXTS": {"default": {"viewport": {"width": 1280, "height": 800}}},
        "PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": min(4, parallels),
        "CONCURRENT_REQUESTS": parallels,
        "CONCURRENT_REQUESTS_PER_DOMAIN": parallels,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
    }


def _baseline(args: argparse.Namespace) -> None:
    from collections import Counter
    from urllib.parse import urlsplit

    import scrapy
    from scrapy.crawler import CrawlerProcess

    class RenderOnlySpider(scrapy.Spider):
        """Renders every page once and follows its links; extracts nothing else."""

        name = "render_only"

        def __init__(self, root: str, **kwargs: object) -> None:
            super().__init__(**kwargs)
            self.root = root
            self.host = urlsplit(root).netloc
            self.seen = {root}
            self.parsed = 0
            self.statuses: Counter[int] = Counter()
            self.failures: list[str] = []
            self.times: list[float] = []

        async def start(self):  # type: ignore[no-untyped-def]
            yield scrapy.Request(self.root, meta={"playwright": True}, callback=self.parse,
                                 errback=self.failed)

        def parse(self, response):  # type: ignore[no-untyped-def]
            self.times.append(time.time())
            self.parsed += 1
            self.statuses[response.status] += 1
            seen = self.seen
            for href in response.css("a::attr(href)").getall():
                url = response.urljoin(href)
                if "#" in url:
                    url = url[: url.index("#")]
                if url in seen:
                    continue
                seen.add(url)
                parts = urlsplit(url)
                if parts.scheme in ("http", "https") and parts.netloc == self.host:
                    yield scrapy.Request(url, meta={"playwright": True}, callback=self.parse,
                                         errback=self.failed)

        def failed(self, failure):  # type: ignore[no-untyped-def]
            self.failures.append(f"{failure.request.url}: {failure.value!r}"[:300])

    settings = baseline_settings(args.parallels)
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(RenderOnlySpider)
    process.crawl(crawler, root=args.url)
    process.start()
    stats = crawler.stats.get_stats()
    spider = crawler.spider
    times = sorted(spider.times)
    result = {
        "parsed": spider.parsed,
        "status_200": spider.statuses.get(200, 0),
        "statuses": dict(spider.statuses),
        "failures": spider.failures[:10],
        "failure_count": len(spider.failures),
        "first_page": times[0] if times else None,
        "last_page": times[-1] if times else None,
        "playwright_requests": stats.get("playwright/request_count", 0),
        "playwright_images": stats.get("playwright/request_count/resource_type/image", 0),
        "finish_reason": stats.get("finish_reason"),
    }
    Path(args.result).write_text(json.dumps(result, default=str))


# ------------------------------------------------------------------------------------------
# Measuring a whole process tree
# ------------------------------------------------------------------------------------------

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Orphans of the measured tree are reparented to this script, so it can reap them and count
    their CPU time (a descendant whose parent died before reaping it would otherwise be lost)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _group(name: str, cmdline: list[str]) -> str:
    joined = " ".join(cmdline[:2])
    if "chrom" in name or "chrom" in joined:
        return "chromium"
    if name == "node" or "/driver/node" in joined:
        return "node"
    return "other"


@dataclass
class RunResult:
    name: str
    pages: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    orphan_cpu: float = 0.0
    crawler_cpu: float = 0.0
    node_cpu: float = 0.0
    peak_rss: int = 0
    peak_pss: int = 0
    peak_procs: int = 0
    exit_code: int = 0
    server_cpu: float = 0.0
    other_cpu: float = 0.0
    sampler_cpu: float = 0.0
    started_wall: float = 0.0
    first_page_at: float | None = None  # seconds after start
    last_page_at: float | None = None
    leaked: list[str] = field(default_factory=list)
    detail: dict[str, object] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.pages / self.seconds if self.seconds else 0.0

    @property
    def steady_rate(self) -> float | None:
        """Pages/s between the first and the last page (no start-up, no shutdown)."""
        if self.first_page_at is None or self.last_page_at is None or self.pages < 2:
            return None
        span = self.last_page_at - self.first_page_at
        return (self.pages - 1) / span if span > 0 else None

    @property
    def chromium_cpu(self) -> float:
        return max(0.0, self.cpu_seconds - self.crawler_cpu - self.node_cpu)

    @property
    def cpu_ms_per_page(self) -> float:
        return self.cpu_seconds * 1000 / self.pages if self.pages else 0.0

    @property
    def other_load(self) -> float:
        return self.other_cpu / self.seconds if self.seconds else 0.0


def run_measured(name: str, cmd: list[str], server: SiteServer, *, log: Path,
                 archive: Path | None = None) -> RunResult:
    """Run ``cmd`` and measure its whole process tree until it exits (and its orphans too)."""
    import psutil

    result = RunResult(name)
    stop = threading.Event()
    server_cpu0 = server.cpu_seconds()
    busy0 = busy_cpu_seconds()
    self0 = self_cpu_seconds()
    sampler_cpu = [0.0]
    last_cpu: dict[int, tuple[str, float]] = {}  # pid -> (group, user+system), last sample
    archive_marks: list[tuple[float, int]] = []
    with log.open("w") as out:
        t0 = time.monotonic()
        result.started_wall = time.time()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    root = psutil.Process(proc.pid)
    groups: dict[int, str] = {proc.pid: "crawler"}
    handles: dict[int, psutil.Process] = {proc.pid: root}

    def sample() -> None:
        tick = 0
        thread_cpu0 = time.thread_time()
        while not stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                procs = []
            rss = 0
            for p in procs:
                h = handles.setdefault(p.pid, p)
                try:
                    with h.oneshot():
                        rss += h.memory_info().rss
                        t = h.cpu_times()
                        if h.pid not in groups:
                            groups[h.pid] = _group(h.name(), h.cmdline())
                except psutil.Error:
                    continue
                last_cpu[h.pid] = (groups[h.pid], t.user + t.system)
            result.peak_rss = max(result.peak_rss, rss)
            result.peak_procs = max(result.peak_procs, len(procs))
            if tick % 10 == 0:  # PSS is costlier to read (smaps_rollup): once a second
                pss = 0
                for p in procs:
                    with contextlib.suppress(psutil.Error, AttributeError):
                        pss += handles[p.pid].memory_full_info().pss
                result.peak_pss = max(result.peak_pss, pss)
            if archive is not None and tick % 5 == 0:
                count = archive_page_count(archive, RENDERED)
                if count:
                    archive_marks.append((time.monotonic() - t0, count))
            tick += 1
            stop.wait(0.1)
        sampler_cpu[0] = time.thread_time() - thread_cpu0

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    result.seconds = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    result.exit_code = proc.returncode
    result.cpu_seconds = usage.ru_utime + usage.ru_stime  # the crawler + every reaped descendant
    stop.set()
    sampler.join()
    result.sampler_cpu = sampler_cpu[0]
    result.orphan_cpu = reap_orphans(server, result)
    result.cpu_seconds += result.orphan_cpu
    result.crawler_cpu = last_cpu.get(proc.pid, ("crawler", 0.0))[1]
    result.node_cpu = sum(cpu for group, cpu in last_cpu.values() if group == "node")
    result.server_cpu = server.cpu_seconds() - server_cpu0
    own = self_cpu_seconds() - self0
    busy = busy_cpu_seconds() - busy0
    result.other_cpu = max(0.0, busy - result.cpu_seconds - result.server_cpu - own)
    if archive is not None:
        final = archive_page_count(archive, RENDERED) or 0
        done = [t for t, c in archive_marks if c >= final]
        if archive_marks:
            result.first_page_at = archive_marks[0][0]
            result.last_page_at = done[0] if done else archive_marks[-1][0]
    return result


def reap_orphans(server: SiteServer, result: RunResult, grace: float = 15.0) -> float:
    """Reap what the measured tree left behind (reparented to this subreaper); their CPU time."""
    import psutil

    me = psutil.Process()
    cpu = 0.0
    deadline = time.monotonic() + grace
    while True:
        kids = [p for p in me.children() if p.pid != server.proc.pid]
        if not kids:
            return cpu
        for p in kids:
            try:
                waited, _status, usage = os.wait4(p.pid, os.WNOHANG)
            except ChildProcessError:
                continue
            if waited:
                cpu += usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            for p in kids:
                with contextlib.suppress(psutil.Error):
                    result.leaked.append(f"{p.pid} {p.name()}")
                    p.kill()  # a descendant of the crawler this script started
            grace, deadline = 0.0, time.monotonic() + 5
        time.sleep(0.1)


def run_baseline(args: argparse.Namespace, server: SiteServer, workdir: Path, tag: str) -> RunResult:
    result_file = workdir / f"baseline{tag}.json"
    cmd = [sys.executable, str(HERE), "--_baseline", "--url", server.url,
           "--parallels", str(args.parallels), "--result", str(result_file)]
    print(f"running (a){tag and ' #' + tag} bare scrapy-playwright spider ...", flush=True)
    log = workdir / f"a{tag}.log"
    a = run_measured("(a) bare scrapy-playwright" + (f" #{tag}" if tag else ""), cmd, server,
                     log=log)
    if a.exit_code != 0 or not result_file.exists():
        print(log.read_text()[-3000:])
        raise SystemExit(f"(a) failed with exit code {a.exit_code}")
    a.detail = json.loads(result_file.read_text())
    a.pages = int(a.detail["status_200"])  # type: ignore[call-overload]
    first, last = a.detail.get("first_page"), a.detail.get("last_page")
    if first is not None and last is not None:  # the spider's wall-clock stamps
        a.first_page_at = float(first) - a.started_wall  # type: ignore[arg-type]
        a.last_page_at = float(last) - a.started_wall  # type: ignore[arg-type]
    return a


def run_nitpicker(args: argparse.Namespace, server: SiteServer, workdir: Path, tag: str) -> RunResult:
    archive = workdir / f"render{tag}.nitpicker"
    cmd = [*nitpicker_command(), "crawl", server.url, "-o", str(archive), "--silent",
           "--ignore-robots", "-P", str(args.parallels)]
    print(f"running (b){tag and ' #' + tag} " + " ".join(["nitpicker", *cmd[1:]]) + " ...",
          flush=True)
    log = workdir / f"b{tag}.log"
    b = run_measured("(b) nitpicker crawl" + (f" #{tag}" if tag else ""), cmd, server, log=log,
                     archive=archive)
    b.pages = archive_page_count(archive, RENDERED) or 0
    if b.exit_code != 0:
        print(f"WARNING: nitpicker exited with {b.exit_code}:\n" + log.read_text()[-3000:])
    with contextlib.closing(sqlite3.connect(f"file:{archive}?mode=ro", uri=True)) as conn:
        q = lambda sql: conn.execute(sql).fetchone()[0]
        b.detail = {
            "errors": q("SELECT count(*) FROM pages WHERE status = -1"),
            "images": q("SELECT count(*) FROM images"),
            "resources": q("SELECT count(*) FROM resources"),
            "resources_loaded": q("SELECT count(*) FROM resources WHERE status IS NOT NULL"),
            "archive_bytes": archive.stat().st_size,
        }
    return b


# ------------------------------------------------------------------------------------------
# The benchmark
# ------------------------------------------------------------------------------------------

def _versions() -> str:
    parts = [f"Python {platform.python_version()}"]
    for mod in ("scrapy", "scrapy_playwright", "playwright", "nitpicker"):
        try:
            m = __import__(mod)
            version = getattr(m, "__version__", None)
            if version is None:
                from importlib.metadata import version as dist_version

                version = dist_version(mod.replace("_", "-"))
            parts.append(f"{mod} {version}")
        except Exception:  # noqa: BLE001, S110 - a version we cannot read is left out
            pass
    with contextlib.suppress(Exception):
        from nitpicker.render.chromium import find_chromium

        exe = find_chromium()
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20,
                             check=False)
        parts.append(out.stdout.strip().splitlines()[-1].split(" built")[0])
    parts.append(f"{os.cpu_count()} CPUs")
    return ", ".join(parts)


def main(args: argparse.Namespace) -> int:
    import psutil

    workdir = Path(tempfile.mkdtemp(prefix="nitpicker-render-bench-"))
    reaper = become_subreaper()
    print(f"render throughput benchmark: {_versions()}")
    load1 = os.getloadavg()[0]
    print(f"machine load average (1 min) before the runs: {load1:.2f}; "
          f"CPU busy now: {psutil.cpu_percent(interval=1.0):.0f}%")
    server = start_server(args.pages, args.seed)
    info = server.info
    print(f"site: {args.pages} pages at {server.url} (server pid {server.proc.pid}), HTML "
          f"{info['html_min'] / 1024:.1f}-{info['html_max'] / 1024:.1f} KiB (avg "
          f"{info['html_avg'] / 1024:.1f}), 20-40 links a page, CSS {info['css'] / 1024:.1f} KiB, "
          f"JS {info['js'] / 1024:.1f} KiB, {info['images']} shared images "
          f"({info['image_bytes'] / 1024:.0f} KiB), 1-3 lazy images a page; "
          f"concurrency {args.parallels}")
    runs_a: list[RunResult] = []
    runs_b: list[RunResult] = []
    try:
        for n in range(1, args.repeat + 1):
            tag = str(n) if args.repeat > 1 else ""
            runs_a.append(run_baseline(args, server, workdir, tag))
            runs_b.append(run_nitpicker(args, server, workdir, tag))
    finally:
        server.stop()
    report(runs_a, runs_b, args, reaper)
    if args.keep:
        print(f"kept: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def report(runs_a: list[RunResult], runs_b: list[RunResult], args: argparse.Namespace,
           reaper: bool) -> None:
    print()
    for a, b in zip(runs_a, runs_b, strict=True):
        print(f"pages rendered: (a) {a.pages} (parsed {a.detail['parsed']}, statuses "
              f"{a.detail['statuses']}, failures {a.detail['failure_count']}); "
              f"(b) {b.pages} (archive pages with status 200, text/html; fetch errors "
              f"{b.detail['errors']}, {b.detail['images']} image rows, "
              f"{b.detail['resources_loaded']}/{b.detail['resources']} resources loaded)")
        if a.pages != b.pages or a.pages != args.pages:
            print(f"WARNING: expected {args.pages} pages from each run")
    header = (f"{'run':<28} {'pages':>5} {'seconds':>8} {'pages/s':>8} {'steady':>7} "
              f"{'CPU s':>7} {'CPU ms/page':>11} {'crawler':>8} {'node':>6} {'chromium':>8} "
              f"{'peak RSS MB':>11} {'peak PSS MB':>11} {'procs':>5} {'other load':>10}")
    print(header)
    print("-" * len(header))
    for r in [*runs_a, *runs_b]:
        steady = r.steady_rate
        print(f"{r.name:<28} {r.pages:>5} {r.seconds:>8.2f} {r.rate:>8.2f} "
              f"{(f'{steady:.2f}' if steady else '-'):>7} {r.cpu_seconds:>7.1f} "
              f"{r.cpu_ms_per_page:>11.0f} {r.crawler_cpu:>8.1f} {r.node_cpu:>6.1f} "
              f"{r.chromium_cpu:>8.1f} {r.peak_rss / 1e6:>11.0f} {r.peak_pss / 1e6:>11.0f} "
              f"{r.peak_procs:>5} {r.other_load:>10.2f}")
    print("(seconds: process start to exit, browser launch included; steady: pages/s between the "
          "first and the last page; CPU s: user+sys of the whole process tree, split into the "
          "crawler's Python process, Playwright's node driver and Chromium (all its processes); "
          "peak RSS: sum over the tree, sampled every 0.1 s (shared pages counted in each "
          "process); peak PSS: shared pages divided, sampled every 1 s; procs: most processes "
          "in the tree at once; other load: cores kept busy by unrelated processes)")
    if not reaper:
        print("note: could not become a child subreaper: CPU of orphaned descendants may be missing")
    for r in [*runs_a, *runs_b]:
        if r.leaked:
            print(f"WARNING: {r.name} left processes behind (killed): {', '.join(r.leaked)}")
        if r.orphan_cpu > 0.05:
            print(f"note: {r.name}: {r.orphan_cpu:.1f} CPU s from orphaned descendants reaped here")
    rate_a = median([r.rate for r in runs_a])
    rate_b = median([r.rate for r in runs_b])
    label = f" (median of {len(runs_a)} runs)" if len(runs_a) > 1 else ""
    ratio = rate_b / rate_a if rate_a else 0.0
    print(f"pages/s{label}: (a) {rate_a:.2f}, (b) {rate_b:.2f}")
    steady_a = [s for s in (r.steady_rate for r in runs_a) if s]
    steady_b = [s for s in (r.steady_rate for r in runs_b) if s]
    if steady_a and steady_b:
        sa, sb = median(steady_a), median(steady_b)
        print(f"steady pages/s{label}: (a) {sa:.2f}, (b) {sb:.2f}, b/a {sb / sa:.2f}")
    cpu_a = median([r.cpu_ms_per_page for r in runs_a])
    cpu_b = median([r.cpu_ms_per_page for r in runs_b])
    print(f"CPU ms/page (whole tree){label}: (a) {cpu_a:.0f}, (b) {cpu_b:.0f}, "
          f"a/b {cpu_a / cpu_b if cpu_b else 0:.2f}")
    print(f"throughput b/a{label}: {ratio:.2f} (target >= {TARGET_RATIO}): "
          f"{'PASS' if ratio >= TARGET_RATIO else 'BELOW TARGET'}")
    busiest = max(r.other_load for r in [*runs_a, *runs_b])
    if busiest > 0.25:
        print(f"WARNING: other processes kept up to {busiest:.2f} cores busy during a run "
              f"({os.cpu_count()} cores): wall-clock figures are disturbed")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=200, help="pages in the site (default 200)")
    parser.add_argument("--parallels", type=int, default=4,
                        help="concurrency: nitpicker -P and the spider's CONCURRENT_REQUESTS "
                             "(default 4)")
    parser.add_argument("--seed", type=int, default=1, help="site seed (default 1)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run (a) and (b) this many times, alternately; medians are reported")
    parser.add_argument("--keep", action="store_true", help="keep the archives and logs")
    parser.add_argument("--serve-only", action="store_true",
                        help="only serve the site (prints its URL) until Ctrl-C")
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--_serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--_baseline", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pages < 2 or args.parallels < 1 or args.repeat < 1:
        parser.error("--pages must be >= 2, --parallels and --repeat >= 1")
    return args


if __name__ == "__main__":
    ARGS = parse_args()
    if ARGS._serve:
        _serve(ARGS)
    elif ARGS._baseline:
        _baseline(ARGS)
    elif ARGS.serve_only:
        srv = start_server(ARGS.pages, ARGS.seed, ARGS.port)
        print(f"serving {ARGS.pages} pages at {srv.url} (Ctrl-C to stop)", flush=True)
        try:
            srv.proc.wait()
        except KeyboardInterrupt:
            srv.stop()
    else:
        sys.exit(main(ARGS))
