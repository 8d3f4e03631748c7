"""A page's content facts written by the archive (``nitpicker/archive/page_data.py``): the row
written unsigned, its text signed by the signer's child process
(``nitpicker/archive/content_signer.py``) and the row filled in before the batch commits, on a
real migrated archive; and the signer's fall-back when its process dies."""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import sys
import threading
from typing import TYPE_CHECKING

import pytest

from nitpicker.archive.content_signer import BATCH, IN_FLIGHT, PIPE_BYTES, ContentSigner
from nitpicker.archive.page_data import record_page_data, store_signatures
from nitpicker.archive.schema import migrate
from nitpicker.items import PageItem
from nitpicker.policy.extract import PageText
from nitpicker.policy.minhash import fingerprint

if TYPE_CHECKING:
    from pathlib import Path

TEXT = "The main content of a page, long enough to be signed: " + "word " * 30


def _item(page_id: int, content: PageText) -> PageItem:
    item = PageItem(url=f"/p{page_id}", frontier_id=None, depth=0, is_external=False,
                    is_target=True)
    item.content = content
    return item


def test_the_row_is_signed_before_the_batch_commits(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "content.nitpicker", isolation_level=None)
    migrate(conn)
    signer = ContentSigner()
    texts = {1: TEXT, 2: "Another page: " + "other words " * 20, 3: " ,. "}
    try:
        conn.execute("BEGIN")
        for page_id, text in texts.items():
            conn.execute("INSERT INTO pages(id, url) VALUES (?, ?)", (page_id, f"/p{page_id}"))
            record_page_data(conn, page_id, _item(page_id, PageText(["intro", "legacy"], "main",
                                                                    text)), signer)
        assert conn.execute("SELECT count(*) FROM page_content WHERE words IS NULL"
                            ).fetchone() == (3,)  # unsigned until the commit
        store_signatures(conn, signer)
        conn.execute("COMMIT")
        assert signer._child is not None  # signed by the child process, not here
    finally:
        signer.close()
    rows = conn.execute("SELECT page_id, ids, main, words, content_hash, minhash"
                        " FROM page_content ORDER BY page_id").fetchall()
    expected = {page_id: fingerprint(text) for page_id, text in texts.items()}
    assert rows == [(page_id, 2, "main", found.words, found.content_hash,
                     found.minhash) for page_id, found in expected.items()]
    assert rows[2][3:] == (0, None, None)  # no token: no hash, no signature
    assert conn.execute("SELECT page_id, name FROM page_fragment_ids ORDER BY 1, 2").fetchall() == [
        (1, "intro"), (1, "legacy"), (2, "intro"), (2, "legacy"), (3, "intro"), (3, "legacy")]
    conn.close()


def test_more_texts_than_in_flight_keep_their_order() -> None:
    """The parent reads answers before it sends more than IN_FLIGHT: no deadlock on a full
    pipe, and every answer goes to its own key."""
    texts = [f"page {n} says {' '.join(str(n * k) for k in range(50))}" for n in range(IN_FLIGHT * 3)]
    signer = ContentSigner()
    try:
        for key, text in enumerate(texts):
            signer.send(key, text)
        signed = signer.collect()
    finally:
        signer.close()
    assert [key for key, _ in signed] == list(range(len(texts)))
    assert [found for _, found in signed] == [fingerprint(text) for text in texts]


def test_a_dead_child_leaves_the_signing_to_the_crawl(caplog: pytest.LogCaptureFixture) -> None:
    signer = ContentSigner()
    try:
        signer.send(1, TEXT)
        first = signer.collect()
        assert signer._child is not None
        signer._child.kill()
        signer._child.wait()
        for key in range(2, 2 + BATCH + 2):  # a batch written to the dead child, and more
            signer.send(key, f"{TEXT} {key}")
        signed = signer.collect()
    finally:
        signer.close()
    assert first == [(1, fingerprint(TEXT))]
    assert signed == [(key, fingerprint(f"{TEXT} {key}")) for key in range(2, 2 + BATCH + 2)]
    assert "content signer process failed" in caplog.text


def test_answers_too_late_are_signed_here_and_dropped_when_they_come() -> None:
    """A commit waits for the child at most ``wait``: what it has not answered is signed in
    the crawl's process, and those answers, when they come, are not taken for the next
    texts'."""
    first = [f"{TEXT} first {n}" for n in range(BATCH + 3)]
    second = [f"{TEXT} second {n}" for n in range(BATCH + 3)]
    signer = ContentSigner(wait=0)
    try:
        for key, text in enumerate(first):
            signer.send(key, text)
        early = signer.collect()  # nothing waited for: all signed here
        assert signer._skip == len(first)  # all written to the child: their answers to drop
        signer._wait = 30
        for key, text in enumerate(second, start=len(first)):
            signer.send(key, text)
        late = signer.collect()
    finally:
        signer.close()
    assert early == [(key, fingerprint(text)) for key, text in enumerate(first)]
    assert late == [(key, fingerprint(text)) for key, text in enumerate(second, start=len(first))]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_texts_wait_in_the_pipe_while_the_child_is_busy() -> None:
    """A stopped child (as one starved of CPU) does not make the crawl's side wait: a batch of
    texts four times a default pipe's 64 KiB fits in the widened pipe."""
    signer = ContentSigner()
    texts = [f"page {n}: " + f"word{n} " * 3_000 for n in range(BATCH)]
    try:
        signer.send(-1, TEXT)
        signer.collect()  # the child started
        child = signer._child
        assert child is not None and child.stdin is not None
        assert fcntl.fcntl(child.stdin.fileno(), fcntl.F_GETPIPE_SZ) == PIPE_BYTES
        assert sum(len(text) for text in texts) > 4 * 65536
        os.kill(child.pid, signal.SIGSTOP)
        try:
            sending = threading.Thread(
                target=lambda: [signer.send(key, text) for key, text in enumerate(texts)])
            sending.start()
            sending.join(5)
            assert not sending.is_alive(), "the write waited for the stopped child"
        finally:
            os.kill(child.pid, signal.SIGCONT)
            sending.join()
        signed = signer.collect()
    finally:
        signer.close()
    assert [found for _, found in signed] == [fingerprint(text) for text in texts]


def test_a_row_signed_where_the_page_was_read_is_written_signed(tmp_path: Path) -> None:
    """The page reader's child signed the content: the row is written with its signature in
    one statement, and nothing goes to the signer (its child is never started)."""
    conn = sqlite3.connect(tmp_path / "content.nitpicker", isolation_level=None)
    migrate(conn)
    signer = ContentSigner()
    found = fingerprint(TEXT)
    item = _item(1, PageText(["intro"], "main", TEXT))
    item.content_signature = (found.words, found.content_hash, found.minhash)
    try:
        conn.execute("INSERT INTO pages(id, url) VALUES (1, '/p1')")
        record_page_data(conn, 1, item, signer)
        assert signer.collect() == []
        assert signer._child is None
    finally:
        signer.close()
    assert conn.execute("SELECT ids, main, words, content_hash, minhash FROM page_content"
                        ).fetchall() == [(1, "main", found.words, found.content_hash,
                                          found.minhash)]
    conn.close()
