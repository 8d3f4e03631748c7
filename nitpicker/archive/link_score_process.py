"""LinkScoreProcess: the pages' link scores computed in a process of their own while a crawl
closes (issue 27, item 4).

A crawl's close runs on one core: the URL order, the click depths and the inbound-link index
(:meth:`~nitpicker.archive.writer.ArchiveWriter.finish`), then the link scores and the site
checks (:func:`~nitpicker.archive.check_store.record_checks`). The link scores only read what
the crawl committed (the pages, their redirects, their anchors: nothing ``finish`` changes),
and reading the graph and its PageRank (:mod:`nitpicker.query.link_graph`) took a fifth of the
close (0.4 of 2.0 s for 5,000 pages, 750,000 links). So the session starts this process once
the crawl's last page is committed, before ``finish``: it opens the archive read-only (WAL: it
reads the committed snapshot while the writer goes on), computes every page's score on the
second core, and hands the scores back; the checks then write them instead of computing them
(:func:`~nitpicker.archive.link_score.record_link_scores`).

- **Same scores**: the process runs :func:`~nitpicker.query.link_graph.read_link_graph` and
  :func:`~nitpicker.query.link_graph.link_scores`, as the writer would, on the same rows.
- **Never the reason a close fails**: a process that cannot start, dies, or answers what
  cannot be read is logged at debug level, and the scores are computed in the crawl's process,
  as before.
- Its answer: the node count, the edge count, then each node's page id (``int64``) and score
  (``float64``), in the graph's order, on stdout.
"""

from __future__ import annotations

import logging
import struct
import subprocess
import sys
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    from numpy.typing import NDArray

__all__ = ["ComputedLinkScores", "LinkScoreProcess"]

logger = logging.getLogger(__name__)

_HEAD: Final = struct.Struct("<qq")
"""Nodes, edges."""
WAIT: Final = 600.0
"""Seconds the close waits for the process at most (a 300,000-page site's graph: ~1 minute)."""


@dataclass(frozen=True, slots=True)
class ComputedLinkScores:
    """Each node's page id and link score, as :func:`read_link_graph` orders them."""

    page_ids: NDArray[np.int64]
    scores: NDArray[np.float64]
    edges: int


class LinkScoreProcess:
    """A running computation of an archive's link scores; :meth:`result` waits for it."""

    def __init__(self, child: subprocess.Popen[bytes] | None) -> None:
        self._child = child

    @classmethod
    def start(cls, archive: Path) -> LinkScoreProcess:
        """Start computing the committed link scores of ``archive``."""
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "nitpicker.archive.link_score_process", str(archive)],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                close_fds=True)
        except OSError as exc:
            logger.debug("link scores: could not start a process (%s); computed here", exc)
            child = None
        return cls(child)

    def result(self, timeout: float = WAIT) -> ComputedLinkScores | None:
        """The scores; ``None`` when the process did not give them (compute them here)."""
        child, self._child = self._child, None
        if child is None:
            return None
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            logger.debug("link scores: the process took over %.0f s; computed here", timeout)
            return None
        if child.returncode != 0:
            logger.debug("link scores: the process failed (exit %s: %s); computed here",
                         child.returncode, err.decode("utf-8", "replace").strip()[-500:])
            return None
        return _decode(out)

    def cancel(self) -> None:
        """Stop the process (the close will not use its scores)."""
        child, self._child = self._child, None
        if child is not None:
            child.kill()
            child.communicate()


def _decode(data: bytes) -> ComputedLinkScores | None:
    import numpy as np

    if len(data) < _HEAD.size:
        logger.debug("link scores: the process answered %d bytes; computed here", len(data))
        return None
    nodes, edges = _HEAD.unpack_from(data)
    if len(data) != _HEAD.size + 16 * nodes:
        logger.debug("link scores: the process answered %d bytes for %d pages; computed here",
                     len(data), nodes)
        return None
    ids_end = _HEAD.size + 8 * nodes
    return ComputedLinkScores(np.frombuffer(data, "<i8", nodes, _HEAD.size),
                              np.frombuffer(data, "<f8", nodes, ids_end), edges)


def serve(archive: str, sink: IO[bytes]) -> None:
    """The process: read the committed link graph of ``archive``, write its scores."""
    import numpy as np

    from nitpicker.query.connection import open_archive
    from nitpicker.query.link_graph import link_scores, read_link_graph

    conn = open_archive(archive)
    try:
        graph = read_link_graph(conn)
    finally:
        conn.close()
    scores = link_scores(graph)
    sink.write(_HEAD.pack(graph.nodes, graph.edges))
    sink.write(graph.page_ids.astype("<i8", copy=False).tobytes())
    sink.write(np.asarray(scores, dtype="<f8").tobytes())
    sink.flush()


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the crawl; the crawl ends us
    serve(sys.argv[1], sys.stdout.buffer)
