"""What test modules share: the in-process crawl, the archive reader, the CLI runner, test
data tables and fakes. (``conftest.py`` keeps only fixtures.)"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy.crawler import CrawlerRunner
from scrapy.settings import Settings

from nitpicker.crawl.config import CrawlConfig
from nitpicker.policy.extract import PageMeta
from nitpicker.policy.urls import frontier_key
from nitpicker.spiders.site import SiteSpider

ROOT = Path(__file__).resolve().parent.parent

AUTO_RETRY_OFF = {"NITPICKER_AUTO_RETRY_CONCURRENCY": "0"}
"""The end-of-run retry pass (``nitpicker/crawl/auto_retry.py``) is off in the tests' crawls
(``tests/conftest.py`` puts this in the environment, :func:`crawl_settings` in the in-process
crawls'): the fixture site has URLs that always time out or reset, and every crawl of it would
wait for the pass and fetch them again. ``tests/test_auto_retry.py`` turns it on."""

PROBES_OFF = {"NITPICKER_SOFT404_PROBES": "0"}
"""The soft-404 probes are off in the tests' crawls too (as :data:`AUTO_RETRY_OFF`): each would
be one more request to the fixture site, which some tests count. ``tests/test_content_checks.py``
turns them on."""


# -- the archive writer's unit tests ---------------------------------------------------------


def writer_config(tmp_path: Path) -> CrawlConfig:
    """The crawl an archive-writer test creates its archive for (``a.nitpicker`` in tmp_path)."""
    return CrawlConfig(roots=("http://example.com/",), output=str(tmp_path / "a.nitpicker"))


def frontier_entry(url: str, depth: int, mode: int = 0) -> tuple[str, str, int, int]:
    """A row to add to the frontier: (key, url, depth, follow mode)."""
    return (frontier_key(url), url, depth, mode)


def frontier_states(path: Path) -> dict[str, int]:
    """The frontier of the archive at ``path``: url -> state."""
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT url, state FROM frontier"))
    finally:
        conn.close()

# -- crawling in this process ---------------------------------------------------------------

#: The images of ``/render/lazy`` once rendered, at either device preset: alt -> (is_lazy,
#: natural width, rendered width). The mid-page IntersectionObserver image loads only when the
#: page is scrolled through, not just to its end.
LAZY_PAGE_IMAGES = {
    "eager": (0, 4, 10.0),
    "native lazy": (1, 40, 20.0),
    "observed lazy, mid-page": (1, 60, 30.0),
    "observed lazy": (1, 60, 30.0),
}


class Archive:
    """A crawled archive opened read-only, with small helpers for assertions."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        self.conn.row_factory = sqlite3.Row

    def rows(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    def page(self, url: str) -> sqlite3.Row | None:
        found = self.rows("SELECT * FROM pages WHERE url = ?", url)
        return found[0] if found else None

    def urls(self, where: str = "1", *params: Any) -> set[str]:
        return {r["url"] for r in self.rows(f"SELECT url FROM pages WHERE {where}", *params)}

    def internal_pages(self) -> set[str]:
        return self.urls("is_external = 0 AND content_type = 'text/html' AND redirect_dest_id IS NULL")

    def anchors_of(self, url: str) -> list[str]:
        return [
            r["url"]
            for r in self.rows(
                "SELECT t.url FROM anchors a JOIN pages p ON p.id = a.page_id"
                " JOIN pages t ON t.id = a.href_id WHERE p.url = ? ORDER BY a.id",
                url,
            )
        ]


def crawl_settings() -> Settings:
    settings = Settings()
    settings.setmodule("nitpicker.settings", priority="project")
    settings.setdict({**AUTO_RETRY_OFF, **PROBES_OFF}, priority="project")
    settings.set("LOG_LEVEL", "WARNING")
    return settings


async def crawl(
    tmp_path: Path, roots: list[str], settings: dict[str, Any] | None = None, **options: Any
) -> Archive:
    """Crawl ``roots`` in this process (the twisted reactor) and open the archive."""
    output = tmp_path / f"crawl-{len(list(tmp_path.glob('*.nitpicker')))}.nitpicker"
    options.setdefault("retry", 0)
    options.setdefault("render", False)
    config = CrawlConfig(roots=tuple(roots), output=str(output), **options)
    scrapy_settings = crawl_settings()
    scrapy_settings.update(settings or {}, priority="cmdline")
    runner = CrawlerRunner(scrapy_settings)
    await runner.crawl(SiteSpider, config=config)
    return Archive(output)


# -- the command line in a subprocess -------------------------------------------------------


def count(path: Path, sql: str) -> int:
    """The one integer ``sql`` answers on the archive at ``path`` (opened read-only)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def run(*args: str, cwd: Path, timeout: float = 120,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``nitpicker ARGS`` in a subprocess started in ``cwd`` (a new crawl gets ``--no-render``),
    with ``env`` added to the environment."""
    # Wide enough that the progress line never shortens a URL (tests read URLs in it).
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", *args, *(["--no-render"] if args and args[0] == "crawl" and "--resume" not in args else [])],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )


def cli(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None,
        timeout: float = 170) -> subprocess.CompletedProcess[str]:
    """``nitpicker ARGS`` in a subprocess as given (a crawl renders unless told not to), with
    ``env`` added to the environment; no standard input."""
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                          capture_output=True, text=True, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL)


def crawled(output: Path, *args: str, env: dict[str, str] | None = None) -> Path:
    """``output``, crawled by ``nitpicker crawl ARGS --silent --retry 0`` (it must succeed)."""
    result = cli("crawl", *args, "--silent", "--retry", "0", "-o", str(output), env=env)
    assert result.returncode == 0, result.stderr
    return output


PROBE_PLUGIN = ROOT / "fixtures" / "diff_probe"
"""A directory whose ``.dist-info`` registers the ``diff-probe`` analyzer (on ``PYTHONPATH``)."""


def run_with_probe(*args: str, cwd: Path, timeout: float = 120
                   ) -> subprocess.CompletedProcess[str]:
    """``nitpicker ARGS`` with the ``diff-probe`` analyzer installed (no crawl here)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(PROBE_PLUGIN)]),
           "COLUMNS": "300"}
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False,
                          stdin=subprocess.DEVNULL)


def recorded(path: Path) -> int:
    """The pages of the archive at ``path`` that have a status (0 while it cannot be read)."""
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1)
        try:
            return int(conn.execute("SELECT count(*) FROM pages WHERE status IS NOT NULL").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def kill_after(proc: subprocess.Popen[str], path: Path, pages: int, deadline: float = 60) -> int:
    """SIGKILL the crawl ``proc`` once its archive records ``pages``; the pages it committed."""
    end = time.monotonic() + deadline
    while recorded(path) < pages:
        if proc.poll() is not None:
            pytest.fail(f"crawl ended before it could be killed: {proc.stderr.read() if proc.stderr else ''}")
        if time.monotonic() > end:
            pytest.fail("crawl did not progress")
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return recorded(path)


# -- fakes and tables ---------------------------------------------------------------------


class FakeDNS:
    """A ``socket.getaddrinfo`` stand-in answering from a table; records the names asked."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.asked: list[str] = []

    def __call__(
        self, host: str, port: int, family: int = 0, type: int = 0
    ) -> list[tuple[Any, ...]]:
        self.asked.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        answers = []
        for address in self.table[host]:
            if ":" in address:
                answers.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0)))
            else:
                answers.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)))
        return answers


