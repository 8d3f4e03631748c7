"""What a page says about itself beyond its HTTP facts and links: its JSON-LD blocks and their
types (migration ``0011_json_ld``), its structured data's items and the Microdata or RDFa that
could not be read (``0030_structured_data``), the values of the ``--extract`` rules
(``0031_extracted_values``), its fragment targets (``0040_page_content``) and its main
content's hash and signature (``0041_content_signatures``). :class:`~nitpicker.archive.page_recorder.PageRecorder` calls
:func:`record_page_data` in its open batch, after deleting an earlier fetch's rows
(:data:`~nitpicker.archive.page_sql.REPLACED_CHILDREN`). The main content's row is written
signed when the page reader's child signed it (``PageItem.content_signature``); otherwise
unsigned, its text goes to the batch's :class:`~nitpicker.archive.content_signer.ContentSigner`
and :func:`store_signatures` fills the row in before the batch commits.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from nitpicker.archive.connection import json_rows

if TYPE_CHECKING:
    import sqlite3

    from nitpicker.archive.content_signer import ContentSigner
    from nitpicker.items import PageItem

__all__ = ["record_page_data", "store_signatures"]

_BLOCK: Final = ("INSERT INTO json_ld_blocks(page_id, position, is_valid, error, source)"
                 " VALUES (?, ?, ?, ?, ?) RETURNING id")
_BLOCK_TYPE: Final = "INSERT OR IGNORE INTO json_ld_types(block_id, type) VALUES (?, ?)"
_ITEM: Final = ("INSERT INTO structured_items(page_id, syntax, position, type, data)"
                " VALUES (?, ?, ?, ?, ?)")
_ERROR: Final = "INSERT INTO structured_data_errors(page_id, syntax, message) VALUES (?, ?, ?)"
_VALUE: Final = ("INSERT OR IGNORE INTO extracted_values(page_id, name, position, value)"
                 " VALUES (?, ?, ?, ?)")
_CONTENT: Final = "INSERT INTO page_content(page_id, ids, main) VALUES (?, ?, ?)"
_CONTENT_SIGNED: Final = ("INSERT INTO page_content(page_id, ids, main, words, content_hash,"
                         " minhash) VALUES (?, ?, ?, ?, ?, ?)")
_SIGNED: Final = ("UPDATE page_content SET words = ?, content_hash = ?, minhash = ?"
                  " WHERE page_id = ?")
_FRAGMENT_IDS: Final = ("INSERT OR IGNORE INTO page_fragment_ids(page_id, name)"
                        " SELECT ?, value FROM json_each(?) ORDER BY key")
"""A page's fragment targets from one JSON array: one statement, not one an id."""


def _json(data: object) -> str:
    # default=str: a value extruct's RDF parsers give as an object (a date) is its text
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def record_page_data(conn: sqlite3.Connection, page_id: int, item: PageItem,
                     signer: ContentSigner) -> None:
    """Insert the page's JSON-LD blocks, structured items and errors, extracted values,
    fragment targets and main content: signed already (the page reader's child signed it:
    :attr:`~nitpicker.items.PageItem.content_signature`), or sent to ``signer``
    (:func:`store_signatures`)."""
    for position, block in enumerate(item.json_ld):
        row = conn.execute(_BLOCK, (page_id, position, block.is_valid, block.error,
                                    block.source)).fetchone()
        if block.types:
            conn.executemany(_BLOCK_TYPE, [(row[0], kind) for kind in block.types])
    if item.structured:
        conn.executemany(_ITEM, [(page_id, entry.syntax, position, entry.type, _json(entry.data))
                                 for position, entry in enumerate(item.structured)])
    if item.structured_errors:
        conn.executemany(_ERROR, [(page_id, error.syntax, error.message)
                                  for error in item.structured_errors])
    if item.extracted:
        positions: dict[str, int] = {}
        rows = []
        for name, value in item.extracted:
            position = positions.get(name, 0)
            positions[name] = position + 1
            rows.append((page_id, name, position, value))
        conn.executemany(_VALUE, rows)
    content = item.content
    if content is not None:
        if item.content_signature is not None:  # signed where the page was read
            conn.execute(_CONTENT_SIGNED, (page_id, len(content.ids), content.main,
                                           *item.content_signature))
        else:
            conn.execute(_CONTENT, (page_id, len(content.ids), content.main))
            signer.send(page_id, content.text)
        if content.ids:
            conn.execute(_FRAGMENT_IDS, (page_id, json_rows(content.ids)))


def store_signatures(conn: sqlite3.Connection, signer: ContentSigner) -> None:
    """Fill in the words, content hash and signature of each main content sent to ``signer``
    (in the open batch, before it commits)."""
    signed = signer.collect()
    if signed:
        conn.executemany(_SIGNED, [(found.words, found.content_hash, found.minhash, page_id)
                                   for page_id, found in signed])
