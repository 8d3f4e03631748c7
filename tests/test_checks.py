"""The built-in site checks (``nitpicker/query/checks/``) and their runner
(``nitpicker/archive/check_store.py``): each check on the ``/defects/`` fixture pages made to
trip it, and on the pages made not to (``fixtures/defects.py``: every other page of the
section); the checks a local http site cannot trip (mixed content, HSTS, the trap cap) on a copy
of that crawl changed in SQL; ``nitpicker check`` re-run and on an archive older than the
findings tables."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fixtures.content_checks import EXPECTED as CONTENT_EXPECTED
from fixtures.defects import DEFECTS, EXPECTED
from fixtures.structured import EXPECTED as STRUCTURED_EXPECTED
from nitpicker.query.checks import CATEGORIES, CHECKS, PRIORITIES, check_by_id
from nitpicker.query.checks.performance import SLOW_RESPONSE_MS
from tests.helpers import BEFORE_FINDINGS, run

if TYPE_CHECKING:
    from tests.helpers import Defects

MADE_IN_SQL = {"security/mixed-content", "crawl/trap-cap"}
"""Checks no page of an http fixture site can trip: ``test_checks_a_crawl_cannot_trip`` (mixed
content is tripped by a crawl of the https fixture too)."""
OVER_HTTPS = {"security/hsts", "security/cookie-not-secure", "security/cookie-attributes",
              "security/tls-invalid", "security/tls-expiring"}
"""Checks tripped by crawls of the https fixture only: ``tests/test_checks_https.py``."""


SLOW = "performance/slow-response"


def findings(archive: Path) -> dict[str, list[tuple[str, str | None, str]]]:
    """check id -> its (url, element, message), by URL."""
    conn = sqlite3.connect(archive)
    try:
        rows = conn.execute("SELECT rule, url, element, message FROM check_findings"
                            " ORDER BY rule, url, element").fetchall()
    finally:
        conn.close()
    found: dict[str, list[tuple[str, str | None, str]]] = {}
    for rule, url, element, message in rows:
        found.setdefault(rule, []).append((url, element, message))
    return found


def test_the_registry_is_well_formed() -> None:
    ids = [check.id for check in CHECKS]
    assert len(ids) == len(set(ids))
    for check in CHECKS:
        assert check_by_id(check.id) is check
        assert check.priority in PRIORITIES and check.category in CATEGORIES
        assert check.title and check.explanation.endswith((".", ".)"))
        assert check.fix.endswith((".", ".)")), check.id
        assert check.sql.lstrip().upper().startswith(("SELECT", "WITH")), check.id
    assert check_by_id("links/no-such-check") is None


def test_every_check_has_a_page_made_to_trip_it() -> None:
    """``/defects/`` trips the checks of a site's pages, ``/structured/`` the structured-data
    ones (``tests/test_structured_data.py``), ``/content-checks/`` the content ones
    (``tests/test_content_checks.py``), ``fixtures/secure.py`` the https ones."""
    assert (set(EXPECTED) | set(STRUCTURED_EXPECTED) | set(CONTENT_EXPECTED) | MADE_IN_SQL
            | OVER_HTTPS) == {check.id for check in CHECKS}


def test_the_crawl_runs_the_checks_and_each_finds_exactly_its_defects(defects: Defects) -> None:
    """A check finds the pages made to trip it, and none of the section's other pages (every
    page of ``/defects/`` is good but for its own defect)."""
    found = findings(defects.archive)
    got = {rule: sorted(defects.path(url) for url, _, _ in rows) for rule, rows in found.items()}
    assert got == {**EXPECTED, SLOW: sorted({*EXPECTED[SLOW], *slowed(defects)})}
    assert set(EXPECTED[SLOW]) <= set(got[SLOW])


def slowed(defects: Defects) -> set[str]:
    """The internal pages the archive recorded as slower than ``performance/slow-response``'s
    threshold although not made slow: a loaded machine answers a page late now and then, and
    the check rightly finds it (the one made slow is expected whatever the others did)."""
    conn = sqlite3.connect(defects.archive)
    try:
        urls = [url for (url,) in conn.execute(
            "SELECT url FROM pages WHERE is_external = 0 AND response_time_ms > ?",
            (SLOW_RESPONSE_MS,))]
    finally:
        conn.close()
    return {defects.path(url) for url in urls}


def test_the_clean_pages_trip_nothing(defects: Defects) -> None:
    found = findings(defects.archive)
    paths = {defects.path(url) for rows in found.values() for url, _, _ in rows}
    assert "clean" in DEFECTS and "" in DEFECTS
    assert "clean" not in paths and "" not in paths


@pytest.mark.parametrize(("rule", "path", "element", "message"), [
    ("links/broken-internal", "missing", None, "Answers 404 Not Found; linked 3 times from 2 pages"),
    ("links/broken-internal", "chain/1", None,
     ("Could not be fetched (Too many redirects: gave up after 10 (REDIRECT_MAX_TIMES)); "
     "linked 1 time from 1 page")),
    ("links/to-redirect", "old", None, "Redirects (301) to {base}/defects/clean; linked 1 time from 1 page"),
    ("links/no-text", "empty-link", "{base}/defects/clean", "A link to {base}/defects/clean has no text"),
    ("canonical/not-http", "file-canonical", None,
     "rel=canonical is a file: URL: file:///C:/site/defects/file-canonical.html"),
    ("canonical/not-ok", "canonical-404", None,
     "rel=canonical points to {base}/defects/missing, which answers 404"),
    ("canonical/not-html", "canonical-pdf", None,
     "rel=canonical points to {base}/defects/file.pdf, which is application/pdf"),
    ("images/oversized", "images", "{base}/defects/img/huge.png",
     "300 KiB: {base}/defects/img/huge.png"),
    ("indexing/orphan", "orphan", None, "Listed in a sitemap, but no crawled page links to it"),
    ("headings/h1-multiple", "two-h1", None, "2 <h1> elements"),
    ("status/fetch-error", "reset", "Connection reset: Connection was closed cleanly.",
     "Could not be fetched: Connection reset: Connection was closed cleanly."),
    ("redirects/chain", "hop-1", None,
     ("2 redirects before {base}/defects/clean: {base}/defects/hop-1 → {base}/defects/hop-2"
     " → {base}/defects/clean")),
    ("hreflang/invalid-code", "hreflang/bad-code", "en-UK",
     "hreflang=\"en-UK\" is not valid: 'UK' is not an ISO 3166-1 alpha-2 region code"),
    ("hreflang/no-return-link", "hreflang/no-return", "{base}/defects/hreflang/en",
     "hreflang=\"en\" names {base}/defects/hreflang/en, which does not name this page back"),
    ("hreflang/target-redirect", "hreflang/to-redirect", "{base}/defects/old",
     "hreflang=\"it-CH\" names {base}/defects/old, which redirects to {base}/defects/clean"),
    ("sitemaps/not-ok", "server-error", "{base}/defects/sitemap.xml",
     "Listed in {base}/defects/sitemap.xml, but answers 500"),
    ("sitemaps/too-large", "sitemap-many.xml", None,
     "Lists 50,001 URLs: a sitemap may list at most 50,000"),
    ("sitemaps/too-large", "sitemap-huge.xml.gz", None,
     ("More than 50 MB uncompressed (52,428,801 bytes or more): a sitemap may be at most"
     " 52,428,800 bytes")),
    ("sitemaps/unreadable", "sitemap-gone.xml", None,
     "Not read (answers 404); named in {base}/sitemap.xml"),
])
def test_a_finding_names_its_element_and_its_facts(defects: Defects, rule: str, path: str,
                                                   element: str | None, message: str) -> None:
    rows = {defects.path(url): (found, text) for url, found, text in findings(defects.archive)[rule]}
    base = defects.base
    assert rows[path] == (element.format(base=base) if element else None, message.format(base=base))


def _copy(defects: Defects, target: Path, *sql: str) -> Path:
    shutil.copyfile(defects.archive, target)
    conn = sqlite3.connect(target)
    for statement in sql:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return target


def test_checks_a_crawl_cannot_trip(defects: Defects, tmp_path: Path) -> None:
    """Mixed content and HSTS on a page made https in SQL (its images stay http: HSTS is
    ``security/hsts``'s, no more ``security/missing-headers``'), the trap cap
    on two firings of one signature under one directory (one finding): ``nitpicker check``
    finds them; the crawl itself did not (the pages made not to trip them)."""
    assert not {"security/mixed-content", "crawl/trap-cap"} & set(findings(defects.archive))
    images = f"{defects.base}/defects/images"
    first = f"{defects.base}/defects/dup-1"
    changed = _copy(
        defects, tmp_path / "changed.nitpicker",
        f"UPDATE pages SET url = 'https' || substr(url, 5) WHERE url = '{images}'",
        "INSERT INTO trap_events(signature, parent_path, count, first_url, last_url, created_at)"
        f" VALUES ('abc', '/defects', 30, '{first}', '{first}?n=30', 'now'),"
        f" ('abc', '/defects', 31, '{first}', '{first}?n=31', 'now')")
    result = run("check", str(changed), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = findings(changed)
    https = "https" + images.removeprefix("http")
    assert [(url, element) for url, element, _ in found["security/mixed-content"]] == [
        (https, f"{defects.base}/defects/img/huge.png"),
        (https, f"{defects.base}/defects/img/no-alt.png"),
        (https, f"{defects.base}/defects/img/no-size.png")]
    hsts = {url: message for url, _, message in found["security/hsts"]}
    assert hsts == {https: "Served without Strict-Transport-Security"}
    assert https not in {url for url, _, _ in found["security/missing-headers"]}
    assert [(url, message) for url, _, message in found["crawl/trap-cap"]] == [
        (first, ("The trap cap stopped following links under /defects after 30 pages with one "
                f"title and description (last: {first}?n=30)"))]


def test_a_redirect_circle_of_handed_over_hops_is_a_loop_not_a_chain(
        defects: Defects, tmp_path: Path) -> None:
    """Two URLs redirecting to each other, each met by a request of its own (no request gave
    up: the crawl recorded both as redirect rows), made in SQL on ``hop-1`` → ``hop-2``:
    ``redirects/loop`` names both, ``redirects/chain`` none; the crawl's chain was found
    through ``pages.redirect_next`` alone (cleared, it is gone)."""
    hop_1, hop_2 = (f"{defects.base}/defects/hop-{n}" for n in (1, 2))
    circle = _copy(defects, tmp_path / "circle.nitpicker",
                   f"UPDATE pages SET redirect_next = '{hop_1}' WHERE url = '{hop_2}'")
    unrecorded = _copy(defects, tmp_path / "unrecorded.nitpicker",
                       "UPDATE pages SET redirect_next = NULL")
    for archive in (circle, unrecorded):
        result = run("check", str(archive), cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    found = findings(circle)
    assert "redirects/chain" not in found
    assert sorted((defects.path(url), message) for url, _, message in found["redirects/loop"]) == [
        ("hop-1", f"Redirects in a circle: {hop_1} → {hop_2} → {hop_1}"),
        ("hop-2", f"Redirects in a circle: {hop_2} → {hop_1} → {hop_2}"),
        ("loop-a", "Redirect loop: gave up after 10 redirects")]
    assert "redirects/chain" not in findings(unrecorded)


def test_concat_keeps_what_the_checks_read(defects: Defects, tmp_path: Path) -> None:
    """``nitpicker concat`` of the crawl with a copy of itself, then ``check``: the same
    findings (the redirects' next hops, hreflang tags, sitemap documents and their listings,
    the out-of-scope one's too, are carried over)."""
    copy = _copy(defects, tmp_path / "copy.nitpicker")
    result = run("concat", str(defects.archive), str(copy), "-o", "both", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    result = run("check", "both.nitpicker", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert findings(tmp_path / "both.nitpicker") == findings(defects.archive)


def test_check_replaces_the_findings_and_records_each_run(defects: Defects,
                                                          tmp_path: Path) -> None:
    archive = _copy(defects, tmp_path / "again.nitpicker",
                    "UPDATE pages SET title = '' WHERE url LIKE '%/defects/short-title'")
    before = findings(defects.archive)
    for _ in range(2):
        result = run("check", str(archive), cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert f"{len(CHECKS)} checks: " in result.stderr
    after = findings(archive)
    assert after["titles/missing"] == sorted(
        before["titles/missing"] + [(f"{defects.base}/defects/short-title", None, "No title")])
    assert "titles/too-short" not in after
    conn = sqlite3.connect(archive)
    runs = conn.execute("SELECT checks, findings FROM check_runs ORDER BY id").fetchall()
    fingerprints = conn.execute("SELECT count(DISTINCT fingerprint), count(*)"
                                " FROM check_findings").fetchone()
    conn.close()
    total = sum(len(rows) for rows in after.values())
    assert runs[1:] == [(len(CHECKS), total), (len(CHECKS), total)]
    assert fingerprints == (total, total)


def test_check_on_an_archive_older_than_the_findings_tables(defects: Defects,
                                                            tmp_path: Path) -> None:
    """The archive is migrated; the headings checks judge no page (the crawl did not count
    ``<h1>``s); nothing else is lost."""
    older = _copy(defects, tmp_path / "older.nitpicker", *BEFORE_FINDINGS)
    result = run("check", str(older), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    found = findings(older)
    assert "headings/h1-missing" not in found and "canonical/relative" not in found
    assert {rule: len(rows) for rule, rows in found.items()} == {
        rule: len(paths) for rule, paths in EXPECTED.items()
        if rule not in ("headings/h1-missing", "headings/h1-multiple", "canonical/relative")}


@pytest.mark.parametrize(("setup", "message"), [
    (None, "Error: Archive not found: missing.nitpicker"),
    ("text", "Error: Not a nitpicker archive: missing.nitpicker"),
])
def test_check_bad_input_is_one_line(tmp_path: Path, setup: str | None, message: str) -> None:
    if setup == "text":
        (tmp_path / "missing.nitpicker").write_text("not an archive")
    result = run("check", "missing.nitpicker", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == message


def test_check_refuses_an_archive_another_process_holds(defects: Defects,
                                                        tmp_path: Path) -> None:
    archive = _copy(defects, tmp_path / "held.nitpicker")
    before = archive.read_bytes()
    (tmp_path / "held.nitpicker.lock").write_text("1")  # PID 1 is always alive
    result = run("check", str(archive), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: Archive is being used by another process (PID 1)")
    assert archive.read_bytes() == before