# Trap-cap page metadata (tests/test_trapcap.py, tests/test_trapcap_middleware.py).
def trap_meta(og_url: str = "https://cms.example/list/date/", **fields: str) -> PageMeta:
    """The one template of a date trap: same title, description, og:title; og:url the list."""
    values = {"title": "Event archive", "description": "Events by date",
              "og_title": "Event archive", "og_url": og_url, **fields}
    return PageMeta(**values)


def unique_meta(n: int) -> PageMeta:
    return PageMeta(title=f"Post {n} title", og_title=f"Post {n} title")


# URL joining: bases and the hrefs found on them (tests/test_urls.py, tests/test_links.py).
BASES = [
    "http://example.com/dir/page.html",
    "https://example.com/dir/sub/",
    "http://example.com/dir/page?x=1&y=2",
    "http://example.com?x=1",  # a query and no path
    "https://example.com#top",  # a fragment and no path
    "http://user:pw@example.com:8080/a/b",
    "HTTPS://Example.com/a",
]

HREFS = [
    "http://other.example/z",  # absolute
    "https://other.example/z?q=1#h",
    "//cdn.example/lib.js",  # protocol-relative
    "//cdn.example/a/../lib.js",
    "/root",  # root-relative
    "/root/page?q=1#frag",
    "/a/../b",  # root-relative with dot segments
    "/./c",
    "sibling.html",  # relative
    "sub/child/",
    "./here",
    "../up",  # parent
    "../../../../too-far",
    "?q=2",  # query only
    "#frag",
    "",
    "mailto:someone@example.com",
]


