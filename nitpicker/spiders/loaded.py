"""What a rendered page loaded, onto its item: the browser's responses onto the page's
resources, the ones a link check of their URL would record, and each image's file size.

Plain functions over the :class:`~nitpicker.crawl.session.CrawlSession` (its resolver and
scope), called by :class:`~nitpicker.spiders.site.SiteSpider` for a page the browser rendered.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import TYPE_CHECKING

from nitpicker.crawl.meta import is_html
from nitpicker.items import ImageRecord, ResourceRecord

if TYPE_CHECKING:
    from nitpicker.crawl.session import CrawlSession
    from nitpicker.render.page import RenderResult

__all__ = ["answers_link_check", "dimension", "image_sizes", "read_loaded"]


def answers_link_check(resource: ResourceRecord) -> bool:
    """Whether the browser's response for a resource is what a link check of its URL would
    record: a final, whole answer (not a redirect, a revalidation, a range or a failure) that
    is not an HTML page (a page linked and framed is crawled as a page)."""
    status = resource.status
    return (status is not None and status >= 200 and not 300 <= status < 400
            and status != HTTPStatus.PARTIAL_CONTENT  # a range of a media file
            and not is_html(resource.content_type.lower() if resource.content_type else None))


def read_loaded(session: CrawlSession, rendered: RenderResult,
                by_url: dict[str, ResourceRecord]) -> None:
    """The responses the browser loaded, onto the page's resources (``by_url``)."""
    in_scope = session.in_scope
    for loaded in rendered.resources.values():
        target = session.resolver.resolve(loaded.url, loaded.url)
        if target is None or not target.is_http:
            continue
        record = by_url.get(target.url)
        if record is None:
            record = by_url[target.url] = ResourceRecord(
                target.url, "", not in_scope(target)
            )
        if loaded.status == HTTPStatus.NOT_MODIFIED:
            continue  # the browser revalidated its cached copy: the page is a referrer,
            # the resource keeps the facts of its full response
        record.status = loaded.status
        record.status_text = loaded.status_text
        record.content_type = loaded.content_type
        record.content_length = loaded.content_length
        record.compress = loaded.compress
        record.cdn = loaded.cdn
        record.headers = loaded.headers

def image_sizes(session: CrawlSession, images: list[ImageRecord],
                by_url: dict[str, ResourceRecord]) -> None:
    """Each image's file size: the ``Content-Length`` of the response its shown source
    (``currentSrc``, else ``src``) was loaded with."""
    resolve = session.resolver.resolve
    for image in images:
        shown = image.current_src or image.src
        target = resolve(shown, shown) if shown else None
        record = by_url.get(target.url) if target is not None else None
        if record is not None and record.status is not None and 200 <= record.status < 300:
            image.file_size = record.content_length


def dimension(value: str) -> float | None:
    """An ``<img width|height>`` attribute as a number of pixels (``None``: not a number)."""
    try:
        return float(value.strip().removesuffix("px"))
    except ValueError:
        return None
