"""The items the spider yields: one ``PageItem`` per fetched (or skipped, or failed) URL."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from http import HTTPStatus

from nitpicker.policy.extract import JsonLdBlock, PageMeta, PageText
from nitpicker.policy.extract.structured import MarkupProblem, StructuredItem
from nitpicker.policy.extract.target import charset_of
from nitpicker.policy.follow import FollowMode  # the mode of a LinkRecord, defined with the rules
from nitpicker.policy.urls import MAX_URL_LENGTH

__all__ = ["MAX_URL_LENGTH", "CertificateRecord", "ConsoleRecord", "FollowMode", "ImageRecord",
           "LinkRecord", "MissedPrediction", "PageItem", "Redirect", "RedirectKind",
           "ResourceRecord", "SitemapRecord", "Soft404Probe", "answered_link", "status_phrase",
           "too_long_stand_in"]




def too_long_stand_in(url: str) -> str:
    """The row key of a URL longer than ``MAX_URL_LENGTH``: its start and a digest."""
    digest = hashlib.sha1(url.encode("utf-8")).hexdigest()[:16]
    return f"{url[:1000]}#too-long-{digest}"


@dataclass(slots=True)
class LinkRecord:
    """An anchor on a page, resolved and normalised."""

    url: str
    key: str
    hash: str
    text: str
    is_external: bool
    mode: FollowMode


@dataclass(slots=True)
class ImageRecord:
    src: str
    alt: str | None
    width: float | None = None
    height: float | None = None
    current_src: str = ""
    natural_width: int | None = None
    natural_height: int | None = None
    is_lazy: bool = False
    viewport_width: int | None = None
    source_code: str = ""
    file_size: int | None = None
    """Bytes of the image file (the ``Content-Length`` of the response the browser loaded it
    with); ``None`` when unknown."""


@dataclass(slots=True)
class ResourceRecord:
    """A sub-resource of a page: referenced in its markup, or loaded by the browser."""

    url: str
    kind: str
    is_external: bool
    status: int | None = None
    status_text: str | None = None
    content_type: str | None = None
    content_length: int | None = None
    compress: str | None = None
    cdn: str | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)


class RedirectKind:
    """How a redirect source sent the crawler on (``pages.redirect_kind``)."""

    HTTP = "http"
    """A 3xx answer with a ``Location``."""
    META_REFRESH = "meta-refresh"
    """``<meta http-equiv=refresh>`` (read over HTTP, without a browser)."""
    SCRIPT = "script"
    """The browser left the loaded page by itself (``location.href = …`` on load)."""


@dataclass(slots=True)
class ConsoleRecord:
    """A console message or an uncaught exception of a rendered page (one per distinct
    message; ``count`` says how many times the page showed it)."""

    kind: str
    """``console`` (``console.log``, ``warn``, …) or ``exception`` (an uncaught error)."""
    level: str
    """``error``, ``warning``, ``info``, ``log`` or ``debug``."""
    text: str
    source_url: str = ""
    """The script (or page) that wrote it; ``""`` when the browser did not say."""
    line: int = 0
    """1-based; 0 when unknown."""
    column: int = 0
    """1-based; 0 when unknown."""
    count: int = 1

    @property
    def digest(self) -> str:
        """What makes two pages' messages the same message (its row key in the archive)."""
        key = "\0".join((self.kind, self.level, self.text, self.source_url, str(self.line),
                          str(self.column)))
        return hashlib.sha1(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class Redirect:
    """One hop of a redirect chain that ended at the page."""

    url: str
    status: int
    kind: str = RedirectKind.HTTP
    is_external: bool | None = None
    """Whether the hop is out of scope (``None``: as the page it leads to)."""


def _not_in_feeds(value: object) -> None:
    """A Scrapy feed's serializer for a field it does not carry (bytes JSON cannot hold)."""


@dataclass(slots=True)
class PageItem:
    """Everything recorded about one URL the crawl dealt with."""

    url: str
    """Final URL (after redirects), normalised."""
    frontier_id: int | None
    depth: int
    is_external: bool
    is_target: bool
    status: int | None = None
    status_text: str = ""
    content_type: str | None = None
    content_length: int | None = None
    response_time_ms: int | None = None
    """From the request to the response headers (``pages.response_time_ms``)."""
    untried: bool = False
    """Recorded with its host's connection failure, never requested itself: the host breaker
    had given up on the host (``pages.untried``)."""
    headers: list[tuple[str, str]] = field(default_factory=list)
    meta: PageMeta = field(default_factory=PageMeta)
    redirects: list[Redirect] = field(default_factory=list)
    links: list[LinkRecord] = field(default_factory=list)
    images: list[ImageRecord] = field(default_factory=list)
    resources: list[ResourceRecord] = field(default_factory=list)
    json_ld: list[JsonLdBlock] = field(default_factory=list)
    """The page's JSON-LD blocks, in document order (in-scope HTML pages only)."""
    structured: list[StructuredItem] = field(default_factory=list)
    """Its structured data's items, JSON-LD's then Microdata's then RDFa's."""
    structured_errors: list[MarkupProblem] = field(default_factory=list)
    """The Microdata or RDFa that could not be read."""
    extracted: list[tuple[str, str]] = field(default_factory=list)
    """``(rule name, value)`` of each ``--extract`` match, in order."""
    console: list[ConsoleRecord] = field(default_factory=list)
    """Console messages and uncaught exceptions, in order of first occurrence (rendered
    pages only)."""
    html: str | None = None
    """The HTML snapshot (in-scope HTML pages only)."""
    snapshot: bytes | None = field(default=None, metadata={"serializer": _not_in_feeds})
    """:attr:`html` as the archive stores it, when the page reader's child compressed it
    (:mod:`nitpicker.archive.snapshots`); ``None``: the archive compresses :attr:`html`.
    A feed (a Scrapyd job's JSON lines) has ``null`` here: it carries :attr:`html`."""
    http_form_action: str | None = None
    """The first form of an https page that submits over plain http: its action, resolved."""
    content: PageText | None = None
    """Its fragment targets (ids, ``<a name>``) and main content's text, from the extraction's
    parse (in-scope HTML pages only; ``None``: not read, or ``NITPICKER_CONTENT_FACTS`` off)."""
    content_signature: tuple[int, int | None, bytes | None] | None = field(
        default=None, metadata={"serializer": _not_in_feeds})
    """:attr:`content`'s words, content hash and MinHash signature, when the page reader's
    child signed it; ``None``: the archive signs its text (``content_signer``). Not in a feed
    (bytes)."""
    skeleton: tuple[str, ...] | None = None
    """The snapshot's template skeleton, from the extraction's parse (``None``: not computed;
    the close reads it from the snapshot). A tuple: an item is exported as JSON (Scrapyd's
    feed), which has no sets."""
    skip_reason: str | None = None
    links_capped: bool = False
    """More links than ``MAX_LINKS_PER_PAGE`` on the page: only that many were kept."""
    error: str | None = None
    """Fetch error text (DNS, refused, timeout, TLS, reset); status is then -1."""
    loaded: dict[str, ResourceRecord] = field(default_factory=dict)
    """Resources the browser loaded for this page that answer a link check of their URL (by
    URL): a link to one of them is recorded from the browser's response, not fetched again."""
    redirect_link: LinkRecord | None = None
    """Set when the redirect chain was handed over: ``url`` (this link's URL) was not fetched
    by this item, which records only its ``redirects`` (the hops, pointing at it); the URL is
    fetched by its own frontier row, once, whatever number of sources lead to it."""
    predictions: list[tuple[str, str]] = field(default_factory=list)
    """(frontier key, URL) of the pages predicted ahead of the page's pager links: queued as
    ``PREDICTED`` frontier rows, never page rows."""

    @property
    def is_skipped(self) -> bool:
        return self.skip_reason is not None

    @property
    def charset(self) -> str | None:
        """The character encoding the page declares (``pages.charset``), lower-case: its
        ``Content-Type`` header's ``charset`` (what a browser decodes with), else its
        ``<meta charset>`` or ``<meta http-equiv=content-type>``; ``None`` when none does."""
        for name, value in self.headers:
            if name == "content-type":
                declared = charset_of(value)
                if declared:
                    return declared
        return self.meta.charset or None


def status_phrase(status: int) -> str:
    """The reason phrase of an HTTP status (``""`` for one HTTP does not name)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def answered_link(link: LinkRecord, resource: ResourceRecord, depth: int) -> PageItem:
    """The row of a link a resource of its page answered: what fetching the link would have
    recorded (a non-HTML response: its status and headers), from the browser's response."""
    return PageItem(
        url=link.url,
        frontier_id=None,
        depth=depth,
        is_external=link.is_external,
        is_target=link.mode is FollowMode.FULL and not link.is_external,
        status=resource.status,
        status_text=status_phrase(resource.status) if resource.status is not None else "",
        content_type=resource.content_type.lower() if resource.content_type else None,
        content_length=resource.content_length,
        headers=[(name.lower(), value) for name, value in resource.headers],
    )


@dataclass(slots=True)
class MissedPrediction:
    """A predicted URL that did not answer as a page of its own (an error status, a network
    error, a redirect, a skip): nothing is recorded for it. Its frontier row goes, or, when a
    real link or a sitemap has reached the URL meanwhile, is queued again as a normal one."""

    url: str
    """The URL as predicted (the first of a redirect chain)."""
    frontier_id: int | None
    reason: str
    """Why it missed: the status, ``redirected``, ``skipped`` or the error."""


@dataclass(slots=True)
class SitemapRecord:
    """One sitemap document the crawl asked for (``sitemaps``), read or not."""

    url: str
    """As requested: the robots.txt line, the index's ``<loc>``, the guessed ``/sitemap.xml``."""
    found_in: str | None = None
    """The robots.txt or sitemap index that named it; ``None``: a guess (``/sitemap.xml``)."""
    status: int | None = None
    """Its HTTP status; -1: no answer."""
    kind: str | None = None
    """``urlset`` or ``sitemapindex``; ``None``: not read."""
    entries: int | None = None
    """How many ``<url>`` (or ``<sitemap>``) entries it has, repeats included."""
    size: int | None = None
    """Bytes, uncompressed; beyond the read cap as many as were counted (``None``: unknown)."""
    error: str | None = None
    """Why it was not read; ``None``: read."""


@dataclass(slots=True)
class CertificateRecord:
    """The TLS certificate of one https origin (``tls_certificates``)."""

    origin: str
    """``https://host[:port]``."""
    checked_at: str
    """When it was looked at (ISO 8601, UTC)."""
    not_after: str | None = None
    """Its end of validity (ISO 8601, UTC); ``None``: unknown."""
    issuer: str | None = None
    """Its issuer (RFC 4514); ``None``: unknown."""
    error: str | None = None
    """Why the TLS verification refused it; ``None``: valid."""


@dataclass(slots=True)
class Soft404Probe:
    """One guaranteed-missing URL fetched for a directory of pages (``soft404_probes``)."""

    directory: str
    url: str
    checked_at: str
    status: int | None = None
    """After redirects; ``None``: no answer."""
    final_url: str | None = None
    title: str | None = None
    words: int | None = None
    content_hash: int | None = None
    minhash: bytes | None = None
    error: str | None = None
