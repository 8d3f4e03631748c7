"""What an in-scope HTML page says about itself, read once its facts are extracted: its
JSON-LD blocks, its structured data's items in the three syntaxes
(:mod:`nitpicker.policy.extract.structured`) and the values of the crawl's ``--extract``
rules (:mod:`nitpicker.policy.extract.custom`). Over the HTML the page was read from: the
served HTML, or the rendered DOM's when the browser rendered it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.policy.extract.custom import compile_rules, extract_values
from nitpicker.policy.extract.structured import json_ld_items, read_embedded

if TYPE_CHECKING:
    from nitpicker.items import PageItem
    from nitpicker.policy.extract import Extracted

__all__ = ["read_page_data"]


def read_page_data(item: PageItem, found: Extracted, html: str, base: str,
                   extract: tuple[str, ...], syntaxes: tuple[str, ...]) -> None:
    """Set ``item``'s JSON-LD, structured items and errors, extracted values, fragment targets
    and main content, and template skeleton (the close's template clusters take it: no second parse); ``base``: the document's
    base URL (Microdata and RDFa resolve their URLs against it); ``syntaxes``: those besides
    JSON-LD the HTML may hold (:func:`~nitpicker.policy.extract.structured.embedded_syntaxes`,
    found where the page was read)."""
    item.json_ld = found.json_ld
    item.skeleton = None if found.skeleton is None else tuple(found.skeleton)
    item.content = found.content  # signed by the archive (nitpicker.archive.content_signer)
    structured = [entry for block in found.json_ld for entry in json_ld_items(block.entities)]
    if syntaxes:
        embedded = read_embedded(html, base, syntaxes)
        structured += embedded.items
        item.structured_errors = embedded.errors
    item.structured = structured
    if extract:
        item.extracted = extract_values(compile_rules(extract), html)
