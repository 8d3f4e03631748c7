"""SiteFacts: what a crawl learns about the site beyond its pages — each sitemap document
it asked for and the URLs each lists, and the TLS certificate of each https origin (migration
``0029_site_audit``), and each soft-404 probe (``0042_soft404_probes``). The sitemap and security checks read them
(:mod:`nitpicker.query.checks`).

A sitemap's URLs are page facts too: they are marked and queued by the page recorder
(:meth:`~nitpicker.archive.page_recorder.PageRecorder.record_sitemap`), in the same batch as
the document's row and its ``sitemap_urls``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from nitpicker.archive.connection import serialised

if TYPE_CHECKING:
    from nitpicker.archive.batch import Batch
    from nitpicker.archive.page_recorder import PageRecorder
    from nitpicker.items import CertificateRecord, SitemapRecord, Soft404Probe

__all__ = ["SiteFacts"]

_RECORD_SITEMAP: Final = """INSERT INTO sitemaps(url, found_in, status, kind, entries, size,
    error) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(url) DO UPDATE SET found_in = coalesce(sitemaps.found_in, excluded.found_in),
    status = excluded.status, kind = excluded.kind, entries = excluded.entries,
    size = excluded.size, error = excluded.error
RETURNING id"""
"""A document asked for again (a resume, ``--append``) keeps who named it first."""

_RECORD_CERTIFICATE: Final = """INSERT OR REPLACE INTO tls_certificates(origin, checked_at,
    not_after, issuer, error) VALUES (?, ?, ?, ?, ?)"""


_RECORD_PROBE: Final = """INSERT OR REPLACE INTO soft404_probes(directory, url, checked_at,
    status, final_url, title, words, content_hash, minhash, error)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""


class SiteFacts:
    """Records sitemap documents and TLS certificates, in the writer's open batch."""

    def __init__(self, archive: Batch, pages: PageRecorder) -> None:
        self._archive = archive
        self._conn = archive.conn
        self._mutex = archive.mutex
        self._pages = pages

    @serialised
    def record_sitemap(self, document: SitemapRecord,
                       entries: list[tuple[str, bool]] | None = None) -> int:
        """The sitemap ``document`` and the ``(url, is_external)`` pages it lists: marked as in
        a sitemap, the in-scope ones queued (the page recorder's), each linked to the
        document. Returns how many URLs were queued."""
        self._archive.begin()
        (sitemap_id,) = self._conn.execute(
            _RECORD_SITEMAP,
            (document.url, document.found_in, document.status, document.kind, document.entries,
             document.size, document.error),
        ).fetchone()
        added = 0
        if entries:
            added = self._pages.record_sitemap(entries)
            ids = self._pages.ids({url: (external, 1) for url, external in entries})
            self._conn.executemany(
                "INSERT OR IGNORE INTO sitemap_urls(sitemap_id, page_id) VALUES (?, ?)",
                [(sitemap_id, page_id) for page_id in set(ids.values())])
        self._archive.dirty += 1
        return added

    @serialised
    def record_certificate(self, certificate: CertificateRecord) -> None:
        """The certificate of one origin (a later look replaces an earlier one)."""
        self._archive.begin()
        self._conn.execute(
            _RECORD_CERTIFICATE,
            (certificate.origin, certificate.checked_at, certificate.not_after,
             certificate.issuer, certificate.error))
        self._archive.dirty += 1

    @serialised
    def record_probe(self, probe: Soft404Probe) -> None:
        """The soft-404 probe of one directory (a later one replaces an earlier one)."""
        self._archive.begin()
        self._conn.execute(
            _RECORD_PROBE,
            (probe.directory, probe.url, probe.checked_at, probe.status, probe.final_url,
             probe.title, probe.words, probe.content_hash, probe.minhash, probe.error))
        self._archive.dirty += 1