# -- two crawls to compare (nitpicker diff) ---------------------------------------------------


class ChangesCrawls:
    """The archives of ``/changes/``: ``old``, ``new`` (changed) and ``moved`` (changed, crawled
    under the site's other host name), and the two base URLs."""

    def __init__(self, directory: Path, base: str, moved_base: str) -> None:
        self.dir = directory
        self.old = directory / "old.nitpicker"
        self.new = directory / "new.nitpicker"
        self.moved = directory / "moved.nitpicker"
        self.base = base
        self.moved_base = moved_base


class ScopeCrawls:
    """The archives of ``/scope/``: ``blog`` (``/scope/blog/``, which links to
    ``/scope/docs/``), ``docs`` (``/scope/docs/``) and ``both`` (the two roots)."""

    def __init__(self, directory: Path, blog_root: str, docs_root: str) -> None:
        self.dir = directory
        self.blog = directory / "blog.nitpicker"
        self.docs = directory / "docs.nitpicker"
        self.both = directory / "both.nitpicker"
        self.blog_root = blog_root
        self.docs_root = docs_root


ROWS_BY_URL = {
    "pages": "SELECT url, scraped, is_target, is_external, status, title, content_type,"
             " (SELECT url FROM pages AS d WHERE d.id = pages.redirect_dest_id), \"order\""
             " FROM pages",
    "anchors": "SELECT p.url, h.url, a.hash, a.text FROM anchors AS a JOIN pages AS p"
               " ON p.id = a.page_id JOIN pages AS h ON h.id = a.href_id",
    "images": "SELECT p.url, i.src, i.alt FROM images AS i JOIN pages AS p ON p.id = i.page_id",
    "response_headers": "SELECT p.url, h.name FROM response_headers AS h JOIN pages AS p"
                        " ON p.id = h.page_id",
    "snapshots": "SELECT p.url, s.html FROM snapshots AS s JOIN pages AS p ON p.id = s.page_id",
    "frontier": "SELECT key, mode, state FROM frontier",
    "page_values": "SELECT v.plugin, p.url, v.key, v.value, v.note FROM page_values AS v"
                   " JOIN pages AS p ON p.id = v.page_id",
}
"""What an archive holds, by URL (ids and times left out): two archives of the same pages
answer the same."""


