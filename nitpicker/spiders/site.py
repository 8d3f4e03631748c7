"""SiteSpider ("site"): crawls the roots given and yields one PageItem per URL.

Run it three ways, all the same code: ``nitpicker crawl URL``, ``scrapy crawl site -a
roots=URL1,URL2 -a output=FILE`` in this project, or a Scrapyd job with the same arguments.
The frontier scheduler decides what to fetch; this spider turns each response (or failure)
into a :class:`~nitpicker.items.PageItem`.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy import Spider, signals
from scrapy.exceptions import CloseSpider, DownloadCancelledError, IgnoreRequest
from scrapy.settings import SETTINGS_PRIORITIES

from nitpicker.crawl.config import DEFAULT_DEDUPE_CAP, CrawlConfig
from nitpicker.crawl.fetch_errors import describe_failure, untried
from nitpicker.crawl.meta import (
    META_DEPTH,
    META_FRONTIER_ID,
    META_MODE,
    META_PREDICTED,
    META_REDIRECT_REASON,
    META_REDIRECT_TO,
    META_RENDER,
    META_STOPPED,
    is_browser_request,
    is_html,
    media_type,
    response_time_ms,
)
from nitpicker.crawl.redis_frontier import crawl_id
from nitpicker.crawl.session import CrawlSession
from nitpicker.crawl.spider_args import config_from_spider_args
from nitpicker.default_settings import set_defaults
from nitpicker.items import (
    MAX_URL_LENGTH,
    FollowMode,
    ImageRecord,
    LinkRecord,
    MissedPrediction,
    PageItem,
    RedirectKind,
    ResourceRecord,
    status_phrase,
    too_long_stand_in,
)
from nitpicker.policy.extract import document_base, extract, http_form_action, resolve_meta_urls
from nitpicker.render.retry import browser_retry
from nitpicker.render.settings import RenderSettings
from nitpicker.spiders.loaded import answers_link_check, dimension, image_sizes, read_loaded
from nitpicker.spiders.page_data import read_page_data
from nitpicker.spiders.page_reader import PageReader
from nitpicker.spiders.redirects import (
    handed_over,
    ignored_as_error,
    missed_prediction,
    redirect_hops,
    release_claims,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure

    from nitpicker.archive.lock import ArchiveLock
    from nitpicker.crawl.worker_role import WorkerRole
    from nitpicker.render.page import RenderResult

__all__ = ["SiteSpider"]

logger = logging.getLogger(__name__)

GC_THRESHOLD = 10_000
"""Allocations between two young-generation collections (Python's default is 700)."""
SHARED_FRONTIER_POLL = 0.5
"""Seconds between two looks for work of an idle worker of a distributed crawl."""


def _impose(settings: BaseSettings, name: str, value: object) -> None:
    """Set ``name`` over whatever priority it has: an option that only restricts the crawl."""
    priority = max(settings.getpriority(name) or 0, SETTINGS_PRIORITIES["spider"])
    settings.set(name, value, priority=priority)


class SiteSpider(Spider):
    """Crawls a site into a ``.nitpicker`` archive."""

    name = "site"
    custom_settings = {"ADDONS": {"nitpicker.addon.Addon": 0}}  # noqa: RUF012 (Scrapy's API)

    def __init__(self, config: CrawlConfig | None = None, archive_lock: ArchiveLock | None = None,
                 worker_role: WorkerRole | None = None, **kwargs: Any) -> None:
        super().__init__(name=kwargs.pop("name", None))
        self.frontier_url: str = kwargs.pop("frontier", "") or ""
        """``-a frontier=redis://…``: the shared frontier (the setting and the environment
        variable ``NITPICKER_FRONTIER_URL`` are read in :meth:`from_crawler`)."""
        self._job = str(kwargs.get("_job") or "")
        spider_args = {k: v for k, v in kwargs.items() if not k.startswith("_")}
        self._output_given = config is not None or bool(spider_args.get("output"))
        self.config = config if config is not None else config_from_spider_args(spider_args)
        self.session = CrawlSession(self.config)
        self.session.lock = archive_lock  # held by the caller (an append), or None
        self.session.role = worker_role  # one of --workers N, or None
        self.resolver = self.session.resolver
        self.reader = PageReader(self.resolver)

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        """The add-on's defaults of the ``NITPICKER_*`` settings, set now: Scrapy makes the
        spider (whose ``from_crawler`` reads some) before it loads the add-ons."""
        super().update_settings(settings)
        set_defaults(settings)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SiteSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider.use_shared_frontier(settings)
        config = spider.config
        spider.project_options(settings)
        render = RenderSettings.from_settings(settings, config)
        if render.enabled:
            render.configure(settings)
        # Every page allocates thousands of short-lived objects; at Python's default
        # thresholds the cycle collector ran ~1,900 times in a 5,000-page crawl, its full
        # passes walking the URL caches each time (10 % of the crawl). Collect less often.
        gc.set_threshold(GC_THRESHOLD, 20, 20)
        # Scrapy leaves its loggers at NOTSET and filters in the handler: every page's
        # "Crawled" and "Scraped from" debug records would be built, then dropped.
        logging.getLogger("scrapy").setLevel(settings.get("LOG_LEVEL") or "DEBUG")
        crawler.signals.connect(spider._close_reader, signal=signals.spider_closed)
        crawler.signals.connect(spider._on_closed, signal=signals.spider_closed)
        crawler.signals.connect(spider._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(spider._on_idle, signal=signals.spider_idle)
        spider.session.request_close = spider._close_soon
        spider.session.read_settings(settings)
        spider.reader.enabled = settings.getbool("NITPICKER_PAGE_READER")
        return spider

    def use_shared_frontier(self, settings: BaseSettings) -> None:
        """A shared frontier (``-a frontier=…``, else ``NITPICKER_FRONTIER_URL`` as a setting
        or an environment variable): the session takes its URLs from it and records into a
        shard archive, ``shard-<job id>.nitpicker`` unless ``output`` is given."""
        url = (self.frontier_url or settings.get("NITPICKER_FRONTIER_URL")
               or os.environ.get("NITPICKER_FRONTIER_URL") or "")
        if not url:
            return
        from nitpicker.crawl.config import ConfigError
        from nitpicker.crawl.redis_frontier import parse_frontier_url, shard_name

        config = self.config
        if config.resume:
            raise ConfigError("a shard of a distributed crawl is not resumed: its leases "
                              "expire and another worker fetches them")
        try:
            frontier = parse_frontier_url(
                url, default_crawl=crawl_id(config.roots),
                lease_seconds=settings.getfloat("NITPICKER_FRONTIER_LEASE_SECONDS"),
                chunk=settings.getint("NITPICKER_FRONTIER_CHUNK"),
                retry_seconds=settings.getfloat("NITPICKER_FRONTIER_RETRY_SECONDS"),
            )
        except ValueError as exc:
            raise ConfigError(f"frontier: {exc}") from exc
        if not self._output_given:
            config = dataclasses.replace(config, output=str(Path.cwd() / shard_name(self._job)))
            self.config = self.session.config = config
        self.session.shared_frontier = frontier

    def project_options(self, settings: BaseSettings) -> None:
        """The crawl options as settings: the one road from an option to the component that
        uses it (components read settings in their ``from_crawler``, never the config).

        At ``spider`` priority, as a spider's ``custom_settings``: an option overrides the
        project's settings (``settings.py``, Scrapyd's project), and ``scrapy crawl -s``
        overrides the option. Three options only ever restrict the crawl, and win whatever the
        priority of the setting: ``deny_private_networks`` turns the private-network guard on
        (an operator's ``NITPICKER_DENY_PRIVATE_NETWORKS = True`` is never turned off);
        ``sitemap`` off, or a crawl that does not follow links (``--single``, list mode, a
        resume), turns the sitemap seeder off; ``predict_pagination`` off, or a crawl that does
        not follow links, turns predictive pagination off; a ``max_archive_mb`` given is the storage
        budget. What a crawl is (roots, scope, excludes, the archive, resume) is the session's,
        not a setting. Override to project options of your own.
        """
        config = self.config
        priority = "spider"
        parallels, interval = config.parallels, config.interval
        role = self.session.role
        if role is not None:  # one of --workers N: its share of the host's budget
            parallels, interval = role.parallels(parallels), role.interval_ms(interval)
        settings.set("CONCURRENT_REQUESTS", parallels, priority=priority)
        settings.set("CONCURRENT_REQUESTS_PER_DOMAIN", parallels, priority=priority)
        settings.set("DOWNLOAD_DELAY", interval / 1000, priority=priority)
        settings.set("RETRY_TIMES", config.retry, priority=priority)
        settings.set("USER_AGENT", config.user_agent, priority=priority)
        settings.set("ROBOTSTXT_OBEY", not config.ignore_robots, priority=priority)
        settings.set("ROBOTSTXT_USER_AGENT", config.user_agent, priority=priority)
        if config.dedupe_cap != DEFAULT_DEDUPE_CAP:  # off (None: 0), or a cap of its own
            settings.set("NITPICKER_DEDUPE_CAP", config.dedupe_cap or 0, priority=priority)
        settings.set("NITPICKER_DEDUPE_AGE_WINDOW", config.dedupe_age_window, priority=priority)
        settings.set("NITPICKER_DEDUPE_MAP_CAP", config.dedupe_map_cap, priority=priority)
        if config.deny_private_networks:
            _impose(settings, "NITPICKER_DENY_PRIVATE_NETWORKS", True)
        if not (config.sitemap and config.follows_links and not config.resume) or (
                role is not None and role.index > 0):  # one worker reads the sitemaps
            _impose(settings, "NITPICKER_SITEMAP_ENABLED", False)
        if not (config.predict_pagination and config.follows_links):
            _impose(settings, "NITPICKER_PREDICT_PAGINATION", False)
        if config.max_archive_mb:
            _impose(settings, "NITPICKER_ARCHIVE_MAX_MB", config.max_archive_mb)
        if role is not None and (settings.getpriority("NITPICKER_PAGE_READER") or 0) < \
                SETTINGS_PRIORITIES["project"]:  # the workers fill the cores: no reader each
            settings.set("NITPICKER_PAGE_READER", False, priority=priority)

    async def start(self) -> AsyncIterator[Any]:
        """Roots are seeded into the frontier when the archive is created; nothing to yield."""
        return
        yield  # pragma: no cover  (makes this an async generator)

    def _on_opened(self, spider: Spider) -> None:
        if self.session.shared_frontier is not None:
            from twisted.internet.task import LoopingCall

            self._nudge = LoopingCall(self._look_for_work)
            self._nudge.start(SHARED_FRONTIER_POLL, now=False)
        if self.config.max_duration is not None:
            from twisted.internet import reactor

            clock: Any = reactor
            self._deadline = clock.callLater(
                self.config.max_duration, self.session.halt, "max_duration"
            )

    def _on_idle(self, spider: Spider) -> None:
        """A halted run (``--max-pages``, ``--max-duration``) closes with its reason."""
        if self.session.halted is not None:
            raise CloseSpider(self.session.halted)

    def _close_soon(self, reason: str) -> None:
        from scrapy.utils.defer import deferred_from_coro
        from twisted.internet import reactor

        engine: Any = self.crawler.engine
        clock: Any = reactor
        clock.callLater(0, lambda: deferred_from_coro(engine.close_spider_async(reason=reason)))

    def _look_for_work(self) -> None:
        """A worker of a distributed crawl with nothing leased asks the frontier again soon:
        another worker's pages may have queued links, or a dead worker's lease expired.
        (Scrapy's engine looks only every 5 s when its scheduler says it has work but gives
        none; its ``_slot.nextcall`` is the engine's own "look now".)"""
        slot = getattr(self.crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    async def _close_reader(self, spider: Spider) -> None:
        await self.reader.end(self.crawler.stats)

    def _on_closed(self, spider: Spider, reason: str) -> None:
        nudge = getattr(self, "_nudge", None)
        if nudge is not None and nudge.running:
            nudge.stop()
        deadline = getattr(self, "_deadline", None)
        if deadline is not None and deadline.active():
            deadline.cancel()
        self.session.close(reason)

    # -- responses ----------------------------------------------------------------------------

    async def parse(self, response: Response) -> PageItem | MissedPrediction:
        meta = response.meta
        predicted = meta.get(META_PREDICTED)
        target = meta.get(META_REDIRECT_TO)
        rendered = meta.get(META_RENDER)
        away = None
        if target is not None:
            reason = meta.get(META_REDIRECT_REASON)
            kind = RedirectKind.HTTP if isinstance(reason, int) else RedirectKind.META_REFRESH
            away = handed_over(self.session, response, response.url, response.status, kind, target)
        elif rendered is not None and rendered.navigated_to is not None:
            # The page left for another by itself once loaded: a redirect made by its script.
            source = response.request.url if response.request is not None else response.url
            away = handed_over(self.session, response, source, response.status,
                               RedirectKind.SCRIPT, rendered.navigated_to)
        if away is not None:
            if predicted:  # a predicted URL that redirects is no page of its own: not recorded
                return missed_prediction(self.session, meta, away, response.url) or away
            return away
        mode = FollowMode(meta.get(META_MODE, FollowMode.FULL))
        final = self.resolver.resolve(response.url, response.url)
        url = final.url if final is not None else response.url
        is_external = not self.session.in_scope(final)
        content_type = media_type(response.headers)
        item = PageItem(
            url=url,
            frontier_id=meta.get(META_FRONTIER_ID),
            depth=meta.get(META_DEPTH, 0),
            is_external=is_external,
            is_target=mode is FollowMode.FULL and not is_external,
            status=response.status,
            status_text=status_phrase(response.status),
            content_type=content_type,
            content_length=self._content_length(response),
            response_time_ms=response_time_ms(meta),
            headers=[
                (name.decode("latin-1").lower(), value.decode("latin-1"))
                for name, values in response.headers.items()
                for value in values
            ],
            redirects=redirect_hops(self.session, response),
        )
        if predicted and (missed := missed_prediction(self.session, meta, item, response.url)):
            return missed  # not worth reading
        if rendered is not None:
            await self._read_rendered(response, item, rendered)
        elif is_html(content_type) and hasattr(response, "text"):
            await self._read_html(response, response.text, item)
        if predicted and (missed := missed_prediction(self.session, meta, item, response.url)):
            return missed
        return item

    async def _read_rendered(self, response: Response, item: PageItem,
                             rendered: RenderResult) -> None:
        """A page the browser rendered: the same extraction over the rendered HTML."""
        console = rendered.console
        item.console = console.records
        if console.dropped:
            self.crawler.stats.inc_value("nitpicker/render/console_dropped", console.dropped)
        if rendered.html is None:
            item.status = -1
            item.is_target = False
            item.error = item.status_text = "; ".join(rendered.errors) or "rendering failed"
            return
        item.content_length = item.content_length or len(rendered.html.encode("utf-8"))
        await self._read_html(response, rendered.html, item)
        if item.html is None:
            return  # skipped by a keyword
        item.images = [
            ImageRecord(
                src=image["src"], alt=image["alt"], width=image["width"], height=image["height"],
                current_src=image["currentSrc"], natural_width=image["naturalWidth"],
                natural_height=image["naturalHeight"], is_lazy=image["isLazy"],
                viewport_width=image["viewportWidth"], source_code=image["sourceCode"],
            )
            for image in rendered.images
        ]
        by_url = {r.url: r for r in item.resources}
        read_loaded(self.session, rendered, by_url)
        item.resources = list(by_url.values())
        item.loaded = {url: r for url, r in by_url.items() if answers_link_check(r)}
        if item.images:
            image_sizes(self.session, item.images, by_url)

    def _content_length(self, response: Response) -> int | None:
        raw = response.headers.get(b"Content-Length")
        if raw:
            try:
                return int(raw)
            except ValueError:
                pass
        if "download_stopped" in response.flags:
            return None
        return len(response.body)

    async def _read_html(self, response: Response, html: str, item: PageItem) -> None:
        if not item.is_target:
            head = extract(html, max_anchors=0)
            item.meta = head.meta
            resolve_meta_urls(head.meta, document_base(response.url, head.base_href))
            return
        keyword = self.session.excludes.matched_keyword(html) if self.config.exclude_keywords else None
        if keyword is not None:
            item.is_target = False
            item.content_type = None
            item.skip_reason = json.dumps(
                {"url": item.url, "matchedText": keyword,
                 "excludeKeywords": list(self.config.exclude_keywords)},
                ensure_ascii=False,
            )
            return
        facts = await self.reader.read(response.url, html, self.session.content_facts)
        if facts.capped:
            item.links_capped = True
            self.crawler.stats.inc_value("nitpicker/links/capped_pages")
        found, base = facts.found, facts.base
        item.meta = found.meta
        item.html = html
        item.snapshot = facts.snapshot
        item.content_signature = facts.signed
        read_page_data(item, found, html, base, self.config.extract, facts.syntaxes)
        item.http_form_action = http_form_action(item.url, base, found.form_actions)
        links = item.links
        full = FollowMode.FULL
        for url, key, fragment, text in facts.links:
            if len(url) > MAX_URL_LENGTH:
                stand_in = too_long_stand_in(url)
                link = LinkRecord(stand_in, stand_in, "", text, True, FollowMode.INVALID)
                link.hash = str(len(url))
                links.append(link)
            else:
                links.append(LinkRecord(url, key, fragment, text, False, full))
        resolve = self.resolver.resolve
        for image in found.images if self.config.image else ():
            target = resolve(base, image.src) if image.src else None
            item.images.append(
                ImageRecord(
                    src=target.url if target is not None else image.src,
                    alt=image.alt,
                    width=dimension(image.width),
                    height=dimension(image.height),
                    is_lazy=image.loading.lower() == "lazy",
                )
            )
        seen: set[str] = set()
        in_scope = self.session.in_scope
        for resource in found.resources:
            target = resolve(base, resource.url)
            if target is not None and target.is_http and target.url not in seen:
                seen.add(target.url)
                item.resources.append(
                    ResourceRecord(target.url, resource.kind, not in_scope(target))
                )

    # -- failures -------------------------------------------------------------------------------

    def errback(self, failure: Failure) -> PageItem | MissedPrediction | Request | None:
        request = failure.request  # type: ignore[attr-defined]
        meta = request.meta
        if meta.get(META_STOPPED):
            # Not fetched, the crawl stopped first: nothing is recorded, and the frontier row
            # (still leased) goes back to pending when the run closes.
            logger.debug("not fetched, the crawl is stopping: %s", request.url)
            return None
        # The browser crashed or the page failed: once more, in a (restarted) browser.
        retry = browser_retry(request, spider=self, reason=failure.value)
        if retry is not None:
            return retry
        # Record under the URL that was leased (the first of a redirect chain), not the last hop.
        chain = meta.get("redirect_urls") or []
        leased = chain[0] if chain else request.url
        parsed = self.resolver.resolve(leased, leased)
        url = parsed.url if parsed is not None else leased
        is_external = not self.session.in_scope(parsed)
        item = PageItem(
            url=url,
            frontier_id=meta.get(META_FRONTIER_ID),
            depth=meta.get(META_DEPTH, 0),
            is_external=is_external,
            is_target=False,
        )
        ignored = failure.check(IgnoreRequest)  # type: ignore[no-untyped-call]
        if chain:
            # Given up (too many redirects, a loop): nothing more to fetch. A fetch that failed
            # (not in the browser, which has tried twice): the URL is tried on its own.
            release_claims(self.session, leased, [*chain[1:], request.url],
                           fetch_last=not ignored and not is_browser_request(meta))
        if ignored:
            message = failure.getErrorMessage()
            error = ignored_as_error(message, [*chain, request.url])
            if error is None:
                item.skip_reason = (
                    "blocked by robots.txt" if "robots.txt" in message else message or "ignored"
                )
            else:
                item.status = -1
                item.error = item.status_text = error
            if meta.get(META_PREDICTED):
                return missed_prediction(self.session, meta, item, url)
            return item
        item.status, item.untried = -1, untried(failure)
        item.error = item.status_text = describe_failure(failure)
        cancelled = failure.check(DownloadCancelledError)  # type: ignore[no-untyped-call]
        if cancelled and "max size" not in item.error:
            item.error = item.status_text = (
                "Download cancelled: the crawl was stopping" if self.session.halted else
                "Too large: the body exceeded DOWNLOAD_MAXSIZE "
                f"({meta.get('download_maxsize') or self.crawler.settings.getint('DOWNLOAD_MAXSIZE')} bytes)"
            )
        if is_browser_request(meta):
            item.error = item.status_text = f"browser: {item.error}"
        logger.debug("fetch failed: %s: %s", url, item.error)
        if meta.get(META_PREDICTED):
            return missed_prediction(self.session, meta, item, url)
        return item
