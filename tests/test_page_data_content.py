"""A page's content facts written by the archive (``nitpicker/archive/page_data.py``): signed
by the spider (the hex signature an item carries) or, when it was not, by the writer; the same
row either way, on a real migrated archive."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from nitpicker.archive.page_data import record_page_data
from nitpicker.archive.schema import migrate
from nitpicker.items import PageItem
from nitpicker.policy.extract import PageText
from nitpicker.policy.minhash import fingerprint

if TYPE_CHECKING:
    from pathlib import Path

TEXT = "The main content of a page, long enough to be signed: " + "word " * 30


def test_signed_by_the_spider_or_by_the_writer(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "content.nitpicker", isolation_level=None)
    migrate(conn)
    signed = fingerprint(TEXT)
    assert signed.minhash is not None
    unsigned = PageText(["intro", "legacy"], "main", TEXT)
    by_spider = PageText(["intro", "legacy"], "main", "", signed.words, signed.content_hash,
                         signed.minhash.hex())
    for page_id, content in ((1, unsigned), (2, by_spider)):
        conn.execute("INSERT INTO pages(id, url) VALUES (?, ?)", (page_id, f"/p{page_id}"))
        item = PageItem(url=f"/p{page_id}", frontier_id=None, depth=0, is_external=False,
                        is_target=True)
        item.content = content
        record_page_data(conn, page_id, item)
    rows = conn.execute("SELECT ids, main, words, content_hash, minhash FROM page_content"
                        " ORDER BY page_id").fetchall()
    assert rows[0] == rows[1] == (2, "main", signed.words, signed.content_hash, signed.minhash)
    assert conn.execute("SELECT page_id, name FROM page_fragment_ids ORDER BY 1, 2").fetchall() == [
        (1, "intro"), (1, "legacy"), (2, "intro"), (2, "legacy")]
    conn.close()
