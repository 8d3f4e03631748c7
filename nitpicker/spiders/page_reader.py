"""PageReader: an in-scope HTML page's facts read in a child process, off the reactor's GIL.

A crawl's process runs two busy threads, the reactor's (fetching, parsing) and the archive's
(writing), and Python work in one process goes through one GIL whichever thread does it: the
crawl's wall time was about the two threads' CPU added (``docs/performance.md``, "Where
1.25× stands"). The largest part of the reactor's, the page's extraction and the resolution
of its links, now runs in a child process (``python -m nitpicker.spiders.page_reader``)
beside them, on the second core.

The reactor thread writes each page to the child's stdin (a request id, then the page's URL,
text and flags, pickled) and goes on fetching; the child answers in order on its stdout with
:class:`PageFacts` (pickled, the page's snapshot compressed), which :meth:`PageReader.read`
returns to the spider's callback. The reactor reads that stdout through a reader of its own
(:class:`_AnswerPipe`), up to 1 MiB a read: an answer is 20-30 KiB, and Twisted's process
pipes read 8 KiB at a time, each read a trip through the reactor and a hand-back of the GIL
(~3 % of the crawl's wall time).
Both sides call the same :func:`read_page`, so a page's facts do not depend on where it was
read: when the child cannot start, or ends (killed, crashed), the pages it had not answered
and every later one are read in the crawl's process, with one warning. The child ignores
Ctrl-C (the crawl stops it) and exits when its input ends: at the spider's close, or when the
crawl's process is killed.

``NITPICKER_PAGE_READER`` off reads every page in the crawl's process.
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReadDescriptor
from twisted.internet.protocol import ProcessProtocol
from zope.interface import implementer

from nitpicker.policy.extract import Extracted, document_base, extract, resolve_meta_urls
from nitpicker.policy.extract.structured import embedded_syntaxes

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.statscollectors import StatsCollector

    from nitpicker.policy.links import LinkResolver

__all__ = ["CLOSE_TIMEOUT", "MAX_LINKS_PER_PAGE", "PageFacts", "PageReader", "read_page"]

logger = logging.getLogger(__name__)

MAX_LINKS_PER_PAGE = 10_000
"""Links kept of one page; the rest are dropped and the page is marked ``links_capped``."""

CLOSE_TIMEOUT = 10.0
"""Seconds the child has to exit once its input ends, before it is killed."""

_READ = 1 << 20
"""Bytes the reactor reads of the child's answers at once (a pipe holds 64 KiB by default)."""

_HEAD = struct.Struct("<QI")
"""A message's head: the request's id and the size of the pickle that follows."""


@dataclass
class PageFacts:
    """What :func:`read_page` gives the spider."""

    found: Extracted
    """The page's facts, its ``anchors`` emptied: their resolved form is :attr:`links`."""
    base: str
    """The document's base URL (its ``<base href>`` resolved, else its own URL)."""
    links: list[tuple[str, str, str, str]]
    """``(url, key, fragment, text)`` of each link kept that resolves to a URL, in order."""
    capped: bool
    """The page had more than :data:`MAX_LINKS_PER_PAGE` links."""
    snapshot: bytes | None = None
    """The HTML as the archive stores it, compressed by the child (``None`` when read here:
    the archive's thread compresses it then, beside the reactor)."""
    signed: tuple[int, int | None, bytes | None] | None = None
    """The main content's words, content hash and MinHash signature
    (:class:`~nitpicker.policy.minhash.ContentFingerprint`'s fields: a tuple, so that the
    crawl's process reads it without numpy), when the child signed it (:class:`_ChildSigner`);
    ``None``: the archive's signer signs :attr:`found`'s text
    (:mod:`nitpicker.archive.content_signer`)."""
    syntaxes: tuple[str, ...] = ()
    """The structured-data syntaxes besides JSON-LD the HTML may hold
    (:func:`~nitpicker.policy.extract.structured.embedded_syntaxes`: two searches of the whole
    HTML, made where the page is read, not on the reactor thread)."""


def read_page(resolver: LinkResolver, url: str, html: str, content: bool) -> PageFacts:
    """The facts of the in-scope HTML page ``html`` fetched at ``url`` (``content``: its
    fragment targets and main content too); its metadata's URLs made absolute."""
    found = extract(html, max_anchors=MAX_LINKS_PER_PAGE + 1, skeleton=True, content=content)
    anchors = found.anchors
    capped = len(anchors) > MAX_LINKS_PER_PAGE
    if capped:
        del anchors[MAX_LINKS_PER_PAGE:]
    base = document_base(url, found.base_href)
    resolve_meta_urls(found.meta, base)
    resolve = resolver.resolve
    links = []
    for anchor in anchors:
        target = resolve(base, anchor.href)
        if target is not None:
            links.append((target.url, target.key, target.fragment, anchor.text))
    found.anchors = []
    return PageFacts(found, base, links, capped, syntaxes=embedded_syntaxes(html))


