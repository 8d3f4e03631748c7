"""The spider's redirect facts: the hops a response came through, a redirect handed over to the
frontier (an HTTP or meta-refresh redirect not followed, a page that navigated away by script),
a failed redirect chain's claims released, and a predicted URL that turned out no page.

Plain functions over the :class:`~nitpicker.crawl.session.CrawlSession` (its resolver and
scope), called by :class:`~nitpicker.spiders.site.SiteSpider`'s ``parse`` and ``errback``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nitpicker.crawl.meta import META_DEPTH, META_FRONTIER_ID
from nitpicker.items import (
    FollowMode,
    LinkRecord,
    MissedPrediction,
    PageItem,
    Redirect,
    RedirectKind,
)
from nitpicker.policy.pagination import answered

if TYPE_CHECKING:
    from scrapy.http import Response

    from nitpicker.crawl.session import CrawlSession

__all__ = [
    "handed_over",
    "ignored_as_error",
    "missed_prediction",
    "redirect_hops",
    "release_claims",
]


def redirect_hops(session: CrawlSession, response: Response) -> list[Redirect]:
    """The redirects ``response`` came through (Scrapy's ``redirect_urls`` and reasons)."""
    urls = response.meta.get("redirect_urls") or []
    reasons = response.meta.get("redirect_reasons") or []
    hops = []
    resolve = session.resolver.resolve
    in_scope = session.in_scope
    for hop_url, reason in zip(urls, reasons, strict=False):
        parsed = resolve(hop_url, hop_url)
        if parsed is not None:
            if isinstance(reason, int):
                hops.append(Redirect(parsed.url, reason, RedirectKind.HTTP, not in_scope(parsed)))
            else:
                hops.append(Redirect(parsed.url, 0, RedirectKind.META_REFRESH,
                                     not in_scope(parsed)))
    return hops


def handed_over(session: CrawlSession, response: Response, source_url: str, status: int,
                kind: str, target_url: str) -> PageItem | None:
    """A redirect not followed (see :mod:`nitpicker.middlewares.redirect`), or a page that
    navigated away by script: the hops up to ``source_url`` are recorded as redirects to
    ``target_url``, which the frontier fetches on its own. ``None`` when the target is the
    source itself (a page that reloads) or not an http(s) URL."""
    resolve = session.resolver.resolve
    source = resolve(source_url, source_url)
    target = resolve(source_url, target_url)
    if source is None or target is None or not target.is_http or target.key == source.key:
        return None
    in_scope = session.in_scope
    is_external = not in_scope(target)
    meta = response.meta
    hops = redirect_hops(session, response)
    hops.append(Redirect(source.url, status, kind, not in_scope(source)))
    return PageItem(
        url=target.url,
        frontier_id=meta.get(META_FRONTIER_ID),
        depth=meta.get(META_DEPTH, 0),
        is_external=is_external,
        is_target=False,
        redirects=hops,
        redirect_link=LinkRecord(target.url, target.key, target.fragment, "", is_external,
                                 FollowMode.FULL),
    )


def missed_prediction(session: CrawlSession, meta: dict[str, Any], item: PageItem,
                      url: str) -> MissedPrediction | None:
    """A predicted URL's result that is no page of its own (SPEC §3.9): not recorded."""
    if answered(item.status, redirected=bool(item.redirects), skipped=item.is_skipped):
        return None
    chain = meta.get("redirect_urls") or []
    leased = chain[0] if chain else url
    parsed = session.resolver.resolve(leased, leased)
    reason = (item.error or ("skipped" if item.is_skipped else "")
              or ("redirected" if item.redirects else str(item.status)))
    return MissedPrediction(parsed.url if parsed is not None else leased,
                            meta.get(META_FRONTIER_ID), reason)


def ignored_as_error(message: str, chain: list[str]) -> str | None:
    """An ``IgnoreRequest`` that means the URL could not be fetched (not a skip)."""
    if "max redirections" in message:
        hops = len(chain) - 1
        if len(set(chain)) < len(chain):
            return f"Redirect loop: gave up after {hops} redirects"
        return f"Too many redirects: gave up after {hops} (REDIRECT_MAX_TIMES)"
    if "DOWNLOAD_MAXSIZE" in message or "max size" in message:
        return f"Too large: {message}"
    return None


def release_claims(session: CrawlSession, leased: str, hops: list[str], *,
                   fetch_last: bool) -> None:
    """A redirect chain from ``leased`` failed: the frontier rows of the in-scope URLs it
    followed (claimed by it, see :mod:`nitpicker.middlewares.redirect`) are done, its
    failure recorded under ``leased``; with ``fetch_last`` the last one, whose fetch failed,
    is fetched again on its own (once: it has no chain then)."""
    source = session.policy_url(leased)
    frontier = session.archive.frontier
    last = len(hops) - 1
    for n, hop in enumerate(hops):
        parsed = session.policy_url(hop)
        if (parsed is not None and session.in_scope(parsed)
                and (source is None or parsed.key != source.key)):
            frontier.release(parsed.key, fetch_again=fetch_last and n == last)
