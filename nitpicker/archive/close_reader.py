"""CloseReader: what a crawl's close reads of the committed archive, computed by a process of
its own while the close writes (issue 27, item 4): the pages' link scores, then their click
depths.

A crawl's close ran on one core: the URL order, the click depths and the inbound-link index
(:meth:`~nitpicker.archive.writer.ArchiveWriter.finish`), then the link scores and the site
checks (:func:`~nitpicker.archive.check_store.record_checks`): 2.0 s for 5,000 pages and
750,000 links. Two of them only read what the crawl committed: the link scores (the pages,
their redirects, their anchors: :mod:`nitpicker.query.link_graph`, 0.4 s) and the click
depths (the same, and the roots: :func:`~nitpicker.query.click_depth.read_click_depths`,
0.3 s), and nothing the close writes before them changes what they read. So once the crawl's
last page is committed the session starts this process, which opens the archive read-only
(WAL: it reads that snapshot while the writer goes on) and answers, in this order:

1. each page's link score: the checks store them (the writer numbers the URLs and builds
   the inbound-link index meanwhile);
2. each page whose stored depth is not its click depth: the writer stores them (it runs the
   site checks meanwhile).

- **The same results**: the process runs the writer's own functions on the same rows.
- **Never the reason a close fails**: a process that cannot start, dies, answers what cannot
  be read or takes over :data:`WAIT` is logged at debug level, and what it did not answer is
  computed in the crawl's process, as before.
- Its answers on stdout: the node count and edge count, each node's page id (``int64``) and
  score (``float64``); then the count of depths and each ``(page id, depth)`` pair (``int64``,
  ``-1``: no link reaches the page).
"""

from __future__ import annotations

import logging
import os
import select
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    from numpy.typing import NDArray

__all__ = ["CloseReader", "ComputedLinkScores"]

logger = logging.getLogger(__name__)

_HEAD: Final = struct.Struct("<qq")
"""Nodes and edges; then the count of depths (and 0)."""
WAIT: Final = 600.0
"""Seconds the close waits for each answer at most (a 300,000-page site's: about a minute)."""
_NONE: Final = -1
"""A depth no link reaches (``NULL``)."""


@dataclass(frozen=True, slots=True)
class ComputedLinkScores:
    """Each node's page id and link score, as :func:`read_link_graph` orders them."""

    page_ids: NDArray[np.int64]
    scores: NDArray[np.float64]
    edges: int


class CloseReader:
    """A running reading of an archive's link scores and click depths; :meth:`link_scores`
    and then :meth:`click_depths` wait for them."""

    def __init__(self, child: subprocess.Popen[bytes] | None, *, wait: float = WAIT) -> None:
        self._child = child
        self._wait = wait

    @classmethod
    def start(cls, archive: Path, *, wait: float = WAIT) -> CloseReader:
        """Start reading the committed archive ``archive``."""
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "nitpicker.archive.close_reader", str(archive)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                close_fds=True)
        except OSError as exc:
            logger.debug("close reader: could not start a process (%s); computed here", exc)
            child = None
        return cls(child, wait=wait)

    def link_scores(self) -> ComputedLinkScores | None:
        """The link scores; ``None`` when the process did not give them (compute them here)."""
        import numpy as np

        head = self._read(_HEAD.size)
        if head is None:
            return None
        nodes, edges = _HEAD.unpack(head)
        body = self._read(16 * nodes)
        if body is None:
            return None
        return ComputedLinkScores(np.frombuffer(body, "<i8", nodes),
                                  np.frombuffer(body, "<f8", nodes, 8 * nodes), edges)

    def click_depths(self) -> list[tuple[int, int | None]] | None:
        """The pages whose stored depth is not their click depth (after :meth:`link_scores`);
        ``None`` when the process did not give them (compute them here). Ends the process."""
        head = self._read(_HEAD.size)
        body = None if head is None else self._read(16 * _HEAD.unpack(head)[0])
        self.cancel()
        if body is None:
            return None
        pairs = struct.iter_unpack("<qq", body)
        return [(page_id, None if depth == _NONE else depth) for page_id, depth in pairs]

    def cancel(self) -> None:
        """End the process (what it has not answered is not used)."""
        child, self._child = self._child, None
        if child is not None:
            child.kill()
            child.communicate()

    def _read(self, size: int) -> bytes | None:
        """``size`` bytes of the answers, or ``None`` (the process ended, or took over the
        wait): it is given up on, and every later answer is computed here."""
        child = self._child
        if child is None:
            return None
        assert child.stdout is not None
        descriptor = child.stdout.fileno()
        deadline = time.monotonic() + self._wait
        chunks, left = [], size
        while left:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([descriptor], [], [], remaining)[0]:
                logger.debug("close reader: no answer within %.0f s; computed here", self._wait)
                self.cancel()
                return None
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                self._failed(child)
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _failed(self, child: subprocess.Popen[bytes]) -> None:
        self._child = None
        _, err = child.communicate()
        logger.debug("close reader: the process ended (exit %s: %s); computed here",
                     child.returncode, err.decode("utf-8", "replace").strip()[-500:])


def serve(archive: str, sink: IO[bytes]) -> None:
    """The process: the committed link scores of ``archive``, then its click depths."""
    import numpy as np

    from nitpicker.query.click_depth import read_click_depths
    from nitpicker.query.connection import open_archive
    from nitpicker.query.link_graph import link_scores, read_link_graph

    conn = open_archive(archive)
    try:
        conn.execute("BEGIN")  # one snapshot for both answers
        graph = read_link_graph(conn)
        scores = link_scores(graph)
        sink.write(_HEAD.pack(graph.nodes, graph.edges))
        sink.write(graph.page_ids.astype("<i8", copy=False).tobytes())
        sink.write(np.asarray(scores, dtype="<f8").tobytes())
        sink.flush()
        del graph, scores
        changes = read_click_depths(conn)
        sink.write(_HEAD.pack(len(changes), 0))
        sink.write(b"".join(struct.pack("<qq", page_id, _NONE if depth is None else depth)
                            for page_id, depth in changes))
        sink.flush()
    finally:
        conn.close()


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the crawl; the crawl ends us
    serve(sys.argv[1], sys.stdout.buffer)