def archive_rows(path: Path, sql: str, *params: Any) -> list[Any]:
    """The rows ``sql`` answers on the archive at ``path`` (read-only), in its order."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def rows(path: Path, sql: str, *params: Any) -> list[Any]:
    """The rows ``sql`` answers on the archive at ``path`` (read-only), sorted."""
    return sorted(archive_rows(path, sql, *params), key=repr)


# -- the site checks' fixture crawl ---------------------------------------------------------

BEFORE_FINDINGS = (
    "DROP VIEW findings", "DROP TABLE check_findings", "DROP TABLE check_runs",
    "ALTER TABLE violations DROP COLUMN element", "ALTER TABLE violations DROP COLUMN fingerprint",
    "ALTER TABLE pages DROP COLUMN h1_count", "ALTER TABLE pages DROP COLUMN canonical_relative",
    "DELETE FROM migrations WHERE name = '0020_findings'")
"""SQL that makes an archive of this version one of the version before ``0020_findings``."""


class CiCrawls:
    """``/error-status/`` (3 broken links: a 403, a 404 and a 500) crawled twice, ``audit``
    with ``--fail-on`` (its result kept) and ``again``, and ``/error-status/normal`` alone
    (``clean``: no link at all) crawled with ``--fail-on``; each archive analysed by the
    ``diff-probe`` plugin (a ``title-length`` warning on every page)."""

    def __init__(self, directory: Path, base: str,
                 results: dict[str, subprocess.CompletedProcess[str]]) -> None:
        self.dir = directory
        self.base = base
        self.results = results
        self.audit = directory / "audit.nitpicker"
        self.again = directory / "again.nitpicker"
        self.clean = directory / "clean.nitpicker"

    def copy(self, name: str, directory: Path) -> Path:
        """A copy of the archive ``name`` in ``directory`` (for a command that writes it)."""
        target = directory / f"{name}.nitpicker"
        target.write_bytes((self.dir / f"{name}.nitpicker").read_bytes())
        return target


class Defects:
    """The ``/defects/`` section crawled once (its sitemap on), with its site's URLs."""

    def __init__(self, archive: Path, base: str, external: str) -> None:
        self.archive = archive
        self.base = base
        self.external = external

    def path(self, url: str) -> str:
        """A finding's URL as :data:`fixtures.defects.EXPECTED` writes it."""
        if url.startswith(self.external):
            return "(external)" + url.removeprefix(self.external)
        return url.removeprefix(self.base + "/defects/")


