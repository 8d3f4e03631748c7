"""Crawl throughput: nitpicker against a bare Scrapy follow-only spider on one local site.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/crawl_throughput.py [--pages 5000] [--links 150] [--max-pages N]

One run does, in order:

1. renders a deterministic (seeded) site of ``--pages`` pages with about ``--links`` links a page
   in a separate server process on 127.0.0.1 (a free port), then measures that server alone
   (a concurrent keep-alive fetch loop, plus the server's CPU time per page) so its capacity
   can be compared with the crawl rates;
2. (a) runs a bare Scrapy spider in its own process (``CrawlerProcess``) that only follows
   links: parsel ``a::attr(href)``, ``response.urljoin`` each, a Python set of seen URLs
   checked before a ``Request`` is built; it extracts and writes nothing;
3. (b) runs ``nitpicker crawl URL --max-pages N -o FILE --silent --ignore-robots -P 10``
   (everything on: extraction, archive, durable frontier);
4. measures, for each, wall time, pages fetched, CPU time of the crawler process (its own
   rusage, from ``wait4``), peak RSS (sampled every 0.1 s, and ``ru_maxrss``); for (b) also RSS
   each 1,000 archived pages (RSS and the archive's page count sampled together), and the RSS
   each crawler starts with: the site server reads it when the crawler's first request comes;
5. prints a table, the pages/s ratio b/a (target >= 1.25), the base RSS of (b) (target
   <= 120 MB) and the RSS growth of (b) per 10,000 pages (target <= 20 MB). Always exits 0
   once the runs completed: targets are reported, not asserted.

Internal modes (used by the script itself): ``--_serve`` (the site server process) and
``--_baseline`` (the bare Scrapy spider process). ``--serve-only`` serves the site until
Ctrl-C, for profiling a crawl by hand.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import posixpath
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
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

SITE_NAME = "Bench Site"
SECTIONS = (
    "docs", "blog", "news", "products", "support", "guides", "company", "events",
    "careers", "research", "partners", "store",
)
SUBSECTIONS = ("a", "b", "c", "d", "e", "f", "g", "h")
NAV_LINKS = 30
HERE = Path(__file__).resolve()
WATCH_PATH = "/__bench/watch"
"""``GET WATCH_PATH?pid=N``: the site server reads the RSS of process N (and its descendants)
when the next request comes, before it answers it."""
WATCHED_PATH = "/__bench/watched"
"""``GET WATCHED_PATH``: that RSS in bytes (-1 while no request came)."""
BASE_RSS_TARGET_MB = 120
THROUGHPUT_TARGET = 1.25


# ------------------------------------------------------------------------------------------
# The site
# ------------------------------------------------------------------------------------------

def page_path(i: int) -> str:
    """URL path of page ``i``: page 0 is ``/``, the rest live two directories deep."""
    if i == 0:
        return "/"
    return f"/{SECTIONS[i % len(SECTIONS)]}/{SUBSECTIONS[(i // len(SECTIONS)) % len(SUBSECTIONS)]}/{i}.html"


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["th", "st", "qu", "ch"]
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    return sorted(words)


class SiteRenderer:
    """Deterministic pages: the same (seed, pages, links, base) always gives the same bytes."""

    def __init__(self, pages: int, links: int, seed: int, base: str) -> None:
        self.pages = pages
        self.links = links
        self.seed = seed
        self.base = base.rstrip("/")
        rng = random.Random(seed)
        self.words = _vocabulary(rng)
        self.nav_count = min(NAV_LINKS, max(1, links // 5))
        # Site-wide navigation: the home page, then the first pages of sections and hubs.
        hubs = [0] + [j for j in range(1, min(pages, 1 + 3 * self.nav_count))][: self.nav_count - 1]
        self.nav_html = self._nav(hubs, rng)

    def _text(self, rng: random.Random, n: int) -> str:
        words = self.words
        return " ".join(rng.choice(words) for _ in range(n))

    def _title(self, rng: random.Random, n: int) -> str:
        return " ".join(w.capitalize() for w in self._text(rng, n).split())

    def _nav(self, hubs: list[int], rng: random.Random) -> str:
        items = []
        for j in hubs:
            label = "Home" if j == 0 else self._title(rng, rng.randint(1, 2))
            items.append(f'<li class="nav-item"><a class="nav-link" href="{page_path(j)}">{label}</a></li>')
        return '<nav class="site-nav" aria-label="Main"><ul>\n' + "\n".join(items) + "\n</ul></nav>"

    def href(self, rng: random.Random, here: str, target: int) -> str:
        """A link to ``target`` as a site would write it: root-relative, relative or absolute."""
        path = page_path(target)
        roll = rng.random()
        if path == "/" or roll < 0.45:
            href = path
        elif roll < 0.80:
            href = posixpath.relpath(path, posixpath.dirname(here))
            if not href.startswith("."):
                href = href if rng.random() < 0.5 else "./" + href
        else:
            href = self.base + path
        if rng.random() < 0.04:
            href += "#" + rng.choice(("overview", "details", "comments", "top"))
        return href

    def _targets(self, rng: random.Random, i: int, count: int) -> list[int]:
        n = self.pages
        if n == 1:
            return [0] * count
        # The next page first: every page is reachable from "/" whatever the random links do.
        targets = [(i + 1) % n, (i - 1) % n]
        while len(targets) < count:
            roll = rng.random()
            if roll < 0.45:  # nearby in the same section
                t = i + len(SECTIONS) * rng.randint(-40, 40)
            elif roll < 0.55:  # a popular page
                t = int(n * rng.random() ** 3)
            else:
                t = rng.randrange(n)
            targets.append(t % n)
        return targets[:count]

    def render(self, i: int) -> bytes:
        rng = random.Random(self.seed * 1_000_003 + i)
        here = page_path(i)
        url = self.base + here
        title = self._title(rng, rng.randint(3, 7))
        description = self._text(rng, rng.randint(18, 30))
        body_links = max(0, self.links - self.nav_count - 2)  # the logo and "Back to top" too
        targets = self._targets(rng, i, body_links)
        inline, rest = targets[: min(12, len(targets))], targets[min(12, len(targets)):]
        href = self.href
        head = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} | {SITE_NAME}</title>
<meta name="description" content="{description}">
<meta name="keywords" content="{", ".join(self._text(rng, 5).split())}">
<link rel="canonical" href="{url}">
<meta property="og:type" content="article">
<meta property="og:title" content="{title}">
<meta property="og:description" content="{description}">
<meta property="og:url" content="{url}">
<meta property="og:image" content="{self.base}/img/og/{i % 97}.jpg">
<meta property="og:site_name" content="{SITE_NAME}">
<meta name="twitter:card" content="summary_large_image">
<link rel="stylesheet" href="/static/site.css">
<link rel="icon" href="/favicon.ico">
<script src="/static/app.js" defer></script>
</head>
<body id="top">
<header class="site-header">
<a class="logo" href="/"><img src="/static/logo.svg" alt="{SITE_NAME}" width="140" height="40"></a>
{self.nav_html}
</header>
<main>
<article>
<h1>{title}</h1>
"""
        parts = [head]
        paragraphs = rng.randint(11, 15)
        per_paragraph = max(1, len(inline) // paragraphs + 1)
        k = 0
        for p in range(paragraphs):
            words = self._text(rng, rng.randint(80, 140)).split()
            chunk = inline[k : k + per_paragraph]
            k += len(chunk)
            for t in chunk:
                pos = rng.randrange(len(words))
                n = rng.randint(1, 4)
                words[pos : pos + n] = [f'<a href="{href(rng, here, t)}">{" ".join(words[pos:pos + n])}</a>']
            if p % 4 == 1:
                parts.append(f"<h2>{self._title(rng, rng.randint(2, 5))}</h2>\n")
            parts.append("<p>" + " ".join(words) + "</p>\n")
            if p % 4 == 2:
                w, h = rng.choice(((800, 450), (640, 480), (1200, 630), (400, 400)))
                parts.append(
                    f'<figure><img src="/img/{rng.randrange(500)}.jpg" alt="{self._text(rng, 4)}"'
                    f' width="{w}" height="{h}" loading="lazy"><figcaption>{self._text(rng, 8)}'
                    "</figcaption></figure>\n"
                )
        parts.append("</article>\n")
        # The rest of the links: related lists, "more in this section", a footer index.
        groups = (("Related articles", 0.4), ("More in this section", 0.35), ("Popular", 0.25))
        start = 0
        for g, (label, share) in enumerate(groups):
            end = len(rest) if g == len(groups) - 1 else start + int(len(rest) * share)
            items = "\n".join(
                f'<li><a href="{href(rng, here, t)}">{self._title(rng, rng.randint(2, 6))}</a></li>'
                for t in rest[start:end]
            )
            start = end
            parts.append(f'<section class="links"><h2>{label}</h2>\n<ul>\n{items}\n</ul></section>\n')
        parts.append(
            "</main>\n<footer class=\"site-footer\">\n"
            f"<p>{self._text(rng, 25)}</p>\n"
            f'<p>&copy; 2026 {SITE_NAME}. <a href="#top">Back to top</a></p>\n'
            "</footer>\n</body>\n</html>\n"
        )
        return "".join(parts).encode("utf-8")


# ------------------------------------------------------------------------------------------
# The server process
# ------------------------------------------------------------------------------------------

def _serve(args: argparse.Namespace) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128

    responses: dict[str, bytes] = {}
    not_found_body = b"<!DOCTYPE html><title>Not found</title><h1>Not found</h1>\n"
    not_found = (
        b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html; charset=utf-8\r\n"
        b"Content-Length: " + str(len(not_found_body)).encode() + b"\r\n\r\n" + not_found_body
    )

    # The crawler process to read the RSS of at the next request (WATCH_PATH?pid=N), and
    # what was read (WATCHED_PATH): the RSS a crawl starts with, before its first request.
    watch = {"pid": 0, "rss": -1}
    watch_lock = threading.Lock()

    def plain(text: str) -> bytes:
        body = text.encode()
        return (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                + str(len(body)).encode() + b"\r\n\r\n" + body)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            path, _, query = self.path.partition("?")
            path = path.split("#", 1)[0]
            if path == WATCH_PATH:
                with watch_lock:
                    watch["pid"], watch["rss"] = int(query.partition("=")[2]), -1
                self.wfile.write(plain("watching"))
                return
            if path == WATCHED_PATH:
                self.wfile.write(plain(str(watch["rss"])))
                return
            if watch["pid"]:
                with watch_lock:
                    pid, watch["pid"] = watch["pid"], 0
                if pid:
                    watch["rss"] = _rss(pid) or 0
            self.wfile.write(responses.get(path, not_found))

        def do_HEAD(self) -> None:
            data = responses.get(self.path.split("?", 1)[0], not_found)
            self.wfile.write(data[: data.index(b"\r\n\r\n") + 4])

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = Server(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    renderer = SiteRenderer(args.pages, args.links, args.seed, f"http://127.0.0.1:{port}")
    total = 0
    for i in range(args.pages):
        body = renderer.render(i)
        total += len(body)
        responses[page_path(i)] = (
            b"HTTP/1.1 200 OK\r\nServer: bench\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
    print(f"READY {port} {total}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass


def start_server(pages: int, links: int, seed: int, port: int = 0) -> SiteServer:
    proc, ready, seconds = start_site_server(
        [sys.executable, str(HERE), "--_serve", "--pages", str(pages), "--links", str(links),
         "--seed", str(seed), "--port", str(port)])
    port_s, total_s = ready.split()
    return SiteServer(proc, int(port_s), {"total_bytes": int(total_s)}, seconds)


def probe_server(server: SiteServer, pages: int, requests: int, threads: int) -> dict[str, float]:
    """Fetch ``requests`` pages with ``threads`` keep-alive clients; the server's own CPU too."""
    paths = [page_path((k * 7919) % pages) for k in range(requests)]
    errors: list[str] = []
    sizes = [0] * threads

    def worker(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            for path in paths[n::threads]:
                conn.request("GET", path)
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200:
                    errors.append(f"{path}: {resp.status}")
                sizes[n] += len(body)
        finally:
            conn.close()

    cpu0 = server.cpu_seconds()
    t0 = time.perf_counter()
    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    seconds = time.perf_counter() - t0
    cpu = server.cpu_seconds() - cpu0
    if errors:
        raise SystemExit(f"server probe failed: {errors[:3]}")
    return {
        "requests": requests,
        "threads": threads,
        "seconds": seconds,
        "rate": requests / seconds,
        "server_cpu_ms": cpu * 1000 / requests,
        "bytes": sum(sizes) / requests,
    }


# ------------------------------------------------------------------------------------------
# (a) the bare Scrapy spider, in its own process
# ------------------------------------------------------------------------------------------

def _baseline(args: argparse.Namespace) -> None:
    import scrapy
    from scrapy.crawler import CrawlerProcess

    budget = args.max_pages

    class FollowOnlySpider(scrapy.Spider):
        """Follows every link once; extracts and writes nothing."""

        name = "follow_only"

        def __init__(self, root: str, **kwargs: object) -> None:
            super().__init__(**kwargs)
            self.root = root
            self.seen = {root}
            self.parsed = 0

        async def start(self):  # type: ignore[no-untyped-def]
            yield scrapy.Request(self.root, callback=self.parse)

        def parse(self, response):  # type: ignore[no-untyped-def]
            self.parsed += 1
            seen = self.seen
            for href in response.css("a::attr(href)").getall():
                url = response.urljoin(href)
                if "#" in url:  # a fragment is the same page; Scrapy's dupefilter agrees
                    url = url[: url.index("#")]
                if url not in seen and len(seen) < budget:
                    seen.add(url)
                    yield scrapy.Request(url, callback=self.parse)

    settings = {
        "CONCURRENT_REQUESTS": args.parallel,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.parallel,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
    }
    for pair in args.baseline_setting or []:
        name, _, value = pair.partition("=")
        settings[name] = json.loads(value) if value[:1] in "0123456789[{tf\"-" else value
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(FollowOnlySpider)
    process.crawl(crawler, root=args.url)
    process.start()
    stats = crawler.stats.get_stats()
    spider = crawler.spider
    result = {
        "parsed": spider.parsed,
        "responses": stats.get("downloader/response_count", 0),
        "status_200": stats.get("downloader/response_status_count/200", 0),
        "requests": stats.get("downloader/request_count", 0),
        "finish_reason": stats.get("finish_reason"),
        "settings": settings,
    }
    Path(args.result).write_text(json.dumps(result, default=str))


# ------------------------------------------------------------------------------------------
# Measuring a crawler process
# ------------------------------------------------------------------------------------------

def _rss(pid: int) -> int | None:
    """RSS of the process and its descendants (a browser, when nitpicker renders)."""
    try:
        import psutil

        proc = psutil.Process(pid)
        total = int(proc.memory_info().rss)
        for child in proc.children(recursive=True):
            try:
                total += int(child.memory_info().rss)
            except psutil.Error:
                pass
        return total
    except Exception:  # noqa: BLE001 (psutil missing, or the process just ended)
        try:
            with open(f"/proc/{pid}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            return None
    return None


@dataclass
class RunResult:
    name: str
    pages: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_rss: int = 0
    maxrss: int = 0
    exit_code: int = 0
    server_cpu: float = 0.0
    other_cpu: float = 0.0
    """CPU seconds used by processes other than the crawler, the site server and this script."""
    rss_marks: list[tuple[int, int, bool]] = field(default_factory=list)
    """(archived pages, RSS bytes, closing) at each 1,000 pages. ``closing``: the count had
    reached the budget, so nitpicker was in its final commit / URL ordering / close."""
    detail: dict[str, object] = field(default_factory=dict)
    first_request_rss: int = -1
    """RSS of the crawler process (and its descendants) when the site got its first request:
    what it imported and allocated before it fetched anything (-1: no request came)."""

    @property
    def rate(self) -> float:
        return self.pages / self.seconds if self.seconds else 0.0

    @property
    def cpu_ms_per_page(self) -> float:
        return self.cpu_seconds * 1000 / self.pages if self.pages else 0.0

    @property
    def other_load(self) -> float:
        """Average number of cores other processes kept busy during the run."""
        return self.other_cpu / self.seconds if self.seconds else 0.0


def run_measured(name: str, cmd: list[str], server: SiteServer, *, archive: Path | None = None,
                 expected: int = 0, log: Path) -> RunResult:
    """Run ``cmd``; sample its RSS (and the archive's page count) every 0.1 s until it exits."""
    result = RunResult(name)
    stop = threading.Event()
    server_cpu0 = server.cpu_seconds()
    busy0 = busy_cpu_seconds()
    self0 = self_cpu_seconds()
    with log.open("w") as out:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    # Before the crawler has imported anything it could fetch with (~0.5 s of imports).
    _server_get(server, f"{WATCH_PATH}?pid={proc.pid}")

    def sample() -> None:
        next_mark = 1000
        count_done = archive is None
        while not stop.is_set():
            rss = _rss(proc.pid)
            if rss:
                result.peak_rss = max(result.peak_rss, rss)
            if not count_done and archive is not None:
                count = archive_page_count(archive)
                if count is not None and rss:
                    closing = bool(expected) and count >= expected
                    while count >= next_mark:
                        result.rss_marks.append((count, rss, closing))
                        next_mark += 1000
                    if closing:
                        count_done = True  # the writer is about to close: stop reading
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    result.seconds = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    stop.set()
    sampler.join()
    result.exit_code = proc.returncode
    result.cpu_seconds = usage.ru_utime + usage.ru_stime
    result.maxrss = usage.ru_maxrss * 1024  # KiB on Linux
    result.server_cpu = server.cpu_seconds() - server_cpu0
    own = self_cpu_seconds() - self0
    busy = busy_cpu_seconds() - busy0
    result.other_cpu = max(0.0, busy - result.cpu_seconds - result.server_cpu - own)
    result.first_request_rss = int(_server_get(server, WATCHED_PATH))
    return result


def _server_get(server: SiteServer, path: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().read().decode()
    finally:
        conn.close()


def growth_per_10k(marks: list[tuple[int, int, bool]], *, second_half: bool = False,
                   ) -> tuple[float, float] | None:
    """RSS growth per 10,000 pages, in MB: (least-squares slope, (last - first) / pages),
    over the samples taken while crawling (not the one taken while the archive was closing);
    ``second_half``: over the later half of those samples only (bounded caches warmed up)."""
    marks = [m for m in marks if not m[2]]
    if second_half:
        marks = marks[len(marks) // 2 :]
    if len(marks) < 2:
        return None
    xs = [m[0] for m in marks]
    ys = [m[1] / 1e6 for m in marks]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
    endpoints = (ys[-1] - ys[0]) / (xs[-1] - xs[0]) if xs[-1] != xs[0] else 0.0
    return slope * 10_000, endpoints * 10_000


def crawl_options(exe: list[str], render: bool) -> list[str]:
    """Options that make ``nitpicker crawl`` a plain-HTTP crawl when it renders by default."""
    if render:
        return []
    try:
        help_text = subprocess.run([*exe, "crawl", "--help"], check=False, capture_output=True, text=True,
                                   timeout=60, env={**os.environ, "COLUMNS": "200"}).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ["--no-render"] if "--no-render" in help_text else []


# ------------------------------------------------------------------------------------------
# The benchmark
# ------------------------------------------------------------------------------------------

def _versions() -> str:
    parts = [f"Python {platform.python_version()}"]
    try:
        import scrapy

        parts.append(f"Scrapy {scrapy.__version__}")
    except ImportError:
        pass
    try:
        import nitpicker

        parts.append(f"nitpicker {nitpicker.__version__}")
    except ImportError:
        pass
    try:
        repo = HERE.parent.parent
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                              check=False, capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "nitpicker"],
                               check=False, capture_output=True, text=True, timeout=10).stdout.splitlines()
        if head:
            parts.append(f"commit {head}" + (f" + {len(dirty)} changed files in nitpicker/"
                                             if dirty else ""))
    except (OSError, subprocess.TimeoutExpired):
        pass
    parts.append(f"{os.cpu_count()} CPUs")
    parts.append(platform.platform(terse=True))
    return ", ".join(parts)


def main(args: argparse.Namespace) -> int:
    max_pages = args.max_pages if args.max_pages is not None else args.pages
    workdir = Path(tempfile.mkdtemp(prefix="nitpicker-bench-"))
    print(f"crawl throughput benchmark: {_versions()}")
    print(f"site: {args.pages} pages, ~{args.links} links a page, seed {args.seed}; "
          f"crawl budget {max_pages} pages, {args.parallel} concurrent requests")
    server = start_server(args.pages, args.links, args.seed)
    try:
        print(f"server: {server.url} (pid {server.proc.pid}), {server.info['total_bytes'] / 1e6:.1f} MB rendered "
              f"in {server.start_seconds:.1f} s, {server.info['total_bytes'] / args.pages / 1024:.1f} KiB a page")
        probe_server(server, args.pages, 200, 4)  # warm-up
        probe = probe_server(server, args.pages, args.probe_requests, args.probe_threads)
        print(f"server alone: {probe['requests']} pages with {probe['threads']} keep-alive client "
              f"threads in {probe['seconds']:.2f} s = {probe['rate']:.0f} pages/s (client-bound "
              f"lower bound); server CPU {probe['server_cpu_ms']:.2f} ms/page = "
              f"~{1000 / probe['server_cpu_ms']:.0f} pages/s per core")

        runs_a: list[RunResult] = []
        runs_b: list[RunResult] = []
        for n in range(1, args.repeat + 1):
            suffix = f" #{n}" if args.repeat > 1 else ""
            runs_a.append(run_baseline(args, server, max_pages, workdir, suffix))
            runs_b.append(run_nitpicker(args, server, max_pages, workdir, suffix))
    finally:
        server.stop()
    report(runs_a, runs_b, args)
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"kept: {workdir}")
    return 0


def run_baseline(args: argparse.Namespace, server: SiteServer, max_pages: int, workdir: Path,
                 suffix: str) -> RunResult:
    """(a): the bare Scrapy follow-only spider, in its own process."""
    result_file = workdir / f"baseline{suffix.strip(' #')}.json"
    cmd = [sys.executable, str(HERE), "--_baseline", "--url", server.url,
           "--max-pages", str(max_pages), "--parallel", str(args.parallel),
           "--result", str(result_file)]
    for pair in args.baseline_setting or []:
        cmd += ["--baseline-setting", pair]
    print(f"running (a){suffix} bare Scrapy follow-only spider ...", flush=True)
    log = workdir / f"a{suffix.strip(' #')}.log"
    a = run_measured("(a) bare Scrapy follow-only" + suffix, cmd, server, log=log)
    if a.exit_code != 0 or not result_file.exists():
        print(log.read_text()[-3000:])
        raise SystemExit(f"(a) failed with exit code {a.exit_code}")
    a.detail = json.loads(result_file.read_text())
    a.pages = int(a.detail["status_200"])  # type: ignore[call-overload]
    return a


def run_nitpicker(args: argparse.Namespace, server: SiteServer, max_pages: int, workdir: Path,
                  suffix: str) -> RunResult:
    """(b): ``nitpicker crawl``, everything on."""
    archive = workdir / f"bench{suffix.strip(' #')}.nitpicker"
    exe = nitpicker_command()
    cmd = [*exe, "crawl", server.url, "--max-pages", str(max_pages),
           "-o", str(archive), "--silent", "--ignore-robots", "-P", str(args.parallel),
           *crawl_options(exe, args.render)]
    print(f"running (b){suffix} nitpicker " + " ".join(cmd[len(exe):]) + " ...", flush=True)
    log = workdir / f"b{suffix.strip(' #')}.log"
    b = run_measured("(b) nitpicker crawl" + suffix, cmd, server, archive=archive,
                     expected=min(max_pages, args.pages), log=log)
    b.pages = archive_page_count(archive) or 0
    b.detail = {"archive_bytes": archive.stat().st_size if archive.exists() else 0}
    if b.exit_code != 0:
        print(f"WARNING: nitpicker exited with {b.exit_code}:\n" + log.read_text()[-3000:])
    return b


def report(runs_a: list[RunResult], runs_b: list[RunResult], args: argparse.Namespace) -> None:
    print()
    for a, b in zip(runs_a, runs_b, strict=True):
        print(f"pages fetched: (a) {a.pages} (responses {a.detail['responses']}, parsed "
              f"{a.detail['parsed']}); (b) {b.pages} (archive: scraped=1 AND status IS NOT NULL; "
              f"{int(b.detail['archive_bytes']) / 1e6:.0f} MB file)")  # type: ignore[call-overload]
        if a.pages != b.pages:
            print("WARNING: the two runs did not fetch the same number of pages")
    header = (f"{'run':<33} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'CPU ms/page':>12} "
              f"{'CPU/wall':>9} {'peak RSS MB':>12} {'server CPU':>11} {'other load':>11}")
    print(header)
    print("-" * len(header))
    for r in [*runs_a, *runs_b]:
        print(f"{r.name:<33} {r.pages:>6} {r.seconds:>8.2f} {r.rate:>8.1f} {r.cpu_ms_per_page:>12.2f} "
              f"{r.cpu_seconds / r.seconds * 100:>8.0f}% {r.peak_rss / 1e6:>12.1f} "
              f"{r.server_cpu / r.seconds * 100:>10.0f}% {r.other_load:>11.2f}")
    print("(seconds: process start to exit, imports included; CPU: the crawler process's user+sys, "
          "CPU/wall its share of one core; peak RSS: sampled every 0.1 s; server CPU: share of one "
          "core the site server used; other load: cores kept busy by unrelated processes)")
    rate_a = median([r.rate for r in runs_a])
    rate_b = median([r.rate for r in runs_b])
    cpu_a = median([r.cpu_ms_per_page for r in runs_a])
    cpu_b = median([r.cpu_ms_per_page for r in runs_b])
    label = f"median of {len(runs_a)} " if len(runs_a) > 1 else ""
    if len(runs_a) > 1:
        print(f"{label}runs: (a) {rate_a:.1f} pages/s, {cpu_a:.2f} CPU ms/page; "
              f"(b) {rate_b:.1f} pages/s, {cpu_b:.2f} CPU ms/page")
    ratio = rate_b / rate_a if rate_a else 0.0
    print(f"throughput b/a ({label}pages/s): {ratio:.2f}x (target >= {THROUGHPUT_TARGET}): "
          f"{'PASS' if ratio >= THROUGHPUT_TARGET else 'BELOW TARGET'}")
    print(f"CPU per page a/b: {cpu_a / cpu_b if cpu_b else 0.0:.2f}x "
          "(the same comparison in CPU time, less sensitive to other load)")
    busiest = max(r.other_load for r in [*runs_a, *runs_b])
    if busiest > 0.25:
        print(f"WARNING: other processes kept up to {busiest:.2f} cores busy during a run "
              f"({os.cpu_count()} cores): wall-clock figures are disturbed; compare CPU ms/page")
    base_a = median([r.first_request_rss / 1e6 for r in runs_a])
    base_b = median([r.first_request_rss / 1e6 for r in runs_b])
    print(f"base RSS (at the site's first request{', ' + label.strip() if label else ''}): "
          f"(a) {base_a:.1f} MB, "
          f"(b) {base_b:.1f} MB (target (b) <= {BASE_RSS_TARGET_MB} MB): "
          f"{'PASS' if 0 < base_b <= BASE_RSS_TARGET_MB else 'BELOW TARGET'}")
    for b in runs_b:
        print(f"peak RSS {b.name}: {b.peak_rss / 1e6:.1f} MB sampled, {b.maxrss / 1e6:.1f} MB "
              "ru_maxrss")
        print("  RSS at each 1,000 pages: " + (", ".join(
            f"{n}: {rss / 1e6:.1f} MB" + (" (closing)" if closing else "")
            for n, rss, closing in b.rss_marks) or "(none)"))
    growths = [g for g in (growth_per_10k(b.rss_marks) for b in runs_b) if g is not None]
    if not growths:
        print("RSS growth (b): not enough samples while crawling (crawl at least 3,000 pages)")
    else:
        fit = median([g[0] for g in growths])
        ends = median([g[1] for g in growths])
        print(f"RSS growth (b) per 10,000 pages ({label + 'runs, ' if label else ''}samples while "
              f"crawling): {fit:.1f} MB "
              f"(linear fit), {ends:.1f} MB (last - first) (target <= 20 MB): "
              f"{'PASS' if fit <= 20 else 'BELOW TARGET'}")
        later = [g for g in (growth_per_10k(b.rss_marks, second_half=True) for b in runs_b) if g]
        if later:
            print(f"  the same over the later half of the samples: "
                  f"{median([g[0] for g in later]):.1f} MB (linear fit)")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=5000, help="pages in the site (default 5000)")
    parser.add_argument("--links", type=int, default=150, help="links a page (default 150)")
    parser.add_argument("--max-pages", type=int, default=None,
                        help="pages each crawler fetches (default: the whole site)")
    parser.add_argument("--parallel", type=int, default=10, help="concurrent requests (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="site seed (default 1)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run (a) and (b) this many times, alternately; medians are reported")
    parser.add_argument("--probe-requests", type=int, default=1500,
                        help="requests of the server-alone measurement (default 1500)")
    parser.add_argument("--probe-threads", type=int, default=8,
                        help="client threads of the server-alone measurement (default 8)")
    parser.add_argument("--baseline-setting", action="append", metavar="NAME=VALUE",
                        help="extra Scrapy setting for (a), e.g. CONCURRENT_ITEMS=1 (repeatable)")
    parser.add_argument("--render", action="store_true",
                        help="let (b) render pages in a browser if nitpicker does by default "
                             "(otherwise (b) gets --no-render when nitpicker has it)")
    parser.add_argument("--keep", action="store_true", help="keep the archive and logs")
    parser.add_argument("--serve-only", action="store_true",
                        help="only serve the site (prints its URL) until Ctrl-C")
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--_serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--_baseline", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pages < 1 or args.links < 1:
        parser.error("--pages and --links must be positive")
    return args


if __name__ == "__main__":
    ARGS = parse_args()
    if ARGS._serve:
        _serve(ARGS)
    elif ARGS._baseline:
        ARGS.max_pages = ARGS.max_pages if ARGS.max_pages is not None else ARGS.pages
        _baseline(ARGS)
    elif ARGS.serve_only:
        srv = start_server(ARGS.pages, ARGS.links, ARGS.seed, ARGS.port)
        print(f"serving {ARGS.pages} pages at {srv.url} (Ctrl-C to stop)", flush=True)
        try:
            srv.proc.wait()
        except KeyboardInterrupt:
            srv.stop()
    else:
        sys.exit(main(ARGS))