class PageReader:
    """Reads pages in the child process while it runs, in this one otherwise."""

    def __init__(self, resolver: LinkResolver, *, enabled: bool = True) -> None:
        self.resolver = resolver
        self.enabled = enabled
        """Whether pages go to a child process (until it fails)."""
        self._child: _ChildProtocol | None = None
        self._next_id = 0
        self.in_child = 0
        """Pages the child read."""
        self.here = 0
        """Pages read in this process (the reader off, or the child gone)."""

    async def read(self, url: str, html: str, content: bool) -> PageFacts:
        """The page's facts (:func:`read_page`), read in the child when there is one."""
        child = (self._child or self._start()) if self.enabled else None
        if child is None:
            self.here += 1
            return read_page(self.resolver, url, html, content)
        from scrapy.utils.defer import maybe_deferred_to_future

        request_id = self._next_id
        self._next_id += 1
        answer: Deferred[PageFacts] = Deferred()
        child.waiting[request_id] = (answer, url, html, content)
        payload = pickle.dumps((url, html, content), protocol=pickle.HIGHEST_PROTOCOL)
        transport: Any = child.transport
        transport.write(_HEAD.pack(request_id, len(payload)) + payload)
        return await maybe_deferred_to_future(answer)

    async def end(self, stats: StatsCollector) -> None:
        """:meth:`close`, and wait for the child to end; the pages read each way as stats."""
        from scrapy.utils.defer import maybe_deferred_to_future

        stats.set_value("nitpicker/page_reader/child", self.in_child)
        stats.set_value("nitpicker/page_reader/here", self.here)
        ended = self.close()
        if ended is not None:
            await maybe_deferred_to_future(ended)

    def close(self) -> Deferred[None] | None:
        """End the child's input: it exits once it has answered what it was sent. The
        :class:`~twisted.internet.defer.Deferred` fires when it has ended (``None``: no child),
        so the crawl's process waits for it and counts its CPU time; a child still there after
        :data:`CLOSE_TIMEOUT` seconds is killed. No child starts after it."""
        self.enabled = False
        child, self._child = self._child, None
        transport: Any = None if child is None else child.transport
        if child is None or transport is None:
            return None
        from twisted.internet import reactor as installed

        reactor: Any = installed
        child.closing = True
        ended = child.ended
        transport.closeStdin()
        kill = reactor.callLater(CLOSE_TIMEOUT, child.kill)
        ended.addBoth(lambda _: kill.cancel() if kill.active() else None)
        return ended

    def _start(self) -> _ChildProtocol | None:
        from twisted.internet import reactor as installed

        reactor: Any = installed
        child = _ChildProtocol(self)
        command = [sys.executable, "-m", "nitpicker.spiders.page_reader",
                   "1" if self.resolver.disable_queries else "0"]
        try:
            ours, theirs = os.pipe()
        except OSError as exc:
            self._give_up(f"could not start it ({exc})")
            return None
        try:
            reactor.spawnProcess(
                child, sys.executable, command, env=dict(os.environ),
                childFDs={0: "w", 1: theirs, 2: 2})
        except OSError as exc:
            os.close(ours)
            self._give_up(f"could not start it ({exc})")
            return None
        finally:
            os.close(theirs)  # the child's copy stays open: its end of the pipe
        child.answers = _AnswerPipe(ours, child, reactor)
        self._child = child
        return child

    def _give_up(self, why: str) -> None:
        logger.warning("page reader: %s; pages are read in the crawl's process", why)
        self.enabled = False
        self._child = None


def _answer_here(reader: PageReader, waiting: dict[int, tuple[Any, str, str, bool]]) -> None:
    """Read the pages ``waiting`` for a child that is gone, in request order."""
    for request_id in sorted(waiting):
        answer, url, html, content = waiting.pop(request_id)
        reader.here += 1
        try:
            facts = read_page(reader.resolver, url, html, content)
        except Exception as exc:  # noqa: BLE001 -- the spider's callback gets it, as it would here
            answer.errback(exc)
        else:
            answer.callback(facts)


@implementer(IReadDescriptor)
class _AnswerPipe:
    """The crawl's end of the child's stdout, read by the reactor up to :data:`_READ` bytes at
    a time; what it reads goes to :meth:`_ChildProtocol.answers_received`."""

    def __init__(self, fd: int, child: _ChildProtocol, reactor: Any) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self.child = child
        self.reactor = reactor
        reactor.addReader(self)

    def fileno(self) -> int:
        return self.fd

    def logPrefix(self) -> str:
        return "page reader"

    def doRead(self) -> None:
        self._read_once()

    def drain(self) -> None:
        """Read what the pipe holds (the child has ended: all it wrote is there), then
        close."""
        while self.fd >= 0 and self._read_once():
            pass
        self.close()

    def _read_once(self) -> bool:
        """One read; whether data came (the end of the output closes the pipe)."""
        try:
            data = os.read(self.fd, _READ)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            data = b""
        if not data:
            self.close()
            return False
        self.child.answers_received(data)
        return True

    def connectionLost(self, reason: Any) -> None:
        self.close()

    def close(self) -> None:
        """Read no more (the child's output ended, or the child is given up on)."""
        if self.fd >= 0:
            self.reactor.removeReader(self)
            os.close(self.fd)
            self.fd = -1