def changes_diff(base: str, old_base: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Every item of every category for ``/changes/`` before → after the flip; NEW's URLs on
    ``base``, OLD's on ``old_base`` (the same host unless the site moved)."""
    old = old_base or base
    return {
        "pages_added": [{"url": f"{base}/changes/added", "status": 200, "title": "Added"}],
        "pages_removed": [{"url": f"{old}/changes/removed", "status": 200, "title": "Removed"}],
        "page_changes": [
            {"url": f"{base}/changes/retitled", "old_url": f"{old}/changes/retitled",
             "field": "title", "old": "Old Title", "new": "New Title"},
            {"url": f"{base}/changes/target", "old_url": f"{old}/changes/target",
             "field": "status", "old": 200, "new": 404},
            {"url": f"{base}/changes/target", "old_url": f"{old}/changes/target",
             "field": "title", "old": "Target", "new": "Gone"},
        ],
        "new_4xx": [{"url": f"{base}/changes/target", "old_status": 200, "new_status": 404}],
        "new_5xx": [],
        "links_added": [{"source_url": f"{base}/changes/", "dest_url": f"{base}/changes/added"}],
        "links_removed": [{"source_url": f"{old}/changes/",
                           "dest_url": f"{old}/changes/removed"}],
        "links_broken": [{"source_url": f"{base}/changes/linker",
                          "dest_url": f"{base}/changes/target", "old_status": 200,
                          "new_status": 404}],
        "links_fixed": [],
        "resources_failing": [],
        "images_lost_alt": [{"page_url": f"{base}/changes/stays",
                             "src": f"{base}/files/photo.png"}],
        "trap_caps_new": [],
        "violations_new": [], "violations_fixed": [], "violations_persisting": [],
        "values_changed": [],  # not analysed: no findings (tests/test_diff_findings.py)
    }


# -- the report (tests/test_report.py, tests/test_report_sheets.py) ---------------------------

#: The spreadsheet the local fake of Google Sheets (``fake`` in conftest.py) holds, and the
#: service account of the key ``key_file`` writes.
SHEET_ID = "1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
SHEET_URL = f"https://docs.google.com/spreadsheets/d/{SHEET_ID}/edit#gid=0"
SHEET_ACCOUNT = "nitpicker@fake-project.iam.gserviceaccount.com"

#: The roots of the crawl the report tests read.
REPORT_ROOTS = ("/recursive/", "/redirect/", "/meta/", "/error-status/", "/files/", "/resources/",
                "/errors/")

#: SPEC §8.2: every sheet's header texts, in order (Page List: before the plugin columns).
EXPECTED_HEADERS = {
    "Issues": ["Priority", "Issue", "ID", "Category", "URLs", "Findings", "Source",
               "Why it matters", "How to fix"],
    "Page List": [
        "Title", "Full Title", "URL", "Protocol", "Domain",
        *(f"path{n}" for n in range(1, 11)),
        "Status Code", "Redirect From", "Language", "Internal Links", "Internal Bad Links",
        "External Links", "External Bad Links", "Internal Referrers", "description",
        "keywords", "noindex", "nofollow", "noarchive", "canonical", "alternate",
        "twitter:card", "og:site_name", "og:url", "og:title", "og:description", "og:type",
        "og:image", "Link Score",  # (and a column per --extract rule of the crawl)
    ],
    "Links": ["URL", "Page Title", "Status Code", "Status Text", "Content Type",
              "Redirect From", "Referrers", "Headers", "Remarks"],
    "Resources": ["URL", "Status Code", "Status Text", "Content Type", "Content Length",
                  "Referrers"],
    "Images": ["Page URL", "Image path (src)", "Image Path (currentSrc)", "Alternative Text",
               "Displayed Width", "Displayed Height", "Lazy Loading", "Source Code"],
    "Violations": ["Validator", "Severity", "Rule", "Code", "Message", "URL"],
    "Discrepancies": ["Type", "Left URL", "Left", "Right", "Right URL", "Note"],
    "Summary": ["Metric", "Value"],
    "Technologies": ["Technology", "Categories", "Pages", "Versions", "Website"],
    "Referrers Relational Table": ["Link (To)", "Referrer (From)", "Referrer Content",
                                   "Link Status Code", "Link Status Text", "Link Content Type"],
    "Resources Relational Table": ["Referred Page (From)", "Resource (To)",
                                   "Resource Status Code", "Resource Status Text",
                                   "Resource Content Type", "Resource Size"],
}


#: The plugin columns of the analysed copy (``analysed_path``), after the fixed ones.
PLUGIN_HEADERS = ["Search: found", "Search: count", "Lint: score"]


def store_page_values(conn: sqlite3.Connection, page_id: int) -> None:
    """Two plugins' runs and values, as ``nitpicker analyze`` stores them (0013_analysis)."""
    runs = [("search", {"found": "Search: found-old"}), ("lint", {"score": "Lint: score"}),
            ("search", {"found": "Search: found", "count": "Search: count"})]
    for plugin, headers in runs:  # search first run first; its latest run's titles count
        conn.execute(
            "INSERT INTO analysis_runs(plugin, version, settings_hash, settings, headers, pid,"
            " started_at, outcome) VALUES (?, '1', 'h', '{}', ?, 1, '2026-12-01', 'finished')",
            (plugin, json.dumps(headers)))
    conn.executemany(
        "INSERT INTO page_values(plugin, page_id, key, phase, value, note)"
        " VALUES (?, ?, ?, 'page', ?, ?)",
        [("search", page_id, "found", json.dumps(True), "lorem at line 3"),
         ("search", page_id, "count", json.dumps(2), None),
         ("lint", page_id, "score", json.dumps(0.5), "two rules failed")])


def report_cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``nitpicker report ARGS`` in a subprocess, with ``env`` added to the environment."""
    return subprocess.run([sys.executable, "-m", "nitpicker.cli", "report", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=120, check=False)
