"""The manual is nitpicker's first audited site: build it, serve it on 127.0.0.1, crawl it with
nitpicker itself, and fail when any link of it is broken.

    .venv/bin/python docs/crawl_check.py            # build the site into a temporary directory
    .venv/bin/python docs/crawl_check.py site/      # or crawl a site make docs built

Steps: ``mkdocs build --strict``; a static file server on a free 127.0.0.1 port (the standard
library's, in a thread); ``nitpicker crawl URL --no-render --no-fetch-external`` into a
temporary archive (no browser, nothing fetched off the machine: the site's few external links
are recorded, not requested); then ``nitpicker query ARCHIVE links --type broken`` and the
``links/broken-fragment`` check's findings (a link to ``page#id`` where ``page`` has no such id).
Exit 0 when the crawl found the pages and no broken link; 1, printing each broken link (the
page, the URL and its status, or the missing fragment), otherwise. ``tests/test_docs.py`` runs it, so ``make test`` (and CI) does.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NITPICKER = [sys.executable, "-m", "nitpicker.cli"]
TIMEOUT = 300


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves the built site, logging nothing."""

    def log_message(self, format: str, *args: object) -> None:
        pass


def build(site: Path) -> None:
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                    "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)], check=True,
                   timeout=TIMEOUT)


def crawl(url: str, archive: Path) -> int:
    """``nitpicker crawl``'s exit code: 0, or 1/2 when a page could not be fetched at all."""
    return subprocess.run([*NITPICKER, "crawl", url, "--no-render", "--no-fetch-external",
                           "--silent", "-o", str(archive)], check=False,
                          timeout=TIMEOUT).returncode


def query(archive: Path, *args: str) -> dict[str, object]:
    """``nitpicker query ARCHIVE ARGS…``'s JSON answer."""
    done = subprocess.run([*NITPICKER, "query", str(archive), *args], check=True,
                          capture_output=True, text=True, timeout=TIMEOUT)
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def check(site: Path, work: Path) -> list[str]:
    """The problems found crawling the built ``site``: empty when there is none."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        archive = work / "docs.nitpicker"
        code = crawl(url, archive)
    finally:
        server.shutdown()
        server.server_close()
    problems = [f"nitpicker crawl {url} exited {code}"] if code else []
    pages = len(list(site.rglob("index.html")))
    summary = query(archive, "summary")
    if int(summary["internal_pages"]) < pages:  # type: ignore[call-overload]
        problems.append(f"the crawl found {summary['internal_pages']} pages of the "
                        f"{pages} the site has")
    broken = query(archive, "links", "--type", "broken", "--limit", "1000")
    for link in broken["items"]:  # type: ignore[attr-defined]
        problems.append(f"broken link on {link['source_url']}: {link['dest_url']} "
                        f"({link['status']} {link['status_text']})")
    fragments = query(archive, "issue", "--id", "links/broken-fragment", "--limit", "1000")
    for finding in fragments["items"]:  # type: ignore[attr-defined]
        problems.append(f"broken fragment link on {finding['url']}: {finding['message']}")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("Error: give at most one argument, the built site's directory", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="nitpicker-docs-") as tmp:
        work = Path(tmp)
        site = Path(argv[0]) if argv else work / "site"
        if not argv:
            build(site)
        if not (site / "index.html").is_file():
            print(f"Error: {site}: not a built site (no index.html)", file=sys.stderr)
            return 1
        pages = len(list(site.rglob("index.html")))
        problems = check(site, work)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return 1
    print(f"The manual: {pages} pages crawled, no broken link.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