class _ChildProtocol(ProcessProtocol):
    """The crawl's side of the child: its process, and its answers matched to their
    requests."""

    def __init__(self, reader: PageReader) -> None:
        self.reader = reader
        self.answers: _AnswerPipe | None = None
        """The child's stdout (:class:`_AnswerPipe`)."""
        self.waiting: dict[int, tuple[Any, str, str, bool]] = {}
        self.closing = False
        self.ended: Deferred[None] = Deferred()
        """Fires when the child process has ended."""
        self._buffer = bytearray()

    def answers_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        head = _HEAD.size
        while len(buffer) >= head:
            request_id, size = _HEAD.unpack_from(buffer)
            if len(buffer) < head + size:
                break
            try:
                facts = pickle.loads(buffer[head:head + size])
            except Exception as exc:  # noqa: BLE001 -- a child that answers garbage is given up on
                self._stop(f"could not read its answer ({exc})")
                return
            del buffer[:head + size]
            entry = self.waiting.pop(request_id, None)
            if entry is not None:
                self.reader.in_child += 1
                entry[0].callback(facts)

    def _stop(self, why: str) -> None:
        """Give the child up now: the pages it was sent are read here when it has ended."""
        self.closing = True
        self.reader._give_up(why)
        self._buffer.clear()
        if self.answers is not None:
            self.answers.close()  # nothing more is read of it
        self.kill()

    def kill(self) -> None:
        transport: Any = self.transport
        try:
            transport.signalProcess("KILL")
        except Exception:  # noqa: BLE001 -- ended already (ProcessExitedAlready)
            logger.debug("page reader: the child had ended already")

    def processEnded(self, reason: Any) -> None:
        if self.answers is not None:
            self.answers.drain()  # what it answered before it ended is still in the pipe
        reader = self.reader
        if reader._child is self:
            reader._give_up(f"the child process ended ({reason.getErrorMessage()})")
        elif self.waiting and not self.closing:
            logger.warning("page reader: the child process ended; its pages are read here")
        _answer_here(reader, self.waiting)
        self.ended.callback(None)


class _ChildSigner:
    """The child's signing of each page's main content, beside its reading: the text then
    stays out of the crawl's process (its archive's thread wrote it to the signer's pipe, and
    filled the row in with a second statement at the commit).

    numpy (:mod:`nitpicker.policy.minhash`) is imported on a thread of its own when the child
    starts, so that the crawl's first pages are not held up by it: a page read before it is
    ready goes unsigned, and the archive's signer signs it, as it signs every page read in the
    crawl's process."""

    def __init__(self) -> None:
        self._fingerprint: Callable[[str], Any] | None = None
        threading.Thread(target=self._load, name="minhash import", daemon=True).start()

    def _load(self) -> None:
        try:
            from nitpicker.policy.minhash import fingerprint
        except Exception:  # noqa: BLE001 -- unsigned: the archive's signer signs, as before
            return
        self._fingerprint = fingerprint

    def sign(self, facts: PageFacts) -> None:
        content = facts.found.content
        sign = self._fingerprint
        if content is not None and sign is not None:
            found = sign(content.text)
            facts.signed = (found.words, found.content_hash, found.minhash)


def _serve(disable_queries: bool) -> None:
    """The child: answer each request on stdin with its page's facts on stdout, in order."""
    from nitpicker.archive import snapshots
    from nitpicker.policy.links import LinkResolver

    signer = _ChildSigner()
    resolver = LinkResolver(disable_queries=disable_queries)
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    head = _HEAD.size
    while True:
        header = source.read(head)
        if len(header) < head:
            return  # the crawl closed our input (or was killed)
        request_id, size = _HEAD.unpack(header)
        url, html, content = pickle.loads(source.read(size))
        facts = read_page(resolver, url, html, content)
        facts.snapshot = snapshots.compress(html)
        signer.sign(facts)
        payload = pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL)
        sink.write(_HEAD.pack(request_id, len(payload)) + payload)
        sink.flush()


if __name__ == "__main__":
    import signal

    from nitpicker.spiders import page_reader  # noqa: PLW0406 (pickles this module's classes, not __main__'s)

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the crawl; the crawl ends us
    page_reader._serve(sys.argv[1:] == ["1"])
